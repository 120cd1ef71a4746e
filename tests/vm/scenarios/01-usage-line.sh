# SPDX-License-Identifier: MIT
# scenario: the usage line verbatim, `swaptool preflight /dev/nvme0 --target 2000398934016`, on the incident's drives

# nvme0: the incident's source image (mkdisk incident) at 2,048,408,248,320 B; nvme1: an empty
# 2,000,398,934,016-B target. preflight reads identity, SMART and the error log from each
# controller through libnvme, and the partition table and ext4 through the kernel's nvme driver.
host() {
	"$MKDISK" incident "$VMRUN/src.img" >"$VMRUN/layout.json"
	truncate -s "$TARGET_BYTES" "$VMRUN/tgt.img"
	local before
	before=$(src_fingerprint "$VMRUN/src.img")
	vm_drive "$VMRUN/src.img" "$SOURCE_SERIAL"
	vm_drive "$VMRUN/tgt.img" "$TARGET_SERIAL"
	vm_boot usage_line || exit 1
	[ "$VM_RC" = 0 ] || vm_fail "the guest part failed"
	[ "$(src_fingerprint "$VMRUN/src.img")" = "$before" ] || vm_fail "the source image changed"
	[ "$(stat -c %s "$VMRUN/tgt.img")" = "$TARGET_BYTES" ] && [ "$(du -k "$VMRUN/tgt.img" | cut -f1)" = 0 ] ||
		vm_fail "the target image was written"
	ok "neither drive written (source mtime and ends unchanged, target still empty)"
	# which image this was (mkdisk is deterministic): what compare_native matches
	{ jq -S 'del(.path)' "$VMRUN/layout.json"; head -c 1M "$VMRUN/src.img" | sha256sum; tail -c 1M "$VMRUN/src.img" | sha256sum; } >"$VMOUT/image"
	check
	[ "$VM_FOREIGN" = 0 ] || compare_native
}

# compare_native: under VM_ARCH=arm64 (a guest of another architecture than the host's), the
# same steps on the same image as the host architecture's run of this scenario (VM_COMPARE: its
# results directory, default BUILDDIR/vm/results/01-usage-line/usage_line; when VM_COMPARE is
# unset and there is none, said and not judged) print the same: the human output byte for byte,
# the JSON in every field but the times and SMART's counters of what was read, which count the
# guest kernel's own reads too (its partition scan: one command apart between the two).
compare_native() {
	local ref=${VM_COMPARE:-$BUILDDIR/vm/results/01-usage-line/usage_line} n
	local drop='del(.started, .finished) | del(.. | objects | select(has("host_read_commands"))
		| .host_read_commands, .data_units_read, .data_read_bytes, .data_read)'
	if [ ! -e "$ref/../passed" ] || [ ! -s "$ref/image" ]; then
		[ -z "${VM_COMPARE:-}" ] || fail "VM_COMPARE=$VM_COMPARE: no passed run of scenario 1 there"
		echo "  not compared with a $VM_HOST_ARCH guest: no passed run in $ref (tests/vm/run 1 makes one)"
		return 0
	fi
	cmp -s "$ref/image" "$VMOUT/image" || fail "the $VM_HOST_ARCH run in $ref was on another image"
	diff "$ref/human.out" "$VMOUT/human.out" >&2 || fail "the human output differs from the $VM_HOST_ARCH guest's"
	for n in usage-json target-dev; do
		diff <(jq -S "$drop" "$ref/$n.out") <(jq -S "$drop" "$VMOUT/$n.out") >&2 ||
			fail "$n: the JSON differs from the $VM_HOST_ARCH guest's (above: <, $VM_HOST_ARCH; >, $VM_ARCH)"
	done
	ok "the same as the $VM_HOST_ARCH guest on the same image: the human output byte for byte, both JSON documents in every size, LBA, check and path (all but the times and SMART's read counters)"
}

# The figures of the README ("On the incident's pair, ...") and docs/incident.md, to the byte.
check_figures() {
	jeq .source.size_bytes 2048408248320
	jeq .source.lba_size 512
	jeq .source.lba_count 4000797360
	jeq .source.partition_table.backup_header_lba 4000797359
	jeq .source.partition_table.last_usable_lba 4000797326
	jeq '.source.partition_table.partitions[1].end_lba' 4000797326
	jeq .target.size_bytes 2000398934016
	jeq .target.lba_count 3907029168
	jeq .target.last_lba 3907029167
	jeq .target.last_usable_lba 3907029134
	jeq .delta_bytes -48009314304
	jeq '.checks[] | select(.id == "raw-clone") | .status' fail
	jeq '.checks[] | select(.id == "gpt-backup-header") | .source_lba' 4000797359
	jeq '.checks[] | select(.id == "gpt-backup-header") | .target_last_lba' 3907029167
	jeq '.checks[] | select(.id == "partition-fit") | .partitions[0].end_lba' 4000797326
	jeq '.checks[] | select(.id == "partition-fit") | .target_last_usable_lba' 3907029134
	jeq .paths.raw_clone.possible false
	jeq .paths.fs_clone.possible true
	jeq '.paths.fs_clone.partitions[1].new_block_count' 488247313
	jeq .paths.fresh_install.possible true
	jeq .verdict trap
}

# check_identity WHICH SERIAL NSZE CONTROLLER: an identity read from the controller, not from dumps.
check_identity() {
	jeq ".$1.nvme" true
	jeq ".$1.from" device
	jeq ".$1.controller" "$4"
	jeq ".$1.id_ctrl.sn" "$2"
	jeq ".$1.id_ctrl.mn" "QEMU NVMe Ctrl"
	jeq ".$1.id_ctrl.vid" $((0x1b36))
	jeq ".$1.id_ctrl.fr" "$(cat "$VMOUT/firmware_rev")"
	jeq ".$1.namespaces[0].nsze" "$3"
	jeq ".$1.namespaces[0].lba_size" 512
	jeq ".$1.namespaces[0].judged" true
	jeq ".$1.smart.critical_warning" 0
	jeq ".$1.smart.media_errors" 0
	jeq ".$1.error_log.entries" 0
	# SMART counts the reads the guest made: the identity comes from the live controller.
	[ "$(printf '%s' "$OUT" | jq ".$1.smart.host_read_commands")" -gt 0 ] || fail "$1: no host reads in SMART"
}

check() {
	load human
	printf '%s\n' "$OUT" | sed 's/^/  | /'
	for s in "KS24XG7K2T0000D4" "QEMU NVMe Ctrl" "4,000,797,360 LBAs x 512 B" "-48,009,314,304" \
		"backup header at LBA 4,000,797,359" "past the target's last LBA 3,907,029,167" \
		"p2 ends at LBA 4,000,797,326, past the target's last usable LBA 3,907,029,134" \
		"488,247,313" "a raw clone cannot fit" "0 error-log entries" "verdict: TRAP"; do
		contains "$s"
	done
	ok "the usage line, verbatim: exit 4 (the clone trap, a path exists) with the README's figures"

	load target-dev
	check_figures
	check_identity source_identity "$SOURCE_SERIAL" 4000797360 nvme0
	check_identity target_identity "$TARGET_SERIAL" 3907029168 nvme1
	jeq .target.path /dev/nvme1
	ok "--target /dev/nvme1: the target's identity from its own controller (3,907,029,168 LBAs)"

	load usage-json
	check_figures
	check_identity source_identity "$SOURCE_SERIAL" 4000797360 nvme0
	jeq .source.path /dev/nvme0
	jeq .source.device /dev/nvme0n1
	jeq .source.kind nvme-controller
	jeq .source.serial "$SOURCE_SERIAL"
	jeq .paths.fresh_install.home /home/nv
	jeq .paths.fresh_install.measured offline
	# ~1,215 GB re-fetchable, read from the ext4 on the namespace (offline: it is not mounted).
	local refetch
	refetch=$(printf '%s' "$OUT" | jq .paths.fresh_install.refetchable_bytes)
	[ "$refetch" -ge 1215000000000 ] && [ "$refetch" -le 1216000000000 ] || fail "refetchable $refetch, expected ~1,215 GB"
	[ "$(jq -S .source "$VMOUT/state/preflight.json")" = "$(printf '%s' "$OUT" | jq -S .source)" ] ||
		fail "the record differs from --json"
	ok "--json: identity, SMART and error log from the controller; 1,215 GB re-fetchable; record kept"
}

usage_line() {
	expect_ctrl nvme0 KS24XG7K2T0000D4
	expect_ctrl nvme1 A5KFB2400001MINI
	read -r fr </sys/class/nvme/nvme0/firmware_rev
	echo "$fr" >/out/firmware_rev
	# As the operator runs it: `sudo swaptool ...` from the node's user (its home holds the stores).
	export SUDO_USER=nv
	run human 4 swaptool --state "$STATE" --no-color preflight /dev/nvme0 --target 2000398934016
	run target-dev 4 swaptool --state "$STATE" --json preflight /dev/nvme0 --target /dev/nvme1
	# Last, so the state directory keeps the usage line's record (the report scenario uses it).
	run usage-json 4 swaptool --state "$STATE" --json preflight /dev/nvme0 --target 2000398934016
}
