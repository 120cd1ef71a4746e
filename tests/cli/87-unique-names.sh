#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Names that must be unique are: a --gate given twice or one the profile declares, a second
# [engine x] or [run x] section, a key given twice in a section are refused where they are declared
# (exit 2, naming the duplicate and where); an accept record whose gates or runs repeat a name is
# refused by metrics and fleet (exit 3) and is no acceptance for report (rejected, with the reason).
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/fixtures/records-lib.sh"

# --gate: twice, and against the profile's [engine NAME]
run 2 "$SWAPTOOL" --state "$STATE" accept "$TMP/none" --gate y=true --gate y=false
contains "--gate 'y' given twice"
printf '[engine y]\ncommand = true\n' >"$TMP/p.ini"
run 2 "$SWAPTOOL" --profile "$TMP/p.ini" --state "$STATE" accept "$TMP/none" --gate y=false
contains "--gate 'y': the profile ('$TMP/p.ini') declares [engine y] already"
ok "--gate: a name given twice, or the profile's, exit 2"

# the profile: a second section of one name, a key twice
printf '[engine x]\ncommand = true\n\n[engine x]\ncommand = false\n' >"$TMP/twice.ini"
run 2 "$SWAPTOOL" --profile "$TMP/twice.ini" config
contains "$TMP/twice.ini:4: section [engine x] again (first at line 1)"
printf '[run rand16]\nmin_iops = 60000\nmin_iops = 1\n' >"$TMP/key.ini"
run 2 "$SWAPTOOL" --profile "$TMP/key.ini" config
contains "$TMP/key.ini:3: 'min_iops' again in [run rand16] (first at line 2)"
ok "profile: a section or a key given twice, exit 2 naming both lines"

# records: a failing gate behind a passing one of its name
dgx5_accept "$TMP/a5.json"
jq '.gates += [(.gates[0] | .status = "fail" | .measured = 1)]' "$TMP/a5.json" >"$TMP/dup.json"
name=$(jq -r '.gates[0].name' "$TMP/a5.json")
run 3 "$SWAPTOOL" metrics "$TMP/dup.json"
contains "two of its accept gates are named '$name'"
[ -z "$OUT" ] || fail "metrics printed series for a record with two gates of one name"
jq '.runs += [.runs[0]]' "$TMP/a5.json" >"$TMP/duprun.json"
run 3 "$SWAPTOOL" metrics "$TMP/duprun.json"
contains "two of its accept runs are named"
run 3 "$SWAPTOOL" fleet "$TMP/a5.json" "$TMP/dup.json"
contains "two of its accept gates are named '$name'"
ok "metrics and fleet: a record whose gates or runs repeat a name, exit 3"

if command -v ssh-keygen >/dev/null; then
	ssh-keygen -q -t ed25519 -N '' -C t -f "$TMP/key"
	write_records "$TMP/r"
	g=$(jq -r '.gates[0].name' "$TMP/r/accept.json")
	jq '.gates += [(.gates[0] | .status = "pass")] | .gates[0].status = "fail"' "$TMP/r/accept.json" >"$TMP/a" &&
		mv "$TMP/a" "$TMP/r/accept.json"
	run 1 "$SWAPTOOL" --state "$TMP/r" --json report --key "$TMP/key" --out "$TMP/r/out" --identity t@x
	jeq .report_verdict rejected
	jeq '.why | contains("two gates are named '"'$g'"'")' true
	ok "report: an accept record whose gates repeat a name is rejected with the reason"
fi
