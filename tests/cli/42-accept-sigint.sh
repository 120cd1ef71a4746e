#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# SIGINT, SIGTERM (systemctl stop, an Ansible timeout) and SIGHUP (a dropped ssh session) mid-run:
# accept stops cleanly, waits for in-flight reads, saves the record marked incomplete
# (complete=false) with what was measured, releases the state directory's lock and exits 130.
. "$SRCDIR/tests/lib.sh"

D=$TMP
if [ "$(stat -f -c %T "$D")" = tmpfs ]; then
	D=$(mktemp -d /var/tmp/swaptool-accept.XXXXXX)
	trap 'rm -rf "$D"; cleanup_test' EXIT
fi
[ "$(stat -f -c %T "$D")" = tmpfs ] && skip "no disk-backed directory for O_DIRECT"
need_odirect "$D" # other filesystems refuse it too (some overlays, NFS)
need_io_uring
F=$D/shard
head -c 32M /dev/urandom >"$F"
sync "$F"

# stopped SIG: accept mid-run, stopped by SIG (INT, TERM, HUP), each into a state directory of its own
stopped() {
	local sig=$1 st="$STATE-$1" pid rc start took
	"$SWAPTOOL" --json --state "$st" accept "$F" --working-set 16M --duration 30 --ramp 0 --inflight 8 --no-seq \
		--force >"$TMP/out" 2>"$TMP/err" &
	pid=$!
	# stop it once the measured run is reading: 64 MiB read is four passes over the 16 MiB working set,
	# past anything read before the run starts
	reading() { [ "$(awk '/^read_bytes:/ { print $2 }' "/proc/$pid/io" 2>/dev/null || echo 0)" -ge 67108864 ]; }
	wait_for 25 reading || { cat "$TMP/err" >&2; fail "accept did not start reading within 25 s"; }
	start=$(date +%s)
	kill "-$sig" "$pid"
	rc=0
	wait "$pid" || rc=$?
	took=$(($(date +%s) - start))
	OUT=$(cat "$TMP/out")
	[ "$rc" = 130 ] || { cat "$TMP/err" >&2; fail "exit $rc after SIG$sig, expected 130"; }
	[ "$took" -lt 10 ] || fail "took $took s to stop after SIG$sig"
	jeq '.complete' false
	jeq '.runs | length' 1
	jeq '.runs[0].complete' false
	jeq '.runs[0].ios > 0' true
	jeq '.runs[0].duration_s < 10' true
	jeq '[.checks[] | select(.id == "rand8")][0].status' fail
	jeq '.verdict' fail
	[ "$(jq -r .complete "$st/accept.json")" = false ] || fail "the saved record is not marked incomplete after SIG$sig"
	[ "$(jq -r '.runs[0].ios > 0' "$st/accept.json")" = true ] || fail "the saved record lacks what was measured before SIG$sig"
	[ ! -e "$st/.lock" ] || fail "SIG$sig left $st/.lock"
	ok "SIG$sig: exit 130 within $took s, record saved with complete=false, no .lock left"
}
stopped INT
stopped TERM
stopped HUP
