#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# accept's gates cannot lie or hang: an engine gate that leaves a setsid daemon is stopped at its
# timeout with nothing of it left running; a profile command keeps its ';'; zero or absurd
# durations, depths and threads are usage errors (command line and profile, at load); a run with
# no completed read fails its gates.
. "$SRCDIR/tests/lib.sh"

D=$TMP
if [ "$(stat -f -c %T "$D")" = tmpfs ]; then
	D=$(mktemp -d /var/tmp/swaptool-gates.XXXXXX)
	trap 'rm -rf "$D"; cleanup_test' EXIT
fi
[ "$(stat -f -c %T "$D")" = tmpfs ] && skip "no disk-backed directory for O_DIRECT"
need_odirect "$D" # other filesystems refuse it too (some overlays, NFS)
need_io_uring
command -v setsid >/dev/null || skip "no setsid"
command -v pgrep >/dev/null || skip "no pgrep"
F=$D/shard
head -c 16M /dev/urandom >"$F"
sync "$F"
Q=(--working-set 8M --duration 1 --ramp 0 --no-seq --inflight 4 --force --seed 3)
lenient() { printf '[run rand16]\nmin_iops = 1\nmax_p50_us = 100000000\n[run rand64]\nmin_iops = 1\n' >"$1"; }

# ---- a gate that leaves a setsid daemon holding its output ----
# Unique sleep lengths mark the gate's processes: pgrep finds any that survive.
S1=$((700000 + RANDOM)) S2=$((800000 + RANDOM)) S3=$((900000 + RANDOM))
lenient "$TMP/daemon.ini"
cat >>"$TMP/daemon.ini" <<INI
[engine daemon]
command = setsid sleep $S1 & sleep $S2; echo never
timeout = 2
INI
T0=$(date +%s)
got=0
timeout 40 "$SWAPTOOL" --json --state "$STATE" --profile "$TMP/daemon.ini" accept "$F" "${Q[@]}" \
	--gate leaves='setsid sleep '$S3' & sleep 0.3; echo started' >"$TMP/out" 2>"$TMP/err" || got=$?
T1=$(date +%s)
OUT=$(cat "$TMP/out")
[ "$got" != 124 ] || fail "accept still waiting 40 s after a 2 s gate timeout (a setsid child holds its output)"
[ "$got" = 1 ] || { cat "$TMP/err" >&2; fail "accept exited $got, expected 1 (the timed-out gate fails)"; }
jeq '[.engine_gates[].name] | join(",")' daemon,leaves
jeq '.engine_gates[0].timed_out' true
jeq '.engine_gates[0].status' fail
# stopped at the timeout: 2 s, then 1 s to drain what the group left; not 300 s
jeq '.engine_gates[0].duration_s < 6' true
jeq '.engine_gates[0].output_tail | test("never") | not' true
jeq '[.checks[] | select(.id == "engine-daemon")][0].status' fail
# the gate that exits at once but leaves a daemon on its stdout: its exit code counts, accept goes on
jeq '.engine_gates[1].exit_code' 0
jeq '.engine_gates[1].status' pass
jeq '.engine_gates[1].output_tail' started
jeq '.engine_gates[1].duration_s < 4' true
jeq '.engine_gates[1].output_cut' true
[ $((T1 - T0)) -le 25 ] || fail "accept took $((T1 - T0)) s with a 2 s gate timeout"
# the gate's group is killed at its timeout: give the kernel a bounded moment to end its processes
survivors() { pgrep -f "sleep ($S1|$S2|$S3)" >/dev/null; }
wait_for 5 eval '! survivors' || true
for s in $S1 $S2 $S3; do
	if pgrep -f "sleep $s" >/dev/null; then
		pgrep -af "sleep $s" >&2
		pkill -f "sleep $s" || true
		fail "a process of the gate ('sleep $s') survived accept"
	fi
done
ok "setsid daemon: gate stopped at its timeout, output no longer read, nothing of it left running"

# ---- the profile keeps a command whole: ';' is not a comment inside a value ----
lenient "$TMP/semi.ini"
cat >>"$TMP/semi.ini" <<'INI'
; a comment line
# another
[engine semi]
command = true ; echo ran-the-bench; exit 7
INI
# and a command longer than 200 bytes (libinih cut it there and read the rest as a line)
LONG=$(printf 'x%.0s' $(seq 300))
printf '[engine long]\ncommand = true %s ; echo long-tail-ran; exit 5\n' "$LONG" >>"$TMP/semi.ini"
run 1 "$SWAPTOOL" --json --state "$STATE" --profile "$TMP/semi.ini" accept "$F" "${Q[@]}"
jeq '.engine_gates[0].command' 'true ; echo ran-the-bench; exit 7'
jeq '.engine_gates[0].exit_code' 7
jeq '.engine_gates[0].output_tail' ran-the-bench
jeq '.engine_gates[0].status' fail
jeq '.engine_gates[1].command | length' $((5 + 300 + 29))
jeq '.engine_gates[1].exit_code' 5
jeq '.engine_gates[1].output_tail' long-tail-ran
ok "profile: 'cmd ; more' and a 334-byte command run whole"

# ---- zero and out-of-range values: usage errors, before anything is measured ----
for a in "--duration 0" "--duration 86401" "--inflight 0" "--inflight 16,0" "--inflight 4097" "--threads 0" \
	"--threads 1025" "--working-set 0" "--working-set 2K" "--sweep 0" "--sweep 1K,8M"; do
	# shellcheck disable=SC2086
	run 2 "$SWAPTOOL" --json --state "$STATE" accept "$F" --force --no-seq $a
	jeq '.error.exit_code' 2
done
bad_profile() { # TEXT EXPECTED-MESSAGE: refused when the profile loads (any step), exit 2
	printf '%b' "$1" >"$TMP/bad.ini"
	run 2 "$SWAPTOOL" --state "$STATE" --profile "$TMP/bad.ini" status
	contains "$2"
	run 2 "$SWAPTOOL" --json --state "$STATE" --profile "$TMP/bad.ini" accept "$F" "${Q[@]}"
	jeq '.error.exit_code' 2
}
bad_profile '[run rand16]\nduration = 0\n' "bad.ini:2: 'duration' in [run rand16] must be a whole number from 1 to 86400"
bad_profile '[run rand16]\nduration = 1000000000000\n' "not '1000000000000'"
bad_profile '[run rand64]\ninflight = 0\n' "'inflight' in [run rand64] must be a whole number from 1 to 4096"
bad_profile '[accept]\nramp = 99999999\n' "'ramp' in [accept]"
bad_profile '[accept]\nworking_set = 2K\n' "size below 4KiB"
bad_profile '[accept]\nseq_bytes = 4K\n' "size below 1MiB"
bad_profile '[engine e]\ncommand =\n' "empty 'command' in [engine e]"
bad_profile '[engine e]\ncommand = true\ntimeout = 0\n' "'timeout' in [engine e]"
bad_profile '[backup]\npath = /etc/../root/.ssh\n' "bad path '/etc/../root/.ssh' for 'path' in [backup]: '..' component"
bad_profile '[backup]\npath = /\n' "the whole root"
bad_profile '[backup]\nrequired = ~nv/key\n' "'~user' is not supported"
bad_profile '[refetch]\npath = ~/a//b\n' "empty path component"
bad_profile '[backup]\npath = ~//etc\n' "empty path component"
bad_profile '[backup]\nfstab = /etc/./fstab\n' "'.' component"
bad_profile '[backup]\npath = /etc/\001x\n' "control character"
bad_profile 'key = value\n' "unknown section []"
bad_profile '[accept\nramp = 1\n' "bad.ini:1: a section line is '[NAME]'"
bad_profile '[accept]\nramp\n' "bad.ini:2: not a 'key = value' line"
# a FIFO given as the profile is refused, not waited on
mkfifo "$TMP/fifo.ini"
got=0
timeout 10 "$SWAPTOOL" --state "$STATE" --profile "$TMP/fifo.ini" status >"$TMP/out" 2>"$TMP/err" || got=$?
[ "$got" = 2 ] || fail "a FIFO profile: exit $got, expected 2"
grep -q "not a regular file" "$TMP/err" || fail "a FIFO profile: $(cat "$TMP/err")"
# good paths still load
printf '[backup]\npath = ~\npath = ~/.ssh/\npath = /etc/fstab\nrequired = ~/k\n[refetch]\npath = ~/models\n' >"$TMP/good.ini"
mkdir -p "$TMP/fresh"
run 0 "$SWAPTOOL" --state "$TMP/fresh" --profile "$TMP/good.ini" status
ok "zero or absurd durations, depths, threads, sizes and bad paths: exit 2 (at load for the profile)"

# ---- no data never passes: every read fails (FUSE), the latency gate must not read 0 us as a pass ----
if [ -n "${SLOWFS:-}" ] && [ -x "$SLOWFS" ] && [ -c /dev/fuse ] && command -v fusermount3 >/dev/null; then
	M=$TMP/mnt
	mkdir -p "$M"
	"$SLOWFS" "$M" -f --size=67108864 --eio-every=1 --base-us=20 >"$TMP/slowfs.log" 2>&1 &
	SPID=$!
	trap 'fusermount3 -u "$M" 2>/dev/null || umount -l "$M" 2>/dev/null || true; wait $SPID 2>/dev/null || true; rm -rf "$D"; cleanup_test' EXIT
	for _ in $(seq 50); do [ -f "$M/data" ] && break; sleep 0.1; done
	if [ -f "$M/data" ]; then
		run 1 "$SWAPTOOL" --json --state "$STATE" --profile "$TMP/daemon.ini" accept "$M/data" --working-set 32M \
			--duration 1 --ramp 0 --no-seq --inflight 4
		jeq '.runs[0].ios' 0
		jeq '[.gates[] | select(.name == "rand4-p50")][0].status' fail
		jeq '[.gates[] | select(.name == "rand4-iops")][0].status' fail
		jeq '[.gates[] | select(.status == "pass")] | length' 0
		jeq '[.checks[] | select(.id == "rand4-reads")][0].status' fail
		jeq '.harness_pass' false
		ok "no read completed: every gate of the run fails"
	else
		echo "# slowfs did not mount: no-data case not run" >&2
	fi
fi
