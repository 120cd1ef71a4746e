# SPDX-License-Identifier: MIT
# scenario: libnvme against nvme-cli: tests/nvme-real.sh in the guest, every identity and health field of both drives

# nvme0 the incident's source, nvme1 the empty target: tests/nvme-real.sh compares each field
# swaptool reports with nvme-cli's id-ctrl, id-ns, smart-log and error-log in -o json and with
# sysfs. (The results drive is one more QEMU controller of the same kind: left out, it costs 20 s.)
host() {
	"$MKDISK" incident "$VMRUN/src.img" >/dev/null
	truncate -s "$TARGET_BYTES" "$VMRUN/tgt.img"
	vm_drive "$VMRUN/src.img" "$SOURCE_SERIAL"
	vm_drive "$VMRUN/tgt.img" "$TARGET_SERIAL"
	vm_input "$SRCDIR/tests/nvme-real.sh"
	vm_boot nvme_cli || exit 1
	load nvme-real
	printf '%s\n' "$OUT" | sed 's/^/  | /'
	[ "$VM_RC" = 0 ] || fail "tests/nvme-real.sh failed in the guest"
	local n
	for c in nvme0 nvme1; do contains "/dev/$c: QEMU NVMe Ctrl"; done
	contains "id-ctrl sn = $SOURCE_SERIAL"
	contains "id-ctrl sn = $TARGET_SERIAL"
	contains "ns 1 nsze = 4000797360"
	contains "ns 1 nsze = 3907029168"
	n=$(printf '%s\n' "$OUT" | sed -n 's/^\([0-9]*\) fields compared, 0 differ$/\1/p')
	# Each controller: 67 fields (60 and 7 a namespace).
	[ -n "$n" ] && [ "$n" -ge 134 ] || fail "expected 134 fields or more compared on two controllers, none differing"
	ok "tests/nvme-real.sh: $n fields of both controllers equal nvme-cli's"
}

nvme_cli() {
	expect_ctrl nvme0 KS24XG7K2T0000D4
	expect_ctrl nvme1 A5KFB2400001MINI
	NVME_REAL_CTRLS="nvme0 nvme1" run nvme-real 0 bash /vm/in/nvme-real.sh
}
