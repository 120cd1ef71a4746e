#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# An ext4 that blkid still recognises but whose superblock is damaged (zero or absurd block size,
# zero counts, an unknown incompat bit, counts that contradict each other): preflight and plan judge
# it (the filesystem cannot be read, path 2 is impossible, no script) and never die of a signal;
# under --json they print exactly one JSON document.
. "$SRCDIR/tests/lib.sh"
: "${MKDISK:?run through meson test (tests/run)}"

# Without metadata_csum: libblkid of util-linux 2.39 and later (Debian 13) checks the superblock's
# checksum and sees no ext4 in any damaged one; these are the superblocks it still calls ext4.
"$MKDISK" scaled "$TMP/clean.img" --ext4-features ^metadata_csum,^metadata_csum_seed >/dev/null
# p2 of `scaled` starts at LBA 133,120 (sgdisk -i 2 says so; checked below): the ext4's primary
# superblock is 1,024 bytes into it.
start=$(sgdisk -i 2 "$TMP/clean.img" | sed -n 's/^First sector: \([0-9]*\).*/\1/p')
[ "$start" = 133120 ] || fail "p2 of the scaled image starts at '$start'"
SB=$((133120 * 512 + 1024))
T=3GiB # a target path 2 fits on the clean image

run 0 "$SWAPTOOL" --state "$STATE" --json plan "$TMP/clean.img" --target $T
jeq .plan.paths.fs_clone.possible true
ok "the clean image: path 2 possible"

# corrupt NAME OFFSET BYTES: a copy of the image with the superblock field at OFFSET overwritten.
corrupt() {
	cp --sparse=always "$TMP/clean.img" "$TMP/$1.img"
	printf "$3" | dd of="$TMP/$1.img" bs=1 seek=$((SB + $2)) conv=notrunc status=none
	# the damage must be one blkid still calls ext4: that is the case that used to kill swaptool.
	# libblkid 2.41 (Debian 13) checks the block size too: what it no longer calls ext4 never reaches
	# swaptool's ext4 code on that release, and is not a case there (at least 15 must remain).
	if [ "$(blkid -p -O $((133120 * 512)) -s TYPE -o value "$TMP/$1.img")" != ext4 ]; then
		echo "# $1: this libblkid does not call it ext4: not a case here"
		rm -f "$TMP/$1.img"
		return 1
	fi
}

# one_json STEP ARGS...: runs a --json step; exit below 128, exactly one JSON document on stdout.
one_json() {
	local got=0
	"$SWAPTOOL" --state "$STATE" --json "$@" >"$TMP/out" 2>"$TMP/err" || got=$?
	[ "$got" -lt 128 ] || { cat "$TMP/err" >&2; fail "'$*' died of signal $((got - 128))"; }
	[ "$(jq -s length "$TMP/out")" = 1 ] || { cat "$TMP/out" >&2; fail "'$*' did not print one JSON document"; }
	OUT=$(cat "$TMP/out")
	RC=$got
}

# Offsets in struct ext2_super_block (e2fsprogs lib/ext2fs/ext2_fs.h).
cases=(
	"log-block-size-64    24  \\x40\\x00\\x00\\x00"
	"log-block-size-max   24  \\xff\\xff\\xff\\xff"
	"log-cluster-size-64  28  \\x40\\x00\\x00\\x00"
	"blocks-count-0       4   \\x00\\x00\\x00\\x00"
	"blocks-count-hi      336 \\xff\\xff\\xff\\xff"
	"inodes-count-0       0   \\x00\\x00\\x00\\x00"
	"blocks-per-group-0   32  \\x00\\x00\\x00\\x00"
	"clusters-per-group-0 36  \\x00\\x00\\x00\\x00"
	"inodes-per-group-0   40  \\x00\\x00\\x00\\x00"
	"first-data-block     20  \\xff\\xff\\x00\\x00"
	"free-blocks-max      12  \\xff\\xff\\xff\\xff"
	"free-inodes-max      16  \\xff\\xff\\xff\\xff"
	"incompat-unknown     96  \\xc2\\x02\\x00\\x80"
	"inode-size-max       88  \\xff\\xff"
	"desc-size-max        254 \\xff\\xff"
	"log-groups-per-flex  372 \\x40"
	"blocks-past-part     4   \\xfc\\xbe\\x0f\\x00"
)
judged=0
for c in "${cases[@]}"; do
	read -r name off bytes <<<"$c"
	corrupt "$name" "$off" "$bytes" || continue
	judged=$((judged + 1))

	one_json preflight "$TMP/$name.img" --target $T
	[ "$RC" = 4 ] || fail "$name: preflight exited $RC, expected 4 (the clone trap; the fresh install remains)"
	jeq '[.checks[] | select(.id == "fs-clean")][0].status' warn
	jeq '[.checks[] | select(.id == "fs-clean")][0].summary | test("p2.s ext4 cannot be read")' true
	jeq .paths.fs_clone.possible false
	jeq '.source.partition_table.partitions[1].fs.block_size' null

	one_json plan "$TMP/$name.img" --target $T
	[ "$RC" = 0 ] || fail "$name: plan exited $RC, expected 0 (path 1 only)"
	jeq .plan.paths.fs_clone.possible false
	jeq '.plan.paths.fs_clone.why_not | test("filesystem of partition 2 cannot be read")' true
	jeq '.plan.paths.fs_clone.actions | length' 0

	# no script for a filesystem nobody can read
	one_json plan "$TMP/$name.img" --target $T --script "$TMP/$name.sh"
	[ "$RC" = 1 ] || fail "$name: plan --script exited $RC, expected 1"
	[ ! -e "$TMP/$name.sh" ] || fail "$name: a script was written"

	# and the human table too (the same analysis, rendered)
	got=0
	"$SWAPTOOL" --state "$STATE" preflight "$TMP/$name.img" --target $T >"$TMP/out" 2>&1 || got=$?
	[ "$got" = 4 ] || fail "$name: preflight (table) exited $got"
	rm -f "$TMP/$name.img"
	ok "$name: judged, no signal"
done
[ "$judged" -ge 15 ] || fail "only $judged of ${#cases[@]} damaged superblocks are ext4 to this blkid"

# The reason names the damage when libext2fs opens the superblock but its counts contradict.
corrupt free-blocks 12 '\xff\xff\xff\xff' || fail "free-blocks: blkid no longer sees ext4"
one_json preflight "$TMP/free-blocks.img" --target $T
jeq '[.checks[] | select(.id == "fs-clean")][0].summary | test("more free blocks than blocks")' true
# 1,031,932 blocks of 4 KiB: one block more than p2's 8,255,455 LBAs hold (libext2fs, opened at an
# offset, cannot know the partition's end)
corrupt past-part 4 '\xfc\xbe\x0f\x00' || fail "past-part: blkid no longer sees ext4"
one_json preflight "$TMP/past-part.img" --target $T
jeq '[.checks[] | select(.id == "fs-clean")][0].summary | test("1031932 blocks of 4096 B, more than partition 2.s 4226792960 bytes")' true
# and libext2fs's own words when it refuses to open (not "Unknown code ext2 ...")
corrupt bs 24 '\x40\x00\x00\x00' || fail "bs: blkid no longer sees ext4"
one_json preflight "$TMP/bs.img" --target $T
jeq '[.checks[] | select(.id == "fs-clean")][0].summary | test("Unknown code")' false
ok "the reason is named"
