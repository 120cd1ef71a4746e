# SPDX-License-Identifier: MIT
# scenario: drives behind USB bridges (UAS and Bulk-Only): preflight, plan and accept name the bridge; accept refuses it without --force

# The node has one M.2 slot, so during path 2 the new drive sits in a USB enclosure. Here the source
# is mkdisk's `scaled` image (the incident's layout at 1/1000) on NVMe, the incident's 2 TB
# target behind QEMU's UAS bridge (a SCSI disk with a bridge's INQUIRY strings and a VPD serial,
# sparse), and a small disk of random bytes on a Bulk-Only (usb-storage) bridge is what accept is
# pointed at. The cloud kernel has no USB: this
# scenario boots Debian's generic kernel with its NVMe, SCSI and USB modules (vm_kernel_generic).
# What swaptool says is checked against what the guest's own sysfs and lsblk say.
USB_SERIAL=A5KFB2400001MINI
USB_VENDOR=Realtek
USB_PRODUCT=RTL9210B-CG

host() {
	vm_kernel_generic
	"$MKDISK" scaled "$VMRUN/src.img" >/dev/null
	truncate -s "$TARGET_BYTES" "$VMRUN/tgt.img"
	head -c 64M /dev/urandom >"$VMRUN/small.img"
	vm_drive "$VMRUN/src.img" "$SOURCE_SERIAL"
	vm_usb "$VMRUN/tgt.img" uas "$USB_SERIAL" "$USB_VENDOR" "$USB_PRODUCT"
	vm_usb "$VMRUN/small.img" storage BULK0001
	VM_TIMEOUT=${VM_TIMEOUT:-400} vm_boot usb_bridge || exit 1
	[ "$VM_RC" = 0 ] || fail "the guest part failed"

	load sysfs
	local tgt small tvid tspeed sspeed
	tgt=$(printf '%s' "$OUT" | jq -r .target)
	small=$(printf '%s' "$OUT" | jq -r .small)
	tvid=$(printf '%s' "$OUT" | jq -r .target_vid)
	tspeed=$(printf '%s' "$OUT" | jq -r .target_speed)
	sspeed=$(printf '%s' "$OUT" | jq -r .small_speed)
	jeq .target_tran usb
	jeq .target_vpd_serial "$USB_SERIAL"
	echo "  guest: target /dev/$tgt (bridge $tvid, $tspeed Mb/s), small /dev/$small ($sspeed Mb/s)"

	load preflight
	jeq .target.transport usb
	jeq .target.serial "$USB_SERIAL"
	jeq .target.size_bytes "$TARGET_BYTES"
	jeq .target_identity.bridge.vendor_id "$tvid"
	jeq .target_identity.bridge.speed_mbps "$tspeed"
	jeq .target_identity.bridge.driver uas
	jeq '.target_identity.reason | test("^behind USB bridge ")' true
	jeq '.checks[] | select(.id == "usb-bridge") | .status' warn
	jeq '.checks[] | select(.id == "usb-bridge") | .summary | test("target behind USB bridge .*judge it in the slot after the swap")' true
	# QEMU's bridge (USB vendor 46f4) is of no family swaptool reads through: no vendor command tried
	jeq '.checks[] | select(.id == "usb-bridge") | .summary | test("reading it through")' false
	jeq .target_identity.read_through null
	jeq '.paths.fs_clone.possible' true
	jeq .source.transport nvme
	ok "preflight: the target on USB is named with its bridge, link and VPD serial; a warning says to judge it in the slot"

	load preflight-model
	jeq .target_identity.from model
	jeq '.target_identity.reason | test("behind USB bridge .*judged from --target-model")' true
	jeq .target_identity.class.name "Corsair MP600 Mini"
	ok "preflight --target-model names the drive inside an enclosure that names itself"

	load plan
	jeq '.plan.paths.fs_clone.cost.rate_basis' "$([ "$tspeed" -lt 19000 ] && echo usb-link || echo nvme)"
	jeq '.plan.paths.fs_clone.cost.usb_link_mbps' "$tspeed"
	jeq '.plan.paths.fs_clone.cost.usb_link_side' target
	jeq '.checks[] | select(.id == "clone-cost") | .summary | test("USB link, '"$tspeed"' Mb/s, sets the pace")' true
	jeq .plan.source.transport nvme
	jeq .plan.target.transport usb
	jeq .plan.target.bridge.vendor_id "$tvid"
	jeq .plan.target.bridge.driver uas
	load plan-human
	contains "attached: source nvme; target usb behind USB bridge $tvid:"
	ok "plan: the clone's time is paced by the target's USB link ($tspeed Mb/s); the record and the table name both drives' transport and the bridge"

	load accept-refused
	contains "behind USB bridge"
	contains "run accept with the drive in the slot after the swap"
	load accept-forced
	jeq .drive.transport usb
	jeq .drive.bridge_limited true
	jeq .drive.bridge.speed_mbps "$sspeed"
	jeq .drive.bridge.driver usb-storage
	# QEMU's Bulk-Only disk has no VPD serial (as many bridges): the enclosure's own iSerial is kept
	# as the bridge's, never passed off as the drive's
	jeq .drive.serial "$(printf '%s' "$(cat "$VMOUT/sysfs.out")" | jq -r '.small_vpd_serial // "null"')"
	jeq .drive.bridge.serial BULK0001
	jeq '.checks[] | select(.id == "usb-bridge") | .status' warn
	jeq '[.runs[] | .complete] | all' true
	ok "accept through a Bulk-Only bridge: refused (exit 3) without --force; with it every figure is labelled bridge-limited"
}

# sysfs_facts: what the guest's kernel says about the two USB disks, independently of swaptool
sysfs_facts() {
	local t s d
	for d in /sys/block/sd*; do
		case "$(cat "$d/size")" in
		$((TARGET_BYTES / 512))) t=${d##*/} ;;
		$((64 << 11))) s=${d##*/} ;;
		esac
	done
	[ -n "${t:-}" ] && [ -n "${s:-}" ] || fail "the two USB disks did not both appear: $(ls /sys/block)"
	usbdir() { local p; p=$(readlink -f "/sys/block/$1"); while [ "$p" != / ] && [ ! -e "$p/idVendor" ]; do p=${p%/*}; done; echo "$p"; }
	jq -n --arg t "$t" --arg s "$s" --arg tran "$(lsblk -dno TRAN "/dev/$t")" \
		--arg vpd "$(tail -c +5 "/sys/block/$t/device/vpd_pg80" | tr -d '\0 ')" \
		--arg vid "$(cat "$(usbdir "$t")/idVendor")" --argjson ts "$(cat "$(usbdir "$t")/speed")" \
		--argjson ss "$(cat "$(usbdir "$s")/speed")" \
		--arg svpd "$(tail -c +5 "/sys/block/$s/device/vpd_pg80" 2>/dev/null | tr -d '\0 ')" \
		'{target: $t, small: $s, target_tran: $tran, target_vpd_serial: $vpd, target_vid: $vid, target_speed: $ts,
		  small_speed: $ss, small_vpd_serial: (if $svpd == "" then null else $svpd end)}'
}

usb_bridge() {
	local i t s
	# USB disks are probed after init starts: until both block devices are there (60 s)
	for i in $(seq 600); do
		[ "$(ls -d /sys/block/sd* 2>/dev/null | wc -l)" -ge 2 ] && break
		sleep 0.1
	done
	run sysfs 0 sysfs_facts
	t=$(jq -r .target /out/sysfs.out)
	s=$(jq -r .small /out/sysfs.out)
	run preflight 0 swaptool --state "$STATE" --json preflight /dev/nvme0 --target "/dev/$t"
	run preflight-model 0 swaptool --state /tmp/st2 --json preflight /dev/nvme0 --target "/dev/$t" \
		--target-model "Corsair MP600 Mini 2TB"
	run plan 0 swaptool --state "$STATE" --json plan /dev/nvme0 --target "/dev/$t"
	run plan-human 0 swaptool --state /tmp/st5 plan /dev/nvme0 --target "/dev/$t"
	run accept-refused 3 swaptool --state /tmp/st3 accept "/dev/$s" --working-set 16M --no-seq --duration 1 --ramp 0
	# gates fail on an emulated USB disk (exit 1); anything but 0 or 1 is a failure
	local rc=0
	swaptool --state /tmp/st4 --json accept "/dev/$s" --working-set 16M --no-seq --duration 1 --ramp 0 --force \
		>/out/accept-forced.out 2>/out/accept-forced.err || rc=$?
	[ "$rc" = 0 ] || [ "$rc" = 1 ] || { cat /out/accept-forced.err; fail "accept --force exited $rc"; }
}
