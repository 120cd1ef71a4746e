#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A verdict needs evidence: an accept record that says pass with no runs, no harness gates on them,
# or a gate of a run it does not hold is no acceptance (report, status, and verify-report, which makes
# the verdict again); verify-report without a trust list says the report is intact, not whose it is.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/fixtures/records-lib.sh"
resign_key
# empty DIR FILTER: the passing set with accept.json changed by FILTER
empty() {
	write_records "$1"
	jq "$2" "$1/accept.json" >"$TMP/a" && mv "$TMP/a" "$1/accept.json"
}

# nothing at all: no runs, no gates, no checks, yet "pass" and engine gates "run"
empty "$TMP/none" '.runs = [] | .gates = [] | .checks = [] | .engine_gates_run = true | .verdict = "pass"'
run 1 "$SWAPTOOL" --state "$TMP/none" --json report --key "$TMP/key" --out "$TMP/none/out" --identity t@x
jeq .report_verdict rejected
jeq '.why | startswith("accept failed: no evidence: no runs")' true
jeq '.checks[] | select(.id == "accept") | .status' fail
run 1 "$SWAPTOOL" --state "$TMP/none" report --key "$TMP/key" --out "$TMP/none/out" --identity t@x
grep -q "0 of 0 gates passed" <<<"$OUT" && fail "report still counts 0 of 0 gates as a pass"
contains "run accept again with the profile's runs and gates"
run 1 "$SWAPTOOL" --state "$TMP/none" --json status
jeq '.steps[] | select(.step == "accept") | .state' failed
ok "no runs, no gates: rejected with the reason"

# runs but no harness gate judged them (only engine gates)
empty "$TMP/nogate" '.gates |= map(select(.name | startswith("engine"))) | .checks = []'
run 1 "$SWAPTOOL" --state "$TMP/nogate" --json report --key "$TMP/key" --out "$TMP/nogate/out" --identity t@x
jeq .report_verdict rejected
jeq '.why | contains("no harness gates judged its runs")' true
# a gate of a run the record does not hold
empty "$TMP/orphan" '.runs |= map(select(.name != "rand64"))'
run 1 "$SWAPTOOL" --state "$TMP/orphan" --json report --key "$TMP/key" --out "$TMP/orphan/out" --identity t@x
jeq '.why | contains("which the record does not hold")' true
# engine gates said to have run with none in the record: incomplete, not accepted
empty "$TMP/noeng" '.engine_gates_run = true | .gates |= map(select(.name | startswith("engine") | not))'
run 0 "$SWAPTOOL" --state "$TMP/noeng" --json report --key "$TMP/key" --out "$TMP/noeng/out" --identity t@x
jeq .report_verdict incomplete
ok "no harness gates, a gate of no run, engine gates claimed without records: not accepted"

# verify-report makes the verdict again: an old report that signed an empty accept "accepted"
write_records "$TMP/all"
run 0 "$SWAPTOOL" --state "$TMP/all" report --key "$TMP/key" --out "$TMP/all/out" --identity t@x
R=$TMP/all/out/report.json
jq '.steps.accept.runs = [] | .steps.accept.gates = [] | .steps.accept.checks = [] | .steps.accept.engine_gates_run = true' \
	"$R" >"$TMP/r.json"
h=$(canon .steps.accept "$TMP/r.json" | sha256sum | cut -d' ' -f1)
jq --arg h "$h" '(.records[] | select(.step == "accept") | .sha256) = $h' "$TMP/r.json" >"$TMP/old.json"
resign "$TMP/old.json"
run 1 "$SWAPTOOL" --json verify-report "$TMP/old.json"
jeq '[.checks[] | select(.id == "records")][0].status' pass
jeq '[.checks[] | select(.id == "verdict")][0].status' fail
jeq '[.checks[] | select(.id == "verdict")][0].summary | contains("records say '"'rejected'"'")' true
ok "verify-report: an accepted report of an empty accept record is caught"

# without a trust list: intact, signer not checked; with one: authentic
run 0 "$SWAPTOOL" verify-report "$R"
contains "the report is intact, signer not checked"
grep -q "authentic" <<<"$OUT" && fail "verify-report without --allowed-signers calls the report authentic"
run 0 "$SWAPTOOL" --json verify-report "$R"
jeq .signer_checked false
run 0 "$SWAPTOOL" verify-report "$R" --allowed-signers "$TMP/all/out/allowed_signers" --identity t@x
contains "the report is authentic and intact"
ok "verify-report: intact, signer not checked without a trust list"
