#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# issue 31: report says "accepted" only when accept measured the target preflight planned for; a
# report over records of two different drives is incomplete and its why names both, verify-report
# recomputes the same verdict, and a real accept run records the device and transport it measured.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/fixtures/records-lib.sh"
: "${MKDISK:?run through meson test}"
resign_key

edit() { # FILE FILTER
	jq "$2" "$1" >"$TMP/e" && mv "$TMP/e" "$1"
}
report() { # STATE
	run 0 "$SWAPTOOL" --state "$1" --json report --key "$TMP/key" --out "$1/out" --identity t@x
}

# preflight planned for the drive in the enclosure (serial S-NEW); accept measured the node's vda
write_records "$TMP/diff"
edit "$TMP/diff/preflight.json" '.target += {spec: "/dev/sda", path: "/dev/sda", disk: "sda", transport: "usb", serial: "S-NEW"}'
edit "$TMP/diff/accept.json" '.drive += {disk: "vda", device: "/dev/vda", transport: "virtio", serial: "S-VDA", size_bytes: 274877906944}'
report "$TMP/diff"
jeq .report_verdict incomplete
jeq '.missing | index("accept of the target drive") != null' true
jeq '.why | contains("accept measured '"'/dev/vda'"' (virtio, 274,877,906,944 B = 0.275 TB")' true
jeq '.why | contains("preflight planned for '"'/dev/sda'"' (usb, 2,000,398,934,016 B")' true
jeq '.why | contains("not the same drive, their serials differ; run accept on the target: swaptool accept /dev/sda")' true
R=$TMP/diff/out/report.json
[ "$(jq -r .drives.match.result "$R")" = different ] || fail "drives.match.result"
[ "$(jq -r .drives.target.serial "$R")" = S-NEW ] || fail "drives.target.serial"
grep -q "target drive: different: accept measured '/dev/vda'" "$TMP/diff/out/report.txt" || fail "report.txt lacks the target line"
grep -q 'class="target-match"><span class="st st-warn">ANOTHER DRIVE</span>' "$TMP/diff/out/report.html" || fail "report.html lacks the target line"
ssh-keygen -Y verify -f "$TMP/diff/out/allowed_signers" -I t@x -n swaptool-report -s "$R.sig" <"$R" >/dev/null 2>&1 ||
	fail "ssh-keygen rejects the report"
run 0 "$SWAPTOOL" --json verify-report "$R"
jeq '[.checks[] | select(.id == "verdict")][0].summary | startswith("'"'incomplete'"' follows")' true
# the old report's word, re-signed: verify-report makes the verdict again and refuses it
jq -S '.verdict = "accepted"' "$R" >"$TMP/forged.json"
resign "$TMP/forged.json"
run 1 "$SWAPTOOL" --json verify-report "$TMP/forged.json"
jeq '[.checks[] | select(.id == "verdict")][0].status' fail
ok "two drives (serials differ): incomplete, the why names both, verify-report agrees"

# the outside probe: no serial on either side, accept's vda is not the 2,000,398,934,016-byte target
write_records "$TMP/probe"
edit "$TMP/probe/accept.json" '.drive = {disk: "vda", device: "/dev/vda", transport: "virtio", size_bytes: 274877906944}'
report "$TMP/probe"
jeq .report_verdict incomplete
jeq '.why | contains("not the same drive, their sizes differ")' true
jeq '.why | contains("name the new drive to preflight")' true
# no drive in accept's record: not shown to be the target
edit "$TMP/probe/accept.json" 'del(.drive)'
report "$TMP/probe"
jeq .report_verdict incomplete
jeq '.why | contains("not shown to be the same drive: accept'"'"'s record names no drive")' true
ok "the outside probe's vda and a record without a drive: not accepted"

# the same drive by serial (another kernel name after the swap): accepted, and verify-report agrees
write_records "$TMP/same"
edit "$TMP/same/preflight.json" '.target += {spec: "/dev/sda", path: "/dev/sda", disk: "sda", serial: "A5KQB4390K3KGP"}'
report "$TMP/same"
jeq .report_verdict accepted
R=$TMP/same/out/report.json
[ "$(jq -r .drives.match.result "$R")" = same ] || fail "drives.match.result"
run 0 "$SWAPTOOL" --json verify-report "$R"
jeq '[.checks[] | select(.id == "verdict")][0].status' pass
ok "the same drive by serial: accepted, verify-report agrees"

# the same drive, but measured through a USB bridge (accept --force): its figures are the
# bridge's, so the report waits for an accept in the slot; the drives table names the bridge
cp -r "$TMP/same" "$TMP/usb"
rm -rf "$TMP/usb/out"
edit "$TMP/usb/accept.json" '.drive += {transport: "usb", bridge_limited: true, bridge: {vendor_id: "0bda", product_id: "9210",
	manufacturer: "Realtek", product: "RTL9210B-CG", serial: null, speed_mbps: 10000, driver: "uas"}}'
report "$TMP/usb"
jeq .report_verdict incomplete
jeq '.missing | index("accept of the drive in the slot (its figures were measured through a USB bridge)") != null' true
R=$TMP/usb/out/report.json
[ "$(jq -r .drives.new.transport "$R")" = "usb, behind bridge 0bda:9210 Realtek RTL9210B-CG (10000 Mb/s, uas); figures bridge-limited" ] ||
	fail "drives.new.transport: $(jq -r .drives.new.transport "$R")"
grep -q 'transport .*behind bridge 0bda:9210' "$TMP/usb/out/report.txt" || fail "report.txt does not name the bridge"
run 0 "$SWAPTOOL" --json verify-report "$R"
jeq '[.checks[] | select(.id == "verdict")][0].status' pass
jq -S '.verdict = "accepted"' "$R" >"$TMP/forged-usb.json"
resign "$TMP/forged-usb.json"
run 1 "$SWAPTOOL" --json verify-report "$TMP/forged-usb.json"
ok "the target measured through a USB bridge: incomplete until accepted in the slot; the bridge named; verify-report agrees"

# plan names the serial preflight established (here from the source's nvme-cli dumps), the
# report the dumps instead of "NVMe controller: unknown"
"$MKDISK" incident "$TMP/src.img" >/dev/null
run 4 "$SWAPTOOL" --state "$TMP/plan" --json preflight "$TMP/src.img" --target 2000398934016 --from-dumps "$SRCDIR/fixtures/nvme/xg7000"
SN=$(jq -r .source.serial "$TMP/plan/preflight.json")
[ -n "$SN" ] && [ "$SN" != null ] || fail "preflight found no serial in the dumps"
run 0 "$SWAPTOOL" --state "$TMP/plan" --json plan "$TMP/src.img" --target 2000398934016
jeq '.plan.source.serial' "$SN"
jeq '.plan.paths.fs_clone.actions[0].title | contains("serial '"$SN"')")' true
run 0 "$SWAPTOOL" --state "$TMP/plan" --json report --no-sign --out "$TMP/plan/out"
[ "$(jq -r .drives.old.controller "$TMP/plan/out/report.json")" = "not named: judged from nvme-cli dumps in $SRCDIR/fixtures/nvme/xg7000" ] ||
	fail "the old drive's controller: $(jq -r .drives.old.controller "$TMP/plan/out/report.json")"
ok "plan and report use what preflight established: the dumps' serial, the dumps named"

# ---- real runs: preflight --target one loop device, accept another, then the target itself ----
need_loop
cat >"$TMP/p.ini" <<'INI'
[accept]
working_set = 8MiB
ramp = 0
seq_bytes = 4MiB
[run rand16]
duration = 1
min_iops = 1
max_p50_us = 10000000
[run rand64]
duration = 1
min_iops = 1
max_p99_9_us = 100000000
[run seq]
min_mb_s = 1
[workload]
spin_limit_low = 86400
spin_limit_high = 86400
INI
truncate -s 2000398934016 "$TMP/t.img"
truncate -s 64MiB "$TMP/o.img"
attach "$TMP/t.img"
T=$DEV
attach "$TMP/o.img"
O=$DEV
P=(--profile "$TMP/p.ini" --state "$TMP/real")
write_records "$TMP/real"
rm "$TMP/real/preflight.json" "$TMP/real/accept.json"
run 4 "$SWAPTOOL" "${P[@]}" preflight "$TMP/src.img" --target "$T"
jq -e --arg d "${T#/dev/}" '.target.disk == $d and .target.transport == "loop"' "$TMP/real/preflight.json" >/dev/null ||
	fail "preflight's target: disk and transport"
"$SWAPTOOL" "${P[@]}" accept "$O" --force >/dev/null 2>&1 || true
jq -e --arg o "$O" '.drive.device == $o and .drive.transport == "loop" and .drive.size_bytes == 67108864' \
	"$TMP/real/accept.json" >/dev/null || fail "accept's drive: device, transport, size"
run 0 "$SWAPTOOL" "${P[@]}" --json report --no-sign --out "$TMP/real/out"
jeq '.why | contains("accept measured '"'$O'"' (loop, 67,108,864 B")' true
jeq '.why | contains("run accept on the target: swaptool accept '"$T"'")' true
"$SWAPTOOL" "${P[@]}" accept "$T" --force >/dev/null 2>&1 || true
run 0 "$SWAPTOOL" "${P[@]}" --json report --no-sign --out "$TMP/real/out"
[ "$(jq -r .drives.match.result "$TMP/real/out/report.json")" = same ] || fail "accept of the target is not the target"
ok "real runs: accept of another loop device names it; accept of the target matches"
