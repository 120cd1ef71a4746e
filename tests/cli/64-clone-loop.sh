#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# clone between loop devices (root): O_EXCL refusals (a mounted partition, a loop over the source),
# then a clone (with shrink on the way, the source device unchanged) checked by e2fsck -fn, sgdisk -v, blkid and file hashes through partition nodes.
. "$SRCDIR/tests/lib.sh"
: "${MKDISK:?run through meson test (tests/run)}"
need_loop
for t in partx blkid sgdisk e2fsck debugfs; do command -v $t >/dev/null || skip "$t missing"; done

"$MKDISK" incident "$TMP/src.img" --written 64 >"$TMP/src.json"
truncate -s 2000398934016 "$TMP/tgt.img"
attach "$TMP/src.img"; SRC=$DEV
# not lib.sh's attach: on a disk without a table its partx pipeline fails under pipefail
TGT=$(losetup -f --show "$TMP/tgt.img") || skip "losetup failed"
LOOPS+=("$TGT")
P=(--state "$STATE")
digest() { { dd if="$1" bs=1M count=2 status=none; dd if="$1" bs=1M skip=513 count=4 status=none; } | sha256sum; }

run 0 "$SWAPTOOL" "${P[@]}" --json plan "$SRC" --target "$TGT"
jeq '.plan.paths.fs_clone.partitions[1].new_end_lba' 3907029134
jeq '.plan.target.path' "$TGT"

# A mounted source partition: the kernel's O_EXCL says busy; nothing written.
[ -b "${SRC}p1" ] || skip "no partition nodes for $SRC"
mkdir -p "$TMP/mnt"
# a failed check must not leave the mount holding the loop device that cleanup_test detaches
trap 'umount "$TMP/mnt" 2>/dev/null || true; cleanup_test' EXIT
mount -o ro,noload "${SRC}p2" "$TMP/mnt" || skip "cannot mount ${SRC}p2"
s0=$(digest "$SRC"); t0=$(digest "$TGT")
run 3 "$SWAPTOOL" "${P[@]}" clone "$SRC" "$TGT" --yes
contains "mounted or held"
umount "$TMP/mnt"
[ "$(digest "$SRC")" = "$s0" ] && [ "$(digest "$TGT")" = "$t0" ] || fail "mounted refusal wrote"
# A loop device over the source's own file is the source.
attach -r "$TMP/src.img"; OVER=$DEV
run 3 "$SWAPTOOL" "${P[@]}" clone "$SRC" "$OVER" --yes
contains "overlaps"
# The partition of the source is the source.
run 3 "$SWAPTOOL" "${P[@]}" clone "$SRC" "${SRC}p2" --yes
contains "overlaps"
[ "$(digest "$SRC")" = "$s0" ] && [ "$(digest "$TGT")" = "$t0" ] || fail "overlap refusal wrote"
ok "O_EXCL and overlap refusals"

# The clone itself on the scaled variant (4 GiB, 64 MiB written): the full-size incident clone runs
# on image files in 63-clone (through loop devices it takes minutes, all of it e2fsck and resize2fs).
"$MKDISK" scaled "$TMP/ssrc.img" --written 64 >"$TMP/src.json"
truncate -s 3899999744 "$TMP/stgt.img"   # 7,617,187 LBAs: smaller than the source, data fits
attach "$TMP/ssrc.img"; SRC=$DEV
TGT=$(losetup -f --show "$TMP/stgt.img") || skip "losetup failed"
LOOPS+=("$TGT")
src0=$(sha256sum <"$SRC")
run 0 "$SWAPTOOL" --state "$TMP/st2" --json clone "$SRC" "$TGT" --yes
jeq .verdict pass
jeq .clone.source_written false
# how each drive is attached, as sysfs says (lsblk's TRAN is empty for a loop device)
jeq .plan.source.transport loop
jeq .plan.target.transport loop
jeq '.plan.target.bridge' null
[ "$(sha256sum <"$SRC")" = "$src0" ] || fail "the clone changed the source device's bytes"
for i in $(seq 50); do
	partx -a "$TGT" 2>/dev/null || partx -u "$TGT" 2>/dev/null || true
	[ -b "${TGT}p2" ] && break
	sleep 0.1
done
[ -b "${TGT}p2" ] || fail "no ${TGT}p2 after the clone"
e2fsck -fn "${TGT}p2" >/dev/null 2>&1 || fail "e2fsck -fn ${TGT}p2"
sgdisk -v "$TGT" | grepq "No problems found" || fail "sgdisk -v $TGT"
[ "$(blkid -p -o value -s PART_ENTRY_UUID "${TGT}p2")" = d6c40002-7e41-493d-a531-809dda000002 ] || fail "PARTUUID p2"
[ "$(blkid -p -o value -s UUID "${TGT}p2")" = 0d6c4e57-7e41-493d-a531-809dda000002 ] || fail "UUID p2"
[ "$(blkid -p -o value -s UUID "${TGT}p1")" = D6C4-0001 ] || fail "UUID p1"
jq -r '.files[] | select(.partition == 2) | "\(.path) \(.sha256)"' "$TMP/src.json" | while read -r f want; do
	got=$(debugfs -R "cat \"$f\"" "${TGT}p2" 2>/dev/null | sha256sum | cut -d' ' -f1)
	[ "$got" = "$want" ] || fail "$f differs on the target"
done
ok "clone between loop devices"
