#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Report verdicts from synthetic record sets, the record hashes, and tampering caught.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/fixtures/records-lib.sh"
command -v ssh-keygen >/dev/null || skip "no ssh-keygen"
ssh-keygen -q -t ed25519 -N '' -C t -f "$TMP/key"

report() { # STATE EXIT
	run "$2" "$SWAPTOOL" --state "$1" --json report --key "$TMP/key" --out "$1/out" --identity t@x
}

# all pass (preflight's clone-trap finding counts as done)
write_records "$TMP/all"
report "$TMP/all" 0
jeq .report_verdict accepted
jeq .verdict pass
jeq '.checks[] | select(.id == "preflight") | .status' pass
jeq '.checks[] | select(.id == "preflight") | .summary | test("clone trap found")' true
jeq '.missing | length' 0
R=$TMP/all/out/report.json
[ "$(jq -r .schema "$R")" = swaptool-report/1 ] || fail "schema"
[ "$(jq -r .verdict "$R")" = accepted ] || fail "report.json verdict"
[ "$(jq -r '.steps | keys | join(",")' "$R")" = "accept,backup,preflight,restore,verify" ] || fail "embedded steps"
[ "$(jq -r .signer.key_type "$R")" = ssh-ed25519 ] || fail "signer"
[ "$(jq -r .signer.fingerprint "$R")" = "$(ssh-keygen -lf "$TMP/key.pub" | awk '{print $2}')" ] || fail "fingerprint"
[ "$(jq -r .node "$R")" = dgx4 ] || fail "node"
[ "$(jq -r .kernel "$R")" = "$(uname -r)" ] || fail "kernel"
# file_sha256 is what sha256sum says of the record file
[ "$(jq -r '.records[] | select(.step == "backup") | .file_sha256' "$R")" = "$(sha256sum "$TMP/all/backup.json" | cut -d' ' -f1)" ] ||
	fail "file_sha256"
grep -q "delta: -48,009,314,304 bytes" "$TMP/all/out/report.txt" || fail "report.txt: delta"
grep -q "GPT backup header at LBA 4,000,797,359 on the old drive; the new drive's last LBA is 3,907,029,167" \
	"$TMP/all/out/report.txt" || fail "report.txt: backup header"
grep -q "9f2c1e0b5a7d3c4e8f6a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f67" "$TMP/all/out/report.txt" || fail "report.txt: sha256"
grep -q "rand16-iops  *>= 60000 IOPS  *118200.5  *pass" "$TMP/all/out/report.txt" || fail "report.txt: gate row"
grep -q "tarball  /home/nv/dgx4-swap-backup-20261104/dgx4-config.tar.gz, sha256 9f2c1e0b5a7d3c4e... (the backup's)" \
	"$TMP/all/out/report.txt" || fail "report.txt: verify's tarball is the backup's"
# the human output prints the summary, the allowed_signers line and the verify command
run 0 "$SWAPTOOL" --state "$TMP/all" report --key "$TMP/key" --out "$TMP/all/out" --identity t@x
contains "verdict: accepted"
contains "ssh-keygen -Y verify -f $TMP/all/out/allowed_signers -I t@x -n swaptool-report"
ok "all pass: accepted"

# engine gates missing: incomplete, naming them
write_records "$TMP/noengine"
jq '.engine_gates_run = false | .gates |= map(select(.name | startswith("engine") | not))' \
	"$TMP/noengine/accept.json" >"$TMP/a" && mv "$TMP/a" "$TMP/noengine/accept.json"
report "$TMP/noengine" 0
jeq .report_verdict incomplete
jeq .verdict warn
jeq '.missing[0]' "accept engine gates (cold-boot 157 K prompt, full bench)"
jeq '.checks[] | select(.id == "engine-gates") | .status' warn
ok "engine gates not run: incomplete"

# a failed gate: rejected, exit 1
write_records "$TMP/gate"
jq '.verdict = "fail" | (.gates[] | select(.name == "rand64-p99.9")) |= (.status = "fail" | .measured = 10500)
    | .checks += [{"id":"rand64-p99.9","status":"fail","summary":"rand64: p99.9 10.5 ms > 2 ms"}]' \
	"$TMP/gate/accept.json" >"$TMP/a" && mv "$TMP/a" "$TMP/gate/accept.json"
report "$TMP/gate" 1
jeq .report_verdict rejected
jeq .why "accept failed: rand64-p99.9: rand64: p99.9 10.5 ms > 2 ms"
# an engine gate that failed in a record that says pass is still a rejection
write_records "$TMP/engfail"
jq '(.gates[] | select(.name == "engine-full-bench")) |= (.status = "fail")' \
	"$TMP/engfail/accept.json" >"$TMP/a" && mv "$TMP/a" "$TMP/engfail/accept.json"
report "$TMP/engfail" 1
jeq .report_verdict rejected
ok "a failed gate: rejected"
# four failed gates: the reason names all four, and the signed report still verifies
write_records "$TMP/four"
jq '.verdict = "fail" | .gates |= (to_entries | map(if .key < 4 then .value.status = "fail" else . end) | map(.value))' \
	"$TMP/four/accept.json" >"$TMP/a" && mv "$TMP/a" "$TMP/four/accept.json"
names=$(jq -r '[.gates[] | select(.status == "fail") | .name] | join(", ")' "$TMP/four/accept.json")
[ "$(jq '[.gates[] | select(.status == "fail")] | length' "$TMP/four/accept.json")" = 4 ] || fail "fixture: 4 failed gates"
report "$TMP/four" 1
jeq .report_verdict rejected
jeq '.why | startswith("accept failed: 4 gates failed: '"$names"' (")' true
R4=$TMP/four/out/report.json
[ "$(jq -r .why "$R4")" = "$(jq -r .why <<<"$OUT")" ] || fail "report.json why"
run 1 "$SWAPTOOL" verify-report "$R4"
ssh-keygen -Y verify -f "$TMP/four/out/allowed_signers" -I t@x -n swaptool-report -s "$R4.sig" <"$R4" >/dev/null 2>&1 ||
	fail "ssh-keygen -Y verify: four failed gates"
# thousands of failed gates in a hostile record: the reason stays short and counts the rest
write_records "$TMP/many"
jq '.verdict = "fail" | .gates = [range(3000) | {"name": ("g\(.)-" + ("x" * 200)), "status": "fail"}]' \
	"$TMP/many/accept.json" >"$TMP/a" && mv "$TMP/a" "$TMP/many/accept.json"
report "$TMP/many" 1
jeq '.why | test("^accept failed: 3000 gates failed: g0-x{61}, .* and 2992 more")' true
jeq '.why | length < 1000' true
ok "several failed gates: all named, bounded"

# a missing step: incomplete, naming it
write_records "$TMP/miss"
rm "$TMP/miss/verify.json"
report "$TMP/miss" 0
jeq .report_verdict incomplete
jeq '.missing | join(",")' verify
jeq .why "missing: verify"
rm "$TMP/miss/backup.json" "$TMP/miss/accept.json"
report "$TMP/miss" 0
jeq '.missing | join(",")' "backup,verify,accept"
ok "missing steps: incomplete"

# preflight failing for something other than the clone trap is a failure
write_records "$TMP/pre"
jq '(.checks[] | select(.id == "health")) |= (.status = "fail" | .summary = "media errors 12")' \
	"$TMP/pre/preflight.json" >"$TMP/a" && mv "$TMP/a" "$TMP/pre/preflight.json"
report "$TMP/pre" 1
jeq .report_verdict rejected
jeq .why "preflight failed: raw-clone: target is 48,009,314,304 bytes smaller: a raw clone cannot fit"
# ... and so is a clone trap with no possible path
write_records "$TMP/nopath"
jq '.paths.fs_clone.possible = false | .paths.fresh_install.possible = false' \
	"$TMP/nopath/preflight.json" >"$TMP/a" && mv "$TMP/a" "$TMP/nopath/preflight.json"
report "$TMP/nopath" 1
jeq .report_verdict rejected
# no records at all
mkdir -p "$TMP/empty"
report "$TMP/empty" 0
jeq .report_verdict incomplete
jeq '.missing | join(",")' "preflight,backup,verify,accept"
# a corrupt record is an error, not a silent gap
write_records "$TMP/corrupt"
echo '{ broken' >"$TMP/corrupt/verify.json"
run 3 "$SWAPTOOL" --state "$TMP/corrupt" report --key "$TMP/key" --out "$TMP/corrupt/out"
contains "cannot read the record '$TMP/corrupt/verify.json': it is not JSON"
# so is a record of the wrong shape (src/schema.h), with the key named
write_records "$TMP/shape"
jq '.archive.sha256 = 7' "$TMP/shape/verify.json" >"$TMP/shape/v" && mv "$TMP/shape/v" "$TMP/shape/verify.json"
run 3 "$SWAPTOOL" --state "$TMP/shape" report --key "$TMP/key" --out "$TMP/shape/out"
contains "cannot read the record '$TMP/shape/verify.json': its 'archive.sha256' is an integer, not a string"
[ ! -e "$TMP/shape/out/report.json" ] || fail "a report was written from a record of the wrong shape"
ok "preflight failures, no records, corrupt record, record of the wrong shape"

# tampering with a record inside report.json
R=$TMP/all/out/report.json
run 0 "$SWAPTOOL" verify-report "$R"
jq '.steps.accept.runs[0].iops = 999999' "$R" >"$TMP/t.json"
run 1 "$SWAPTOOL" verify-report "$TMP/t.json" --sig "$R.sig"
contains "bad signature"
# re-signed by someone holding a key: the signature is good, the record hash is not
ssh-keygen -q -Y sign -n swaptool-report -f "$TMP/key" "$TMP/t.json" 2>/dev/null
run 1 "$SWAPTOOL" --json verify-report "$TMP/t.json"
jeq '.checks[] | select(.id == "signature") | .status' pass
jeq '.checks[] | select(.id == "records") | .status' fail
jeq '.checks[] | select(.id == "records") | .summary' "record 'accept' does not match its sha256 (changed after the report was made)"
# a record dropped from steps, or one added without a hash
jq 'del(.steps.verify)' "$R" >"$TMP/d.json"
ssh-keygen -q -Y sign -n swaptool-report -f "$TMP/key" "$TMP/d.json" 2>/dev/null
run 1 "$SWAPTOOL" verify-report "$TMP/d.json"
contains "record 'verify' is listed but not embedded"
jq '.steps.clone = {"step":"clone","verdict":"pass"}' "$R" >"$TMP/e.json"
ssh-keygen -q -Y sign -n swaptool-report -f "$TMP/key" "$TMP/e.json" 2>/dev/null
run 1 "$SWAPTOOL" verify-report "$TMP/e.json"
contains "record 'clone' is embedded without a hash"
# signed, but not a report
echo '{"hello": 1}' >"$TMP/x.json"
ssh-keygen -q -Y sign -n swaptool-report -f "$TMP/key" "$TMP/x.json" 2>/dev/null
run 3 "$SWAPTOOL" verify-report "$TMP/x.json"
contains "is not a swaptool report"
ok "tampering caught: bad signature, record hash mismatch after re-signing"
