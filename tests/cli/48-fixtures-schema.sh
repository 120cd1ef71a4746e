#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The fixtures the report, status and fleet tests use are records this swaptool reads: built by
# tests/tools/records.c (src/record.c and src/schema.h's names) and checked against src/schema.h,
# as are the real records in the fuzz corpus; a record that drifts from the declared keys is refused
# with the key named, by mkrecord check and by status alike.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/fixtures/records-lib.sh"
: "${MKRECORD:?run through meson test (tests/run)}"

# every fixture, through the parser every reader uses
write_records "$TMP/set"
for name in $("$MKRECORD" list); do
	"$MKRECORD" "$name" "$TMP/$name.json"
done
run 0 "$MKRECORD" check "$TMP"/set/*.json "$TMP"/*.json
[ "$(ls "$TMP"/set/*.json "$TMP"/*.json | wc -l)" -ge 15 ] || fail "fewer fixtures than expected: $(ls "$TMP" "$TMP/set")"
# the set is the passing swap status and report expect
run 0 "$SWAPTOOL" --state "$TMP/set" --json status
jeq '[.steps[] | select(.on_path) | .state] | join(",")' "trap,done,done,done,done,missing"
ok "fixtures: $("$MKRECORD" list | wc -l) records pass src/schema.h"

# every step src/schema.h declares a record for is a step of the binary, with a fixture
for step in $("$MKRECORD" steps); do
	run 0 "$SWAPTOOL" help "$step"
	[ -s "$TMP/$step.json" ] || fail "no fixture of the $step record"
done
ok "the steps of src/schema.h are steps of swaptool"

# the real records in the fuzz corpus (written by the steps) pass too; a corpus file's first byte
# picks what the rest is (tests/fuzz/fuzz-record.c)
n=0
for f in "$SRCDIR"/tests/fuzz/corpus/record/*; do
	tail -c +2 "$f" >"$TMP/corpus.json"
	jq -e '.schema == "swaptool/1" and (.step | type) == "string"' "$TMP/corpus.json" >/dev/null 2>&1 || continue
	run 0 "$MKRECORD" check "$TMP/corpus.json"
	n=$((n + 1))
done
[ "$n" -ge 5 ] || fail "only $n records in tests/fuzz/corpus/record"
ok "$n corpus records pass src/schema.h"

# drift fails: a latency under the gate's spelling, a number as text, a gate status as a number
jq '.runs[1].lat_us.p99_9 = "1500"' "$TMP/set/accept.json" >"$TMP/d1.json"
run 1 "$MKRECORD" check "$TMP/d1.json"
contains "its 'runs[1].lat_us.p99_9' is a string, not a number"
jq '.paths.fresh_install.possible = "yes"' "$TMP/set/preflight.json" >"$TMP/d2.json"
run 1 "$MKRECORD" check "$TMP/d2.json"
contains "'paths.fresh_install.possible' is a string, not a boolean"
# status refuses it with the file and the key named (exit 3), never misreads it
mkdir -p "$TMP/s2"
cp "$TMP/set/backup.json" "$TMP/s2/"
jq '.gates[0].status = 1' "$TMP/set/accept.json" >"$TMP/s2/accept.json"
run 3 "$SWAPTOOL" --state "$TMP/s2" status
contains "cannot read the record '$TMP/s2/accept.json': its 'gates[0].status' is an integer, not a string"
# compare too
run 3 "$SWAPTOOL" compare "$TMP/s2/accept.json" "$TMP/dgx5-accept.json"
contains "'gates[0].status' is an integer, not a string"
ok "drift from src/schema.h is refused, naming the key"
