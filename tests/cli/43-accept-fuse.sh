#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Faults and slow drives through tests/fuse/slowfs: injected EIO is counted with its offsets and
# fails the run; latency growing with the working set shows as the collapse in --sweep.
. "$SRCDIR/tests/lib.sh"

[ -n "${SLOWFS:-}" ] && [ -x "$SLOWFS" ] || skip "slowfs not built (no libfuse3)"
[ -c /dev/fuse ] || skip "no /dev/fuse"
command -v fusermount3 >/dev/null || skip "no fusermount3"
need_io_uring
M=$TMP/mnt
mkdir -p "$M"
SPID=
umount_slowfs() {
	if [ -n "$SPID" ]; then
		fusermount3 -u "$M" 2>/dev/null || umount -l "$M" 2>/dev/null || true
		wait "$SPID" 2>/dev/null || true
		SPID=
	fi
}
trap 'umount_slowfs; cleanup_test' EXIT
mount_slowfs() {
	"$SLOWFS" "$M" -f "$@" >"$TMP/slowfs.log" 2>&1 &
	SPID=$!
	for _ in $(seq 50); do
		[ -f "$M/data" ] && return 0
		sleep 0.1
	done
	cat "$TMP/slowfs.log" >&2
	skip "cannot mount slowfs (FUSE not permitted here)"
}
cat >"$TMP/lenient.ini" <<'INI'
[run rand16]
min_iops = 1
max_p50_us = 100000000
# the engine predicted from these figures passes too (a loaded test disk is slow)
[workload]
spin_limit_low = 86400
spin_limit_high = 86400
INI
Q=(--duration 1 --ramp 0 --no-seq --inflight 4)

# every 256th 4 KiB block fails with EIO: 32 bad blocks in the 32 MiB working set
mount_slowfs --size=67108864 --eio-every=256 --base-us=20 --cache=134217728
run 1 "$SWAPTOOL" --json --state "$STATE" --profile "$TMP/lenient.ini" accept "$M/data" --working-set 32M "${Q[@]}"
jeq '.runs[0].errors.count > 0' true
jeq '[.runs[0].errors.first[] | .offset % (256 * 4096) == 255 * 4096] | all' true
jeq '.runs[0].errors.first[0].error' "Input/output error"
jeq '[.checks[] | select(.id == "rand4-errors")][0].status' fail
jeq '[.gates[] | select(.name == "rand4-errors")][0].status' fail
jeq '[.checks[] | select(.id == "rand4-iops")][0].status' pass
jeq '.busy.checked' false
jeq '.verdict' fail
ok "EIO: $(printf '%s' "$OUT" | jq -r .runs[0].errors.count) errors counted with their offsets, run fails"
umount_slowfs

# a mapping cache of 8 MiB: 4 MiB fits (fast), 64 MiB and 256 MiB miss (2 ms more per read)
mount_slowfs --size=268435456 --base-us=50 --miss-us=2000 --cache=8388608
run 0 "$SWAPTOOL" --json --state "$STATE" --profile "$TMP/lenient.ini" accept "$M/data" --working-set 4M "${Q[@]}" \
	--sweep 4M,64M,256M
jeq '[.sweep[].working_set_bytes] | join(",")' 4194304,67108864,268435456
jeq '.sweep[1].iops * 2 < .sweep[0].iops' true
jeq '.sweep[2].iops * 2 < .sweep[0].iops' true
jeq '.sweep[2].lat_us.p50 > 1000' true
jeq '.sweep[0].lat_us.p50 < 1000' true
jeq '[.checks[] | select(.id == "sweep")][0].status' warn
run 0 "$SWAPTOOL" --no-color --state "$STATE" --profile "$TMP/lenient.ini" accept "$M/data" --working-set 4M \
	"${Q[@]}" --sweep 4M,64M
contains "collapses as the working set grows"
contains "|####"
ok "--sweep shows the collapse: $(printf '%s' "$OUT" | grep -c '|#') bars"
