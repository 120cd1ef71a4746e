# SPDX-License-Identifier: MIT
# Shared helpers for the CLI tests: sourced, never run.
set -euo pipefail

: "${SWAPTOOL:?run through meson test (tests/run)}"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/swaptool-test.XXXXXX")
LOOPS=()
cleanup_test() {
	local l
	for l in "${LOOPS[@]}"; do
		partx -d "$l" 2>/dev/null || true
		losetup -d "$l" 2>/dev/null || true
	done
	rm -rf "$TMP"
}
trap cleanup_test EXIT
# SWAPTOOL_VALGRIND=DIR (.ci/run's memcheck pass): every swaptool runs under valgrind memcheck, a log per
# process in DIR; an error or a definite leak makes it exit 99, which no test expects.
if [ -n "${SWAPTOOL_VALGRIND:-}" ]; then
	mkdir -p "$SWAPTOOL_VALGRIND"
	printf '#!/bin/sh\nexec valgrind -q --tool=memcheck --error-exitcode=99 --leak-check=full --show-leak-kinds=definite --errors-for-leak-kinds=definite --log-file=%s/vg.%%p.log %s "$@"\n' \
		"$SWAPTOOL_VALGRIND" "$SWAPTOOL" >"$TMP/swaptool-valgrind"
	chmod +x "$TMP/swaptool-valgrind"
	SWAPTOOL=$TMP/swaptool-valgrind
fi
export XDG_STATE_HOME="$TMP/xdg"
STATE="$TMP/state"

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*" >&2; exit 77; }
ok() { echo "ok - $*"; }
# CMD | grepq [GREP OPTIONS] PATTERN: grep -q that reads its whole input first. Under pipefail a
# plain `| grep -q` leaves at the first match, and a writer with more to say dies of SIGPIPE: the
# pipeline then fails on a match (a flaky test) or, before `&& fail`, hides one.
grepq() {
	local in
	in=$(cat)
	grep -q "$@" <<<"$in"
}

# run CODE CMD...: run a command, fail unless it exits with CODE; output in $OUT, stderr in $ERR.
run() {
	local want=$1 got=0
	shift
	"$@" >"$TMP/out" 2>"$TMP/err" || got=$?
	OUT=$(cat "$TMP/out")
	ERR=$(cat "$TMP/err")
	if [ "$got" != "$want" ]; then
		echo "--- stdout" >&2; cat "$TMP/out" >&2; echo "--- stderr" >&2; cat "$TMP/err" >&2
		fail "'$*' exited $got, expected $want"
	fi
}

# says CODE TEXT CMD...: CMD exits CODE within 20 s (124 would be a hang), its output holding TEXT.
says() {
	local want=$1 text=$2
	shift 2
	run "$want" timeout 20 "$@"
	contains "$text"
}
# says_json CODE TEXT CMD...: the same under --json: exactly one JSON document, whose error has
# exit code CODE and a message holding TEXT.
says_json() {
	local want=$1 text=$2
	shift 2
	run "$want" timeout 20 "$@"
	[ "$(printf '%s' "$OUT" | jq -s length)" = 1 ] || fail "'$*': not one JSON document"
	jeq .error.exit_code "$want"
	jeq ".error.message | contains(\"$text\")" true
}

# jeq FILTER EXPECTED: the JSON in $OUT at FILTER equals EXPECTED (compared as jq -r text).
jeq() {
	local got
	got=$(printf '%s' "$OUT" | jq -r "$1") || fail "jq '$1' on output failed"
	[ "$got" = "$2" ] || fail "$1 = '$got', expected '$2'"
}

# contains TEXT: $OUT or $ERR holds TEXT.
contains() {
	case "$OUT$ERR" in *"$1"*) ;; *) echo "$OUT$ERR" >&2; fail "output lacks '$1'";; esac
}

need_root() { [ "$(id -u)" = 0 ] || skip "needs root"; }
need_loop() {
	need_root
	losetup -f >/dev/null 2>&1 || skip "no free loop device"
}
# attach FILE [losetup args]: attach a loop device, set $DEV to it, make partition nodes with partx
# (the kernel here does not scan partition tables), and detach it when the test ends.
attach() {
	DEV=$(losetup -f --show "$@") || skip "losetup failed"
	LOOPS+=("$DEV")
	# Partitions the table lists (read from the device, not the kernel); wait for their nodes,
	# retrying partx: on a loaded machine the nodes can take a moment to appear.
	local n i
	n=$( (partx -s -g -o NR "$DEV" 2>/dev/null || true) | wc -l)
	[ "$n" -gt 0 ] || return 0
	for i in $(seq 50); do
		partx -a "$DEV" 2>/dev/null || partx -u "$DEV" 2>/dev/null || true
		[ -b "${DEV}p$n" ] && return 0
		sleep 0.1
	done
	echo "warning: partition nodes for $DEV did not appear" >&2
}

# wait_for SECONDS CMD...: wait for a state, not for a time: run CMD every 50 ms until it
# succeeds; returns 1 when it has not after SECONDS (the caller says what did not happen).
wait_for() {
	local deadline=$(($(date +%s%N) + $1 * 1000000000))
	shift
	until "$@"; do
		[ "$(date +%s%N)" -lt "$deadline" ] || return 1
		sleep 0.05
	done
}

# need_io_uring: skip (77) where the kernel has no io_uring or refuses it (CONFIG_IO_URING off,
# kernel.io_uring_disabled, a seccomp filter): accept's harness cannot run there, which is no failure
# of the code. io_uring_setup is syscall 425 on every architecture.
need_io_uring() {
	local why
	command -v python3 >/dev/null || return 0 # cannot probe: let accept say so itself
	why=$(python3 -c '
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
params = ctypes.create_string_buffer(120)
fd = libc.syscall(425, 4, params)
if fd < 0:
    print(os.strerror(ctypes.get_errno()))
    sys.exit(1)
os.close(fd)') || skip "io_uring unavailable here (io_uring_setup: $why)"
}

# need_odirect DIR: skip (77) unless files in DIR can be opened with O_DIRECT (tmpfs, some overlay
# and network filesystems refuse it): accept reads its target with O_DIRECT.
need_odirect() {
	dd if=/dev/zero of="$1/.odirect-probe" bs=4096 count=1 oflag=direct status=none 2>/dev/null ||
		{ rm -f "$1/.odirect-probe"; skip "no O_DIRECT in $1 ($(stat -f -c %T "$1"))"; }
	rm -f "$1/.odirect-probe"
}

# unique_fstab_ids: the demo root's fstab (tests/fixtures/make-demo-root.sh) names mkdisk's fixed
# UUIDs, which resolve while any other test has a mkdisk image attached with partition nodes (libblkid
# scans every block device). A test that needs them not to resolve gets identifiers of its own.
unique_fstab_ids() {
	FSTAB_ROOT_UUID=$(cat /proc/sys/kernel/random/uuid)
	FSTAB_EFI_UUID=$(printf '%04X-%04X' $((RANDOM % 65536)) $((RANDOM % 65536)))
	export FSTAB_ROOT_UUID FSTAB_EFI_UUID
}

# sparse_digest FILE: "SIZE MTIME SHA256" of a (sparse) image file, the sha256 over every
# non-zero 64 KiB chunk with its offset (holes and zero chunks read as zeros either way, so the
# hole layout, which writeback may change, does not count), without reading the holes. Equal
# digests mean the same bytes in every position; sha256sum of a 2 TB image would take most of an
# hour.
sparse_digest() {
	python3 - "$1" <<'PY'
import hashlib, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
st = os.fstat(fd)
h = hashlib.sha256()
C = 1 << 16
zero = bytes(C)
pos = 0
while pos < st.st_size:
    try:
        d = os.lseek(fd, pos, os.SEEK_DATA)
    except OSError:
        break
    e = os.lseek(fd, d, os.SEEK_HOLE)
    d -= d % C
    while d < e:
        b = os.pread(fd, C, d)
        if not b:
            break
        if b != zero[:len(b)]:
            h.update(d.to_bytes(8, "little") + b)
        d += len(b)
    pos = d
print(st.st_size, st.st_mtime_ns, h.hexdigest())
PY
}

# lenient_profile FILE: accept gates every drive passes and a spin limit no loaded test disk misses,
# so a test's verdict follows what it plants, not this machine's disk (40, 55, 90)
lenient_profile() {
	cat >"$1" <<'INI'
[run rand16]
min_iops = 1
max_p50_us = 100000000
[run rand64]
min_iops = 1
max_p99_9_us = 100000000
[run seq]
min_mb_s = 1
[workload]
spin_limit_low = 86400
spin_limit_high = 86400
INI
}
