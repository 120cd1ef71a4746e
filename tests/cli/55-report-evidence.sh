#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The report an operator keeps, from real records: both drives side by side from the records they
# come from (the new one from the device accept measured, never preflight's --target-model), every
# chart with the data points of its record, the sweep and --reference comparison in report.txt too,
# and the signature state with a verify command that works.
. "$SRCDIR/tests/lib.sh"
command -v python3 >/dev/null || skip "no python3"
command -v ssh-keygen >/dev/null || skip "no ssh-keygen"

# O_DIRECT reads must reach a drive: a tmpfs TMPDIR will not do
D=$TMP
if [ "$(stat -f -c %T "$D")" = tmpfs ]; then
	D=$(mktemp -d /var/tmp/swaptool-report.XXXXXX)
	trap 'rm -rf "$D"; cleanup_test' EXIT
fi
[ "$(stat -f -c %T "$D")" = tmpfs ] && skip "no disk-backed directory for O_DIRECT"
F=$D/shard
head -c 32M /dev/urandom >"$F"
sync "$F"
lenient_profile "$TMP/p.ini"
P=(--profile "$TMP/p.ini")

# the old drive: the incident's KingSpec through its NVMe dumps; the new one named by hand only
"$MKDISK" incident "$TMP/src.img" >/dev/null
run 4 "$SWAPTOOL" "${P[@]}" --state "$STATE" --json preflight "$TMP/src.img" --target 2000398934016 --home /home/nv \
	--from-dumps "$SRCDIR/fixtures/nvme/xg7000" --target-model "Corsair MP600 Mini 2TB"
jeq .verdict trap
A=(accept "$F" --working-set 16M --duration 2 --ramp 0 --seq-bytes 8M --force --sweep 4M,8M,16M)
run 0 "$SWAPTOOL" "${P[@]}" --state "$STATE" --json "${A[@]}" --seed 3
run 0 "$SWAPTOOL" "${P[@]}" --state "$TMP/ref" --json "${A[@]}" --seed 5
ACC=$STATE/accept.json
[ "$(jq '[.runs[], .sweep[] | ([.lat_hist.bins[][2]] | add) == .ios] | all' "$ACC")" = true ] ||
	fail "a run's histogram counts do not add up to its ios"
[ "$(jq '[.runs[].lat_hist.bins[] | .[0] <= .[1] and .[2] > 0] | all' "$ACC")" = true ] ||
	fail "a histogram bucket is empty or upside down"
disk=$(jq -r .drive.disk "$ACC")
[ "$disk" = "$(jq -r .target.disk "$ACC")" ] || fail "accept's drive is not the disk under its target"
[ "$(jq .drive.size_bytes "$ACC")" = $(($(cat "/sys/block/$disk/size") * 512)) ] || fail "drive size is not sysfs's"
ok "accept records each run's histogram and the device it measured ($disk)"

ssh-keygen -q -t ed25519 -N '' -C t -f "$TMP/key"
run 0 "$SWAPTOOL" "${P[@]}" --state "$STATE" --json report --key "$TMP/key" --identity ops@dgx4 --out "$TMP/o" \
	--reference "$TMP/ref/accept.json"
R=$TMP/o/report.json
H=$TMP/o/report.html
T=$TMP/o/report.txt
# both drives, from the records they come from
q() { jq -r "$1" "$R"; }
for f in model serial firmware; do
	[ "$(q ".drives.old.$f")" = "$(q ".steps.preflight.source.$f")" ] || fail "old drive $f is not preflight's"
	[ "$(q ".drives.new.$f")" = "$(q ".steps.accept.drive.$f")" ] || fail "new drive $f is not accept's"
done
[ "$(q .drives.old.model)" = "XG7000-2TB 2242" ] || fail "old model"
[ "$(q .drives.old.hmb_mb)" = "$(q .steps.preflight.source_identity.hmb_mb)" ] || fail "old HMB"
[ "$(q .drives.old.class)" = "$(q .steps.preflight.source_identity.class.verdict)" ] || fail "old class"
for f in power_on_hours media_errors temperature_c critical_warning data_read_bytes data_written_bytes; do
	[ "$(q ".drives.old.$f")" = "$(q ".steps.preflight.source_identity.smart.$f")" ] || fail "old drive $f is not preflight's SMART"
done
[ "$(q .drives.old.error_log_entries)" = "$(q .steps.preflight.source_identity.error_log.entries)" ] || fail "old error log"
[ "$(q .drives.old.namespace_bytes)" = 2048408248320 ] || fail "old namespace size"
[ "$(q .drives.new.device)" = "$disk" ] || fail "new device"
[ "$(q .drives.new.namespace_bytes)" = "$(q .steps.accept.drive.size_bytes)" ] || fail "new namespace size"
# nothing measured the new drive's health: unknown, not another step's value
for f in power_on_hours media_errors hmb_mb error_log_entries; do
	[ "$(q ".drives.new.$f")" = null ] || fail "new drive $f claims a value nothing measured"
done
# (the verdict's why and the target line name it as what preflight planned for, not as the new drive)
grep -q 'data-side="new">Corsair MP600 Mini 2TB' "$H" && [ "$(q .drives.new.model)" != "Corsair MP600 Mini 2TB" ] &&
	fail "report.html shows preflight's --target-model as the new drive"
grep -q '^  power-on hours      96 ' "$T" || fail "report.txt lacks the old drive's power-on hours"
ok "drives side by side from preflight's and accept's records"

# every chart has the data points of its record (python3 html.parser counts the SVG points)
python3 "$SRCDIR/tests/cli/55-report-evidence.py" "$R" "$H" "$TMP/ref/accept.json" || fail "charts or drive cells differ from the records"
for c in percentiles per-second sweep compare hist-rand16 hist-rand64 hist-seq; do
	grep -q "data-chart=\"$c\"" "$H" || fail "no '$c' chart"
done
grep -q '<pre' "$H" && fail "report.html still repeats the tables as plain text"
ok "every chart has its record's points"

# the sweep and the comparison as text
grep -q '^Sweep: 4 KiB random reads by working set' "$T" || fail "report.txt lacks the sweep"
for ws in "4 MiB" "8 MiB" "16 MiB"; do grep -q "^  $ws " "$T" || fail "report.txt sweep lacks $ws"; done
grep -q '^Against the reference node' "$T" || fail "report.txt lacks the comparison"
b=$(jq '.runs[] | select(.name == "rand16") | .iops' "$ACC")
a=$(jq '.runs[] | select(.name == "rand16") | .iops' "$TMP/ref/accept.json")
want=$(printf '%.2f' "$(echo "$b / $a" | bc -l)")
grep -Eq "^  rand16 .* $want " "$T" || fail "report.txt's rand16 IOPS B/A is not $want"
ok "report.txt: sweep and B/A $want against the reference"

# the signature state, and its command works where the report lies
fp=$(ssh-keygen -lf "$TMP/key.pub" | awk '{print $2}')
grep -q "$fp" "$H" || fail "report.html lacks the key fingerprint"
grep -q 'signed by <b>ops@dgx4</b>' "$H" || fail "report.html lacks the signer"
cmd=$(python3 -c 'import re,sys,html; m=re.search(r"<code>(ssh-keygen -Y verify[^<]*)</code>", open(sys.argv[1]).read()); print(html.unescape(m.group(1)))' "$H")
(cd "$TMP/o" && bash -c "$cmd") >/dev/null 2>&1 || fail "the page's verify command fails: $cmd"
run 0 "$SWAPTOOL" --no-color verify-report "$R" --allowed-signers "$TMP/o/allowed_signers" --identity ops@dgx4
ok "signature shown with a working verify command"

# a reference that is neither an accept record nor a report is refused
echo '{"step":"backup"}' >"$TMP/bad.json"
run 3 "$SWAPTOOL" --state "$STATE" report --no-sign --out "$TMP/o2" --reference "$TMP/bad.json"
contains "neither an accept record nor a report"
ok "a bad --reference is refused"
