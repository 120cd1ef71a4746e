#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A target that presents 4096-byte logical blocks (a 4Kn namespace, a USB bridge) against a source of
# 512-byte ones (issue 29): the GPT rewritten in 4096-byte LBAs and a FAT ESP of 512-byte sectors copied
# raw do not boot there (Linux: "FAT-fs: logical sector size too small"). plan says path 2 is not
# possible and why, with a failed check; preflight too; clone refuses before writing a byte, and the
# rehearsal refuses as plan does. A 4096-byte target given as a size is judged the same.
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
