#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# verify-report: the verdict must follow from the embedded records (an edited verdict, a record
# whose verdict contradicts its checks, or no records at all is caught even when re-signed), and
# record hashes are over canonical JSON (RFC 8785), so a report re-serialised by jq still matches.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/fixtures/records-lib.sh"
resign_key

write_records "$STATE"
# a double that json-c writes with 17 digits and jq with the shortest text
jq '.runs[0].lat_us.mean = 68.799999999999997' "$STATE/accept.json" >"$TMP/a" && mv "$TMP/a" "$STATE/accept.json"
run 0 "$SWAPTOOL" --state "$STATE" report --key "$TMP/key" --out "$TMP/o" --identity t@x
R=$TMP/o/report.json
[ "$(jq -r .record_hash "$R")" = sha256-rfc8785 ] || fail "record_hash"
# the record hashes are the SHA-256 of the canonical text, which jq -cS writes for these records
for s in preflight backup restore verify accept; do
	want=$(canon ".steps.$s" "$R" | sha256sum | cut -d' ' -f1)
	[ "$(jq -r ".records[] | select(.step == \"$s\") | .sha256" "$R")" = "$want" ] || fail "$s: sha256 is not over the canonical text"
done
run 0 "$SWAPTOOL" --json verify-report "$R"
jeq '[.checks[] | select(.id == "verdict")][0].status' pass
jeq '[.checks[] | select(.id == "verdict")][0].summary | startswith("'"'accepted'"' follows from the 5 embedded records")' true
ok "record hashes over canonical JSON; the verdict follows from the records"

# ---- re-serialised by jq: the signature covers bytes (fails), the records still match ----
jq -S . "$R" >"$TMP/j.json"
cmp -s "$R" "$TMP/j.json" && fail "jq -S did not change the bytes"
run 1 "$SWAPTOOL" --json verify-report "$TMP/j.json" --sig "$R.sig"
jeq '[.checks[] | select(.id == "signature")][0].status' fail
jeq '[.checks[] | select(.id == "records")][0].status' skip
resign "$TMP/j.json"
run 0 "$SWAPTOOL" --json verify-report "$TMP/j.json"
jeq '[.checks[] | select(.id == "records")][0].status' pass
jeq '[.checks[] | select(.id == "verdict")][0].status' pass
# ... and a record changed by one unit is still caught after re-serialising and re-signing
jq -S '.steps.accept.runs[0].lat_us.mean = 68.9' "$R" >"$TMP/c.json"
resign "$TMP/c.json"
run 1 "$SWAPTOOL" --json verify-report "$TMP/c.json"
jeq '[.checks[] | select(.id == "records")][0].summary' "record 'accept' does not match its sha256 (changed after the report was made)"
ok "jq -S re-serialised report: signature fails by design, re-signed its records match; a change is caught"

# ---- a verdict edited and re-signed ----
jq '.verdict = "incomplete"' "$R" >"$TMP/v.json"
resign "$TMP/v.json"
run 1 "$SWAPTOOL" --json verify-report "$TMP/v.json"
jeq '[.checks[] | select(.id == "signature")][0].status' pass
jeq '[.checks[] | select(.id == "records")][0].status' pass
jeq '[.checks[] | select(.id == "verdict")][0].status' fail
jeq '[.checks[] | select(.id == "verdict")][0].summary | startswith("the report says '"'incomplete'"' but its records say '"'accepted'"'")' true
jeq .verdict fail
# a rejected swap re-labelled accepted
write_records "$TMP/rej"
jq '.verdict = "fail" | (.gates[] | select(.name == "rand64-p99.9")) |= (.status = "fail")
    | .checks += [{"id":"rand64-p99.9","status":"fail","summary":"rand64: p99.9 10.5 ms > 2 ms"}]' \
	"$TMP/rej/accept.json" >"$TMP/a" && mv "$TMP/a" "$TMP/rej/accept.json"
run 1 "$SWAPTOOL" --state "$TMP/rej" report --key "$TMP/key" --out "$TMP/ro" --identity t@x
jq '.verdict = "accepted" | .why = "all passed"' "$TMP/ro/report.json" >"$TMP/l.json"
resign "$TMP/l.json"
run 1 "$SWAPTOOL" verify-report "$TMP/l.json"
contains "the report says 'accepted' but its records say 'rejected'"
contains "do not trust this report"
ok "verdict edited and re-signed: caught"

# ---- a record whose own verdict contradicts its checks (hash recomputed, re-signed) ----
jq '(.steps.accept.checks[0].status) = "fail"' "$R" >"$TMP/r.json"
h=$(canon .steps.accept "$TMP/r.json" | sha256sum | cut -d' ' -f1)
jq --arg h "$h" '(.records[] | select(.step == "accept") | .sha256) = $h' "$TMP/r.json" >"$TMP/r2.json"
resign "$TMP/r2.json"
run 1 "$SWAPTOOL" --json verify-report "$TMP/r2.json"
jeq '[.checks[] | select(.id == "records")][0].status' pass
jeq '[.checks[] | select(.id == "verdict")][0].summary' "record 'accept' says 'pass' but its checks say 'fail'"
ok "record verdict against its checks: caught"

# ---- records removed: no verdict without records ----
jq '.steps = {} | .records = []' "$R" >"$TMP/e.json"
resign "$TMP/e.json"
run 1 "$SWAPTOOL" --json verify-report "$TMP/e.json"
jeq '[.checks[] | select(.id == "records")][0].summary' "the report embeds no step records"
jeq '[.checks[] | select(.id == "verdict")][0].status' fail
jq 'del(.steps) | del(.records)' "$R" >"$TMP/e2.json"
resign "$TMP/e2.json"
run 1 "$SWAPTOOL" verify-report "$TMP/e2.json"
contains "do not trust this report"
# one required record removed with its hash, verdict kept: the records say incomplete
jq 'del(.steps.verify) | .records |= map(select(.step != "verify"))' "$R" >"$TMP/m.json"
resign "$TMP/m.json"
run 1 "$SWAPTOOL" verify-report "$TMP/m.json"
contains "the report says 'accepted' but its records say 'incomplete'"
ok "records removed: refused"

# ---- a report from before record_hash (json-c's plain text, keys in record order) still verifies ----
cp "$R" "$TMP/old.json"
jq 'del(.record_hash)' "$TMP/old.json" >"$TMP/o1.json"
for s in preflight backup restore verify accept; do
	h=$(jq -c ".steps.$s" "$TMP/o1.json" | tr -d '\n' | sha256sum | cut -d' ' -f1)
	jq --arg s "$s" --arg h "$h" '(.records[] | select(.step == $s) | .sha256) = $h' "$TMP/o1.json" >"$TMP/o2.json"
	mv "$TMP/o2.json" "$TMP/o1.json"
done
# jq 1.6 writes the 17-digit double shorter than json-c did: put json-c's text back
sed -i 's/68\.8\b/68.799999999999997/' "$TMP/o1.json"
h=$(jq -c '.steps.accept' "$TMP/o1.json" | sed 's/68\.8\b/68.799999999999997/' | tr -d '\n' | sha256sum | cut -d' ' -f1)
jq --arg h "$h" '(.records[] | select(.step == "accept") | .sha256) = $h' "$TMP/o1.json" >"$TMP/o2.json"
sed -i 's/68\.8\b/68.799999999999997/' "$TMP/o2.json"
resign "$TMP/o2.json"
run 0 "$SWAPTOOL" --json verify-report "$TMP/o2.json"
jeq '[.checks[] | select(.id == "records")][0].status' pass
jq '.record_hash = "sha1-something"' "$R" >"$TMP/u.json"
resign "$TMP/u.json"
run 1 "$SWAPTOOL" verify-report "$TMP/u.json"
contains "unknown record hash 'sha1-something'"
ok "reports without record_hash keep json-c's hashes; an unknown record_hash fails"
