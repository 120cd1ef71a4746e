#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# accept --sustain on a loop device, in intervals of 1 s: the record holds one interval per second of
# the hold, the drift is last over first, the random runs come again with their engine prediction; the
# kernel's own count of sectors read covers every read the record claims; the table, report.txt and
# report.html (its chart) show the hold; SIGINT mid-hold keeps the intervals measured (exit 130);
# bad durations, a hold shorter than one interval and a bad profile value are exit 2; a record whose
# sustain figures have the wrong type is refused by report.
. "$SRCDIR/tests/lib.sh"

D=$TMP
if [ "$(stat -f -c %T "$D")" = tmpfs ]; then
	D=$(mktemp -d /var/tmp/swaptool-accept.XXXXXX)
	trap 'rm -rf "$D"; cleanup_test' EXIT
fi
[ "$(stat -f -c %T "$D")" = tmpfs ] && skip "no disk-backed directory for O_DIRECT"
need_loop
need_io_uring
F=$D/shard
head -c 32M /dev/urandom >"$F"
sync "$F"
attach "$F"
need_odirect "$D"

# bad values: refused before anything is measured
for v in 0 garbage 10x 25h -5 ''; do
	run 2 "$SWAPTOOL" --state "$STATE" accept "$DEV" --force --sustain "$v"
	contains "bad --sustain '$v'"
done
run 2 "$SWAPTOOL" --state "$STATE" accept "$DEV" --force --sustain 30
contains "--sustain 30 s is shorter than one interval of 60 s"
[ ! -e "$STATE/accept.json" ] || fail "a refused --sustain measured and saved a record"
ok "bad --sustain values and a hold shorter than one interval: exit 2, nothing measured"

printf '[accept]\nsustain_interval = 0\n' >"$TMP/zero.ini"
run 2 "$SWAPTOOL" --state "$STATE" --profile "$TMP/zero.ini" accept "$DEV" --force
contains "'sustain_interval' in [accept] must be a whole number from 1 to 86400"
printf '[accept]\nsustain = 86401\n' >"$TMP/long.ini"
run 2 "$SWAPTOOL" --state "$STATE" --profile "$TMP/long.ini" accept "$DEV" --force
contains "'sustain' in [accept] must be a whole number from 0 to 86400"
printf '[accept]\nsustain = 10\n' >"$TMP/short.ini"
run 2 "$SWAPTOOL" --state "$STATE" --profile "$TMP/short.ini" accept "$DEV" --force
contains "the profile's [accept] sustain 10 s is shorter than one interval of 60 s"
ok "profile: sustain_interval 0, sustain past a day, a sustain shorter than its interval: exit 2"

# gates and a spin limit every drive passes, figures per second of the hold
cat >"$TMP/p.ini" <<'INI'
[accept]
ramp = 0
sustain_interval = 1
[run rand16]
duration = 1
min_iops = 1
max_p50_us = 100000000
[run rand64]
duration = 1
min_iops = 1
max_p99_9_us = 100000000
[workload]
spin_limit_low = 86400
spin_limit_high = 86400
INI
A=(accept "$DEV" --working-set 16M --no-seq --force --seed 9)
# run_held ARGS...: the gates above pass on any drive, but a loop device's p99.9 over one busy
# second may jump past the drift's 4x (a fail): the exit is 1 exactly when sustain-drift failed,
# and no other check may fail.
run_held() {
	local rc=0
	"$SWAPTOOL" "$@" >"$TMP/out" 2>"$TMP/err" || rc=$?
	OUT=$(cat "$TMP/out")
	local rec=$STATE/accept.json failed
	failed=$(jq -r '[.checks[] | select(.status == "fail") | .id] | join(",")' "$rec")
	case "$rc,$failed" in
	0,|1,sustain-drift) ;;
	*) cat "$TMP/out" "$TMP/err" >&2; fail "'$*' exited $rc with failed checks '$failed'" ;;
	esac
}
sectors() { awk '{ print $3 }' "/sys/block/${DEV#/dev/}/stat"; }
s0=$(sectors)
run_held --json --state "$STATE" --profile "$TMP/p.ini" "${A[@]}" --sustain 4
s1=$(sectors)
jeq '.complete' true
jeq '.sustain | [.duration_s, .interval_s, .inflight, .run, .complete] | map(tostring) | join(",")' 4,1,64,rand64,true
# one interval per interval_s of the hold, in order, each a second of reads at 64 in flight
jeq '.sustain | (.intervals | length) == (.duration_s / .interval_s | ceil)' true
jeq '[.sustain.intervals[] | .index] | map(tostring) | join(",")' 0,1,2,3
jeq '[.sustain.intervals[] | .start_s == .index * 1 and .complete and .ios > 0 and .errors.count == 0] | all' true
jeq '[.sustain.intervals[] | ((.iops - .ios / .duration_s) | fabs) <= 1 + .iops / 100] | all' true
jeq '[.sustain.intervals[] | .p50_us <= .p99_9_us and .p99_9_us <= .max_us] | all' true
# drift: the last interval over the first, its status from the thresholds of swaptool-accept(1)
jeq '.sustain | (.intervals | first) as $a | (.intervals | last) as $b | .drift |
	((.iops_ratio - $b.iops / $a.iops) | fabs < 0.0001) and ((.p99_9_ratio - $b.p99_9_us / $a.p99_9_us) | fabs < 0.0001)' true
jeq '.sustain.drift | [.first, .last] | map(tostring) | join(",")' 0,3
jeq '.sustain.drift | (if .iops_ratio < 0.5 or .p99_9_ratio > 4 then "fail" elif .iops_ratio < 0.8 or .p99_9_ratio > 2 then "warn"
	else "pass" end) == .status' true
jeq '(.sustain.drift.status) == ([.checks[] | select(.id == "sustain-drift")][0].status)' true
# the random runs again, with the engine predicted from their figures
jeq '[.sustain.runs[].name] | join(",")' rand16,rand64
jeq '[.sustain.runs[] | .complete and .ios > 0 and .engine_prediction.reads_per_chunk == 169319] | all' true
jeq '[.sustain.runs[].engine_prediction | (.chunk_s - .reads_per_chunk / .iops) | fabs < 0.01] | all' true
jeq '[.checks[] | select(.id == "sustain-prediction")][0].status' pass
# a loop device has no SMART log: no temperature, and the reason
jeq '.sustain.temperature | [.before_c, .after_c] | map(tostring) | join(",")' null,null
jeq '.sustain.temperature.reason | test("not on an NVMe namespace")' true
# the kernel read at least every byte the record says was read (runs, intervals, runs again)
jeq "([.runs[], .sustain.intervals[], .sustain.runs[] | .ios] | add) * 4096 <= ($s1 - $s0) * 512" true
[ "$(jq '.sustain.intervals | length' "$STATE/accept.json")" = 4 ] || fail "accept.json lacks the sustained load"
ok "a 4 s hold in 1 s intervals: 4 intervals, drift = last/first, the random runs again with their prediction"

# the profile's default, in the table
sed 's/^\[accept\]$/&\nsustain = 2/' "$TMP/p.ini" >"$TMP/p2.ini"
run_held --no-color --state "$STATE" --profile "$TMP/p2.ini" "${A[@]}"
contains "sustained load: rand64, 64 in flight, for 2 s in intervals of 1 s"
contains "after the sustained load"
contains "sustain-drift"
[ "$(jq '.sustain.intervals | length' "$STATE/accept.json")" = 2 ] || fail "the profile's sustain = 2 did not hold 2 s"
ok "the profile's [accept] sustain is the default; the table shows the hold"

# the report: the section, the series as text bars and as a chart of its own, signed as ever
ssh-keygen -q -t ed25519 -N '' -C demo -f "$TMP/key"
run 0 "$SWAPTOOL" --state "$STATE" report --key "$TMP/key" --out "$TMP/r" --identity demo@swaptool
ssh-keygen -Y verify -f "$TMP/r/allowed_signers" -I demo@swaptool -n swaptool-report -s "$TMP/r/report.json.sig" \
	<"$TMP/r/report.json" >/dev/null 2>&1 || fail "ssh-keygen rejects the report"
[ "$(jq '.steps.accept.sustain == input.sustain' "$TMP/r/report.json" "$STATE/accept.json")" = true ] ||
	fail "report.json does not carry the sustained load as recorded"
T=$TMP/r/report.txt
grep -q '^Sustained load: rand64, 64 in flight, for 2 s in intervals of 1 s: IOPS .*x and p99.9 .*x from the first interval to the last' "$T" ||
	fail "report.txt lacks the sustained load's summary"
grep -q 'temperature not read: .* is not on an NVMe namespace' "$T" || fail "report.txt does not say why no temperature"
[ "$(grep -cE '^ +[0-9]+  \|[# ]{30}\| +[0-9.]+( K)? +\|[# ]{30}\| +[0-9.]+ (us|ms)$' "$T")" = 2 ] || fail "report.txt: not one bar line per interval"
grep -qE '^  rand64 +[0-9.]+( K)? +[0-9.]+( K)? +[0-9.]+ (us|ms) +[0-9.]+ (us|ms) +[0-9.]+ s +[0-9.]+ s$' "$T" || fail "report.txt lacks the runs before and after"
H=$TMP/r/report.html
grep -q '<h2>Sustained load</h2>' "$H" || fail "report.html lacks the section"
grep -q 'data-chart="sustain"' "$H" || fail "report.html lacks the sustained chart"
[ "$(sed -n '/data-chart="sustain"/,/<\/figure>/p' "$H" | grep -c 'data-points="2"')" = 2 ] ||
	fail "the sustained chart does not draw IOPS and p99.9 with one point per interval"
ok "report.txt and report.html show the hold: summary, intervals, bars, the chart, the runs before and after"

# a record whose sustain figures are of the wrong type: report refuses it, naming the key
mkdir -p "$TMP/bad"
jq '.sustain.intervals[1].iops = "fast"' "$STATE/accept.json" >"$TMP/bad/accept.json"
chmod 600 "$TMP/bad/accept.json"
chmod 700 "$TMP/bad"
run 3 "$SWAPTOOL" --state "$TMP/bad" report --key "$TMP/key" --out "$TMP/r2"
contains "'sustain.intervals[1].iops' is a string, not a number"
ok "report refuses an accept record whose sustain figures have the wrong type (exit 3), naming the key"

# SIGINT mid-hold: on a terminal, the progress line counts the intervals with the time left; the
# record saved keeps every interval measured, marked incomplete
st=$TMP/st-int
script -qfec "echo \$\$ >$TMP/pid; exec $SWAPTOOL --json --state $st --profile $TMP/p.ini accept $DEV --working-set 16M --no-seq --force --sustain 60 >$TMP/int.json" \
	/dev/null >"$TMP/tty.log" 2>&1 &
spid=$!
holding() { grep -aq 'accept sustained load, 64 in flight: interval 4 of 60, .* left' "$TMP/tty.log"; }
wait_for 40 holding || { cat -v "$TMP/tty.log" | tail -c 2000 >&2; fail "no progress line of the 4th interval with its time left"; }
kill -INT "$(cat "$TMP/pid")"
rc=0
wait "$spid" || rc=$?
[ "$rc" = 130 ] || fail "exit $rc after SIGINT mid-hold, expected 130"
OUT=$(cat "$TMP/int.json")
jeq '.complete' false
jeq '.sustain.complete' false
jeq '.sustain.intervals | length >= 4' true
jeq '[.sustain.intervals[:-1][] | .complete and .ios > 0] | all' true
jeq '.sustain.drift.last == ([.sustain.intervals[] | select(.complete)] | last | .index)' true
jeq '.sustain.runs' null
jeq '[.checks[] | select(.id == "sustain")][0] | .status == "fail" and (.summary | test("interrupted in interval"))' true
[ "$(jq '.sustain.intervals | length' "$st/accept.json")" = "$(jq '.sustain.intervals | length' "$TMP/int.json")" ] ||
	fail "the saved record lacks the intervals measured before SIGINT"
[ ! -e "$st/.lock" ] || fail "SIGINT left $st/.lock"
ok "SIGINT mid-hold: exit 130, the partial series saved, marked incomplete"
