#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What a newcomer meets first (issue 32, "First contact"): a mistyped --state, a mistyped step after
# `help`, metrics given records that hold none, and the demo's closing words.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/fixtures/records-lib.sh"

# report on a --state that does not exist: named, exit 3, and neither the directory (its lock made
# it) nor a signed empty report appears
ssh-keygen -q -t ed25519 -N '' -C t@92 -f "$TMP/key"
run 3 "$SWAPTOOL" --state "$TMP/no-such-state" report --key "$TMP/key" --out "$TMP/rep"
contains "state directory '$TMP/no-such-state' does not exist"
[ ! -e "$TMP/no-such-state" ] || fail "report made the mistyped state directory"
[ ! -e "$TMP/rep" ] || fail "report signed a report of no records"
run 3 "$SWAPTOOL" --state "$TMP/key" --json status
jeq .error.exit_code 3
jeq '.error.message | contains("is not a directory")' true
# the state directory that exists still reports
write_records "$STATE"
run 0 "$SWAPTOOL" --state "$STATE" report --key "$TMP/key" --out "$TMP/rep"
[ -s "$TMP/rep/report.json" ] || fail "no report from a state directory that exists"
ok "report and status: a --state that does not exist or is no directory is exit 3, nothing made"

# `swaptool help STEP` with a typo gets the nearest step too
run 2 "$SWAPTOOL" help prefligt
contains "did you mean 'preflight'?"
run 2 "$SWAPTOOL" --json help acept
jeq .error.message "unknown step 'acept'; did you mean 'accept'? ('swaptool --help' lists the steps)"
ok "help with a mistyped step gets a 'did you mean'"

# metrics on records of steps that hold no metrics: exit 2 and a sentence, nothing written; beside a
# record that holds them, a warning on stderr names the others and stdout holds only the metrics
"$MKRECORD" plan "$TMP/plan.json"
run 2 "$SWAPTOOL" metrics "$TMP/plan.json" --out "$TMP/m.prom"
contains "'$TMP/plan.json' is a plan record, which holds no metrics"
[ -z "$OUT" ] && [ ! -e "$TMP/m.prom" ] || fail "metrics wrote something for a plan record"
run 2 "$SWAPTOOL" --json metrics "$TMP/plan.json" "$STATE/backup.json"
jeq .error.exit_code 2
jeq '.error.message | startswith("none of the 2 inputs holds metrics")' true
run 0 "$SWAPTOOL" metrics "$STATE/backup.json" "$STATE/accept.json"
contains "swaptool metrics: warning: '$STATE/backup.json' is a backup record, which holds no metrics"
grepq '^swaptool_accept_iops{' <<<"$OUT" || fail "no accept metrics beside the backup record"
grepq -v '^#\|^swaptool_' <<<"$OUT" && fail "stdout holds more than metrics: $(grep -v '^#\|^swaptool_' <<<"$OUT")"
if command -v promtool >/dev/null; then
	promtool check metrics <<<"$OUT" || fail "promtool rejects the metrics"
fi
run 0 "$SWAPTOOL" --json metrics "$STATE/backup.json" "$STATE/accept.json"
jeq .verdict warn
jeq '[.checks[] | select(.status == "warn") | .id] | join(",")' ignored-input
jeq '.inputs[0].step' backup
ok "metrics: records that hold no metrics are named (exit 2 alone, a warning beside others)"

# the demo's closing words (scripts/demo --summary, what the demo ends with): the verdicts the records
# hold, that the FAIL and the rejected report are the expected ones and why, the report's absolute
# path and what to do next
demo=$TMP/demo
write_records "$demo/state"
dgx4_accept "$demo/state/accept.json"
run 1 "$SWAPTOOL" --state "$demo/state" report --key "$TMP/key" --out "$demo/report"
[ "$(jq -r .verdict "$demo/report/report.json")" = rejected ] || fail "the fixture's report is not rejected"
run 0 "$SRCDIR/scripts/demo" --summary "$demo"
# STEP VERDICT, then its why on the lines below
why_of() { awk -v s="$1" '$1 == s { on = 1; print; next } on && /^             / { print; next } { on = 0 }' <<<"$OUT" | tr -s ' \n' ' '; }
[[ "$(why_of accept)" == " accept FAIL expected FAIL: the gates are for a healthy-class NVMe"* ]] || fail "accept's lines: $OUT"
[[ "$(why_of report)" == " report rejected expected rejected: it follows accept"* ]] || fail "report's lines: $OUT"
[[ "$(why_of preflight)" == " preflight TRAP expected TRAP"* ]] || fail "preflight's lines: $OUT"
[[ "$(why_of plan)" == " plan "*" expected PASS: path 2"* ]] || fail "plan's lines: $OUT"
contains "are the demo working"
grepq -xF "report:  $demo/report/report.html" <<<"$OUT" || fail "no absolute report.html path: $OUT"
[ -s "$demo/report/report.html" ] || fail "the path it names is no report"
contains "next:    on a real node"
[ "$(awk 'length > 80' <<<"$OUT" | grep -v "$TMP")" = "" ] || fail "lines wider than 80 columns: $(awk 'length > 80' <<<"$OUT")"
# a relative directory is named absolute too
(cd "$TMP" && run 0 "$SRCDIR/scripts/demo" --summary demo && grepq -xF "report:  $demo/report/report.html" <<<"$OUT") ||
	fail "a relative demo directory is not named absolute"
ok "the demo ends saying which verdicts are expected and why, where the report is and what is next"

# the demo's echoed commands: quoted only where bash needs it ("16M,64M,256M" as typed, not
# "16M\,64M\,256M"), and every word, hostile ones included, read back by bash as exactly itself
run 0 "$SRCDIR/scripts/demo" --show accept "$TMP/shard.bin" --sweep 16M,64M,256M --working-set 256M
[ "$OUT" = "\$ swaptool accept $TMP/shard.bin --sweep 16M,64M,256M --working-set 256M" ] || fail "echoed command: $OUT"
words=(--sweep 16M,64M,256M '' 'a b' "it's" $'\e]0;title\a' $'two\nlines' '$(touch x)' '`id`' '~root' 'a;b' '*' '!x' 'é')
run 0 "$SRCDIR/scripts/demo" --show "${words[@]}"
[ "$(wc -l <<<"$OUT")" = 1 ] || fail "an echoed command spans lines: $OUT"
grepq -F $'\e' <<<"$OUT" && fail "an echoed command carries a raw ESC"
eval "back=(${OUT#\$ swaptool })"
[ "${#back[@]}" = "${#words[@]}" ] || fail "bash reads ${#back[@]} words back, not ${#words[@]}: $OUT"
for i in "${!words[@]}"; do
	[ "${back[$i]}" = "${words[$i]}" ] || fail "word $i reads back as '${back[$i]}', not '${words[$i]}'"
done
ok "the demo's echoed commands quote only what bash needs, and read back as given"

# quickstart installs the demo's set only (the test suite's tools are several hundred MiB more), and
# hides none of apt's summary or the build's progress
demo_set=$("$SRCDIR/scripts/install-deps" demo --list)
test_set=$("$SRCDIR/scripts/install-deps" test --list)
for heavy in chromium qemu-system-x86 valgrind prometheus ansible-core; do
	grep -qx "$heavy" <<<"$demo_set" && fail "the demo's set installs $heavy"
	grep -qx "$heavy" <<<"$test_set" || fail "the test set lacks $heavy"
done
grep -qx 'scripts/install-deps demo' "$SRCDIR/scripts/quickstart" || fail "quickstart does not install the demo's set"
grep -hE '^[^#]*(apt-get|meson|ninja) ' "$SRCDIR/scripts/quickstart" "$SRCDIR/scripts/install-deps" |
	grep -E -- '-qq|>/dev/null|--quiet' && fail "quickstart or install-deps hides apt's or the build's output"
ok "quickstart: the demo's set without the test suite's heavy tools, nothing hidden"
