# SPDX-License-Identifier: MIT
# scenario: the bootable Debian against a target of 4096-byte LBAs: path 2 refused with the reason while its ESP has 512-byte sectors (the target unchanged); with one of 4096-byte sectors the clone boots as a 4Kn NVMe under OVMF

# The target is a 3 GiB NVMe namespace of 4096-byte LBAs (QEMU's logical_block_size=4096), as a
# 4Kn drive or a bridge presenting 4K. First the bench's bootable disk (tests/vm/uefi.sh), whose
# ESP is a FAT32 of 512-byte sectors: a GPT written in 4096-byte LBAs is not found by the firmware
# of a 512-byte slot, and Linux refuses a FAT of 512-byte sectors on a 4096-byte drive ("FAT-fs:
# logical sector size too small"), so such a clone would not boot and path 2 must be refused
# before a byte is written: the guest's kernel reports the two LBA sizes, preflight and plan exit 1
# (lba-format fails, path 2 not possible, the reason), clone --yes exits 3; on the host the target
# image is byte for byte as it was. Then the same disk with its ESP re-made as a FAT of 4096-byte
# sectors (same files, label and volume id: uefi_esp_4k), as a 4Kn install has it: plan and clone
# pass, and the target, booted alone under OVMF as an NVMe namespace of 4096-byte LBAs, reports
# the source's node (the checks of 10-boot-nvme, its GPT read at 4096-byte LBAs).
TGT_PROPS=logical_block_size=4096,physical_block_size=4096

host() {
	uefi_source_image
	cp --sparse=always "$UEFI_IMG" "$VMRUN/src.img"
	truncate -s "$UEFI_CUT_BYTES" "$VMRUN/tgt.img"
	local before
	before=$(sha256sum <"$VMRUN/tgt.img")
	src_fingerprint "$VMRUN/src.img" >"$VMRUN/src.before"
	vm_drive "$VMRUN/src.img" "$SOURCE_SERIAL"
	vm_drive "$VMRUN/tgt.img" "$TARGET_SERIAL" "$TGT_PROPS"
	vm_boot refuse_4k || exit 1
	[ "$VM_RC" = 0 ] || fail "the guest part failed"
	[ "$(cat "$VMOUT/lbs.out")" = "512 4096" ] || fail "the guest's kernel reports LBA sizes '$(cat "$VMOUT/lbs.out")', not '512 4096'"
	load preflight
	jeq .target.lba_size 4096
	jeq .paths.fs_clone.possible false
	jeq '.checks[] | select(.id == "lba-format") | .status' fail
	jeq '.paths.fs_clone.reason | test("FAT with 512-byte sectors")' true
	load plan
	jeq .plan.paths.fs_clone.possible false
	jeq '.plan.paths.fs_clone.why_not | test("512-byte LBAs and the target 4096-byte")' true
	ok "preflight and plan: path 2 not possible, lba-format fails: $(printf '%s' "$OUT" | jq -r .plan.paths.fs_clone.why_not)"
	load clone
	contains "path 2 is not possible"
	contains "4096-byte"
	[ "$(sha256sum <"$VMRUN/tgt.img")" = "$before" ] || fail "the refused clone wrote to the target"
	src_fingerprint "$VMRUN/src.img" | cmp -s - "$VMRUN/src.before" || fail "the source image changed"
	ok "clone refused (exit 3) with the reason; the target's $UEFI_CUT_BYTES bytes unchanged (sha256), the source too"

	uefi_esp_4k "$VMRUN/src.img"
	vm_drive "$VMRUN/src.img" "$SOURCE_SERIAL"
	vm_drive "$VMRUN/tgt.img" "$TARGET_SERIAL" "$TGT_PROPS"
	vm_boot clone_4k || exit 1
	[ "$VM_RC" = 0 ] || fail "the guest part failed"
	load plan
	jeq .plan.target.lba_size 4096
	jeq .plan.paths.fs_clone.possible true
	ok "with the ESP re-made in 4096-byte sectors, path 2 is possible onto the 4096-byte target"
	uefi_clone_boots "$VMRUN/src.img" "$VMRUN/tgt.img" 4096
}

refuse_4k() {
	expect_ctrl nvme0 "$SOURCE_SERIAL"
	expect_ctrl nvme1 "$TARGET_SERIAL"
	echo "$(cat /sys/block/nvme0n1/queue/logical_block_size) $(cat /sys/block/nvme1n1/queue/logical_block_size)" >/out/lbs.out
	run preflight 1 swaptool --state "$STATE" --json preflight /dev/nvme0n1 --target /dev/nvme1n1
	run plan 1 swaptool --state "$STATE" --json plan /dev/nvme0n1 --target /dev/nvme1n1
	run clone 3 swaptool --state "$STATE" clone /dev/nvme0n1 /dev/nvme1n1 --yes
}

clone_4k() {
	expect_ctrl nvme0 "$SOURCE_SERIAL"
	expect_ctrl nvme1 "$TARGET_SERIAL"
	run plan 0 swaptool --state "$STATE" --json plan /dev/nvme0n1 --target /dev/nvme1n1
	run clone 0 swaptool --state "$STATE" --json clone /dev/nvme0n1 /dev/nvme1n1 --yes
}
