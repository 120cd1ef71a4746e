#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The engine predicted from an accept record (src/predict.h) in every view: report.txt and
# report.html (the section, the chart with the spin-limit band), fleet, compare and metrics; the
# incident's figures give the write-up's table (12.9 K and 24.8 K IOPS: 13.1 s and 6.83 s a chunk;
# 80 K and 204 K: 2.12 s and 0.83 s); a real accept with --sweep predicts at every working set.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/fixtures/records-lib.sh"

# points ATTR FILE: the values of a data attribute of the prediction chart's points, comma-separated
points() { grep -o '<circle class="prediction"[^>]*>' "$2" | grep -o " $1=\"[^\"]*\"" | cut -d'"' -f2 | paste -sd, -; }

# the finished swap of dgx4, its accept the incident's XG7000 at 98 GB (no sweep: one working set)
write_records "$TMP/s4"
dgx4_accept "$TMP/s4/accept.json"
jeq_file() { OUT=$(cat "$1") jeq "$2" "$3"; }
jeq_file "$TMP/s4/accept.json" '[.runs[] | .engine_prediction.worst_chunk_s] | join(",")' "13.126,6.827,"
run 1 "$SWAPTOOL" --state "$TMP/s4" report --no-sign --out "$TMP/s4/out"
T=$TMP/s4/out/report.txt H=$TMP/s4/out/report.html
grep -q "^Predicted engine: a 4,096-token prefill chunk is 169,319 reads (693.531 MB) at 41.34 reads per token; the collective's spin limit is 8-20 s$" "$T" ||
	fail "report.txt lacks the prediction's heading: $(grep -A3 Predicted "$T")"
grep -Eq '^  rand16 +98 GiB +12\.9 K +13\.1 s +13\.1 s +503 s +0\.60x +fail$' "$T" || fail "report.txt: rand16's row: $(grep -A4 Predicted "$T")"
grep -Eq '^  rand64 +98 GiB +24\.8 K +6\.83 s +6\.83 s +262 s +1\.17x +warn$' "$T" || fail "report.txt: rand64's row"
grep -q "the 157,000-token prompt of the cold boot (6,490,000 reads)" "$T" || fail "report.txt does not say what the cold prompt is"
grep -q "^  engine-prediction: fail on rand16, worst chunk 13.1 s$" "$T" || fail "report.txt lacks the check's judgement"
grep -q '<h2>Predicted engine</h2>' "$H" || fail "report.html lacks the section"
[ "$(grep -c 'data-chart="prediction"' "$H")" = 1 ] || fail "report.html: not one prediction chart"
grep -q '<g class="spin-band" data-low="8" data-high="20">' "$H" || fail "report.html: no spin-limit band 8-20 s"
[ "$(points data-run "$H")" = rand16,rand64 ] || fail "report.html: the chart's points are $(points data-run "$H")"
# the points carry the record's own numbers (jq on the record the report embeds)
want=$(jq -r '[.steps.accept.runs[] | .engine_prediction // empty | .worst_chunk_s] | map(tostring) | join(",")' "$TMP/s4/out/report.json")
[ "$(points data-worst-chunk-s "$H")" = "$want" ] || fail "report.html: points $(points data-worst-chunk-s "$H"), record $want"
[ "$(points data-status "$H")" = fail,warn ] || fail "report.html: the points' statuses"
[ "$(points data-working-set "$H")" = 105226698752,105226698752 ] || fail "report.html: the points' working sets"
grep -q 'data-series="sweep"' "$H" && fail "report.html draws a sweep line for a record without a sweep"
grep -q '<td class="st st-warn">WARN</td>' "$H" || fail "report.html: rand64's warn is not a WARN cell"
ok "report: the XG7000's prediction (13.1 s fail, 6.83 s warn) in report.txt and report.html, the chart at one working set"

# with a sweep (the passing swap): a row and a point per working set, the sweep as one line
write_records "$TMP/s7"
run 0 "$SWAPTOOL" --state "$TMP/s7" report --no-sign --out "$TMP/s7/out"
H=$TMP/s7/out/report.html
grep -q 'data-series="sweep" data-points="3"' "$H" || fail "report.html: the sweep's line has not 3 points"
[ "$(points data-run "$H")" = rand16,rand64,sweep16,sweep16,sweep16 ] || fail "report.html: points $(points data-run "$H")"
[ "$(points data-working-set "$H")" = "105226698752,105226698752,2147483648,21474836480,105226698752" ] ||
	fail "report.html: working sets $(points data-working-set "$H")"
grep -Eq '^  sweep16 +2 GiB +121\.0 K +1\.40 s +1\.40 s +53\.6 s +5\.71x +pass$' "$TMP/s7/out/report.txt" || fail "report.txt: the sweep's 2 GiB row"
ok "report: a sweep's prediction per working set, drawn as a line"

# a chunk that never completes (no read did) and a hostile status: "never", nothing guessed
jq '.runs[0].engine_prediction.worst_chunk_s = null | .runs[1].engine_prediction.status = "\u001b[2Jok"' \
	"$TMP/s4/accept.json" >"$TMP/odd.json"
run 1 "$SWAPTOOL" --json fleet "$TMP/odd.json"
jeq '.nodes[0].accept.prediction | [.run, .worst_chunk_s, .status] | map(tostring) | join(",")' "rand16,null,fail"
run 1 "$SWAPTOOL" fleet "$TMP/odd.json"
contains "never fail (rand16)"
cp "$TMP/odd.json" "$TMP/s4/accept.json"
run 1 "$SWAPTOOL" --state "$TMP/s4" report --no-sign --out "$TMP/s4/odd"
grep -Eq '^  rand16 +98 GiB +12\.9 K +13\.1 s +never ' "$TMP/s4/odd/report.txt" || fail "report.txt: a chunk that never completes"
grep -Eq '^  rand64 .* \?$' "$TMP/s4/odd/report.txt" || fail "report.txt shows a hostile status: $(grep rand64 "$TMP/s4/odd/report.txt")"
[ "$(points data-worst-chunk-s "$TMP/s4/odd/report.html")" = inf,6.827 ] || fail "report.html: a never-completing chunk"
ok "a chunk that never completes is 'never', a status that is none of pass, warn, fail is not shown"

# fleet: dgx4 against dgx5, the write-up's table per node
dgx4_accept "$TMP/a4.json"
dgx5_accept "$TMP/a5.json"
run 1 "$SWAPTOOL" --json fleet "$TMP/a4.json" "$TMP/a5.json"
jeq '[.nodes[].accept.prediction | .run + " " + (.worst_chunk_s | tostring) + " " + .status] | join(",")' \
	"rand16 13.126 fail,rand16 2.116 pass"
jeq '.nodes[0].accept.prediction.margin' 0.6
run 1 "$SWAPTOOL" fleet "$TMP/a4.json" "$TMP/a5.json"
contains "predicted chunk"
contains "13.1 s fail (rand16)"
contains "2.12 s pass (rand16)"
ok "fleet: each node's predicted worst chunk and status"

# compare: dgx5 (A) against dgx4 (B), every random run on both sides
run 1 "$SWAPTOOL" --json compare "$TMP/a5.json" "$TMP/a4.json"
jeq '[.runs[] | select(.mode == "randread") | [.a.predicted_chunk_s, .a.predicted_status, .b.predicted_chunk_s, .b.predicted_status] | map(tostring) | join(" ")] | join(",")' \
	"2.116 pass 13.126 fail,0.83 pass 6.827 warn"
jeq '[.runs[] | select(.mode == "seqread") | .a | has("predicted_status")] | join(",")' false
jeq '[.a.predicted_run, .b.predicted_run, .b.predicted_status] | join(",")' "rand16,rand16,fail"
run 1 "$SWAPTOOL" compare "$TMP/a5.json" "$TMP/a4.json"
contains "Predicted engine (worst chunk against the spin limit)"
printf '%s\n' "$OUT" | grep -Eq '^  rand64 +0\.83 s pass +6\.83 s warn$' || fail "compare: rand64's row"
ok "compare: both sides' predictions, run by run"

# metrics: promtool accepts them, the values are the records'
if command -v promtool >/dev/null; then
	run 0 "$SWAPTOOL" metrics "$TMP/a4.json" "$TMP/a5.json"
	printf '%s\n' "$OUT" >"$TMP/m.prom"
	promtool check metrics <"$TMP/m.prom" || fail "promtool rejects the metrics"
	has() { grep -qxF -- "$1" "$TMP/m.prom" || fail "metrics lack: $1"; }
	A4='host="dgx4",device="nvme0n1"'
	A5='host="dgx5",device="nvme0n1"'
	has "swaptool_accept_predicted_chunk_seconds{$A4,run=\"rand16\"} $(jq .runs[0].engine_prediction.worst_chunk_s "$TMP/a4.json")"
	has "swaptool_accept_predicted_chunk_seconds{$A4,run=\"rand64\"} 6.827"
	has "swaptool_accept_predicted_chunk_seconds{$A5,run=\"rand64\"} 0.83"
	has "swaptool_accept_predicted_status{$A4,run=\"rand64\",status=\"warn\"} 1"
	has "swaptool_accept_predicted_status{$A4,run=\"rand64\",status=\"pass\"} 0"
	has "swaptool_accept_predicted_status{$A5,run=\"rand16\",status=\"pass\"} 1"
	has "swaptool_accept_predicted_spin_limit_seconds{$A4,bound=\"low\"} 8"
	has "swaptool_accept_predicted_spin_limit_seconds{$A4,bound=\"high\"} 20"
	grep -q 'run="seq"} ' <(grep predicted "$TMP/m.prom") && fail "metrics predict the sequential run"
	run 0 "$SWAPTOOL" metrics "$TMP/odd.json"
	printf '%s\n' "$OUT" >"$TMP/m.prom"
	promtool check metrics <"$TMP/m.prom" || fail "promtool rejects the odd record's metrics"
	has "swaptool_accept_predicted_chunk_seconds{$A4,run=\"rand16\"} +Inf"
	grep -q 'run="rand64"' <(grep predicted "$TMP/m.prom") && fail "metrics show a hostile status"
	ok "metrics: the predicted worst chunk (+Inf: never), its status and the spin limit, promtool-clean"
else
	echo "ok - metrics not checked: promtool (Debian package prometheus) is not installed"
fi

# a real accept with --sweep: every point of the sweep carries the prediction, from its own IOPS
D=$TMP
if [ "$(stat -f -c %T "$D")" = tmpfs ]; then
	D=$(mktemp -d /var/tmp/swaptool-predict.XXXXXX)
	trap 'rm -rf "$D"; cleanup_test' EXIT
fi
[ "$(stat -f -c %T "$D")" = tmpfs ] && skip "no disk-backed directory for O_DIRECT"
need_odirect "$D"
need_io_uring
head -c 32M /dev/urandom >"$D/shard"
sync "$D/shard"
lenient_profile "$TMP/lenient.ini"
run 0 "$SWAPTOOL" --json --state "$STATE" --profile "$TMP/lenient.ini" accept "$D/shard" --working-set 8M \
	--sweep 4M,16M --duration 1 --ramp 0 --seq-bytes 8M --force --seed 7
jeq '[.sweep[] | .engine_prediction.reads_per_chunk] | join(",")' 169319,169319
jeq '[.sweep[] | .engine_prediction | (.chunk_s - .reads_per_chunk / .iops) | fabs < 0.01] | all' true
jeq '[.sweep[] | (.engine_prediction.iops == .iops)] | all' true
jeq '[.sweep[] | .engine_prediction.spin_limit_s.low] | join(",")' 86400,86400
run01() { "$@" >/dev/null 2>&1 || [ $? = 1 ] || fail "'$*' exited $?"; }
run01 "$SWAPTOOL" --state "$STATE" report --no-sign --out "$TMP/real"
grep -q 'data-series="sweep" data-points="2"' "$TMP/real/report.html" || fail "the real sweep is not drawn"
[ "$(points data-working-set "$TMP/real/report.html")" = 8388608,8388608,4194304,16777216 ] ||
	fail "the real run's points: $(points data-working-set "$TMP/real/report.html")"
grep -q '<g class="spin-band" data-low="86400" data-high="86400">' "$TMP/real/report.html" ||
	fail "the band is not the profile's spin limit"
ok "accept --sweep predicts at every working set; the report draws them against the profile's spin limit"
