#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# preflight on bad input: every bad --target form and every bad SOURCE gets a clear message and its exit code.
. "$SRCDIR/tests/lib.sh"

img="$TMP/small.img"
truncate -s 64M "$img"
sgdisk -n1:2048:0 -t1:8300 "$img" >/dev/null

pf() { "$SWAPTOOL" --state "$STATE" preflight "$@"; }

# --target forms that must be refused with exit 2 and the reason.
for bad in "0" "-5" "0s" "abc" "1.819TiB" "18446744073709551616" "12parsecs" "1.5s" ""; do
	run 2 pf "$img" --target "$bad"
	contains "bad --target"
done
run 2 pf "$img" --target 1.819TiB
contains "not a whole number of bytes"
run 2 pf "$img" --target 18446744073709551616
contains "too large"
run 2 pf "$img" --target 0
contains "zero"
run 2 pf "$img" --target -5
contains "negative"
run 2 pf "$img" --target 100 --target-lba-size 520
contains "power of two"
# A target too small for a GPT at all.
run 2 pf "$img" --target 4096
contains "too small to hold a GPT"
ok "bad --target forms"

# Forms that are accepted: bytes, sectors, decimal and binary units, a path. A 64 MiB source fits
# a 2 TB target (exit 0), not a 4096-byte-LBA one (a raw clone is invalid, and path 2 is refused: its
# FAT has 512-byte sectors, exit 1) nor a 32 MiB image (exit 4: the trap, path 1 remains).
run 0 pf "$img" --target 3907029168s --json
jeq .target.size_bytes 2000398934016
run 0 pf "$img" --target 2TB --json
jeq .target.size_bytes 2000000000000
run 1 pf "$img" --target 488378646s --target-lba-size 4096 --json
jeq .target.size_bytes 2000398934016
jeq .target.lba_size 4096
truncate -s 32M "$TMP/target.img"
run 4 pf "$img" --target "$TMP/target.img" --json
jeq .target.size_bytes 33554432
jeq .target.path "$TMP/target.img"
ok "good --target forms"

# Bad sources.
run 3 pf "$TMP/missing.img" --target 2TB
contains "No such file"
run 2 pf "$TMP" --target 2TB
contains "is a directory"
run 2 pf --target 2TB
contains "no SOURCE"
run 2 pf "$img" "$img" --target 2TB
contains "one SOURCE only"
run 2 pf "$img"
contains "no --target"
run 2 pf "$img" --target 2TB --frobnicate
contains "--frobnicate"
: >"$TMP/empty.img"
run 3 pf "$TMP/empty.img" --target 2TB
contains "empty"
run 2 pf /dev/null --target 2TB
contains "not an NVMe controller"
if [ "$(id -u)" != 0 ]; then
	chmod 000 "$img"
	run 3 pf "$img" --target 2TB
	contains "Permission denied"
	chmod 644 "$img"
fi
# Errors in --json mode are one JSON document too.
run 2 pf "$img" --target 0 --json
jeq .verdict error
jeq .error.exit_code 2
ok "bad sources"

# A partition is refused, pointing at the whole disk (needs a loop device).
if [ "$(id -u)" = 0 ] && losetup -f >/dev/null 2>&1; then
	attach "$img"
	[ -b "${DEV}p1" ] || fail "partx made no partition node for $DEV"
	run 2 pf "${DEV}p1" --target 2TB
	contains "is a partition; give the whole disk ('/dev/$(basename "$DEV")')"
	ok "partition refused"
fi

# An unreadable profile key names file, line and key.
printf '[backup]\npath = ~/x\npaht = y\n' >"$TMP/bad.ini"
run 2 "$SWAPTOOL" --profile "$TMP/bad.ini" preflight "$img" --target 2TB
contains "bad.ini:3: unknown key 'paht' in [backup]"
ok "bad profile"

# A source with 2048-byte LBAs (a GPT written by fdisk -b 2048 on an image; --lba-size 2048 reads it
# so) is shown as 2048, in the JSON and in the table's LBA size column (it once printed 4096 or 512).
if command -v fdisk >/dev/null; then
	truncate -s 64M "$TMP/lba2048.img"
	printf 'g\nn\n\n\n\nw\n' | fdisk -b 2048 "$TMP/lba2048.img" >/dev/null 2>&1 || fail "fdisk -b 2048"
	run 0 pf "$TMP/lba2048.img" --lba-size 2048 --target 2TB --target-lba-size 2048 --json
	jeq .source.lba_size 2048
	jeq .source.lba_count 32768
	jeq .source.partition_table.type gpt
	jeq .source.partition_table.backup_header_lba 32767
	run 0 pf "$TMP/lba2048.img" --lba-size 2048 --target 2TB --target-lba-size 2048
	[ "$(printf '%s\n' "$OUT" | awk '$1 == "source" && NF > 4 { print $4 }')" = 2048 ] ||
		fail "the source's LBA size is not shown as 2048: $OUT"
	ok "2048-byte LBAs shown as 2048"
fi
