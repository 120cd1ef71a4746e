# SPDX-License-Identifier: MIT
# scenario: the bootable Debian cloned onto a USB UAS disk behind a bridge's strings, then that disk booted alone as NVMe under OVMF: the source's node

# The node's one M.2 slot holds the old drive during path 2, so the new one is in a USB enclosure:
# here a 3 GiB SCSI disk behind QEMU's UAS bridge with a Realtek RTL9210B-CG's INQUIRY strings and
# a VPD serial, 512-byte logical blocks as such bridges present (Debian's generic kernel with its
# NVMe, SCSI, USB and fuse modules, tests/vm/lib.sh vm_kernel_generic). The source is the bench's
# bootable disk on NVMe (tests/vm/uefi.sh). In the guest: plan and clone --yes onto /dev/sdX. Then
# the same image, as the drive moved into the slot, boots alone as NVMe under OVMF and must report
# the source's node (the checks of 10-boot-nvme).
USB_SERIAL=A5KFB2400001MINI
USB_VENDOR=Realtek
USB_PRODUCT=RTL9210B-CG

host() {
	vm_kernel_generic
	uefi_source_image
	cp --sparse=always "$UEFI_IMG" "$VMRUN/src.img"
	truncate -s "$UEFI_CUT_BYTES" "$VMRUN/tgt.img"
	src_fingerprint "$VMRUN/src.img" >"$VMRUN/src.before"
	vm_drive "$VMRUN/src.img" "$SOURCE_SERIAL"
	vm_usb "$VMRUN/tgt.img" uas "$USB_SERIAL" "$USB_VENDOR" "$USB_PRODUCT"
	VM_TIMEOUT=${VM_TIMEOUT:-600} vm_boot clone_usb || exit 1
	[ "$VM_RC" = 0 ] || fail "the guest part failed"
	load plan
	jeq .plan.paths.fs_clone.cost.usb_link_side target
	jeq .plan.paths.fs_clone.needs_shrink true
	src_fingerprint "$VMRUN/src.img" | cmp -s - "$VMRUN/src.before" || fail "the source image changed"
	ok "plan: the target is on USB, its link paces the clone ($(jq -r .tran "$VMOUT/usb.out") per lsblk, $(jq -r .vendor "$VMOUT/usb.out") $(jq -r .model "$VMOUT/usb.out"))"
	load clone
	jeq .plan.target.transport usb
	jeq .plan.target.bridge.driver uas
	jeq '.plan.target.bridge.vendor_id | test("^[0-9a-f]{4}$")' true
	jeq .plan.source.transport nvme
	ok "clone: its record names the target's transport (usb) and bridge (QEMU's, $(printf '%s' "$OUT" | jq -r .plan.target.bridge.vendor_id), uas), the source's (nvme)"
	uefi_clone_boots "$VMRUN/src.img" "$VMRUN/tgt.img"
}

clone_usb() {
	local d t=
	expect_ctrl nvme0 "$SOURCE_SERIAL"
	# USB disks are probed after init starts: until the one there is has its size (60 s)
	for _ in $(seq 600); do
		for d in /sys/block/sd*; do
			[ "$(cat "$d/size" 2>/dev/null || echo 0)" != 0 ] && t=${d##*/}
		done
		[ -n "$t" ] && break
		sleep 0.1
	done
	[ -n "$t" ] || fail "the USB disk did not appear: $(ls /sys/block)"
	run usb 0 lsblk -Jdno TRAN,VENDOR,MODEL,LOG-SEC "/dev/$t"
	jq '.blockdevices[0] | {tran, vendor: (.vendor // "" | sub(" +$"; "")), model: (.model // "" | sub(" +$"; "")), "log-sec"}' /out/usb.out >/tmp/usb &&
		mv /tmp/usb /out/usb.out
	[ "$(jq -r .tran /out/usb.out)" = usb ] || fail "lsblk says /dev/$t is not on USB: $(cat /out/usb.out)"
	[ "$(jq -r '."log-sec"' /out/usb.out)" = 512 ] || fail "the USB disk does not present 512-byte blocks: $(cat /out/usb.out)"
	run plan 0 swaptool --state "$STATE" --json plan /dev/nvme0n1 --target "/dev/$t"
	run clone 0 swaptool --state "$STATE" --json clone /dev/nvme0n1 "/dev/$t" --yes
}
