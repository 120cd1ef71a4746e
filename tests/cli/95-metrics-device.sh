#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# metrics joins as node_exporter's series do: preflight, accept and report of one disk (a loop device)
# all carry its kernel name as the device label (node_disk_*'s "loop0", not a path in one step and
# empty in another); model, serial and firmware only in one swaptool_drive_info series per drive and
# role; the drive's lifetime counts are counters named _total. promtool accepts the file.
. "$SRCDIR/tests/lib.sh"
command -v promtool >/dev/null || skip "promtool (Debian package prometheus) is not installed"
need_loop
need_io_uring

"$MKDISK" scaled "$TMP/src.img" >/dev/null
attach "$TMP/src.img"
name=${DEV#/dev/}
size=$(stat -c %s "$TMP/src.img")
lenient_profile "$TMP/p.ini"
P=(--state "$STATE" --profile "$TMP/p.ini")
# the XG7000's nvme-cli dumps give the loop device an identity and SMART counts to export
run 4 "$SWAPTOOL" "${P[@]}" preflight "$DEV" --target $((size - 1048576)) --from-dumps "$SRCDIR/fixtures/nvme/xg7000"
[ "$(jq -r .source.disk "$STATE/preflight.json")" = "$name" ] || fail "preflight's record lacks source.disk $name"
run 0 "$SWAPTOOL" "${P[@]}" accept "$DEV" --force --working-set 8M --duration 1 --ramp 0 --seq-bytes 8M
[ "$(jq -r .drive.disk "$STATE/accept.json")" = "$name" ] || fail "accept measured $(jq -r .drive.disk "$STATE/accept.json")"
"$SWAPTOOL" "${P[@]}" report --no-sign --out "$TMP/rep" >/dev/null 2>&1 || [ $? = 1 ] || fail "report failed"
run 0 "$SWAPTOOL" metrics "$STATE/preflight.json" "$STATE/accept.json" "$TMP/rep/report.json"
printf '%s\n' "$OUT" >"$TMP/m.prom"
promtool check metrics <"$TMP/m.prom" || fail "promtool rejects the metrics"
host=$(jq -r .host "$STATE/accept.json")

# every sample of the node names the disk by the kernel's name, whichever step it comes from
samples=$(grep -v '^#' "$TMP/m.prom")
n=$(grep -c . <<<"$samples")
[ "$n" -gt 40 ] || fail "only $n samples"
bad=$(grep -vF "{host=\"$host\",device=\"$name\"," <<<"$samples" | grep -vF "{host=\"$host\",device=\"$name\"}" |
	grep -v 'role="target"' || true)
[ -z "$bad" ] || fail "samples without device=\"$name\": $bad"
for fam in swaptool_preflight_delta_bytes swaptool_accept_iops swaptool_report_verdict swaptool_smart_power_cycles_total; do
	grep -q "^$fam{host=\"$host\",device=\"$name\"" "$TMP/m.prom" || fail "$fam lacks device=\"$name\""
done
ok "preflight, accept and report of $DEV: every sample has device=\"$name\" ($n samples)"

# identity: one _info series per drive and role; no other series names a model or serial
info=$(grep '^swaptool_drive_info{' "$TMP/m.prom")
grep -qxF "swaptool_drive_info{host=\"$host\",device=\"$name\",role=\"source\",model=\"XG7000-2TB 2242\",serial=\"KS24XG7K2T0000D4\",firmware=\"GT0d9d63\"} 1" <<<"$info" ||
	fail "no source drive_info: $info"
grep -q "^swaptool_drive_info{host=\"$host\",device=\"$name\",role=\"measured\"," <<<"$info" || fail "no measured drive_info: $info"
[ "$(grep -c . <<<"$info")" = 2 ] || fail "drive_info series: $info"
grep -v '^swaptool_drive_info{' <<<"$samples" | grep -E 'serial=|model=|firmware=' && fail "identity outside swaptool_drive_info"
grep -qx '# TYPE swaptool_drive_info gauge' "$TMP/m.prom" || fail "drive_info's type"
ok "swaptool_drive_info: the source's identity and the measured drive's, nowhere else"

# counters: the lifetime counts, as node_exporter's nvme collector names them, with the dump's values
for m in data_read_bytes data_written_bytes power_on_seconds power_cycles unsafe_shutdowns media_errors error_log_entries; do
	grep -qx "# TYPE swaptool_smart_${m}_total counter" "$TMP/m.prom" || fail "swaptool_smart_${m}_total is not a counter"
done
grep -qxF "swaptool_smart_power_cycles_total{host=\"$host\",device=\"$name\",role=\"source\"} 31" "$TMP/m.prom" ||
	fail "power cycles: $(grep power_cycles "$TMP/m.prom")"
grep -E '^# TYPE .* counter$' "$TMP/m.prom" | grep -v '_total counter$' && fail "a counter without _total"
grep -E '^# TYPE .*_total ' "$TMP/m.prom" | grep -v ' counter$' && fail "a _total that is not a counter"
ok "SMART lifetime counts are counters named _total"
