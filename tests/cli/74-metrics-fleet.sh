#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# metrics: records and reports as node_exporter textfile metrics, checked by promtool and against the
# records' own numbers; fleet: the incident's dgx4-vs-dgx5 comparison as N nodes with a reference;
# both read hostile records without trusting a field's type.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/fixtures/records-lib.sh"
command -v promtool >/dev/null || skip "promtool (Debian package prometheus) is not installed"

# promcheck FILE: promtool accepts it, and no series appears twice (promtool does not look for that)
promcheck() {
	promtool check metrics <"$1" || fail "promtool rejects $1"
	local dup
	dup=$(grep -v '^#' "$1" | sed 's/ [^ ]*$//' | sort | uniq -d)
	[ -z "$dup" ] || fail "series given twice: $dup"
}
# has LINE: the metrics in $TMP/m.prom hold exactly this sample line
has() { grep -qxF -- "$1" "$TMP/m.prom" || { grep -F "${1%%\{*}" "$TMP/m.prom" >&2; fail "metrics lack: $1"; }; }
hasnt() { ! grep -qF -- "$1" "$TMP/m.prom" || fail "metrics hold: $1"; }

# inputs: dgx4's real preflight (the XG7000's nvme-cli dumps, a disk smaller than the source), the
# incident's accept numbers of dgx4 and dgx5, and a report of a finished swap of dgx7
"$MKDISK" incident "$TMP/src.img" >/dev/null
run 4 "$SWAPTOOL" --state "$TMP/pfs" --json preflight "$TMP/src.img" --target 2000398934016 \
	--from-dumps "$SRCDIR/fixtures/nvme/xg7000" --target-model "Corsair MP600 Mini 2TB"
jq '.host = "dgx4"' <<<"$OUT" >"$TMP/pf4.json"
dgx4_accept "$TMP/a4.json"
dgx5_accept "$TMP/a5.json"
write_records "$TMP/r7"
for f in "$TMP"/r7/*.json; do jq '.host = "dgx7"' "$f" >"$f.x" && mv "$f.x" "$f"; done
run 0 "$SWAPTOOL" --state "$TMP/r7" report --no-sign --out "$TMP/r7/out"

run 0 "$SWAPTOOL" metrics "$TMP/pf4.json" "$TMP/a4.json" "$TMP/a5.json" "$TMP/r7/out/report.json"
printf '%s\n' "$OUT" >"$TMP/m.prom"
promcheck "$TMP/m.prom"
# dgx4's source is an image file: no kernel name, so no device label; identity in swaptool_drive_info
L='host="dgx4"'
has "swaptool_preflight_delta_bytes{$L} -48009314304"
has "swaptool_preflight_source_bytes{$L} 2048408248320"
has "swaptool_preflight_verdict{$L,verdict=\"trap\"} 1"
has "swaptool_preflight_verdict{$L,verdict=\"fail\"} 0"
has "swaptool_preflight_verdict{$L,verdict=\"pass\"} 0"
has "swaptool_preflight_path_possible{$L,path=\"raw_clone\"} 0"
has "swaptool_preflight_path_recommended{$L,path=\"fresh_install\"} 1"
has "swaptool_drive_info{$L,role=\"source\",model=\"XG7000-2TB 2242\",serial=\"KS24XG7K2T0000D4\",firmware=\"GT0d9d63\"} 1"
has "swaptool_drive_info{$L,role=\"target\",model=\"Corsair MP600 Mini 2TB\",serial=\"\",firmware=\"\"} 1"
has "swaptool_drive_class_info{$L,role=\"source\",class=\"KingSpec XG7000\",verdict=\"avoid\"} 1"
has "swaptool_drive_hmb_bytes{$L,role=\"source\"} 41943040"
has "swaptool_drive_class_hmb_bytes{$L,role=\"source\"} 41943040"
has "swaptool_drive_class_info{$L,role=\"target\",class=\"Corsair MP600 Mini\",verdict=\"measure\"} 1"
has "swaptool_smart_temperature_celsius{$L,role=\"source\"} 42"
has "swaptool_smart_power_on_seconds_total{$L,role=\"source\"} 345600"
has "swaptool_smart_data_read_bytes_total{$L,role=\"source\"} 54900000256000"
has "swaptool_smart_media_errors_total{$L,role=\"source\"} 0"
has "swaptool_smart_available_spare_threshold_ratio{$L,role=\"source\"} 0.1"
# the lifetime counts are counters named _total (node_exporter's nvme collector), the rest gauges
for m in data_read_bytes data_written_bytes power_on_seconds power_cycles unsafe_shutdowns media_errors error_log_entries; do
	grep -qx "# TYPE swaptool_smart_${m}_total counter" "$TMP/m.prom" || fail "swaptool_smart_${m}_total is not a counter"
	grep -q "^swaptool_smart_${m}{" "$TMP/m.prom" && fail "swaptool_smart_$m is still a gauge without _total"
done
grep -qx "# TYPE swaptool_smart_temperature_celsius gauge" "$TMP/m.prom" || fail "the temperature is not a gauge"
# no series but the _info one names the model or serial
grep -v '^#' "$TMP/m.prom" | grep -v '^swaptool_drive_info{' | grep -E 'serial=|model=' &&
	fail "identity labels outside swaptool_drive_info"
A4='host="dgx4",device="nvme0n1"'
has "swaptool_accept_iops{$A4,run=\"rand16\",mode=\"randread\",inflight=\"16\"} 12900"
has "swaptool_accept_read_bytes_per_second{$A4,run=\"seq\",mode=\"seqread\",inflight=\"4\"} 1900000000"
has "swaptool_accept_read_latency_seconds{$A4,run=\"rand16\",quantile=\"0.5\"} 0.001183"
has "swaptool_accept_read_latency_seconds{$A4,run=\"rand64\",quantile=\"0.999\"} 0.0105"
has "swaptool_accept_gate_passed{$A4,gate=\"rand16-iops\"} 0"
has "swaptool_accept_verdict{$A4,verdict=\"fail\"} 1"
has "swaptool_accept_engine_gates_run{$A4} 0"
has "swaptool_drive_info{$A4,role=\"measured\",model=\"\",serial=\"\",firmware=\"\"} 1"
has 'swaptool_accept_iops{host="dgx5",device="nvme0n1",run="rand64",mode="randread",inflight="64"} 204000'
has 'swaptool_record_finished_timestamp_seconds{host="dgx5",device="nvme0n1",step="accept"} '"$(date -d 2026-11-04T09:01:00Z +%s)"
# dgx7 from its report: the embedded records, and the report's verdict, on the one kernel name
A7='host="dgx7",device="nvme0n1"'
has "swaptool_report_verdict{$A7,verdict=\"accepted\"} 1"
has "swaptool_report_signed{$A7} 0"
has "swaptool_accept_iops{$A7,run=\"rand16\",mode=\"randread\",inflight=\"16\"} 118200.5"
has "swaptool_accept_read_latency_seconds_count{$A7,run=\"rand16\"} 1773000"
has "swaptool_accept_read_latency_seconds_sum{$A7,run=\"rand16\"} 239.7096"
has "swaptool_accept_engine_gates_run{$A7} 1"
has "swaptool_preflight_delta_bytes{$A7} -48009314304"
has "swaptool_drive_info{$A7,role=\"source\",model=\"XG7000-2TB 2242\",serial=\"\",firmware=\"GT0d9d63\"} 1"
has "swaptool_drive_info{$A7,role=\"measured\",model=\"Corsair MP600 MINI\",serial=\"A5KQB4390K3KGP\",firmware=\"\"} 1"
ok "metrics: promtool accepts them; the records' numbers, exactly"

# --out: atomic, 0644 for node_exporter, the same text; --json carries it too
run 0 "$SWAPTOOL" metrics --out "$TMP/node.prom" "$TMP/a4.json" "$TMP/a5.json"
contains "samples for 2 nodes to $TMP/node.prom"
[ "$(stat -c %a "$TMP/node.prom")" = 644 ] || fail "--out mode $(stat -c %a "$TMP/node.prom")"
promcheck "$TMP/node.prom"
run 0 "$SWAPTOOL" --json metrics "$TMP/a4.json" "$TMP/a5.json"
[ "$(jq -r .text <<<"$OUT")" = "$(cat "$TMP/node.prom")" ] || fail "--json text differs from --out"
jeq .nodes 2
jeq '.inputs | map(.kind) | join(",")' "accept,accept"
ls "$TMP" | grepq '^node.prom.' && fail "a temporary file is left beside --out"
run 3 "$SWAPTOOL" metrics --out "$TMP/nodir/x.prom" "$TMP/a4.json"
contains "cannot write '$TMP/nodir/x.prom'"
ok "metrics --out and --json"

# hostile records: label values escaped (quote, backslash, newline), bytes that are not UTF-8 replaced,
# fields of the wrong type left out, never a crash or a malformed file
jq '.host = "dgx\"9\\x" | .drive = {disk: "/dev/nvme0n1", model: "Evil\nModel \u00e9", serial: 7}
	| .runs[0].iops = "12900" | .runs[1].lat_us = [1,2] | .runs[2] = 5 | .gates = {a: 1} | .engine_gates_run = "yes"
	| .target.working_set_bytes = "big"' "$TMP/a4.json" >"$TMP/evil.json"
printf '%s' "$(jq -c '.drive.firmware = "FW"' "$TMP/evil.json")" | sed 's/"FW"/"F\xffW"/; s/"Evil\\nModel/"Ev\xc3il\\nModel/' >"$TMP/evil2.json"
run 0 "$SWAPTOOL" metrics "$TMP/evil.json"
printf '%s\n' "$OUT" >"$TMP/m.prom"
promcheck "$TMP/m.prom"
E='host="dgx\"9\\x",device="nvme0n1"'
has "swaptool_drive_info{$E,role=\"measured\",model=\"Evil\\nModel é\",serial=\"\",firmware=\"\"} 1"
has "swaptool_accept_read_bytes_per_second{$E,run=\"rand16\",mode=\"randread\",inflight=\"16\"} 52800000"
has "swaptool_accept_verdict{$E,verdict=\"fail\"} 1"
hasnt 'run="rand16",mode="randread",inflight="16"} 12900'
hasnt swaptool_accept_gate_passed
hasnt swaptool_accept_engine_gates_run
hasnt swaptool_accept_working_set_bytes
hasnt 'quantile="0.5"} 0.00245'
run 0 "$SWAPTOOL" metrics "$TMP/evil2.json"
printf '%s\n' "$OUT" >"$TMP/m.prom"
promcheck "$TMP/m.prom"
grep -qF 'model="Ev?il\nModel é"' "$TMP/m.prom" || fail "a byte that is not UTF-8 is not replaced: $(grep -m1 drive_info "$TMP/m.prom")"
# a UTF-16 surrogate and an overlong form in UTF-8 clothing are not UTF-8 either
printf '%s' "$(jq -c '.drive.model = "AXB" | .drive.serial = "CYD"' "$TMP/a4.json")" | sed 's/AXB/A\xed\xa0\x80B/; s/CYD/C\xe0\x80\xafD/' >"$TMP/evil3.json"
run 0 "$SWAPTOOL" metrics "$TMP/evil3.json"
printf '%s\n' "$OUT" >"$TMP/m.prom"
promcheck "$TMP/m.prom"
grep -qF 'model="A???B",serial="C???D"' "$TMP/m.prom" || fail "surrogates or overlong forms pass: $(grep -m1 drive_info "$TMP/m.prom")"
# not records: exit 3 and nothing on stdout; other steps' records are listed as ignored
echo '[1,2]' >"$TMP/arr.json"
echo 'not json' >"$TMP/bad.json"
jq '.host = 5' "$TMP/a4.json" >"$TMP/nohost.json"
printf '%s' "$(jq -c '.host = "HOST"' "$TMP/a4.json")" | sed 's/"HOST"/"d\xffx"/' >"$TMP/badhost.json"
for f in arr bad nohost badhost missing; do
	run 3 "$SWAPTOOL" metrics "$TMP/a5.json" "$TMP/$f.json"
	[ -z "$OUT" ] || fail "metrics printed metrics for a bad input ($f)"
done
run 3 "$SWAPTOOL" --json metrics "$TMP/bad.json"
jeq '.error.message | test("is not a JSON object")' true
run 0 "$SWAPTOOL" --json metrics "$TMP/r7/backup.json" "$TMP/a5.json"
jeq '.inputs[0].kind' ignored
run 2 "$SWAPTOOL" metrics
run 2 "$SWAPTOOL" metrics --bogus "$TMP/a5.json"
# two records of one node and step: the newer one counts, once
jq '.finished = "2026-11-06T00:00:00Z" | .runs[0].iops = 61000' "$TMP/a4.json" >"$TMP/a4-new.json"
run 0 "$SWAPTOOL" metrics "$TMP/a4-new.json" "$TMP/a4.json"
printf '%s\n' "$OUT" >"$TMP/m.prom"
promcheck "$TMP/m.prom"
has "swaptool_accept_iops{$A4,run=\"rand16\",mode=\"randread\",inflight=\"16\"} 61000"
ok "metrics: hostile records"

# fleet: dgx4 (the XG7000, failing) against dgx5 (the reference), as docs/incident.md compares them
run 1 "$SWAPTOOL" --json fleet "$TMP/pf4.json" "$TMP/a4.json" "$TMP/a5.json" "$TMP/r7/out/report.json" --reference dgx5
jeq '.reference.host' dgx5
jeq '.reference.from' option
jeq '[.nodes[].host] | join(",")' "dgx4,dgx5,dgx7"
jeq '.runs | join(",")' "rand16,rand64,seq"
jeq '.nodes[0].drive.class' "KingSpec XG7000"
jeq '.nodes[0].drive.class_verdict' avoid
jeq '.nodes[0].drive.hmb_mb' 40
jeq '.nodes[0].target.class_verdict' measure
jeq '.nodes[0].delta_bytes' -48009314304
jeq '.nodes[0].recommended_path' fresh_install
jeq '.nodes[0].accept.runs[0].iops_ratio == 0.161' true
jeq '.nodes[0].accept.runs[0].p50_ratio == 5.915' true
jeq '.nodes[0].accept.runs[1].iops_ratio == 0.122' true
jeq '.nodes[0].accept.runs[2].mb_s_ratio == 0.633' true
jeq '.nodes[0].accept.gates | [.passed, .total, .engine] | join(",")' "0,5,not run"
jeq '.nodes[0].accept.gates.failed | length' 5
jeq '.nodes[0].status' fail
# one verdict vocabulary: preflight's clone trap with a path is "trap" here as in the record
jeq '.nodes[0].preflight.verdict' trap
jeq '.nodes[0].preflight.status' trap
jeq '.checks[0].summary | startswith("dgx4: preflight trap: clone trap found")' true
jeq '.checks[0].summary | contains("preflight pass")' false
jeq '.nodes[1].accept.runs[0].iops_ratio == 1' true
jeq '.nodes[1].status' pass
jeq '.nodes[2].report.verdict' accepted
jeq '.nodes[2].accept.runs[0].iops_ratio == 1.478' true
jeq '.nodes[2].status' pass
jeq '[.checks[] | .host + ":" + .status] | join(",")' "dgx4:fail,dgx5:pass,dgx7:pass"
run 1 "$SWAPTOOL" fleet "$TMP/pf4.json" "$TMP/a4.json" "$TMP/a5.json" --reference dgx5
contains "KingSpec XG7000 (avoid)"
contains "12.9 K (0.16x)"
contains "1.90 GB/s (0.63x)"
contains "80.0 K (1.00x)"
contains "-48.0 GB"
printf '%s' "$OUT" | grepq "preflight trap: clone trap found" || fail "fleet's text does not say 'preflight trap'"
printf '%s' "$OUT" | grepq "preflight pass" && fail "fleet's text calls the trap 'preflight pass'"
# the default reference: the first node whose accept passed; another reference turns the ratios round
run 1 "$SWAPTOOL" --json fleet "$TMP/a4.json" "$TMP/a5.json"
jeq '.reference.host' dgx5
jeq '.nodes[0].accept.runs[0].iops_ratio == 0.161' true
run 1 "$SWAPTOOL" --json fleet "$TMP/a4.json" "$TMP/a5.json" --reference dgx4
jeq '.nodes[1].accept.runs[0].iops_ratio == 6.202' true
# every node passing: exit 0
run 0 "$SWAPTOOL" fleet "$TMP/a5.json" "$TMP/r7/out/report.json"
run 2 "$SWAPTOOL" fleet "$TMP/a4.json" --reference dgx9
contains "reference 'dgx9' is not among the inputs' nodes ('dgx4')"
run 2 "$SWAPTOOL" fleet "$TMP/pf4.json" --reference dgx4
contains "has no accept record"
run 2 "$SWAPTOOL" fleet
run 3 "$SWAPTOOL" fleet "$TMP/a4.json" "$TMP/bad.json"
# hostile fields: ratios only from numbers
run 1 "$SWAPTOOL" --json fleet "$TMP/evil.json" "$TMP/a5.json" --reference dgx5
jeq '.nodes[0].accept.runs[0].iops_ratio' null
jeq '.nodes[0].accept.runs[0].mb_s_ratio == 0.161' true
jeq '.nodes[0].accept.gates.total' 0
ok "fleet: dgx4 against dgx5, reference, exit codes, hostile fields"

# inputs that would hang or never end: a FIFO, a character device, a directory: exit 3 at once
mkfifo "$TMP/fifo"
for step in metrics fleet; do
	for bad in "$TMP/fifo" /dev/zero "$TMP"; do
		run 3 timeout 20 "$SWAPTOOL" "$step" "$TMP/a4.json" "$bad"
		case $bad in
		"$TMP/fifo") contains "it is a FIFO, not a regular file" ;;
		/dev/zero) contains "it is a character device, not a regular file" ;;
		*) contains "it is a directory" ;;
		esac
	done
done
ok "metrics and fleet: a FIFO, /dev/zero or a directory as input is refused at once"
