# SPDX-License-Identifier: MIT
# scenario: a drive that vanishes: the target unplugged through QMP during accept, and another during clone

# nvme0 a source that needs no shrink (mkdisk's scaled incident, 4 GiB: clone writes only the
# target); nvme1 and nvme2 two empty 2,000,398,934,016-B targets, each behind its own PCIe root
# port. The guest starts accept on nvme1n1 and, once it is reading, prints a marker; the host then
# sends QMP device_del for nvme1 and the guest's kernel removes the controller under accept. Then
# the same for clone onto nvme2n1, once clone has written to it; clone is stopped (SIGSTOP) from
# the marker until its drive is gone, as its copy lasts less than the host's round trip under TCG
# and a copy that ends first proves nothing. Each must stop with a message naming the device,
# exit 3, within its timeout (no hang), and leave a valid record; the source image must be
# unchanged.
TARGET2_SERIAL=A5KFB2400002MINI

host() {
	"$MKDISK" scaled "$VMRUN/src.img" >/dev/null
	truncate -s "$TARGET_BYTES" "$VMRUN/tgt1.img" "$VMRUN/tgt2.img"
	local off=$(( ((TARGET_BYTES - (32 << 20)) / 2) & ~4095 ))
	head -c $((32 << 20)) /dev/urandom | dd of="$VMRUN/tgt1.img" bs=1M seek="$off" oflag=seek_bytes conv=notrunc status=none
	local before
	before=$(src_fingerprint "$VMRUN/src.img")
	vm_drive "$VMRUN/src.img" "$SOURCE_SERIAL"
	vm_drive "$VMRUN/tgt1.img" "$TARGET_SERIAL"
	vm_drive "$VMRUN/tgt2.img" "$TARGET2_SERIAL"
	VM_BG=1 vm_boot vanish
	local d
	for d in nvme1 nvme2; do
		vm_console_wait "vm-marker: unplug $d" 600 || { vm_wait || true; fail "the guest never got to unplugging $d"; }
		echo "host: QMP device_del $d: $(vm_qmp "{\"execute\": \"device_del\", \"arguments\": {\"id\": \"$d\"}}")"
	done
	vm_wait || exit 1
	[ "$VM_RC" = 0 ] || fail "the guest part failed"
	[ "$(src_fingerprint "$VMRUN/src.img")" = "$before" ] || fail "the source image changed"
	ok "the source image is unchanged"

	# What must hold whatever the exit: no hang (each step has 300 s), a valid record, the drive gone.
	local step disk dev=()
	for step in accept:nvme1n1 clone:nvme2n1; do
		disk=${step#*:} step=${step%:*}
		load "$step"
		[ "$(cat "$VMOUT/$step.rc")" -lt 124 ] || fail "$step hung: killed after $(cat "$VMOUT/$step.s") s"
		# The record: --json's one document (an error's too); one left in the state directory parses.
		[ "$(jq -r '.schema + " " + .step' "$VMOUT/$step.out")" = "swaptool/1 $step" ] ||
			fail "$step --json printed no record"
		[ ! -e "$VMOUT/state/$step.json" ] || jq -e . "$VMOUT/state/$step.json" >/dev/null ||
			fail "the $step record in the state directory is not valid JSON"
		ok "$step: stopped after $(cat "$VMOUT/$step.s") s, exit $(cat "$VMOUT/$step.rc"), a valid record:" \
			"$(jq -r '.error.message // ([.checks[] | select(.status == "fail") | .summary][0])' "$VMOUT/$step.out")"
		# The contract: exit 3 (could not do the job) and a message naming the vanished device.
		[ "$(cat "$VMOUT/$step.rc")" = 3 ] || dev+=("$step exited $(cat "$VMOUT/$step.rc"), not 3")
		[[ $(jq -r '.error.message // ""' "$VMOUT/$step.out") == *"$disk"* ]] ||
			dev+=("$step's error does not name $disk")
	done
	[ ${#dev[@]} -eq 0 ] || fail "a vanished target: $(IFS=';'; echo "${dev[*]}")"
	ok "accept and clone: exit 3 naming the vanished namespace"
}

# Under TCG each process the guest starts costs (tests/vm/guest.sh), and clone's copy lasts about
# 1.5 s of its minute: the waits below poll sysfs every 20 ms without starting one.

# io_count DISK FIELD: what /sys/block/DISK/stat counts so far (FIELD 1: reads, 5: writes), in $IO.
io_count() {
	local s
	read -r -a s <"/sys/block/$1/stat" || return 1
	IO=${s[$(($2 - 1))]}
}

# nap: 20 ms without a process: a read that times out on a pipe this shell also holds open for
# writing (so it never sees an end of file); the pipe is made once.
nap() {
	[ -n "${NAP:-}" ] || exec {NAP}<> <(:)
	read -r -t 0.02 -u "$NAP" || true
}

# io_wait DISK FIELD COUNT PID: wait (60 s) until the count reaches COUNT; fails at once when PID
# (the step) has ended.
io_wait() {
	local end=$((SECONDS + 60))
	while [ "$SECONDS" -lt "$end" ] && kill -0 "$4" 2>/dev/null; do
		io_count "$1" "$2" || return 1
		[ "$IO" -ge "$3" ] && return 0
		nap
	done
	return 1
}

# gone_wait DISK: wait (60 s) until the kernel has removed DISK.
gone_wait() {
	local end=$((SECONDS + 60))
	while [ -e "/sys/block/$1" ]; do
		[ "$SECONDS" -lt "$end" ] || return 1
		nap
	done
}

# bg_step NAME DISK FIELD HOLD CMD...: run CMD (timeout 300 s: a hang fails) and unplug DISK's
# controller once CMD has done some hundred I/Os on it (FIELD of its stat): the step is past its
# checks, in its reads or its copy. HOLD 1: CMD is stopped (SIGSTOP) from then until the kernel
# has removed DISK, so the unplug lands inside a step shorter than the host's round trip (clone's
# copy); HOLD 0: it runs on (accept reads for a minute). Keeps CMD's output, exit status and
# seconds as /out/NAME.{out,err,rc,s}.
bg_step() {
	local name=$1 disk=$2 field=$3 hold=$4 pid rc=0 t0=$SECONDS
	shift 4
	io_count "$disk" "$field"
	# timeout(1) runs in a process group of its own: the group is the step and the tools it runs.
	timeout 300 "$@" >"/out/$name.out" 2>"/out/$name.err" &
	pid=$!
	if ! io_wait "$disk" "$field" $((IO + 200)) "$pid"; then
		local how="it still ran"
		kill -0 "$pid" 2>/dev/null || { wait "$pid" || rc=$?; how="it ended first, exit $rc"; }
		cat "/out/$name.err" >&2
		fail "$name did not get 200 I/Os into $disk within 60 s ($how)"
	fi
	[ "$hold" = 0 ] || kill -STOP -- "-$pid" || fail "cannot stop $name (process group $pid)"
	marker "unplug ${disk%n1}"
	if [ "$hold" = 1 ]; then
		gone_wait "$disk" || { kill -CONT -- "-$pid"; fail "$disk was still there 60 s after the unplug marker"; }
		kill -CONT -- "-$pid"
	fi
	wait "$pid" || rc=$?
	echo "$rc" >"/out/$name.rc"
	echo "$((SECONDS - t0))" >"/out/$name.s"
	echo "# $name: $* -> exit $rc after $((SECONDS - t0)) s"
	[ ! -e "/sys/block/$disk" ] || fail "$disk is still there: the unplug did not happen"
}

vanish() {
	expect_ctrl nvme0 "$SOURCE_SERIAL"
	expect_ctrl nvme1 "$TARGET_SERIAL"
	expect_ctrl nvme2 "$TARGET2_SERIAL"
	bg_step accept nvme1n1 1 0 swaptool --state "$STATE" --json accept /dev/nvme1n1 --working-set 16M \
		--duration 60 --ramp 0 --threads 1 --no-seq
	run plan 0 swaptool --state "$STATE" --json plan /dev/nvme0n1 --target /dev/nvme2n1
	bg_step clone nvme2n1 5 1 swaptool --state "$STATE" --json clone /dev/nvme0n1 /dev/nvme2n1 --yes
}
