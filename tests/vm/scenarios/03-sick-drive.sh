# SPDX-License-Identifier: MIT
# scenario: a sick drive: the source's controller reports a critical warning; preflight's health check fails naming it

# QEMU's nvme property smart_critical_warning sets the SMART critical warning byte the controller
# reports: 0x05 (spare below threshold, reliability degraded) on the source, 0x02 (temperature)
# on the target. Both drives are empty. The small healthy results drive (nvme2) is the control: as
# the source against a size it passes, and against the sick, larger nvme1 only health fails.
host() {
	truncate -s "$SOURCE_BYTES" "$VMRUN/src.img"
	truncate -s "$TARGET_BYTES" "$VMRUN/tgt.img"
	vm_drive "$VMRUN/src.img" "$SOURCE_SERIAL" smart_critical_warning=5
	vm_drive "$VMRUN/tgt.img" "$TARGET_SERIAL" smart_critical_warning=2
	vm_boot sick_drive || exit 1
	[ "$VM_RC" = 0 ] || fail "the guest part failed"

	# nvme-cli, independently, reads the same warnings from the controllers.
	load smart0; jeq .critical_warning 5
	load smart1; jeq .critical_warning 2
	load healthy; jeq .verdict pass
	jeq '.checks[] | select(.id == "health") | .status' pass
	ok "control: the healthy results drive as source passes preflight"

	load size-json
	jeq .verdict fail
	jeq '.checks[] | select(.id == "health") | .status' fail
	jeq '.checks[] | select(.id == "health") | .source.critical_warning' 5
	jeq '.checks[] | select(.id == "health") | .summary' \
		"source: critical warning 0x05 (spare below threshold) (reliability degraded)"
	jeq .source_identity.smart.critical_warning 5
	ok "--target SIZE: health fails on the source's warning 0x05"

	load human
	printf '%s\n' "$OUT" | grep -E 'health|verdict' | sed 's/^/  | /'
	contains "critical warning 0x05 (spare below threshold) (reliability degraded)"
	contains "verdict: FAIL"
	ok "the table names the warning"

	load device-json
	jeq .verdict fail
	jeq '.checks[] | select(.id == "health") | .source.critical_warning' 5
	jeq '.checks[] | select(.id == "health") | .target.critical_warning' 2
	jeq .target_identity.smart.critical_warning 2
	contains "critical warning 0x02 (temperature)"
	ok "--target /dev/nvme1: the target's own warning 0x02 is named too"

	load sick-target
	jeq .verdict fail
	jeq '[.checks[] | select(.status == "fail") | .id] | join(" ")' health
	jeq '.checks[] | select(.id == "health") | .target.critical_warning' 2
	jeq '.checks[] | select(.id == "health") | .source.critical_warning' 0
	ok "a healthy source against the sick target: health alone fails, exit 1"
}

sick_drive() {
	expect_ctrl nvme0 KS24XG7K2T0000D4
	expect_ctrl nvme1 A5KFB2400001MINI
	run smart0 0 nvme smart-log /dev/nvme0 -o json
	run smart1 0 nvme smart-log /dev/nvme1 -o json
	run healthy 0 swaptool --state "$STATE" --json preflight /dev/nvme2 --target 2000398934016
	run size-json 1 swaptool --state "$STATE" --json preflight /dev/nvme0 --target 2000398934016
	run human 1 swaptool --state "$STATE" --no-color preflight /dev/nvme0 --target 2000398934016
	run device-json 1 swaptool --state "$STATE" --json preflight /dev/nvme0 --target /dev/nvme1
	run sick-target 1 swaptool --state "$STATE" --json preflight /dev/nvme2 --target /dev/nvme1
}
