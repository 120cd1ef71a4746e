# SPDX-License-Identifier: MIT
# scenario: accept on an NVMe namespace, and fio on the same working set in the same boot

# nvme1 is the incident's target (2,000,398,934,016 B). Its centered 32 MiB hold random bytes
# (written on the host: an emulated drive reads its sparse file's holes as zeros, which accept
# rightly calls not representative). accept /dev/nvme1n1 runs short random runs at 16 and 64 in
# flight, a 16 MiB sequential run and a two-point sweep; fio reads the same 16 MiB at the same
# depths. Emulated under TCG the drive is slow: this proves the path, not the drive, so gates may
# fail (exit 1) but every run must complete, the record must name the NVMe device, and for both
# tools IOPS x mean latency must be the depth (Little's law: each measures latency honestly).
# A run during which the kernel reported an NVMe command timeout (the emulated controller
# stalled: tests/vm/lib.sh, vm_boot) measured the emulator; its Little's law is not judged, and
# the output says so (run_watched, tests/vm/guest.sh). The other checks hold for every run.
WS=$((16 << 20))
BIG=$((32 << 20))

host() {
	truncate -s "$TARGET_BYTES" "$VMRUN/tgt.img"
	local off=$(( ((TARGET_BYTES - BIG) / 2) & ~4095 ))
	head -c "$BIG" /dev/urandom | dd of="$VMRUN/tgt.img" bs=1M seek="$off" oflag=seek_bytes conv=notrunc status=none
	truncate -s "$SOURCE_BYTES" "$VMRUN/src.img"
	vm_drive "$VMRUN/src.img" "$SOURCE_SERIAL"
	vm_drive "$VMRUN/tgt.img" "$TARGET_SERIAL"
	vm_boot accept_nvme || exit 1
	[ "$VM_RC" = 0 ] || fail "the guest part failed"

	load accept
	jeq .complete true
	jeq .target.path /dev/nvme1n1
	jeq .target.kind block
	jeq .target.size_bytes "$TARGET_BYTES"
	jeq .target.working_set_bytes "$WS"
	jeq .drive.model "QEMU NVMe Ctrl"
	jeq .drive.serial "$TARGET_SERIAL"
	jeq .representative true
	jeq '.checks[] | select(.id == "representative") | .status' pass
	jeq '.checks[] | select(.id == "busy") | .status' pass
	jeq '[.runs[] | .complete] | all' true
	jeq '[.runs[], .sweep[] | .errors.count] | add' 0
	jeq '[.sweep[] | .complete] | all' true
	jeq '.sweep | length' 2
	[ "$(jq -S . "$VMOUT/state/accept.json")" = "$(printf '%s' "$OUT" | jq -S .)" ] || fail "the record differs from --json"
	ok "accept on /dev/nvme1n1: every run complete, the record names the QEMU controller '$TARGET_SERIAL'"

	local depth run got fio judged=0
	for depth in 16 64; do
		run=$(printf '%s' "$OUT" | jq -c --arg n "rand$depth" '.runs[] | select(.name == $n) | [.iops, .iops * .lat_us.mean / 1e6]')
		got=$(jq '.[1]' <<<"$run")
		fio=$(jq '.jobs[0].read | .iops * .lat_ns.mean / 1e9' "$VMOUT/fio$depth.out")
		echo "  $depth in flight: accept $(jq '.[0]' <<<"$run") IOPS x mean latency = $got;" \
			"fio $(jq '.jobs[0].read.iops | floor' "$VMOUT/fio$depth.out") IOPS x mean latency = $fio"
		[ "$(jq '.jobs[0].error' "$VMOUT/fio$depth.out")" = 0 ] || fail "fio at $depth reported an error"
		judge accept "$got" "$depth" && judged=$((judged + 1))
		judge "fio$depth" "$fio" "$depth" && judged=$((judged + 1))
	done
	ok "IOPS x mean latency = the depth (within 15 %) in $judged of 4 runs$([ "$judged" = 4 ] || echo '; the others measured a stalled emulator')"
}

# judge RUN VALUE DEPTH: fail unless VALUE is within 15 % of DEPTH; returns 1, saying why, when
# the emulated controller stalled during RUN (its figures measure the emulator, not the tool).
judge() {
	if [ -e "$VMOUT/$1.stalled" ]; then
		echo "  $1 at $3 in flight: not judged: the kernel reported $(cat "$VMOUT/$1.stalled") NVMe command timeouts during it"
		return 1
	fi
	near "$2" "$3" || fail "$1 at $3 in flight: IOPS x mean latency = $2"
}

# near VALUE DEPTH: VALUE within 15 % of DEPTH.
near() { awk -v v="$1" -v d="$2" 'BEGIN { exit !(v >= d * 0.85 && v <= d * 1.15) }'; }

accept_nvme() {
	expect_ctrl nvme1 "$TARGET_SERIAL"
	local off=$(( ((TARGET_BYTES - WS) / 2) & ~4095 ))
	# Gates fail on an emulated drive (exit 1); anything else is a failure.
	run_watched accept 1 swaptool --state "$STATE" --json accept /dev/nvme1n1 --working-set "$WS" --duration 2 --ramp 1 \
		--threads 1 --seq-bytes 16M --sweep 4M,16M
	for depth in 16 64; do
		run_watched "fio$depth" 0 fio --name=accept --filename=/dev/nvme1n1 --ioengine=io_uring --direct=1 --rw=randread \
			--bs=4k --offset="$off" --size="$WS" --iodepth="$depth" --numjobs=1 --time_based --runtime=2 \
			--ramp_time=1 --randrepeat=0 --norandommap --output-format=json
	done
}
