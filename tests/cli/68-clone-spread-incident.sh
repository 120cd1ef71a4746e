#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The incident's disk shaped like a used one (mkdisk spread: 1.33 TiB allocated over every block
# group, 48 GB of it past the new end, written files among it): plan --rehearse costs metadata,
# not data (time, scratch peak under 2 GB, a short scratch directory refused up front, SIGINT
# cleans up), and clone moves what lies past the new end into the target without writing the
# source (its digest over every byte unchanged; SIGTERM mid-shrink included), checked with
# sgdisk -v, e2fsck -fn, blkid and the files' hashes.
. "$SRCDIR/tests/lib.sh"
: "${MKDISK:?run through meson test (tests/run)}"
[ -e /dev/fuse ] || skip "no /dev/fuse: the shrink on the way needs FUSE"
need_root

"$MKDISK" spread "$TMP/src.img" --written 200 >"$TMP/src.json"
S=$TMP/src.img
off=$(jq -r '.partition_table.partitions[1].fs.offset_bytes' "$TMP/src.json")
cut=488247313
sync "$S"   # writeback settled: the digest reads the file as it stays
src0=$(sparse_digest "$S")

# The fixture: at least 30 GB allocated past block 488,247,313, and written files there.
run 0 "$SWAPTOOL" --state "$STATE" --json plan "$S" --target 2000398934016
past=$(printf '%s' "$OUT" | jq -r .plan.paths.fs_clone.cost.past_cut_bytes)
[ "$past" -ge 30000000000 ] || fail "only $past bytes in use past block $cut"
jeq '.checks[] | select(.id=="clone-cost") | .summary | test("moves 48,[0-9,]+ B that lie past the new end")' true
jeq '.checks[] | select(.id=="clone-cost") | .summary | test("rehearsal needs .* the clone takes about [0-9]+ min")' true
n_past=0
while read -r f; do
	b=$(debugfs -R "bmap \"$f\" 0" "$S?offset=$off" 2>/dev/null)
	[ "$b" -ge "$cut" ] && n_past=$((n_past + 1))
done < <(jq -r '.files[] | select(.partition == 2) | .path' "$TMP/src.json" | grep /data/)
[ "$n_past" -ge 2 ] || fail "only $n_past written files start past block $cut"
ok "spread fixture: $past B in use past the new end, $n_past written files there"

# A scratch directory too small for the rehearsal: refused before anything is made there.
mkdir -p "$TMP/small"
mount -t tmpfs -o size=64m tmpfs "$TMP/small" || skip "cannot mount a tmpfs"
run 3 "$SWAPTOOL" --state "$STATE" plan "$S" --target 2000398934016 --rehearse --scratch "$TMP/small"
umount "$TMP/small"
contains "the rehearsal needs"
ok "short scratch directory refused"

# SIGINT while the rehearsal's shrink runs: exit 130, scratch files and mount gone.
mkdir -p "$TMP/scr"
"$SWAPTOOL" --state "$STATE" plan "$S" --target 2000398934016 --rehearse --scratch "$TMP/scr" >"$TMP/o" 2>"$TMP/e" &
pid=$!
for i in $(seq 1200); do
	grep -q "$TMP/scr/.*swaptool-composite" /proc/mounts && break
	kill -0 $pid 2>/dev/null || break
	sleep 0.05
done
kill -INT $pid 2>/dev/null || true
got=0
wait $pid || got=$?
[ "$got" = 130 ] || { cat "$TMP/o" "$TMP/e"; fail "interrupted rehearsal exited $got, expected 130"; }
if grep -q "$TMP/scr" /proc/mounts; then fail "a composite mount is left after SIGINT"; fi
[ -z "$(ls -A "$TMP/scr")" ] || fail "scratch files left after SIGINT: $(ls -A "$TMP/scr")"
ok "SIGINT during the rehearsal: exit 130, scratch removed"

run 0 "$SWAPTOOL" --state "$STATE" --json plan "$S" --target 2000398934016 --rehearse --scratch "$TMP"
jeq .rehearsal.ok true
secs=$(printf '%s' "$OUT" | jq -r .rehearsal.seconds)
peak=$(printf '%s' "$OUT" | jq -r .rehearsal.scratch_peak_bytes)
echo "rehearsal: $secs s, scratch peak $peak B"
[ "$peak" -lt 2000000000 ] || fail "the rehearsal used $peak bytes of scratch space"
# The issue's figure is 60 s on an idle machine (bench/clone-vs-e2image measures it); a loaded CI
# machine gets three times that.
awk -v s="$secs" 'BEGIN { exit !(s < 180) }' || fail "rehearsal took $secs s"
ok "rehearsal (${secs} s, ${peak} B scratch)"

truncate -s 2000398934016 "$TMP/tgt.img"
T=$TMP/tgt.img

# SIGTERM while the shrink's composite file is mounted: exit 130, the tools stopped, nothing left
# mounted, the target without a table, the source unchanged.
# (the composite's mount point goes under $TMPDIR: this test's own, whatever else runs)
TMPDIR=$TMP "$SWAPTOOL" --state "$TMP/st-term" clone "$S" "$T" --yes >"$TMP/o" 2>"$TMP/e" &
pid=$!
for i in $(seq 1200); do
	grep -q "$TMP/swaptool-composite" /proc/mounts && break
	kill -0 $pid 2>/dev/null || break
	sleep 0.05
done
grep -q "$TMP/swaptool-composite" /proc/mounts || { wait $pid || true; cat "$TMP/e"; fail "the shrink's composite file never appeared"; }
kill -TERM $pid
got=0
wait $pid || got=$?
[ "$got" = 130 ] || { cat "$TMP/o" "$TMP/e"; fail "clone stopped by SIGTERM exited $got, expected 130"; }
grep -q "interrupted during shrink" "$TMP/e" || fail "no 'interrupted during shrink': $(cat "$TMP/e")"
sleep 0.5
if grep -q "$TMP/swaptool-composite" /proc/mounts; then fail "a composite mount is left after SIGTERM"; fi
if pgrep -af resize2fs | grepq -F "$TMP/"; then fail "resize2fs left running"; fi
if sfdisk -d "$T" >/dev/null 2>&1; then fail "the interrupted target carries a partition table"; fi
[ "$(sparse_digest "$S")" = "$src0" ] || fail "the interrupted clone changed the source"
ok "SIGTERM during the shrink: exit 130, nothing mounted, no table, source unchanged"

t0=$(date +%s.%N)
run 0 "$SWAPTOOL" --state "$STATE" --json clone "$S" "$T" --yes
t1=$(date +%s.%N)
secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
echo "clone: $secs s"
jeq .verdict pass
jeq .clone.source_written false
jeq '.clone.actions[] | select(.action=="shrink") | .detail | test("the source was not written")' true
awk -v s="$secs" 'BEGIN { exit !(s < 180) }' || fail "clone took $secs s"
[ "$(sparse_digest "$S")" = "$src0" ] || fail "the clone changed the source"
e2fsck -fn "$T?offset=$off" >"$TMP/fsck" 2>&1 || { cat "$TMP/fsck"; fail "e2fsck -fn of the target"; }
sgdisk -v "$T" | grepq "No problems found" || fail "sgdisk -v of the target"
[ "$(sfdisk -J "$T" | jq -r '[.partitiontable.partitions[].uuid] | join(",")')" = \
  D6C40001-7E41-493D-A531-809DDA000001,D6C40002-7E41-493D-A531-809DDA000002 ] || fail "PARTUUIDs"
[ "$(blkid -p -o value -s UUID -O "$off" "$T")" = 0d6c4e57-7e41-493d-a531-809dda000002 ] || fail "ext4 UUID"
[ "$(blkid -p -o value -s UUID -O 1048576 "$T")" = D6C4-0001 ] || fail "vfat UUID"
[ "$(debugfs -R 'stats -h' "$T?offset=$off" 2>/dev/null | awk -F: '/^Block count/ { gsub(/ /, "", $2); print $2 }')" = $cut ] ||
	fail "block count"
jq -r '.files[] | select(.partition == 2) | "\(.path) \(.sha256)"' "$TMP/src.json" | while read -r f want; do
	got=$(debugfs -R "cat \"$f\"" "$T?offset=$off" 2>/dev/null | sha256sum | cut -d' ' -f1)
	[ "$got" = "$want" ] || fail "$f: $got, expected $want"
done
ok "clone ($secs s): source unchanged; target passes e2fsck, sgdisk, UUIDs and file hashes"
