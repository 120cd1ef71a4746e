#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A target that presents 4096-byte logical blocks (a 4Kn namespace, a USB bridge) against a source of
# 512-byte ones (issue 29): the GPT rewritten in 4096-byte LBAs and a FAT ESP of 512-byte sectors copied
# raw do not boot there (Linux: "FAT-fs: logical sector size too small"). plan says path 2 is not
# possible and why, with a failed check; preflight too; clone refuses before writing a byte, and the
# rehearsal refuses as plan does. A 4096-byte target given as a size is judged the same. With the
# ESP re-made as a FAT of 4096-byte sectors the clone is safe, and runs and verifies.
. "$SRCDIR/tests/lib.sh"
: "${MKDISK:?run through meson test (tests/run)}"
need_loop
for t in blkid; do command -v $t >/dev/null || skip "$t missing"; done

"$MKDISK" scaled "$TMP/src.img" --written 8 >"$TMP/src.json"
truncate -s 4294967296 "$TMP/tgt.img"
attach "$TMP/src.img"; SRC=$DEV
[ "$(blockdev --getss "$SRC")" = 512 ] || skip "the source loop device does not have 512-byte sectors"
# not lib.sh's attach: on a disk without a table its partx pipeline fails under pipefail
TGT=$(losetup -f --show --sector-size 4096 "$TMP/tgt.img" 2>/dev/null) || skip "losetup --sector-size 4096 failed"
LOOPS+=("$TGT")
[ "$(blockdev --getss "$TGT")" = 4096 ] || skip "the kernel did not give $TGT 4096-byte sectors"
blockdev --setrw "$TGT" 2>/dev/null || true
# what the source's ESP is: FAT with 512 bytes per sector (boot sector offset 11), read independently
p1=$(partx -g -n 1 -o START "$SRC" | tr -d ' ')
bps=$(od -An -tu2 -j $((p1 * 512 + 11)) -N2 "$SRC" | tr -d ' ')
[ "$bps" = 512 ] || fail "mkdisk's ESP has $bps bytes per sector, not 512"
digest() { dd if="$1" bs=1M count=8 status=none | sha256sum; }
P=(--state "$STATE")

# plan: path 2 is not possible, with both sizes and why; a failed check (exit 1), path 1 offered.
run 1 "$SWAPTOOL" "${P[@]}" --json plan "$SRC" --target "$TGT"
jeq .plan.target.lba_size 4096
jeq .plan.source.lba_size 512
jeq .plan.paths.fs_clone.possible false
jeq '.plan.paths.fs_clone.actions | length' 0
jeq '.plan.paths.fs_clone.why_not | test("512-byte LBAs and the target 4096-byte")' true
jeq '.plan.paths.fs_clone.why_not | test("FAT with 512-byte sectors")' true
jeq '.plan.paths.fs_clone.why_not | test("use path 1")' true
jeq '.checks[] | select(.id=="lba-format") | .status' fail
jeq '.plan.paths.fresh_install.possible' true
# a device's own LBA size wins over --target-lba-size (which counts for a size or an image)
run 1 "$SWAPTOOL" "${P[@]}" --json plan "$SRC" --target "$TGT" --target-lba-size 512
jeq .plan.target.lba_size 4096
jeq .plan.paths.fs_clone.possible false
run 1 "$SWAPTOOL" "${P[@]}" plan "$SRC" --target "$TGT"
contains "path 2 is refused"
contains "put the target where it presents the LBA size it will have in the slot"
ok "plan: path 2 not possible across LBA sizes"

# The same target as a size with --target-lba-size 4096, and the rehearsal.
run 1 "$SWAPTOOL" "${P[@]}" --json plan "$SRC" --target 4294967296 --target-lba-size 4096
jeq .plan.paths.fs_clone.possible false
jeq '.checks[] | select(.id=="lba-format") | .status' fail
run 1 "$SWAPTOOL" "${P[@]}" plan "$SRC" --target "$TGT" --rehearse --scratch "$TMP"
contains "nothing to rehearse"
# Same LBA size as a size: path 2 stays possible.
run 0 "$SWAPTOOL" "${P[@]}" --json plan "$SRC" --target 4294967296
jeq .plan.paths.fs_clone.possible true
ok "plan: a size target with --target-lba-size, the rehearsal"

# preflight: which paths are possible.
run 1 "$SWAPTOOL" "${P[@]}" --json preflight "$SRC" --target "$TGT"
jeq .target.lba_size 4096
jeq .paths.fs_clone.possible false
jeq '.paths.fs_clone.reason | test("FAT with 512-byte sectors")' true
jeq '.checks[] | select(.id=="lba-format") | .status' fail
ok "preflight: path 2 not possible across LBA sizes"

# clone refuses before it writes: exit 3 (refused for safety), the target's first MiBs unchanged.
t0=$(digest "$TGT"); s0=$(sha256sum <"$SRC")
run 3 "$SWAPTOOL" "${P[@]}" clone "$SRC" "$TGT" --yes
contains "path 2 is not possible"
contains "4096-byte"
[ "$(digest "$TGT")" = "$t0" ] || fail "the refused clone wrote to the target"
[ "$(sha256sum <"$SRC")" = "$s0" ] || fail "the refused clone changed the source"
[ -z "$(blkid -p "$TGT" 2>/dev/null)" ] || fail "blkid finds something on the refused target: $(blkid -p "$TGT")"
ok "clone refuses across LBA sizes; the target untouched"

# The safe case: the same source with its ESP re-made as a FAT of 4096-byte sectors (mkfs.vfat -S
# 4096, its offset counted in those sectors, mkdisk's volume id and label kept). Every filesystem
# works at 4096-byte LBAs: path 2 is possible, clone writes the GPT in 4096-byte LBAs, and its
# verification and the independent tools (sgdisk -v on the 4096-byte device, blkid, fsck.vfat,
# e2fsck) agree.
command -v mkfs.vfat >/dev/null || skip "mkfs.vfat missing"
p1end=$(partx -g -n 1 -o END "$SRC" | tr -d ' ')
mkfs.vfat -I --offset $((p1 * 512 / 4096)) -S 4096 --mbr=n --invariant -F 16 -i D6C40001 -n EFI "$SRC" \
	$(((p1end - p1 + 1) / 2)) >/dev/null 2>&1 || fail "mkfs.vfat -S 4096 on ${SRC}'s p1"
[ "$(od -An -tu2 -j $((p1 * 512 + 11)) -N2 "$SRC" | tr -d ' ')" = 4096 ] || fail "p1 is not a FAT of 4096-byte sectors"
run 0 "$SWAPTOOL" --state "$TMP/st2" --json plan "$SRC" --target "$TGT"
jeq .plan.paths.fs_clone.possible true
jeq '[.checks[] | select(.id=="lba-format" and .status=="fail")] | length' 0
run 0 "$SWAPTOOL" --state "$TMP/st2" --json clone "$SRC" "$TGT" --yes
jeq .verdict pass
jeq '.checks[] | select(.id=="target-lba-size") | .status' pass
jeq '.checks[] | select(.id=="sector-size-p1") | .status' pass
for i in $(seq 50); do
	partx -a "$TGT" 2>/dev/null || partx -u "$TGT" 2>/dev/null || true
	[ -b "${TGT}p2" ] && break
	sleep 0.1
done
[ -b "${TGT}p2" ] || fail "no ${TGT}p2 after the clone"
sgdisk -v "$TGT" | grepq "No problems found" || fail "sgdisk -v $TGT"
[ "$(blkid -p -o value -s UUID "${TGT}p1")" = D6C4-0001 ] || fail "UUID p1"
[ "$(blkid -p -o value -s UUID "${TGT}p2")" = 0d6c4e57-7e41-493d-a531-809dda000002 ] || fail "UUID p2"
[ "$(blkid -p -o value -s PART_ENTRY_OFFSET "${TGT}p1")" = $((p1)) ] || fail "p1 does not start at byte $((p1 * 512))"
if command -v fsck.vfat >/dev/null; then fsck.vfat -n "${TGT}p1" >/dev/null || fail "fsck.vfat -n ${TGT}p1"; fi
e2fsck -fn "${TGT}p2" >/dev/null 2>&1 || fail "e2fsck -fn ${TGT}p2"
ok "a FAT of 4096-byte sectors: path 2 onto the 4096-byte target, verified"
