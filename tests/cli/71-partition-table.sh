#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Impossible partition tables: GPT entries crafted byte by byte (overlapping, past the disk's end,
# past the last usable LBA, before the first, ending before they begin, beyond 64-bit byte offsets),
# a header whose usable range runs past the disk, MBR entries that overlap or run past the end, and
# a GPT with both headers damaged. preflight's partition-table check agrees with sgdisk -v on every
# one; plan refuses path 2; clone refuses before writing anything.
. "$SRCDIR/tests/lib.sh"
command -v sgdisk >/dev/null || skip "sgdisk missing"
command -v sfdisk >/dev/null || skip "sfdisk missing"
command -v gzip >/dev/null || skip "gzip missing"

# le VALUE N: VALUE's N low bytes, little-endian, as printf escapes.
le() {
	local v=$1 n=$2 i s=
	for ((i = 0; i < n; i++)); do s+=$(printf '\\x%02x' $(((v >> (8 * i)) & 255))); done
	printf '%s' "$s"
}
# put IMG OFFSET ESCAPES
put() { printf "$3" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none; }
# crc32 IMG OFFSET LENGTH: from gzip's trailer (RFC 1952: the CRC-32 of the data, little-endian),
# so the CRCs come from another implementation than swaptool's zlib call.
crc32() { { tail -c +$(($2 + 1)) "$1" || true; } | head -c "$3" | gzip -c | tail -c8 | head -c4 | od -An -tu4 | tr -d ' '; }
# set_entry IMG N START END: GPT entry N (1-based) of the primary array at LBA 2 (512-byte LBAs).
set_entry() {
	local o=$((1024 + ($2 - 1) * 128))
	put "$1" $((o + 32)) "$(le "$3" 8)"
	put "$1" $((o + 40)) "$(le "$4" 8)"
}
# fix_gpt IMG: the primary's entry-array and header CRCs recomputed; the backup array and header
# (at the disk's last 33 LBAs) made to mirror it, CRCs included.
fix_gpt() {
	local img=$1 lbas=$(($(stat -c %s "$1") / 512)) c b
	c=$(crc32 "$img" 1024 16384)
	put "$img" $((512 + 88)) "$(le "$c" 4)"
	put "$img" $((512 + 16)) '\x00\x00\x00\x00'
	put "$img" $((512 + 16)) "$(le "$(crc32 "$img" 512 92)" 4)"
	dd if="$img" of="$img" bs=512 skip=2 seek=$((lbas - 33)) count=32 conv=notrunc status=none
	b=$(((lbas - 1) * 512))
	put "$img" $((b + 88)) "$(le "$c" 4)"
	put "$img" $((b + 16)) '\x00\x00\x00\x00'
	put "$img" $((b + 16)) "$(le "$(crc32 "$img" "$b" 92)" 4)"
}

T=128M # a target that fits everything: only the table can stop path 2
pt_check() { jeq '.checks[] | select(.id == "partition-table") | .status' "$1"; }

# The clean table: sgdisk -v and preflight agree it is fine; path 2 is possible.
truncate -s 64M "$TMP/base.img"
sgdisk -n1:2048:+4M -n2:0:+8M -n3:0:0 "$TMP/base.img" >/dev/null
sgdisk -v "$TMP/base.img" | grepq 'No problems found' || fail "sgdisk -v on the clean image"
run 0 "$SWAPTOOL" --state "$STATE" --json preflight "$TMP/base.img" --target $T
pt_check pass
jeq '.checks[] | select(.id == "partition-table") | .problems' 0
jeq .paths.fs_clone.possible true
# the same table with its CRCs recomputed by fix_gpt is still clean (the helper is sound)
cp "$TMP/base.img" "$TMP/same.img"
fix_gpt "$TMP/same.img"
sgdisk -v "$TMP/same.img" | grepq 'No problems found' || fail "fix_gpt broke a clean table"
run 0 "$SWAPTOOL" --state "$STATE" --json preflight "$TMP/same.img" --target $T
pt_check pass
jeq .source.partition_table.primary_header_ok true
jeq .source.partition_table.backup_header_ok true
ok "a clean GPT passes, as sgdisk -v says"

# judge NAME TEXT: sgdisk -v finds problems, preflight fails partition-table saying TEXT, plan
# offers path 1 only and writes no script, clone refuses with the target untouched.
judge() {
	local img="$TMP/$1.img" sum
	sgdisk -v "$img" >"$TMP/sgdisk.out" 2>&1 || true
	grep -qE 'Identified [0-9]+ problems|^Problem' "$TMP/sgdisk.out" ||
		{ cat "$TMP/sgdisk.out" >&2; fail "$1: sgdisk -v finds no problem: the case is not what it claims"; }
	run 1 "$SWAPTOOL" --state "$STATE" --json preflight "$img" --target $T
	[ "$(printf '%s' "$OUT" | jq -s length)" = 1 ] || fail "$1: not one JSON document"
	pt_check fail
	jeq ".checks[] | select(.id == \"partition-table\") | .summary | contains(\"$2\")" true
	jeq .paths.fs_clone.possible false
	jeq .paths.recommended fresh_install
	run 1 "$SWAPTOOL" --state "$STATE" preflight "$img" --target $T
	contains "verdict: FAIL  the source's partition table is invalid"
	run 0 "$SWAPTOOL" --state "$STATE" --json plan "$img" --target $T
	jeq .plan.paths.fs_clone.possible false
	jeq '.plan.paths.fs_clone.why_not | test("partition table is invalid")' true
	run 1 "$SWAPTOOL" --state "$STATE" plan "$img" --target $T --script "$TMP/$1.sh"
	[ ! -e "$TMP/$1.sh" ] || fail "$1: a script was written"
	truncate -s 0 "$TMP/tgt.img"
	truncate -s $T "$TMP/tgt.img"
	printf 'swaptool-test' | dd of="$TMP/tgt.img" bs=1 seek=4096 conv=notrunc status=none
	sum=$(sha256sum <"$TMP/tgt.img")
	run 3 "$SWAPTOOL" --state "$TMP/clone-state" --json clone "$img" "$TMP/tgt.img" --yes
	jeq '.error.message | test("partition table is invalid")' true
	[ "$(sha256sum <"$TMP/tgt.img")" = "$sum" ] || fail "$1: clone wrote the target"
	ok "$1: partition-table fails ($2), as sgdisk -v finds; path 2 refused"
}

cp "$TMP/base.img" "$TMP/overlap.img"
set_entry "$TMP/overlap.img" 2 8192 20479 # p1 is 2048-10239
fix_gpt "$TMP/overlap.img"
judge overlap "partitions 1 and 2 overlap"

cp "$TMP/base.img" "$TMP/past-disk.img"
set_entry "$TMP/past-disk.img" 3 26624 200000 # the disk has LBAs 0-131071
fix_gpt "$TMP/past-disk.img"
judge past-disk "partition 3 ends at LBA 200000, past the disk's last LBA 131071"

cp "$TMP/base.img" "$TMP/past-usable.img"
set_entry "$TMP/past-usable.img" 3 26624 131039 # last usable: 131072 - 1 - 32 = 131038
fix_gpt "$TMP/past-usable.img"
judge past-usable "partition 3 ends at LBA 131039, past the last usable LBA 131038"

cp "$TMP/base.img" "$TMP/too-early.img"
set_entry "$TMP/too-early.img" 1 33 10239 # first usable: 2 + 32 = 34
fix_gpt "$TMP/too-early.img"
judge too-early "partition 1 begins at LBA 33, before the first usable LBA 34"

cp "$TMP/base.img" "$TMP/backwards.img"
set_entry "$TMP/backwards.img" 2 30000 20000
fix_gpt "$TMP/backwards.img"
judge backwards "partition 2 ends (LBA 20000) before it begins (LBA 30000)"

cp "$TMP/base.img" "$TMP/overflow.img"
set_entry "$TMP/overflow.img" 3 -100 -1 # 2^64-100 .. 2^64-1: (end + 1) * 512 wraps
fix_gpt "$TMP/overflow.img"
judge overflow "overflows 64-bit byte offsets"

cp "$TMP/base.img" "$TMP/usable-past.img"
put "$TMP/usable-past.img" $((512 + 48)) "$(le 200000 8)" # the header's LastUsableLBA
fix_gpt "$TMP/usable-past.img"
judge usable-past "the GPT's last usable LBA 200000 is past the disk's last LBA 131071"

cp "$TMP/base.img" "$TMP/alt-lba.img"
put "$TMP/alt-lba.img" $((512 + 32)) "$(le $((1 << 62)) 8)" # the header's AlternateLBA: 2^62
fix_gpt "$TMP/alt-lba.img"
judge alt-lba "backup header LBA 4611686018427387904 is past the disk's last LBA 131071"
# 2^62 * 512 B wraps to 0 in 64 bits: the backup header is past any target, not before its end
run 1 "$SWAPTOOL" --state "$STATE" --json preflight "$TMP/alt-lba.img" --target $T
jeq '.checks[] | select(.id == "gpt-backup-header") | .status' fail
ok "alt-lba: the backup header's byte offset does not wrap"

# A header (its CRC32 valid) declaring 2^28 entries of 128 B: a 32 GiB entry array, which libfdisk
# would allocate before checking the array's CRC. Refused before libfdisk reads the disk.
cp "$TMP/base.img" "$TMP/huge-array.img"
put "$TMP/huge-array.img" $((512 + 80)) "$(le $((1 << 28)) 4)"
fix_gpt "$TMP/huge-array.img"
run 3 "$SWAPTOOL" --state "$STATE" --json preflight "$TMP/huge-array.img" --target $T
jeq '.error.message | test("GPT header at LBA 1 declaring a 34359738368-byte entry array")' true
run 3 "$SWAPTOOL" --state "$STATE" --json plan "$TMP/huge-array.img" --target $T
jeq .error.exit_code 3
ok "a header declaring a 32 GiB entry array is refused"

# MBR: entries at byte 446 + 16 * i, start LBA at +8, sector count at +12.
truncate -s 64M "$TMP/mbr.img"
printf 'label: dos\n2048,8192,83\n,16384,83\n' | sfdisk -q "$TMP/mbr.img"
run 0 "$SWAPTOOL" --state "$STATE" --json preflight "$TMP/mbr.img" --target $T
pt_check pass
cp "$TMP/mbr.img" "$TMP/mbr-overlap.img"
put "$TMP/mbr-overlap.img" $((446 + 16 + 8)) "$(le 8000 4)"
sgdisk -v "$TMP/mbr-overlap.img" 2>&1 | grepq 'partitions 2 and 1 overlap' || fail "sgdisk -v misses the MBR overlap"
run 1 "$SWAPTOOL" --state "$STATE" --json preflight "$TMP/mbr-overlap.img" --target $T
pt_check fail
jeq '.checks[] | select(.id == "partition-table") | .summary | contains("partitions 1 and 2 overlap")' true
cp "$TMP/mbr.img" "$TMP/mbr-past.img"
put "$TMP/mbr-past.img" $((446 + 16 + 12)) "$(le 200000 4)"
run 1 "$SWAPTOOL" --state "$STATE" --json preflight "$TMP/mbr-past.img" --target $T
pt_check fail
jeq '.checks[] | select(.id == "partition-table") | .summary | contains("partition 2 ends at LBA 210239, past the disk")' true
# an extended partition holds its logical ones: that is no overlap
truncate -s 64M "$TMP/mbr-ext.img"
printf 'label: dos\n2048,8192,83\n,,5\n,8192,83\n,8192,83\n' | sfdisk -q "$TMP/mbr-ext.img"
sgdisk -v "$TMP/mbr-ext.img" 2>&1 | grepq 'No problems found' || fail "sgdisk -v on the extended layout"
run 0 "$SWAPTOOL" --state "$STATE" --json preflight "$TMP/mbr-ext.img" --target $T
pt_check pass
jeq '.source.partition_table.partitions | length' 4
# two extended partitions in the MBR (the first turned into type 0x0f): one at most is sound, and
# libfdisk 2.38 leaks on such a table (tests/fuzz/regress/disk/libfdisk-two-extended-leak)
cp "$TMP/mbr-ext.img" "$TMP/mbr-two-ext.img"
put "$TMP/mbr-two-ext.img" $((446 + 4)) '\x0f'
[ "$(sfdisk -d "$TMP/mbr-two-ext.img" | grep -cE 'type=(f|5)$')" = 2 ] || fail "sfdisk -d does not show two extended entries"
run 3 "$SWAPTOOL" --state "$STATE" --json preflight "$TMP/mbr-two-ext.img" --target $T
jeq '.error.message | contains("has 2 extended partitions in its MBR")' true
ok "MBR: overlap and past the end fail, two extended partitions are refused, a sound MBR (with logical partitions) passes"

# Both GPT headers damaged (one byte of each CRC): not "a 'dos' partition table".
cp "$TMP/base.img" "$TMP/both.img"
put "$TMP/both.img" $((512 + 16)) '\x5a'
put "$TMP/both.img" $((131071 * 512 + 16)) '\x5a'
run 3 "$SWAPTOOL" --state "$STATE" --json preflight "$TMP/both.img" --target $T
jeq .error.exit_code 3
jeq '.error.message | test("both GPT headers fail their checks")' true
jeq '.error.message | test("dos")' false
run 3 "$SWAPTOOL" --state "$STATE" plan "$TMP/both.img" --target $T
contains "both GPT headers"
# without the protective MBR either: a damaged GPT, not "no partition table"
dd if=/dev/zero of="$TMP/both.img" bs=512 count=1 conv=notrunc status=none
run 3 "$SWAPTOOL" --state "$STATE" --json preflight "$TMP/both.img" --target $T
jeq '.error.message | test("both GPT headers fail their checks")' true
ok "both GPT headers damaged: named, not 'dos' or 'none'"
