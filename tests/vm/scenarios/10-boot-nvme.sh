# SPDX-License-Identifier: MIT
# scenario: a bootable Debian on NVMe cloned onto a smaller NVMe, then the clone booted alone as NVMe under OVMF: the source's hostname, machine-id and controller.key

# The source is the bench's bootable disk (tests/vm/uefi.sh: 4 GiB, GPT, a FAT32 ESP with GRUB, an
# ext4 root that GRUB and fstab find by UUID, 48 MiB of data past 3 GiB); the target a 3 GiB NVMe,
# so the root shrinks and the data past the cut moves. In the guest (the cloud kernel): plan, then
# clone --yes. On the host: the record, sgdisk -v, the ESP with cmp, e2fsck -fn and blkid, the
# source untouched; then the target alone in the NVMe slot under OVMF must reach the disk's
# marker: GRUB, the kernel with root=UUID=, the ESP mounted, the source's node.

host() {
	uefi_source_image
	cp --sparse=always "$UEFI_IMG" "$VMRUN/src.img"
	truncate -s "$UEFI_CUT_BYTES" "$VMRUN/tgt.img"
	[ "$(jq .data_first_byte "$UEFI_META")" -ge "$UEFI_CUT_BYTES" ] || fail "the source's data past the cut is not past the target's end"
	src_fingerprint "$VMRUN/src.img" >"$VMRUN/src.before"
	vm_drive "$VMRUN/src.img" "$SOURCE_SERIAL"
	vm_drive "$VMRUN/tgt.img" "$TARGET_SERIAL"
	vm_boot clone_nvme || exit 1
	[ "$VM_RC" = 0 ] || fail "the guest part failed"
	load plan
	jeq .plan.paths.fs_clone.needs_shrink true
	jeq .plan.target.path /dev/nvme1n1
	src_fingerprint "$VMRUN/src.img" | cmp -s - "$VMRUN/src.before" || fail "the source image changed"
	uefi_clone_boots "$VMRUN/src.img" "$VMRUN/tgt.img"
}

clone_nvme() {
	expect_ctrl nvme0 "$SOURCE_SERIAL"
	expect_ctrl nvme1 "$TARGET_SERIAL"
	run plan 0 swaptool --state "$STATE" --json plan /dev/nvme0n1 --target /dev/nvme1n1
	run clone 0 swaptool --state "$STATE" --json clone /dev/nvme0n1 /dev/nvme1n1 --yes
}
