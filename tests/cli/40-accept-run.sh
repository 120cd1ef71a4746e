#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# accept on a file with real data: ios, IOPS and MB/s agree, percentiles are monotonic, gates follow
# their thresholds, engine gates run with sh -c (exit code, output tail, timeout), records are saved.
. "$SRCDIR/tests/lib.sh"

# O_DIRECT reads must reach a drive: a tmpfs TMPDIR will not do
D=$TMP
if [ "$(stat -f -c %T "$D")" = tmpfs ]; then
	D=$(mktemp -d /var/tmp/swaptool-accept.XXXXXX)
	trap 'rm -rf "$D"; cleanup_test' EXIT
fi
[ "$(stat -f -c %T "$D")" = tmpfs ] && skip "no disk-backed directory for O_DIRECT"
need_odirect "$D" # other filesystems refuse it too (some overlays, NFS)
need_io_uring
F=$D/shard
head -c 64M /dev/urandom >"$F"
sync "$F"

# gates every drive passes, and gates none does: the verdict follows the thresholds, not the disk
lenient_profile "$TMP/lenient.ini"
cat >"$TMP/strict.ini" <<'INI'
[run rand16]
min_iops = 100000000
INI
A=(accept "$F" --working-set 32M --duration 1 --ramp 0 --seq-bytes 16M --force --seed 7)

run 0 "$SWAPTOOL" --json --state "$STATE" --profile "$TMP/lenient.ini" "${A[@]}"
jeq '.step' accept
jeq '[.runs[].name] | join(",")' rand16,rand64,seq
jeq '[.runs[].mode] | join(",")' randread,randread,seqread
jeq '.target.size_bytes' 67108864
jeq '.target.working_set_bytes' 33554432
jeq '.target.offset_bytes' 16777216
jeq '.seed' 7
jeq '.complete' true
jeq '.representative' true
# bytes = ios x block size; IOPS = ios / window (1 %); MB/s = bytes / window (1 %)
jeq '[.runs[] | .bytes == .ios * .block_size] | all' true
jeq '[.runs[] | (.iops - .ios / .duration_s) as $d | ($d * $d) <= (.iops / 100 + 1) * (.iops / 100 + 1)] | all' true
jeq '[.runs[] | (.mb_s - .bytes / .duration_s / 1e6) as $d | ($d * $d) <= (.mb_s / 100 + 0.2) * (.mb_s / 100 + 0.2)] | all' true
jeq '[.runs[] | .ios > 0 and .errors.count == 0] | all' true
# percentiles monotonic, inside [min, max]
jeq '[.runs[].lat_us | .min <= .p50 and .p50 <= .p90 and .p90 <= .p99 and .p99 <= .p99_9 and .p99_9 <= .p99_99 and .p99_99 <= .max and .mean >= .min and .mean <= .max] | all' true
jeq '[.runs[] | ([.per_second_iops[]] | add // 0) <= .ios] | all' true
jeq '[.runs[] | .over_200ms >= .over_1s and .over_1s >= .over_5s] | all' true
jeq '.runs[2].bytes' 16777216
jeq '[.runs[0], .runs[1] | .inflight] | join(",")' 16,64
jeq '.runs[0].ring | .single_issuer and .defer_taskrun and .fixed_buffers and .fixed_files' true
jeq '[.gates[].name] | join(",")' rand16-iops,rand16-p50,rand64-iops,rand64-p99.9,seq-mb_s
jeq '[.gates[].status] | unique | join(",")' pass
jeq '[.checks[] | select(.id == "rand16-iops")][0].status' pass
# no engine gates: harness passed, engine rows not run: a warning, exit 0
jeq '.engine_gates_run' false
jeq '[.checks[] | select(.id == "engine-gates")][0].status' warn
jeq '.verdict' warn
[ "$(jq -r .complete "$STATE/accept.json")" = true ] || fail "accept.json not saved"
ok "lenient gates pass; consistent figures; engine gates reported as not run"

# the engine predicted from each random run (docs/incident.md's arithmetic): a 4096-token chunk is
# 169,319 reads of 4 KiB; its time is those reads at the run's IOPS; none for the sequential run
jeq '[.runs[0], .runs[1] | .engine_prediction.reads_per_chunk] | join(",")' 169319,169319
jeq '.runs[0].engine_prediction.chunk_bytes' 693530624
jeq '.runs[2].engine_prediction' null
jeq '[.runs[0], .runs[1] | .engine_prediction | (.chunk_s - .reads_per_chunk / .iops) | fabs < 0.01] | all' true
jeq '[.checks[] | select(.id == "engine-prediction")][0].status' pass
ok "each random run predicts the engine's chunk time; the check passes on a lenient spin limit"

# a chunk no drive here reads inside a 1 s spin limit: the prediction fails the verdict (exit 1)
cat >"$TMP/tight.ini" <<'INI'
[run rand16]
min_iops = 1
max_p50_us = 100000000
[workload]
chunk_tokens = 1048576
spin_limit_low = 1
spin_limit_high = 1
INI
run 1 "$SWAPTOOL" --json --state "$STATE" --profile "$TMP/tight.ini" "${A[@]}" --no-seq --inflight 16
jeq '[.checks[] | select(.id == "engine-prediction")][0] | .status + " " + .run' "fail rand16"
jeq '[.checks[] | select(.id == "engine-prediction")][0].prediction.reads_per_chunk' 43345594
jeq '[.gates[].status] | unique | join(",")' pass
ok "a worst chunk past the spin limit's low end fails the prediction check"

run 0 "$SWAPTOOL" --state "$STATE" --profile "$TMP/lenient.ini" --no-color "${A[@]}" --no-seq --inflight 16
contains "engine gates not run"
contains "rand16-p50"
contains "verdict: WARN"
ok "human output: gates table and verdict line"

run 1 "$SWAPTOOL" --json --state "$STATE" --profile "$TMP/strict.ini" "${A[@]}" --no-seq --gate never=true
jeq '[.checks[] | select(.id == "rand16-iops")][0].status' fail
jeq '[.gates[] | select(.name == "rand16-iops")][0].threshold' 100000000
jeq '[.checks[] | select(.id == "engine-gates")][0].status' skip
jeq '.engine_gates_run' false
jeq '.verdict' fail
ok "a gate below its threshold fails the run (exit 1); engine gates skipped"

printf '[engine slowpoke]\ncommand = sleep 30\ntimeout = 1\n' >>"$TMP/lenient.ini"
run 1 "$SWAPTOOL" --json --state "$STATE" --profile "$TMP/lenient.ini" "${A[@]}" --no-seq --inflight 16 \
	--gate ok='echo first-touch done' --gate bad='echo poisoned transport >&2; exit 3'
jeq '.engine_gates_run' true
jeq '[.engine_gates[].name] | join(",")' slowpoke,ok,bad
jeq '.engine_gates[0].timed_out' true
jeq '.engine_gates[0].status' fail
jeq '.engine_gates[1].exit_code' 0
jeq '.engine_gates[1].output_tail' "first-touch done"
jeq '.engine_gates[2].exit_code' 3
jeq '.engine_gates[2].output_tail' "poisoned transport"
jeq '[.checks[] | select(.id == "engine-ok")][0].status' pass
jeq '[.checks[] | select(.id == "engine-bad")][0].status' fail
jeq '[.gates[] | select(.name == "engine-bad")][0].measured' 3
jeq '.verdict' fail
ok "engine gates: exit code, output tail, timeout"
