#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# clone on the incident's full-size image files: every refusal leaves source and target unchanged;
# the clone passes e2fsck -fn and sgdisk -v, keeps PARTUUIDs and UUIDs and every file's content;
# a rerun starts over cleanly.
. "$SRCDIR/tests/lib.sh"
: "${MKDISK:?run through meson test (tests/run)}"

"$MKDISK" incident "$TMP/src.img" --written 256 >"$TMP/src.json"
truncate -s 2000398934016 "$TMP/tgt.img"
S="$TMP/src.img" T="$TMP/tgt.img"
P=(--state "$STATE")

# What a refusal must leave alone: table regions, the ext4 superblock region, size and times.
regions() {
	local f=$1 n
	n=$(stat -c %s "$f")
	{ dd if="$f" bs=1M count=2 status=none
	  dd if="$f" bs=512 skip=$((n / 512 - 34)) status=none
	  dd if="$f" bs=1M skip=513 count=4 status=none
	  stat -c '%s %Y %Z' "$f"; } | sha256sum
}
refused() { # refused WHY-SUBSTRING ARGS...: exit 3, the message, nothing written
	local want=$1 s0 t0
	shift
	s0=$(regions "$S"); t0=$(regions "$T")
	run 3 "$SWAPTOOL" "${P[@]}" clone "$@"
	contains "$want"
	[ "$(regions "$S")" = "$s0" ] || fail "refusal ($want) changed the source"
	[ "$(regions "$T")" = "$t0" ] || fail "refusal ($want) changed the target"
}

refused "without --yes" "$S" "$T"
# The plan the operator read: clone holds the target to it.
run 0 "$SWAPTOOL" "${P[@]}" plan "$S" --target "$T"
# --shrink-source and --undo are gone: the source is never written
run 2 "$SWAPTOOL" "${P[@]}" clone "$S" "$T" --yes --shrink-source
run 2 "$SWAPTOOL" "${P[@]}" clone "$S" "$T" --yes --undo "$TMP/u"
refused "is the source" "$S" "$S" --yes
ln "$S" "$TMP/hardlink.img"
refused "is the source" "$S" "$TMP/hardlink.img" --yes
truncate -s 1900000000000 "$TMP/small.img"
refused "smaller than the 2,000,398,934,016 bytes the plan needs" "$S" "$TMP/small.img" --yes
truncate -s 1400000000000 "$TMP/tiny.img"
refused "path 2 is not possible" "$S" "$TMP/tiny.img" --yes
refused "no longer matches the plan" "$S" "$T" --yes --fingerprint 0000000000000000000000000000000000000000000000000000000000000000
refused "does not exist" "$S" "$TMP/missing.img" --yes
# A saved plan for this source, then the source changes (another ext4 UUID): refused.
cp --sparse=always "$S" "$TMP/other.img"
run 0 "$SWAPTOOL" --state "$TMP/st2" plan "$TMP/other.img" --target 2000398934016
tune2fs -U 0d6c4e57-0000-493d-a531-809dda000099 "$TMP/other.img?offset=537919488" >/dev/null 2>&1 ||
	debugfs -w -R "ssv uuid 0d6c4e57-0000-493d-a531-809dda000099" "$TMP/other.img?offset=537919488" >/dev/null 2>&1
S2=$TMP/other.img
s0=$(regions "$S2"); t0=$(regions "$T")
run 3 "$SWAPTOOL" --state "$TMP/st2" clone "$S2" "$T" --yes
contains "no longer matches the plan"
[ "$(regions "$S2")" = "$s0" ] && [ "$(regions "$T")" = "$t0" ] || fail "fingerprint refusal wrote"
# A filesystem that needs e2fsck (errors recorded): refused before anything is written.
debugfs -w -R "ssv state 2" "$TMP/other.img?offset=537919488" >/dev/null 2>&1
s0=$(regions "$S2")
run 3 "$SWAPTOOL" --state "$TMP/st3" clone "$S2" "$T" --yes
contains "needs e2fsck"
[ "$(regions "$S2")" = "$s0" ] && [ "$(regions "$T")" = "$t0" ] || fail "e2fsck refusal wrote"
rm -f "$TMP/other.img"
ok "refusals leave source and target unchanged"

# The clone. The source is only read: its whole content, hole map and times stay as they were.
sync "$S"   # writeback settled: the digest reads the file as it stays
src0=$(sparse_digest "$S")
run 0 "$SWAPTOOL" "${P[@]}" --json clone "$S" "$T" --yes
jeq .verdict pass
jeq .clone.source_written false
jeq '[.clone.actions[].action] | join(",")' check,e2fsck,copy-raw,copy-used-blocks,shrink,fsck,write-table,verify,manual
jeq '.checks[] | select(.id=="gpt-backup-header") | .backup_header_lba' 3907029167
[ "$(sparse_digest "$S")" = "$src0" ] || fail "the clone changed the source"
[ -z "$(ls "$STATE" | grep -i undo)" ] || fail "an undo file in the state directory"
[ -f "$STATE/clone.json" ] || fail "no clone record"
ok "clone ran"

check_target() {
	local off=537919488 f want got
	e2fsck -fn "$T?offset=$off" >"$TMP/fsck" 2>&1 || { cat "$TMP/fsck"; fail "e2fsck -fn of the target"; }
	sgdisk -v "$T" | grepq "No problems found" || fail "sgdisk -v of the target"
	sfdisk -J "$T" >"$TMP/t.json"
	[ "$(jq -r '.partitiontable.id' "$TMP/t.json")" = D6C40000-7E41-493D-A531-809DDA000000 ] || fail "disk GUID"
	[ "$(jq -r '[.partitiontable.partitions[].uuid] | join(",")' "$TMP/t.json")" = \
	  D6C40001-7E41-493D-A531-809DDA000001,D6C40002-7E41-493D-A531-809DDA000002 ] || fail "PARTUUIDs"
	[ "$(jq -r '[.partitiontable.partitions[] | "\(.start)+\(.size)"] | join(",")' "$TMP/t.json")" = \
	  2048+1048576,1050624+3905978511 ] || fail "partition LBAs: $(jq -c . "$TMP/t.json")"
	[ "$(jq -r .partitiontable.lastlba "$TMP/t.json")" = 3907029134 ] || fail "last usable LBA"
	# the backup header really is at LBA 3,907,029,167
	[ "$(dd if="$T" bs=512 skip=3907029167 count=1 status=none | head -c 8)" = "EFI PART" ] || fail "backup header"
	[ "$(blkid -p -o value -s UUID -O $off "$T")" = 0d6c4e57-7e41-493d-a531-809dda000002 ] || fail "ext4 UUID"
	[ "$(blkid -p -o value -s UUID -O 1048576 "$T")" = D6C4-0001 ] || fail "vfat UUID"
	[ "$(debugfs -R 'stats -h' "$T?offset=$off" 2>/dev/null | awk -F: '/^Block count/ { gsub(/ /, "", $2); print $2 }')" = 488247313 ] ||
		fail "block count"
	# every real file hashes as on the source (controller.key and the written data)
	jq -r '.files[] | select(.partition == 2) | "\(.path) \(.sha256)"' "$TMP/src.json" >"$TMP/files"
	[ "$(wc -l <"$TMP/files")" -ge 10 ] || fail "mkdisk listed too few files"
	grep -q controller.key "$TMP/files" || fail "controller.key not in the list"
	while read -r f want; do
		got=$(debugfs -R "cat \"$f\"" "$T?offset=$off" 2>/dev/null | sha256sum | cut -d' ' -f1)
		[ "$got" = "$want" ] || fail "$f: $got, expected $want"
	done <"$TMP/files"
	# the vfat partition byte for byte
	cmp <(dd if="$S" bs=1M skip=1 count=512 status=none) <(dd if="$T" bs=1M skip=1 count=512 status=none) ||
		fail "p1 differs"
}
check_target
ok "target: e2fsck, sgdisk, GUIDs, UUIDs, $(wc -l <"$TMP/files") file hashes"

# A rerun starts over cleanly: the target is rewritten, the source still unchanged.
dd if=/dev/urandom of="$T" bs=1M count=1 seek=600 conv=notrunc status=none
run 0 "$SWAPTOOL" "${P[@]}" --json clone "$S" "$T" --yes
jeq .verdict pass
jeq .clone.fingerprint_from_plan true
check_target
[ "$(sparse_digest "$S")" = "$src0" ] || fail "the rerun changed the source"
ok "rerun"
