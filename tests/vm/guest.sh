# SPDX-License-Identifier: MIT
# The VM bench's guest side: helpers for a scenario's guest functions (sourced by /init in the guest).
#
# Under TCG every process the guest starts costs about a second, so a guest function runs the
# commands that need the guest (swaptool and the tools against the NVMe driver) and keeps their
# output under /out; the host judges it afterwards with jq (tests/vm/lib.sh: load, jeq, contains).
set -euo pipefail
. /vm/drives.sh
STATE=/out/state
export SWAPTOOL=/usr/local/bin/swaptool

fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok - $*"; }

# run NAME CODE CMD...: run a command, fail unless it exits with CODE; its stdout and stderr are
# kept as /out/NAME.out and /out/NAME.err, and a line says how long it took.
run() {
	local name=$1 want=$2 got=0 t0=${EPOCHREALTIME/./}
	shift 2
	"$@" >"/out/$name.out" 2>"/out/$name.err" || got=$?
	echo "# $name: $* -> exit $got, $(((${EPOCHREALTIME/./} - t0) / 1000)) ms"
	if [ "$got" != "$want" ]; then
		echo "--- stdout" >&2; cat "/out/$name.out" >&2; echo "--- stderr" >&2; cat "/out/$name.err" >&2
		fail "'$*' exited $got, expected $want"
	fi
}

# nvme_timeouts: how many NVMe command timeouts the kernel has reported since boot.
nvme_timeouts() { dmesg | grep -c "$NVME_TIMEOUT_RE" || true; }

# run_watched NAME CODE CMD...: run, and note in /out/NAME.stalled how many NVMe command
# timeouts the kernel reported meanwhile. When a queue of QEMU 7.2's emulated controller stalls
# under TCG (tests/vm/lib.sh, vm_boot), a measurement taken across the stall measures the
# emulator (in CI once: fio at 64 in flight, 1 IOPS, IOPS x mean latency 48), and once a boot
# has stalled it tends to stall again, so running it again in the same boot does not help.
run_watched() {
	local before after
	before=$(nvme_timeouts)
	run "$@"
	after=$(nvme_timeouts)
	if [ "$after" != "$before" ]; then
		echo $((after - before)) >"/out/$1.stalled"
		echo "# $1: the kernel reported $((after - before)) NVMe command timeouts meanwhile (an emulated controller stalled)"
	fi
}

# ctrl_of SERIAL: the controller (nvmeN) whose serial is SERIAL.
ctrl_of() {
	local c s
	for c in /sys/class/nvme/nvme*; do
		read -r s <"$c/serial" || true
		[ "$s" = "$1" ] && { echo "${c##*/}"; return 0; }
	done
	return 1
}

# expect_ctrl NAME SERIAL: /dev/NAME is the controller with SERIAL (the scenarios rely on the
# guest numbering controllers in the order the host gave them).
expect_ctrl() {
	local got
	got=$(ctrl_of "$2") || fail "no controller with serial '$2'"
	[ "$got" = "$1" ] || fail "serial '$2' is /dev/$got, expected /dev/$1 (controllers probed out of order)"
}

# marker TEXT: a line the host waits for on the console (vm_console_wait).
marker() { echo "vm-marker: $*" >/dev/console; }
