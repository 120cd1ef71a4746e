#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# status: steps, verdicts, why and the next step per path; compare: the incident's dgx4-vs-dgx5 table.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/fixtures/records-lib.sh"

# a state directory that does not exist (a typo in --state) is named, exit 3, not "nothing has run"
run 3 "$SWAPTOOL" --state "$TMP/no-such-state" status
contains "state directory '$TMP/no-such-state' does not exist"
run 3 "$SWAPTOOL" --state "$TMP/no-such-state" --json status
jeq .error.exit_code 3
ok "status names a missing state directory (exit 3)"

# nothing has run: next is preflight, fresh install is the default path
mkdir -p "$STATE"
run 0 "$SWAPTOOL" --state "$STATE" --json status
jeq .path fresh-install
jeq .path_from default
jeq .next.step preflight
jeq '[.steps[] | .state] | unique | join(",")' missing
run 0 "$SWAPTOOL" --state "$STATE" status
contains "next: 'preflight' has not run"
contains "swaptool preflight /dev/nvme0 --target SIZE|DEVICE|IMAGE"

# preflight (clone-trap finding) and backup done: restore is next, with the backup's tarball
write_records "$TMP/all"
cp "$TMP/all/preflight.json" "$TMP/all/backup.json" "$STATE/"
run 0 "$SWAPTOOL" --state "$STATE" --json status
jeq '.steps[0].state' trap
jeq '.steps[0].verdict' trap
jeq '.steps[0].why | test("clone trap found")' true
jeq .next.step restore
jeq .next.command "swaptool restore /home/nv/dgx4-swap-backup-20261104/dgx4-config.tar.gz   (after installing DGX OS on the new drive)"
# the other path
run 0 "$SWAPTOOL" --state "$STATE" --json status --path clone
jeq .path fs-clone
jeq .next.step plan
jeq .next.command "swaptool plan /dev/nvme0 --target 2000398934016 --rehearse"
run 2 "$SWAPTOOL" --state "$STATE" status --path sideways
contains "bad --path 'sideways'"
ok "status: next step per path"

# a failed step: exit 1, next is to fix it
cp "$TMP/all/restore.json" "$STATE/"
jq '.verdict = "fail" | .checks = [{"id":"fstab","status":"fail","summary":"UUID 1234 in /etc/fstab does not resolve"}]' \
	"$TMP/all/verify.json" >"$STATE/verify.json"
run 1 "$SWAPTOOL" --state "$STATE" --json status
jeq .next.step verify
jeq .next.why "'verify' failed: fstab: UUID 1234 in /etc/fstab does not resolve; fix that and run it again"
jeq '.steps[] | select(.step == "verify") | .state' failed
# accept without engine gates: next is to run them
cp "$TMP/all/verify.json" "$STATE/"
jq '.engine_gates_run = false | .gates |= map(select(.name | startswith("engine") | not))' "$TMP/all/accept.json" >"$STATE/accept.json"
run 0 "$SWAPTOOL" --state "$STATE" --json status
jeq .next.step accept
jeq '.next.why | test("without the engine gates")' true
jeq '.steps[] | select(.step == "accept") | .state' warn
# everything, then the report, then a newer record makes the report stale
cp "$TMP/all/accept.json" "$STATE/"
run 0 "$SWAPTOOL" --state "$STATE" --json status
jeq .next.step report
run 0 "$SWAPTOOL" --state "$STATE" report --no-sign
run 0 "$SWAPTOOL" --state "$STATE" --json status
jeq .next.step null
jeq '.steps[] | select(.step == "report") | .why | startswith("accepted")' true
jq '.finished = "2099-01-01T00:00:00Z"' "$TMP/all/accept.json" >"$STATE/accept.json"
run 0 "$SWAPTOOL" --state "$STATE" --json status
jeq .next.step report
jeq .next.why "the report is older than the 'accept' record: make it again"
ok "status: failures, engine gates, stale report"

# compare: dgx5 (reference) vs dgx4 (the XG7000), the incident's 98 GB rows
dgx5_accept "$TMP/a5.json"
dgx4_accept "$TMP/a4.json"
run 1 "$SWAPTOOL" --json compare "$TMP/a5.json" "$TMP/a4.json"
jeq .a.host dgx5
jeq .b.host dgx4
jeq '.runs[0].name' rand16
jeq '.runs[0].iops_ratio == 0.161' true
jeq '.runs[0].p50_ratio == 5.915' true
jeq '.runs[1].iops_ratio == 0.122' true
jeq '.runs[2].mb_s_ratio == 0.633' true
jeq '.gates[0] | [.name, .a_status, .b_status] | join(",")' "rand16-iops,pass,fail"
jeq '.checks | map(.status) | join(",")' "pass,fail"
run 1 "$SWAPTOOL" compare "$TMP/a5.json" "$TMP/a4.json"
contains "80.0 K"
contains "12.9 K"
contains "0.16x"
contains "0.63x"
# a report holding an accept record works as either side; same-host comparison is 1.00x
write_records "$TMP/r"
run 0 "$SWAPTOOL" --state "$TMP/r" report --no-sign --out "$TMP/r/out"
run 0 "$SWAPTOOL" --json compare "$TMP/r/out/report.json" "$TMP/r/accept.json"
jeq '.runs[0].iops_ratio == 1' true
# bad input
run 3 "$SWAPTOOL" compare "$TMP/a5.json" "$TMP/r/verify.json"
contains "neither an accept record nor a report"
run 3 "$SWAPTOOL" compare "$TMP/a5.json" "$TMP/missing.json"
run 2 "$SWAPTOOL" compare "$TMP/a5.json"
ok "compare: ratios and gates"
