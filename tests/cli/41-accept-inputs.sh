#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# accept refuses what it cannot measure honestly: tmpfs (no O_DIRECT), missing target, working set
# larger than the target, bad options; warns about holes; refuses a busy device without --force.
. "$SRCDIR/tests/lib.sh"

D=$TMP
if [ "$(stat -f -c %T "$D")" = tmpfs ]; then
	D=$(mktemp -d /var/tmp/swaptool-accept.XXXXXX)
	trap 'rm -rf "$D"; cleanup_test' EXIT
fi
[ "$(stat -f -c %T "$D")" = tmpfs ] && skip "no disk-backed directory for O_DIRECT"
need_odirect "$D" # other filesystems refuse it too (some overlays, NFS)
need_io_uring
Q=(--duration 1 --ramp 0 --no-seq --inflight 4 --force)
# run01 CMD...: a measurement whose gates may pass or fail on this disk: exit 0 or 1
run01() {
	local got=0
	"$@" >"$TMP/out" 2>"$TMP/err" || got=$?
	OUT=$(cat "$TMP/out")
	ERR=$(cat "$TMP/err")
	case $got in 0 | 1) ;; *) cat "$TMP/err" >&2; fail "'$*' exited $got, expected 0 or 1" ;; esac
}

run 3 "$SWAPTOOL" --state "$STATE" accept "$D/missing"
contains "cannot open '$D/missing'"
run 3 "$SWAPTOOL" --json --state "$STATE" accept "$D/missing"
jeq '.error.exit_code' 3
ok "missing target: exit 3 (also as JSON)"

if [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ]; then
	S=/dev/shm/swaptool-accept-$$
	head -c 8M /dev/urandom >"$S"
	run 3 "$SWAPTOOL" --state "$STATE" accept "$S" --working-set 4M "${Q[@]}"
	rm -f "$S"
	contains "no O_DIRECT"
	ok "tmpfs target: exit 3, no O_DIRECT"
fi

F=$D/small
head -c 8M /dev/urandom >"$F"
run 2 "$SWAPTOOL" --state "$STATE" accept "$F"
contains "--working-set"
contains "larger than '$F'"
contains "--working-set 8M or less"
run 2 "$SWAPTOOL" --state "$STATE" accept "$F" --working-set 4M --sweep 4M,1G "${Q[@]}"
contains "sweep"
ok "working set larger than the target: exit 2 suggesting --working-set"

run 2 "$SWAPTOOL" --state "$STATE" accept "$F" --bogus
run 2 "$SWAPTOOL" --state "$STATE" accept "$F" "$F"
contains "one target only"
run 2 "$SWAPTOOL" --state "$STATE" accept "$F" --inflight 0
run 2 "$SWAPTOOL" --state "$STATE" accept "$F" --ramp x
run 2 "$SWAPTOOL" --state "$STATE" accept "$F" --working-set 1.5x
run 2 "$SWAPTOOL" --state "$STATE" accept "$F" --gate noequals
ok "bad options: exit 2"

# a sparse file: 32 MiB written, then 32 MiB of hole; the centered 32 MiB working set is
# half hole (16..32 MiB data, 32..48 MiB hole)
P=$D/sparse
head -c 32M /dev/urandom >"$P"
truncate -s 64M "$P"
sync "$P"
run01 "$SWAPTOOL" --json --state "$STATE" accept "$P" --working-set 32M "${Q[@]}"
jeq '.representative' false
jeq '.working_set.method' fiemap
jeq '.working_set.unbacked_bytes' 16777216
jeq '[.checks[] | select(.id == "representative")][0].status' warn
ok "holes in the working set: warned, record says not representative"

# a file of data only: no sweep working set is flagged
head -c 64M /dev/urandom >"$D/full"
sync "$D/full"
run01 "$SWAPTOOL" --json --state "$STATE" accept "$D/full" --working-set 4M --sweep 4M,16M "${Q[@]}"
jeq '[.sweep[].working_set.representative] | join(",")' true,true
jeq '[.checks[] | select(.id == "sweep-representative")] | length' 0
# a file written only in its middle 8 MiB: the main working set (8 MiB) is all data, a 32 MiB
# sweep is three quarters hole
M=$D/middle
truncate -s 32M "$M"
head -c 8M /dev/urandom | dd of="$M" bs=1M seek=12 conv=notrunc status=none
sync "$M"
run01 "$SWAPTOOL" --json --state "$STATE" accept "$M" --working-set 8M --sweep 8M,32M "${Q[@]}"
jeq '.representative' true
jeq '[.sweep[].working_set.unbacked_bytes] | join(",")' 0,25165824
jeq '[.checks[] | select(.id == "sweep-representative")][0].status' warn
contains "75.00 % of the 32 MiB working set is holes"
ok "holes checked for every sweep working set, not only the main one"

if [ "$(id -u)" = 0 ] && losetup -f >/dev/null 2>&1; then
	L=$(losetup -f --show "$F") || skip "losetup failed"
	trap 'losetup -d "$L" 2>/dev/null; rm -rf "$D"; cleanup_test' EXIT
	run01 "$SWAPTOOL" --json --state "$STATE" accept "$L" --working-set 4M "${Q[@]}"
	jeq '.target.kind' block
	jeq '.working_set.method' zero-sample
	jeq '.working_set.zero_blocks' 0
	# the node is "serving": something else reads the device while accept samples it
	reads() { awk '{ print $1 }' "/sys/block/${L#/dev/}/stat"; }
	r0=$(reads)
	(while :; do dd if="$L" of=/dev/null bs=4k iflag=direct status=none; done) &
	BG=$!
	wait_for 20 eval '[ "$(reads)" -gt "$r0" ]' || fail "the background reader did not start"
	run 3 "$SWAPTOOL" --state "$STATE" accept "$L" --working-set 4M --duration 1 --ramp 0 --no-seq --inflight 4
	contains "busy"
	contains "--force"
	kill "$BG"
	wait "$BG" 2>/dev/null || true
	ok "block device measured; busy device refused without --force (exit 3)"
else
	echo "# no root/loop: block-device and busy checks not run"
fi
