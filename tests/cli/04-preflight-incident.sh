#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# preflight on the incident's exact geometry: every figure of docs/incident.md, to the byte.
. "$SRCDIR/tests/lib.sh"

src="$TMP/dgx4.img"
"$MKDISK" incident "$src" >"$TMP/layout.json"
off=$((1050624 * 512))

check_incident() {
	jeq .source.size_bytes 2048408248320
	jeq .source.lba_size 512
	jeq .source.lba_count 4000797360
	jeq .source.partition_table.type gpt
	jeq .source.partition_table.first_usable_lba 34
	jeq .source.partition_table.last_usable_lba 4000797326
	jeq .source.partition_table.backup_header_lba 4000797359
	jeq '.source.partition_table.partitions | length' 2
	jeq '.source.partition_table.partitions[0].start_lba' 2048
	jeq '.source.partition_table.partitions[0].end_lba' 1050623
	jeq '.source.partition_table.partitions[0].type_guid' C12A7328-F81F-11D2-BA4B-00A0C93EC93B
	jeq '.source.partition_table.partitions[0].fs.type' vfat
	jeq '.source.partition_table.partitions[1].start_lba' 1050624
	jeq '.source.partition_table.partitions[1].end_lba' 4000797326
	jeq '.source.partition_table.partitions[1].size_bytes' $(((4000797326 - 1050624 + 1) * 512))
	jeq '.source.partition_table.partitions[1].type_guid' 0FC63DAF-8483-4772-8E79-3D69D8477DE4
	jeq '.source.partition_table.partitions[1].fs.type' ext4
	jeq '.source.partition_table.partitions[1].fs.block_size' 4096
	jeq .target.size_bytes 2000398934016
	jeq .target.lba_count 3907029168
	jeq .target.last_lba 3907029167
	jeq .target.last_usable_lba 3907029134
	jeq .delta_bytes -48009314304
	jeq '.checks[] | select(.id == "raw-clone") | .status' fail
	jeq '.checks[] | select(.id == "gpt-backup-header") | .source_lba' 4000797359
	jeq '.checks[] | select(.id == "gpt-backup-header") | .target_last_lba' 3907029167
	jeq '.checks[] | select(.id == "gpt-backup-header") | .status' fail
	jeq '.checks[] | select(.id == "partition-fit") | .partitions[0].number' 2
	jeq '.checks[] | select(.id == "partition-fit") | .partitions[0].end_lba' 4000797326
	jeq '.checks[] | select(.id == "partition-fit") | .target_last_usable_lba' 3907029134
	jeq '.checks[] | select(.id == "fs-fit") | .status' pass
	jeq '.checks[] | select(.id == "lba-format") | .status' pass
	jeq .paths.raw_clone.possible false
	jeq .paths.fs_clone.possible true
	jeq '.paths.fs_clone.partitions[1].number' 2
	jeq '.paths.fs_clone.partitions[1].new_end_lba' 3907029134
	jeq '.paths.fs_clone.partitions[1].new_block_count' 488247313
	jeq '.paths.fs_clone.partitions[0].new_end_lba' 1050623
	jeq .paths.fresh_install.possible true
	jeq .paths.recommended fresh_install
	jeq .verdict trap
}

run 4 "$SWAPTOOL" --state "$STATE" --json preflight "$src" --target 2000398934016 --home /home/nv
check_incident
# ~1,215 GB re-fetchable: 477 GB under ~/flare-pkgs and 738 GB under ~/.cache/flare (allocated, unwritten).
refetch=$(printf '%s' "$OUT" | jq .paths.fresh_install.refetchable_bytes)
[ "$refetch" -ge 1215000000000 ] && [ "$refetch" -le 1216000000000 ] || fail "refetchable $refetch, expected ~1,215 GB"
irr=$(printf '%s' "$OUT" | jq .paths.fresh_install.irreplaceable_bytes)
[ "$irr" -gt 0 ] && [ "$irr" -lt 1000000 ] || fail "irreplaceable $irr, expected a few KB"
# The record went to the state directory and is the same document.
[ "$(jq -S .source "$STATE/preflight.json")" = "$(printf '%s' "$OUT" | jq -S .source)" ] || fail "record differs from --json"
ok "incident figures to the byte"

# Our minimum is never below resize2fs -P and within +5 % of it.
p=$(resize2fs -P "$src?offset=$off" 2>/dev/null | awk -F': ' '/minimum size/ {print $2}')
ours=$(printf '%s' "$OUT" | jq '.source.partition_table.partitions[1].fs.min_blocks')
[ "$ours" -ge "$p" ] || fail "min_blocks $ours below resize2fs -P $p"
[ $((ours * 100)) -le $((p * 105)) ] || fail "min_blocks $ours more than 5 % above resize2fs -P $p"
ok "min_blocks $ours vs resize2fs -P $p"

# The same answers from the other --target forms.
run 4 "$SWAPTOOL" --state "$STATE" --json preflight "$src" --target 3907029168s --home /home/nv
jeq .target.size_bytes 2000398934016
truncate -s 2000398934016 "$TMP/mp600.img"
run 4 "$SWAPTOOL" --state "$STATE" --json preflight "$src" --target "$TMP/mp600.img" --home /home/nv
check_incident
ok "sector and image targets"

# Human output: the incident's figures in bytes, TB and TiB, and one verdict line.
run 4 "$SWAPTOOL" --state "$STATE" --no-color preflight "$src" --target 2000398934016 --home /home/nv
contains "2,048,408,248,320"
contains "2,000,398,934,016"
contains "-48,009,314,304"
contains "1.863 TiB"
contains "1.819 TiB"
contains "4,000,797,359"
contains "3,907,029,167"
contains "488,247,313"
[ "$(printf '%s\n' "$OUT" | grep -c '^verdict:')" = 1 ] || fail "expected exactly one verdict line"
contains "Recommended: path 1"
contains "verdict: TRAP  clone trap found, a path exists"
ok "human output"

# The source is never written: its hash of the regions that matter is unchanged.
before=$( (head -c 1M "$src"; tail -c 1M "$src") | sha256sum)
run 4 "$SWAPTOOL" --state "$STATE" preflight "$src" --target 2000398934016
after=$( (head -c 1M "$src"; tail -c 1M "$src") | sha256sum)
[ "$before" = "$after" ] || fail "the source changed"

# The same source through a loop device (root).
if [ "$(id -u)" = 0 ] && losetup -f >/dev/null 2>&1; then
	attach --read-only "$src"
	run 4 "$SWAPTOOL" --state "$STATE" --json preflight "$DEV" --target 2000398934016 --home /home/nv
	check_incident
	jeq .source.kind block
	ok "through loop device $DEV"
else
	echo "loop device part skipped: needs root and a free loop device"
fi
