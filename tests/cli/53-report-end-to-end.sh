#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The whole path with the real steps' records: preflight (the incident image), backup and verify
# (the demo root), accept with engine gates (a small file, a lenient profile), then report,
# verify-report, ssh-keygen -Y verify, status and compare on what they wrote.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/fixtures/backup-lib.sh"
: "${MKDISK:?run through meson test}"

D="$TMP/demo"
demo_root "$D"
rm "$D/etc/fstab" # its identifiers do not resolve on this machine (31-fstab covers them)
cat >"$TMP/p.ini" <<'INI'
[backup]
path = ~/.config/flare/
path = ~/.ssh/
path = /etc/netplan/
path = /etc/hosts
[accept]
working_set = 32MiB
ramp = 0
seq_bytes = 16MiB
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
[engine cold-boot-157k]
command = true
timeout = 10
[engine full-bench]
command = true
timeout = 10
# the engine predicted from these figures passes too (a loaded test disk is slow)
[workload]
spin_limit_low = 86400
spin_limit_high = 86400
INI
P=(--profile "$TMP/p.ini" --state "$STATE")
"$MKDISK" incident "$TMP/dgx4.img" >/dev/null
# the new drive: a loop device of the incident's target size, so that accept measures the target
# preflight planned for (report says "accepted" of no other drive: issue 31)
need_loop
truncate -s 2000398934016 "$TMP/new.img"
attach "$TMP/new.img"
NEW=$DEV
# what accept reads there: random bytes in the middle, where the working set is centered
dd if=/dev/urandom of="$TMP/new.img" bs=1M count=40 seek=$(((2000398934016 >> 20) / 2 - 20)) conv=notrunc status=none
run 4 "$SWAPTOOL" "${P[@]}" preflight "$TMP/dgx4.img" --target "$NEW"
run 0 "$SWAPTOOL" "${P[@]}" backup --root "$D" --home /home/nv --out "$TMP/b.tar.gz"
run 0 "$SWAPTOOL" "${P[@]}" verify "$TMP/b.tar.gz" --root "$D"
run 0 "$SWAPTOOL" "${P[@]}" accept "$NEW" --force
ok "real records: preflight (clone trap), backup, verify, accept with engine gates"

ssh-keygen -q -t ed25519 -N '' -C demo -f "$TMP/key"
run 0 "$SWAPTOOL" "${P[@]}" --json report --key "$TMP/key" --out "$TMP/r" --identity demo@swaptool
jeq .report_verdict accepted
jeq '.checks[] | select(.id == "preflight") | .summary | startswith("clone trap found")' true
jeq '.checks[] | select(.id == "engine-gates") | .status' pass
R=$TMP/r/report.json
[ "$(jq -r '.steps | keys | join(",")' "$R")" = "accept,backup,preflight,verify" ] || fail "embedded steps"
sha=$(sha256sum "$TMP/b.tar.gz" | cut -d' ' -f1)
grep -q "sha256   $sha" "$TMP/r/report.txt" || fail "report.txt lacks the tarball's sha256sum"
grep -q "(the backup's)" "$TMP/r/report.txt" || fail "verify's tarball is not recognised as the backup's"
grep -q "GPT backup header at LBA 4,000,797,359 on the old drive; the new drive's last LBA is 3,907,029,167" \
	"$TMP/r/report.txt" || fail "report.txt: clone trap figures"
run 0 "$SWAPTOOL" verify-report "$R" --allowed-signers "$TMP/r/allowed_signers" --identity demo@swaptool
ssh-keygen -Y verify -f "$TMP/r/allowed_signers" -I demo@swaptool -n swaptool-report -s "$R.sig" <"$R" >/dev/null 2>&1 ||
	fail "ssh-keygen rejects the report"
ok "report accepted, signed, verified by both"

run 0 "$SWAPTOOL" "${P[@]}" --json status
jeq .next.step restore
run 0 "$SWAPTOOL" "${P[@]}" --json status --path clone
jeq .next.step plan
run 0 "$SWAPTOOL" --json compare "$STATE/accept.json" "$R"
jeq '.runs | length' 3
jeq '.runs[0].iops_ratio == 1' true
ok "status and compare on real records"
