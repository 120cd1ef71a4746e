#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# One writer per state directory: while one swaptool step holds STATE/.lock, a second step that would
# write STATE waits a few seconds, then refuses (exit 3) naming the holder's pid and step; readers
# (status) are not held up; a holder that is gone (exit, SIGKILL) leaves nothing that blocks, and a
# step that ran leaves no lock file behind.
. "$SRCDIR/tests/lib.sh"

D=$TMP
if [ "$(stat -f -c %T "$D")" = tmpfs ]; then
	D=$(mktemp -d /var/tmp/swaptool-lock.XXXXXX)
	trap 'rm -rf "$D"; cleanup_test' EXIT
fi
[ "$(stat -f -c %T "$D")" = tmpfs ] && skip "no disk-backed directory for accept's O_DIRECT reads"
F=$D/shard
head -c 8M /dev/urandom >"$F"
sync "$F"
A=(accept "$F" --force --working-set 4M --ramp 0 --inflight 4 --no-seq)

ms() { date +%s%3N; }
# hold DURATION: start a long accept (the holder) in the background; $HOLDER is its pid, set once
# the lock file names it.
hold() {
	"$SWAPTOOL" --json --state "$STATE" "${A[@]}" --duration "$1" >"$TMP/hold.out" 2>"$TMP/hold.err" &
	HOLDER=$!
	local i
	for i in $(seq 100); do
		[ "$(cat "$STATE/.lock" 2>/dev/null)" = "$HOLDER accept" ] && return 0
		kill -0 "$HOLDER" 2>/dev/null || { cat "$TMP/hold.err" >&2; fail "the holder exited early"; }
		sleep 0.1
	done
	fail "the lock file never named the holder: '$(cat "$STATE/.lock" 2>/dev/null)'"
}

hold 60
[ "$(stat -c %a "$STATE/.lock")" = 600 ] || fail "lock file mode $(stat -c %a "$STATE/.lock"), expected 600"
t0=$(ms)
run 3 "$SWAPTOOL" --state "$STATE" "${A[@]}" --duration 1
took=$(($(ms) - t0))
contains "state directory '$STATE' is in use by swaptool pid $HOLDER (step accept)"
contains "--state DIR"
[ "$took" -ge 4000 ] || fail "refused after $took ms: it should wait a few seconds for the holder first"
[ "$took" -lt 15000 ] || fail "waited $took ms: the wait must be short and bounded"
ok "a second accept waited ${took} ms, then refused naming pid $HOLDER and step accept (exit 3)"

# --json: the refusal is the one error document; another writing step (report) is refused the same
# way and writes nothing.
run 3 "$SWAPTOOL" --json --state "$STATE" report --no-sign --out "$TMP/report"
jeq '.error.exit_code' 3
jeq '.step' report
printf '%s' "$OUT" | jq -e --arg p "$HOLDER" '.error.message | contains("pid " + $p + " (step accept)")' >/dev/null ||
	fail "JSON message does not name the holder: $OUT"
[ ! -e "$TMP/report" ] || fail "a refused report wrote $TMP/report"
ok "report refused under --json with one error document, nothing written"

# readers do not take the lock
t0=$(ms)
"$SWAPTOOL" --state "$STATE" status >"$TMP/st.out" 2>&1 || true
took=$(($(ms) - t0))
grep -q "in use" "$TMP/st.out" && fail "status was refused: $(cat "$TMP/st.out")"
[ "$took" -lt 3000 ] || fail "status waited $took ms for the lock"
ok "status reads the state directory while it is locked (${took} ms)"

# the holder is interrupted: it saves its record and leaves the lock file empty and free
kill -INT "$HOLDER"
rc=0
wait "$HOLDER" || rc=$?
[ "$rc" = 130 ] || fail "holder exited $rc after SIGINT, expected 130"
[ ! -e "$STATE/.lock" ] || fail "lock file still there ('$(cat "$STATE/.lock")') after its holder exited"
jq -e '.step == "accept"' "$STATE/accept.json" >/dev/null || fail "the holder's record is not valid"
ok "the holder's exit removed the lock file"

# a short holder: the second writer waits for it and then runs
"$SWAPTOOL" --state "$STATE" "${A[@]}" --duration 1 >/dev/null 2>&1 &
SHORT=$!
for i in $(seq 100); do
	[ "$(cat "$STATE/.lock" 2>/dev/null)" = "$SHORT accept" ] && break
	sleep 0.05
done
rc=0
"$SWAPTOOL" --json --state "$STATE" "${A[@]}" --duration 1 >"$TMP/o2" 2>"$TMP/e2" || rc=$?
wait "$SHORT" || true
case $rc in 0|1) ;; *) cat "$TMP/o2" "$TMP/e2" >&2; fail "second accept exited $rc after waiting for a short holder";; esac
jq -e '.runs | length == 1' "$TMP/o2" >/dev/null || fail "second accept did not run: $(cat "$TMP/o2")"
ok "a writer that finds a short-lived holder waits for it, then runs (exit $rc)"
[ ! -e "$STATE/.lock" ] || fail "the lock file outlived both runs"


# SIGKILL: the kernel drops the flock; the stale pid in the file blocks no one
hold 60
kill -KILL "$HOLDER"
wait "$HOLDER" 2>/dev/null || true
[ "$(cat "$STATE/.lock")" = "$HOLDER accept" ] || fail "expected the killed holder's stale line in the lock file"
t0=$(ms)
"$SWAPTOOL" --state "$STATE" status >/dev/null 2>&1 || true
"$SWAPTOOL" --state "$STATE" "${A[@]}" --duration 1 >"$TMP/o3" 2>&1 || rc=$?
took=$(($(ms) - t0))
grep -q "in use" "$TMP/o3" && fail "a stale lock file from a killed holder refused the next run"
[ "$took" -lt 4000 ] || fail "took $took ms after a SIGKILLed holder: it should not wait"
ok "a SIGKILLed holder blocks no one (stale line ignored, ${took} ms)"

# the lock file itself cannot be turned against the tool: a FIFO or a symlink under its name
S2=$TMP/s2
mkdir -p "$S2"
mkfifo "$S2/.lock"
run 3 timeout 10 "$SWAPTOOL" --state "$S2" report --no-sign --out "$TMP/r2"
contains "is not a regular file"
[ ! -e "$TMP/r2" ] || fail "report ran beside a FIFO lock file"
S3=$TMP/s3
mkdir -p "$S3"
echo keep >"$TMP/victim"
ln -s "$TMP/victim" "$S3/.lock"
run 3 "$SWAPTOOL" --state "$S3" report --no-sign --out "$TMP/r3"
contains "is not a regular file"
[ "$(cat "$TMP/victim")" = keep ] || fail "the lock followed a symlink and changed its target"
ok "a FIFO or symlink named .lock neither hangs nor is followed"
