#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The profile's [limits], enforced while streaming and tested at their edge: a gzip bomb (a
# valid backup followed by ~200 MB of zeros inside its gzip stream) against expanded_bytes,
# one large entry against entry_bytes, entries and data_bytes at N and N+1, and a state
# directory of 4,096 step records (the default state_records) taken and one more refused.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/fixtures/backup-lib.sh"
command -v gzip >/dev/null || skip "gzip missing"

H="$TMP/hostile"
mkdir -p "$STATE" "$TMP/outside"
python3 "$SRCDIR/tests/fixtures/make-hostile.py" "$H" "$TMP/outside"
R="$TMP/root"
mkdir -p "$R"

one_doc() { [ "$(printf '%s' "$OUT" | jq -s 'length')" = 1 ] || fail "stdout is not exactly one JSON document: $OUT"; }
limits() { { echo '[limits]'; printf '%s\n' "$@"; } >"$TMP/limits.ini"; }

# ---- the gzip bomb: 200 MB of zeros after the tar data, 200 KB compressed ----
(cat "$H/good.tar"; head -c 200M /dev/zero) | gzip -1 >"$TMP/bomb.tar.gz"
[ "$(stat -c %s "$TMP/bomb.tar.gz")" -lt $((1 << 20)) ] || fail "the bomb is not small"
limits "expanded_bytes = 100MiB"
start=$(date +%s%N)
run 3 timeout 60 "$SWAPTOOL" --json --profile "$TMP/limits.ini" --state "$STATE" restore "$TMP/bomb.tar.gz" --root "$R"
one_doc
contains "expands to more than 104857600 bytes"
[ -z "$(ls -A "$R")" ] || fail "the bomb wrote into the root"
ms=$(( ($(date +%s%N) - start) / 1000000 ))
run 3 timeout 60 "$SWAPTOOL" --json --profile "$TMP/limits.ini" --state "$STATE" verify "$TMP/bomb.tar.gz" --root "$R"
contains "gzip bomb"
ok "a gzip bomb is refused at the expanded_bytes cap ($ms ms)"
# the same backup without the zeros passes under that profile: the cap is the reason
(cat "$H/good.tar") | gzip -1 >"$TMP/nobomb.tar.gz"
run 0 "$SWAPTOOL" --json --profile "$TMP/limits.ini" --state "$STATE" restore "$TMP/nobomb.tar.gz" --root "$R" --dry-run

# ---- one entry over entry_bytes (2 MiB against 1 MiB), and at it ----
limits "entry_bytes = 1MiB"
run 3 "$SWAPTOOL" --json --profile "$TMP/limits.ini" --state "$STATE" restore "$H/big-entry.tar.gz" --root "$R" --dry-run
one_doc
contains "more than the 1048576 of the profile's [limits] entry_bytes"
limits "entry_bytes = 2MiB"
run 0 "$SWAPTOOL" --json --profile "$TMP/limits.ini" --state "$STATE" restore "$H/big-entry.tar.gz" --root "$R" --dry-run
ok "entry_bytes: 2 MiB refused at 1 MiB, taken at 2 MiB"

# ---- entries at N and N+1: the good archive lists 4 ----
limits "entries = 3"
run 3 "$SWAPTOOL" --json --profile "$TMP/limits.ini" --state "$STATE" restore "$H/good.tar.gz" --root "$R" --dry-run
contains "more than the limit of 3"
limits "entries = 4"
run 0 "$SWAPTOOL" --json --profile "$TMP/limits.ini" --state "$STATE" restore "$H/good.tar.gz" --root "$R" --dry-run
ok "entries: 4 refused at 3, taken at 4"

# ---- the backup side: data_bytes and entries at the edge ----
D="$TMP/demo"
demo_root "$D"
cp /etc/passwd /etc/group "$D/etc/"
# each run with an empty state directory: its records would count toward data_bytes
run 0 "$SWAPTOOL" --json --state "$TMP/s0" backup --root "$D" --home /home/nv --out "$TMP/d.tar.gz"
n=$(printf '%s' "$OUT" | jq .entries)
bytes=$(printf '%s' "$OUT" | jq .data_bytes)
limits "entries = $n" "data_bytes = $bytes"
run 0 "$SWAPTOOL" --json --profile "$TMP/limits.ini" --state "$TMP/s1" backup --root "$D" --home /home/nv --out "$TMP/d.tar.gz"
limits "entries = $((n - 1))"
run 3 "$SWAPTOOL" --json --profile "$TMP/limits.ini" --state "$TMP/s2" backup --root "$D" --home /home/nv --out "$TMP/e.tar.gz"
one_doc
contains "more than $((n - 1)) entries"
limits "data_bytes = $((bytes - 1))"
run 3 "$SWAPTOOL" --json --profile "$TMP/limits.ini" --state "$TMP/s3" backup --root "$D" --home /home/nv --out "$TMP/e.tar.gz"
contains "data_bytes"
[ ! -e "$TMP/e.tar.gz" ] || fail "a refused backup left a tarball"
ok "backup: $n entries and $bytes bytes taken at those limits, refused one below"

# ---- bad [limits] values are found when the profile loads (usage error) ----
for v in "entries = 0" "data_bytes = 2TiB" "entry_bytes = lots" "nosuch = 1"; do
	limits "$v"
	run 2 "$SWAPTOOL" --json --profile "$TMP/limits.ini" --state "$STATE" verify "$H/good.tar.gz" --root "$R"
	one_doc
done
ok "bad [limits] values are usage errors"

# ---- the state directory: 4,096 records (the default) go into the tarball and come back ----
S="$TMP/many-state"
mkdir -p "$S"
python3 - "$S" <<'PY'
import json, sys
for i in range(4096):
    open("%s/r%04d.json" % (sys.argv[1], i), "w").write(json.dumps({"schema": "swaptool/1", "step": "r%04d" % i}) + "\n")
PY
run 0 "$SWAPTOOL" --json --state "$S" backup --root "$D" --home /home/nv --out "$TMP/s.tar.gz"
jeq .state_records 4096
mkdir -p "$TMP/fresh"
run 0 "$SWAPTOOL" --json --state "$TMP/s-restored" restore "$TMP/s.tar.gz" --root "$TMP/fresh"
[ "$(ls "$TMP/s-restored" | grep -c '^r[0-9]*\.json$')" = 4096 ] || fail "the 4,096 records did not come back"
ok "4,096 step records are backed up and restored"
# the backup saved its own record there: 4,097 now
[ -f "$S/backup.json" ] || fail "backup saved no record"
run 3 "$SWAPTOOL" --json --state "$S" backup --root "$D" --home /home/nv --out "$TMP/s2.tar.gz"
one_doc
contains "4097 step records, more than the 4096"
[ ! -e "$TMP/s2.tar.gz" ] || fail "a refused backup left a tarball"
ok "4,097 step records: refused before writing, with the limit named"
