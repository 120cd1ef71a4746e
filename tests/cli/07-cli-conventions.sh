#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The command-line habits of nvme-cli, lsblk and ls: -V, -j, --color=WHEN, unknown options, the
# profile's precedence, results shown when the record cannot be saved, --no-record, tables that fit.
. "$SRCDIR/tests/lib.sh"

command -v script >/dev/null || skip "no script(1) for a pty"
esc=$(printf '\033[')
img="$TMP/src.img"
truncate -s 64M "$img"
sgdisk -n1:2048:0 -t1:8300 "$img" >/dev/null || skip "sgdisk failed"
small="$TMP/small.img"
export SWAPTOOL_SYSCONFDIR="$TMP/etc" # no site profile unless a test writes one
unset SWAPTOOL_PROFILE
strip() { sed 's/\x1b\[[0-9;]*[mK]//g; s/\r$//; s/.*\r//' "$@"; } # what the screen keeps of each line
# ontty COLS CMD...: run CMD on a pty COLS wide (stty, as the pty of script(1) starts 0 wide here)
ontty() {
	local cols=$1
	shift
	COLUMNS=$cols script -qec "stty cols $cols rows 40; $(printf '%q ' "$@")" /dev/null >"$TMP/tty.out" 2>&1 || true
}

# -V and -j: short spellings of --version and --json.
run 0 "$SWAPTOOL" -V
[ "$OUT" = "swaptool $("$SWAPTOOL" --version | sed 's/^swaptool //')" ] || fail "-V: '$OUT'"
contains "swaptool 0."
run 0 "$SWAPTOOL" -j -V
jeq .schema swaptool/1
run 4 "$SWAPTOOL" --state "$STATE" preflight "$img" --target 32M -j
[ "$(printf '%s' "$OUT" | jq -s length)" = 1 ] || fail "-j: not one JSON document"
jeq .step preflight
jeq .verdict trap
ok "-V and -j"

# --color=always colours even a pipe; never and NO_COLOR and TERM=dumb keep a terminal plain.
run 0 "$SWAPTOOL" --state "$STATE" --color=always preflight "$img" --target 2TB
case "$OUT" in *"$esc"*) ;; *) fail "--color=always: no ESC[ in a pipe";; esac
run 0 "$SWAPTOOL" --state "$STATE" preflight "$img" --target 2TB --color=auto
case "$OUT" in *"$esc"*) fail "--color=auto: colour into a pipe";; esac
ontty 80 "$SWAPTOOL" --state "$STATE" preflight "$img" --target 2TB
grep -qF "$esc" "$TMP/tty.out" || fail "auto: no colour on a terminal"
ontty 80 "$SWAPTOOL" --state "$STATE" --color=never preflight "$img" --target 2TB
! grep -qF "$esc" "$TMP/tty.out" || fail "colour despite --color=never"
NO_COLOR=1 ontty 80 "$SWAPTOOL" --state "$STATE" preflight "$img" --target 2TB
! grep -qF "$esc" "$TMP/tty.out" || fail "colour despite NO_COLOR"
TERM=dumb ontty 80 "$SWAPTOOL" --state "$STATE" preflight "$img" --target 2TB
! grep -qF "$esc" "$TMP/tty.out" || fail "colour despite TERM=dumb"
NO_COLOR=1 ontty 80 "$SWAPTOOL" --state "$STATE" --color=always preflight "$img" --target 2TB
grep -qF "$esc" "$TMP/tty.out" || fail "--color=always is not stronger than NO_COLOR"
run 2 "$SWAPTOOL" --color=sometimes preflight "$img" --target 2TB
contains "bad --color 'sometimes'"
# TRAP, preflight's headline word for the clone trap, is coloured as WARN is, on the verdict line
# and in status's table; NO_COLOR keeps it plain
ontty 100 "$SWAPTOOL" --state "$TMP/trapst" preflight "$img" --target 32M
grep -qF "verdict:${esc}0m ${esc}33mTRAP${esc}0m" "$TMP/tty.out" || fail "TRAP is not coloured: $(strip "$TMP/tty.out" | grep verdict)"
ontty 100 "$SWAPTOOL" --state "$TMP/trapst" status
grep -qF "${esc}33mTRAP" "$TMP/tty.out" || fail "status: TRAP is not coloured"
NO_COLOR=1 ontty 100 "$SWAPTOOL" --state "$TMP/trapst" preflight "$img" --target 32M
grep -q "verdict: TRAP  " "$TMP/tty.out" || fail "NO_COLOR: no plain TRAP"
! grep -qF "$esc" "$TMP/tty.out" || fail "TRAP coloured despite NO_COLOR"
ok "--color=WHEN, NO_COLOR, TERM=dumb"

# Unknown options are unknown options (exit 2, named), before or after the step; never a step.
run 2 "$SWAPTOOL" --xyz preflight "$img" --target 2TB
contains "unknown option '--xyz'"
case "$ERR" in *"unknown step"*) fail "an option reported as a step";; esac
run 2 "$SWAPTOOL" -Z
contains "unknown option '-Z'"
run 2 "$SWAPTOOL" --xyz=3
contains "unknown option '--xyz'"
run 2 "$SWAPTOOL" --state "$STATE" preflight "$img" --target 2TB --xyz
contains "unknown option '--xyz'"
run 2 "$SWAPTOOL" config --frob
contains "unknown option '--frob'"
run 2 "$SWAPTOOL" -j --frob preflight
jeq .error.exit_code 2
jeq .error.message "unknown option '--frob'; 'swaptool --help' lists the options"
ok "unknown options"

# The profile: --profile, then $SWAPTOOL_PROFILE, then SYSCONFDIR/swaptool/profile.ini, then built-in.
printf '[refetch]\nminutes = 11\n' >"$TMP/opt.ini"
printf '[refetch]\nminutes = 22\n' >"$TMP/env.ini"
mkdir -p "$TMP/etc/swaptool"
run 0 "$SWAPTOOL" -j config
jeq .profile.source built-in
jeq .profile.path null
jeq .profile.values.refetch.minutes 50
printf '[refetch]\nminutes = 33\n' >"$TMP/etc/swaptool/profile.ini"
run 0 "$SWAPTOOL" -j config
jeq .profile.source site
jeq .profile.path "$TMP/etc/swaptool/profile.ini"
jeq .profile.values.refetch.minutes 33
SWAPTOOL_PROFILE="$TMP/env.ini" run 0 "$SWAPTOOL" -j config
jeq .profile.source SWAPTOOL_PROFILE
jeq .profile.values.refetch.minutes 22
SWAPTOOL_PROFILE="$TMP/env.ini" run 0 "$SWAPTOOL" -j --profile "$TMP/opt.ini" config
jeq .profile.source --profile
jeq .profile.values.refetch.minutes 11
run 0 "$SWAPTOOL" config
contains "profile: site ('$TMP/etc/swaptool/profile.ini')"
contains "refetch.minutes"
run 0 "$SWAPTOOL" --version --verbose
contains "libsmartcols"
contains "profile: site ('$TMP/etc/swaptool/profile.ini')"
run 0 "$SWAPTOOL" -j -V --verbose
jeq .profile.source site
[ "$(printf '%s' "$OUT" | jq -r '.libraries.libblkid')" != null ] || fail "no library versions"
# a site profile that is there but broken is an error, not a silent fall back to the defaults
printf '[refetch]\nminutes = many\n' >"$TMP/etc/swaptool/profile.ini"
run 2 "$SWAPTOOL" config
contains "profile.ini"
SWAPTOOL_SYSCONFDIR="$TMP/none" run 0 "$SWAPTOOL" -j config
jeq .profile.source built-in
rm "$TMP/etc/swaptool/profile.ini"
ok "profile precedence"

# A read-only step whose record cannot be saved still shows its result, warns and keeps its code.
touch "$TMP/file"
bad="$TMP/file/state" # under a regular file: no one can create it, root included
run 4 "$SWAPTOOL" --state "$bad" preflight "$img" --target 32M
contains "verdict: TRAP"
contains "warning: cannot write the record to '$bad'"
run 0 "$SWAPTOOL" --state "$bad" preflight "$img" --target 2TB -j
jeq .verdict warn
[ "$(printf '%s' "$OUT" | jq -s length)" = 1 ] || fail "not one JSON document"
contains "warning: cannot write the record"
run 0 "$SWAPTOOL" --state "$bad" plan "$img" --target 2TB
contains "warning: cannot write the record"
# a step whose record is evidence (the rehearsal) still fails when it cannot be saved
run 3 "$SWAPTOOL" --state "$bad" plan "$img" --target 2TB --rehearse --scratch "$TMP"
contains "cannot write the record to '$bad'"
case "$OUT" in *verdict*) fail "plan --rehearse showed a result it could not save";; esac
# --no-record: nothing in the state directory, and no warning
run 0 "$SWAPTOOL" --state "$TMP/nr" --no-record preflight "$img" --target 2TB
[ ! -e "$TMP/nr" ] || fail "--no-record wrote '$(ls -R "$TMP/nr")'"
case "$ERR" in *warning*) fail "--no-record warned: $ERR";; esac
run 0 "$SWAPTOOL" --state "$TMP/nr" preflight "$img" --target 2TB
[ -s "$TMP/nr/preflight.json" ] || fail "no record without --no-record"
ok "results are never lost; --no-record"

# Tables fit the terminal: the drive-class finding wraps within 60 and 80 columns, every word kept;
# into a pipe it stays one line (as lsblk: nothing cut when not a terminal).
N=$SRCDIR/fixtures/nvme
[ -d "$N/xg7000" ] || skip "no NVMe fixtures"
run 0 "$SWAPTOOL" --state "$STATE" preflight "$img" --target 2000398934016 --from-dumps "$N/xg7000"
oneline=$(printf '%s\n' "$OUT" | grep 'drive-class') || fail "no drive-class row"
[ "$(printf '%s\n' "$oneline" | wc -l)" = 1 ] && [ ${#oneline} -gt 200 ] || fail "pipe: finding not on one line"
for cols in 60 80; do
	ontty $cols "$SWAPTOOL" --state "$STATE" preflight "$img" --target 2000398934016 --from-dumps "$N/xg7000"
	strip "$TMP/tty.out" | sed -n '/^checks$/,/^$/p' >"$TMP/checks.txt"
	grep -q 'drive-class' "$TMP/checks.txt" || { cat "$TMP/tty.out" >&2; fail "$cols: no checks table"; }
	long=$(awk -v c="$cols" 'length($0) > c' "$TMP/checks.txt")
	[ -z "$long" ] || fail "$cols columns: lines wider than the terminal: $long"
	# the finding, joined again, is the one-line finding
	joined=$(awk '/drive-class/ { on = 1; sub(/^ *[A-Z]+ +drive-class +/, ""); printf "%s", $0; next }
		on && /^          / { sub(/^ +/, " "); printf "%s", $0; next } { on = 0 }' "$TMP/checks.txt")
	want=$(printf '%s\n' "$oneline" | sed 's/^ *[A-Z]* *drive-class *//')
	[ "$joined" = "$want" ] || fail "$cols columns: finding changed: '$joined' vs '$want'"
	[ "$(grep -c . <<<"$(sed -n '/drive-class/,/health/p' "$TMP/checks.txt")")" -gt 3 ] || fail "$cols: not wrapped"
done
ok "tables fit 60 and 80 columns"

# Everything else for people fits too: at 80 columns the partition table, too wide for one, comes
# in parts that each repeat the partition's name; at 60 the verdict and at 40 an error break at
# words, their later lines indented. (${#line} counts characters in a UTF-8 locale: °C is one column.)
# widest: the width of the widest line on stdin, and that line
widest() { local line w=0 l=; while IFS= read -r line; do [ ${#line} -le $w ] || { w=${#line}; l=$line; }; done; echo "$w $l"; }
for cols in 80 60; do
	ontty $cols "$SWAPTOOL" --state "$STATE" preflight "$img" --target 2000398934016 --from-dumps "$N/xg7000"
	strip "$TMP/tty.out" >"$TMP/all.txt"
	w=$(LC_ALL=C.UTF-8 widest <"$TMP/all.txt")
	[ "${w%% *}" -le $cols ] || fail "$cols columns: a line of ${w%% *}: '${w#* }'"
done
[ "$(grep -c '^  #  ' "$TMP/all.txt")" -ge 2 ] && [ "$(grep -c '^  p1 ' "$TMP/all.txt")" -ge 2 ] ||
	fail "60 columns: the partition table is not in parts with p1 in each: $(cat "$TMP/all.txt")"
grep -A1 '^verdict: WARN  a raw clone' "$TMP/all.txt" | tail -n 1 | grep -q '^  [a-z]' ||
	fail "60 columns: the verdict's second line is not indented: $(grep -A1 '^verdict' "$TMP/all.txt")"
ontty 40 "$SWAPTOOL" --state "$STATE" preflight no-such-disk.img --target 2TB # a word shorter than the line
strip "$TMP/tty.out" >"$TMP/err.txt"
grep -q '^swaptool preflight: ' "$TMP/err.txt" && [ "$(wc -l <"$TMP/err.txt")" -ge 2 ] &&
	w=$(LC_ALL=C.UTF-8 widest <"$TMP/err.txt") && [ "${w%% *}" -le 40 ] || fail "40 columns: error not wrapped: $(cat "$TMP/err.txt")"
# into a pipe nothing is wrapped: the same verdict is one line
run 0 "$SWAPTOOL" --state "$STATE" preflight "$img" --target 2000398934016 --from-dumps "$N/xg7000"
contains "verdict: WARN  a raw clone fits; swaptool plan shows the steps"
ok "lines, parts of tables and errors fit 80, 60 and 40 columns"

# plan --rehearse on a terminal names what it does, how far, how fast and the percentage, as clone
# does (it showed only "32.576 GB of 32.576 GB")
"$MKDISK" scaled "$TMP/rh.img" >/dev/null
ontty 120 "$SWAPTOOL" --state "$TMP/rh" plan "$TMP/rh.img" --target $(($(stat -c %s "$TMP/rh.img") - 1048576)) --rehearse
tr '\r' '\n' <"$TMP/tty.out" | strip >"$TMP/progress.txt"
grep -Eq '^rehearsal, copy-metadata: [0-9.]+ [kMG]?B of [0-9.]+ [kMG]?B, [0-9.]+ [kMG]?B/s  [0-9]+%' "$TMP/progress.txt" &&
	grep -Eq '^rehearsal, copy-used-blocks: [0-9.]+ [kMG]?B of [0-9.]+ [kMG]?B, [0-9.]+ [kMG]?B/s  [0-9]+%' "$TMP/progress.txt" ||
	{ cat "$TMP/progress.txt" >&2; fail "the rehearsal's progress lacks its action, rate or percentage"; }
ok "plan --rehearse: the action, how far, the rate and the percentage"

# Progress on a terminal: accept announces its timed total, then shows run k of N with the time left.
D=$TMP
if [ "$(stat -f -c %T "$D")" = tmpfs ]; then
	D=$(mktemp -d /var/tmp/swaptool-conv.XXXXXX)
	trap 'rm -rf "$D"; cleanup_test' EXIT
fi
[ "$(stat -f -c %T "$D")" = tmpfs ] && skip "no disk-backed directory for O_DIRECT"
head -c 16M /dev/urandom >"$D/shard"
sync "$D/shard"
ontty 80 "$SWAPTOOL" --state "$STATE" accept "$D/shard" --force --working-set 8M --inflight 4,8 --duration 2 --ramp 1 \
	--seq-bytes 8M
tr '\r' '\n' <"$TMP/tty.out" | strip >"$TMP/progress.txt"
grep -q 'accept: 3 runs, about 0:06 of timed reads plus the sequential read' "$TMP/progress.txt" ||
	{ cat "$TMP/progress.txt" >&2; fail "accept did not announce its time"; }
grep -q 'accept run 1 of 3, rand4: .*%  0:0[0-9] left' "$TMP/progress.txt" || fail "no time left in run 1 of 3"
grep -q 'accept run 2 of 3, rand8: ' "$TMP/progress.txt" || fail "no run 2 of 3"
grep -q 'accept run 3 of 3, seq: ' "$TMP/progress.txt" || fail "no run 3 of 3"
# narrower than the line: each update is cut before its percentage and time left, one column short
# of the width (a full line would wrap and scroll on every redraw), and redrawn in place
ontty 40 "$SWAPTOOL" --state "$STATE" accept "$D/shard" --force --working-set 8M --inflight 4 --duration 2 --ramp 1 \
	--no-seq
tr '\r' '\n' <"$TMP/tty.out" | strip | grep 'accept run' >"$TMP/progress.txt" || fail "40: no progress"
grep -q '…  [0-9]*%  0:0[0-9] left$' "$TMP/progress.txt" || fail "40: progress not cut before the time left: $(cat "$TMP/progress.txt")"
w=$(LC_ALL=C.UTF-8 widest <"$TMP/progress.txt") && [ "${w%% *}" -le 39 ] || fail "40: progress wider than 39: $(cat "$TMP/progress.txt")"
[ "$(grep -c "accept run" "$TMP/tty.out")" -le 2 ] || fail "40: progress updates not redrawn in place"
# nothing of it off a terminal
"$SWAPTOOL" --state "$STATE" accept "$D/shard" --force --working-set 8M --inflight 4 --duration 1 --ramp 0 --no-seq \
	>/dev/null 2>"$TMP/err" || [ $? = 1 ] || fail "accept off a terminal failed: $(cat "$TMP/err")"
ERR=$(cat "$TMP/err")
case "$ERR" in *"run 1 of"*|*"about"*) fail "progress off a terminal: $ERR";; esac
ok "progress with the time left"
