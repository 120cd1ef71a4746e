#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Inputs a node's user or another node controls (issue 27, classes 7 and 9): a file name in the
# backup set that restore would refuse (a newline, an escape, bytes that are not UTF-8) is refused
# by backup before it writes, named escaped, the older tarball at --out kept; compare refuses an
# accept record holding NaN or Infinity (exit 3, naming the field); compare of 40,000 gates a side
# finishes (it took 103 s: each gate was looked up by a walk); a relative --home is refused as one
# (exit 2), not taken for a missing home.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/fixtures/backup-lib.sh"
. "$SRCDIR/tests/fixtures/records-lib.sh"

# ---- class 7: the writer refuses what its readers refuse, before writing ----
D="$TMP/demo"
demo_root "$D"
# owners are named by the root's own etc/passwd and etc/group: this demo root names them as this host
cp /etc/passwd /etc/group "$D/etc/"
rm "$D/etc/fstab" # its identifiers do not resolve here (31-fstab covers them)
mkdir -p "$TMP/o"
T="$TMP/o/dgx4-config.tar.gz"
run 0 "$SWAPTOOL" --state "$STATE" backup --root "$D" --home /home/nv --out "$T"
old=$(sha256sum <"$T")
# refused_name FILE SHOWN: backup refuses FILE (exit 3) naming it as SHOWN, writes nothing and keeps
# the older tarball; FILE removed, the backup is whole again and restore and verify agree with it
refused_name() {
	: >"$1"
	says 3 "cannot back up '$2'" "$SWAPTOOL" --state "$STATE" backup --root "$D" --home /home/nv --out "$T"
	contains "rename it or move it out of the backup set"
	[ "$(printf '%s%s' "$OUT" "$ERR" | wc -l)" -le 1 ] || fail "the message for '$2' spans lines: $ERR"
	case "$OUT$ERR" in *$'\e'*) fail "the message for '$2' holds a raw escape" ;; esac
	says_json 3 "no tarball was written" "$SWAPTOOL" --json --state "$STATE" backup --root "$D" --home /home/nv --out "$T"
	[ "$(sha256sum <"$T")" = "$old" ] || fail "the older tarball at --out changed after refusing '$2'"
	ls "$TMP/o" | grepq -v '^dgx4-config.tar.gz$' && fail "a temporary was left beside the tarball ($(ls "$TMP/o"))"
	rm -- "$1"
}
refused_name "$D/home/nv/.ssh/a"$'\n'"b" "$D/home/nv/.ssh/a\\x0ab"
refused_name "$D/home/nv/.ssh/id"$'\e'"[31m" "$D/home/nv/.ssh/id\\x1b[31m"
refused_name "$D/home/nv/.ssh/caf"$'\xff' "$D/home/nv/.ssh/caf\\xff"
ok "a name restore refuses (newline, escape, not UTF-8) is refused before writing, named escaped; the older tarball stays"

ln -s "target"$'\xfe' "$D/home/nv/.ssh/badlink"
says 3 "cannot back up the symlink '$D/home/nv/.ssh/badlink'" "$SWAPTOOL" --state "$STATE" backup --root "$D" --home /home/nv --out "$T"
contains "target\\xfe"
rm "$D/home/nv/.ssh/badlink"
[ "$(sha256sum <"$T")" = "$old" ] || fail "the older tarball at --out changed"
ok "a symlink whose target is not UTF-8 is refused before writing"

# names the readers accept go through: a backslash, a space, UTF-8; restore --dry-run and verify agree
: >"$D/home/nv/.ssh/back\\slash caf"$'\xc3\xa9'
run 0 "$SWAPTOOL" --json --state "$STATE" backup --root "$D" --home /home/nv --out "$T"
run 0 "$SWAPTOOL" --json --state "$STATE" verify "$T" --root "$D"
mkdir "$TMP/fresh"
run 0 "$SWAPTOOL" --json --state "$TMP/s2" restore "$T" --root "$TMP/fresh" --dry-run
jeq '[.actions[] | select(.path | endswith("back\\slash café"))] | length' 1
ok "a name with a backslash, a space and UTF-8 is backed up; verify and restore --dry-run agree"

# ---- class 9: hostile numbers in an accept record ----
dgx5_accept "$TMP/a5.json"
dgx4_accept "$TMP/a4.json"
run 1 "$SWAPTOOL" compare "$TMP/a5.json" "$TMP/a4.json"
# json-c reads NaN, Infinity and 1e999; they were read as 0 and printed as 0.00x ratios
for bad in NaN Infinity -Infinity 1e999; do
	jq --arg b "$bad" '.runs[0].iops = "BAD:" + $b' "$TMP/a4.json" | sed 's/"BAD:\([^"]*\)"/\1/' >"$TMP/bad.json"
	grepq "\"iops\": *$bad" <"$TMP/bad.json" || fail "the fixture does not hold $bad"
	says 3 "its 'runs[0].iops' is $bad, not a finite number" "$SWAPTOOL" compare "$TMP/a5.json" "$TMP/bad.json"
	says_json 3 "not a finite number" "$SWAPTOOL" --json compare "$TMP/bad.json" "$TMP/a5.json"
done
ok "compare refuses an accept record holding NaN, Infinity or 1e999 (exit 3), naming the field"

# 40,000 gates a side, B's in the reverse order with every other one failing: each gate was looked up
# by a walk of the other list (103 s); no timed assertion, only a bound that a hang would pass
jq '.gates = [range(40000) as $i | {name: "g\($i)-iops", status: "pass", threshold: 60000, measured: $i}]' \
	"$TMP/a5.json" >"$TMP/big5.json"
jq '.gates = [range(40000) as $i | {name: "g\(39999 - $i)-iops", status: (if $i % 2 == 0 then "fail" else "pass" end),
	threshold: 60000, measured: $i}]' "$TMP/a4.json" >"$TMP/big4.json"
run 1 timeout 60 "$SWAPTOOL" --json compare "$TMP/big5.json" "$TMP/big4.json"
jeq '.gates | length' 40000
jeq '.gates[0].name' g0-iops
jeq '.gates[0].b_measured' 39999
jeq '[.gates[] | select(.b_status == "fail")] | length' 20000
jeq '[.checks[] | select(.id == "gates-b")][0].summary | startswith("B (dgx4): 20000 of 40000 gates passed, failed: g39999-iops, g39997-iops")' true
run 1 timeout 60 "$SWAPTOOL" compare "$TMP/big5.json" "$TMP/big4.json"
ok "compare of 40,000 gates a side finishes, every gate matched by name"

# ---- class 9: a relative --home is refused as such, not taken for a missing one ----
says 2 "--home must be an absolute path, not 'home/nv'" "$SWAPTOOL" --state "$STATE" backup --root "$D" --home home/nv \
	--out "$TMP/o/rel.tar.gz"
contains "e.g. --home /home/USER"
[ ! -e "$TMP/o/rel.tar.gz" ] || fail "backup with a relative --home wrote a tarball"
says_json 2 "--home must be an absolute path" "$SWAPTOOL" --json --state "$STATE" backup --home "" --out "$TMP/o/rel.tar.gz"
says 2 "--home must be an absolute path, not 'nv'" "$SWAPTOOL" --state "$STATE" accept --home nv "$TMP/a5.json"
says 2 "--home must be an absolute path, not 'nv'" "$SWAPTOOL" --state "$STATE" preflight --home nv --target 2TB "$TMP/a5.json"
ok "a relative --home is refused as one (backup, accept, preflight): exit 2"
