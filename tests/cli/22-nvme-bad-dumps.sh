#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# preflight --from-dumps with truncated, oversized, foreign or missing dumps: exit 3, a message
# naming the file and the size expected, one JSON document with --json, no record written.
. "$SRCDIR/tests/lib.sh"

img="$TMP/src.img"
truncate -s 64M "$img"
sgdisk -n1:2048:0 -t1:8300 "$img" >/dev/null || skip "sgdisk failed"
pf() { "$SWAPTOOL" --state "$STATE" preflight "$img" --target 2000398934016 "$@"; }

# A fresh copy of the good XG7000 dumps, then one file spoiled.
spoil() {
	rm -rf "$TMP/d"
	mkdir "$TMP/d"
	cp "$SRCDIR"/fixtures/nvme/xg7000/*.bin "$TMP/d/"
}

spoil; head -c 4000 "$SRCDIR/fixtures/nvme/xg7000/id-ctrl.bin" >"$TMP/d/id-ctrl.bin"
run 3 pf --from-dumps "$TMP/d"
contains "'$TMP/d/id-ctrl.bin' is 4000 bytes, expected 4096"
ok "truncated id-ctrl"

spoil; head -c 600 /dev/zero >>"$TMP/d/smart-log.bin"
run 3 pf --from-dumps "$TMP/d" --json
jeq .verdict error
jeq .error.exit_code 3
jeq '.error.message | test("smart-log.bin. is 1112 bytes, expected 512")' true
[ "$(printf '%s' "$OUT" | jq -s length)" = 1 ] || fail "not exactly one JSON document"
[ ! -e "$STATE/preflight.json" ] || fail "a record was written for a failed run"
ok "oversized smart-log, JSON error"

spoil; head -c 4096 /dev/zero >"$TMP/d/id-ctrl.bin"
run 3 pf --from-dumps "$TMP/d"
contains "id-ctrl.bin' is not what it claims: all zeros"
ok "all-zero id-ctrl"

# Foreign: the namespace page where the controller page belongs (right size, wrong content).
spoil; cp "$SRCDIR/fixtures/nvme/xg7000/id-ns.bin" "$TMP/d/id-ctrl.bin"
run 3 pf --from-dumps "$TMP/d"
contains "not an identify-controller page"
# And a controller page as the namespace.
spoil; cp "$SRCDIR/fixtures/nvme/xg7000/id-ctrl.bin" "$TMP/d/id-ns.bin"
run 3 pf --from-dumps "$TMP/d"
contains "id-ns.bin' is not what it claims"
ok "foreign pages"

spoil; head -c 100 /dev/zero >"$TMP/d/error-log.bin"
run 3 pf --from-dumps "$TMP/d"
contains "error-log.bin' is 100 bytes, expected a multiple of 64"
ok "ragged error-log"

# Missing optional pages are fine (health then skips); a missing id-ctrl is not.
spoil; rm "$TMP/d/smart-log.bin" "$TMP/d/error-log.bin" "$TMP/d/id-ns.bin"
run 0 pf --from-dumps "$TMP/d" --json
jeq '[.checks[] | select(.id == "health") | .status][0]' skip
jeq '[.checks[] | select(.id == "drive-class") | .status][0]' warn
spoil; rm "$TMP/d/id-ctrl.bin"
run 3 pf --from-dumps "$TMP/d"
contains "nvme id-ctrl /dev/nvme0 -b"
run 3 pf --from-dumps "$TMP/nowhere"
contains "cannot open dump"
ok "missing dumps"
