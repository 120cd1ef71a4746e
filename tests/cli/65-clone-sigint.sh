#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# clone interrupted by SIGINT in the middle of the copy: exit 130, the target carries no partition
# table (it was wiped before the first copy and the GPT comes last), and a rerun starts over cleanly.
. "$SRCDIR/tests/lib.sh"
: "${MKDISK:?run through meson test (tests/run)}"
command -v sfdisk >/dev/null || skip "sfdisk missing"

"$MKDISK" scaled "$TMP/src.img" --written 1536 >"$TMP/src.json"
size=$(stat -c %s "$TMP/src.img")
truncate -s "$size" "$TMP/tgt.img"
# a stale table on the target: the clone must remove it before copying
sfdisk -q "$TMP/tgt.img" <<<'label: gpt' >/dev/null

"$SWAPTOOL" --state "$STATE" clone "$TMP/src.img" "$TMP/tgt.img" --yes >"$TMP/o" 2>"$TMP/e" &
pid=$!
# wait until the copy has written real data to the target, then interrupt
for i in $(seq 600); do
	[ "$(stat -c %b "$TMP/tgt.img")" -gt 200000 ] && break
	kill -0 $pid 2>/dev/null || break
	sleep 0.05
done
kill -INT $pid 2>/dev/null || true
got=0
wait $pid || got=$?
if [ "$got" = 0 ]; then
	skip "the clone finished before the interrupt landed (machine too fast for this fixture)"
fi
[ "$got" = 130 ] || { cat "$TMP/o" "$TMP/e"; fail "interrupted clone exited $got, expected 130"; }
grep -q "interrupted" "$TMP/e" || fail "no 'interrupted' message: $(cat "$TMP/e")"
if sfdisk -d "$TMP/tgt.img" >/dev/null 2>&1; then fail "the interrupted target carries a partition table"; fi
ok "interrupted: exit 130, no table on the target"

run 0 "$SWAPTOOL" --state "$STATE" --json clone "$TMP/src.img" "$TMP/tgt.img" --yes
jeq .verdict pass
off=$(jq -r '.partition_table.partitions[1].fs.offset_bytes' "$TMP/src.json")
e2fsck -fn "$TMP/tgt.img?offset=$off" >/dev/null 2>&1 || fail "e2fsck -fn after the rerun"
sgdisk -v "$TMP/tgt.img" | grepq "No problems found" || fail "sgdisk -v after the rerun"
jq -r '.files[] | select(.partition == 2) | "\(.path) \(.sha256)"' "$TMP/src.json" | while read -r f want; do
	got=$(debugfs -R "cat \"$f\"" "$TMP/tgt.img?offset=$off" 2>/dev/null | sha256sum | cut -d' ' -f1)
	[ "$got" = "$want" ] || fail "$f differs after the rerun"
done
ok "rerun after the interrupt"
