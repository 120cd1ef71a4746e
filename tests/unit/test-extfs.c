/* SPDX-License-Identifier: MIT */
/* extfs (src/extfs.c): an ext4 made by mke2fs -d at 1 MiB of a sparse image, described at that
 * offset and checked field by field against debugfs -R "stats -h"; the minimum size against resize2fs -P;
 * the state flags; du against the inodes' block counts as debugfs prints them (hard links once,
 * unwritten extents counted, symlinks not followed); a file read back as debugfs dumps it, symlinks
 * refused; what is not an ext filesystem, and a superblock whose counts contradict each other. */
#include "util.h" /* first: the headers of src/ take size_t, bool from it */
#include "extfs.h"
#include "tap.h"
#include "testsh.h"

#define OFF 1048576ULL

/* A superblock field of the filesystem at 1 MiB of IMG as debugfs -R "stats -h" prints it (the ?offset=
 * syntax of e2fsprogs; dumpe2fs 1.47.2 cannot open such a name, debugfs can in every release). */
static char *dump(const char *img, const char *field)
{
	return sh_str("debugfs -R 'stats -h' '%s?offset=%llu' 2>/dev/null | sed -n 's/^%s: *//p'", img, OFF, field);
}

static uint64_t dump_u64(const char *img, const char *field)
{
	_cleanup_free_ char *s = dump(img, field);

	return s[0] ? strtoull(s, NULL, 10) : UINT64_MAX;
}

/* debugfs's Blockcount (512-byte units) of each path, summed, in bytes */
static uint64_t blockcount(const char *img, const char *paths)
{
	return sh_u64("s=0; for p in %s; do n=$(debugfs -R \"stat $p\" '%s?offset=%llu' 2>/dev/null | "
		      "sed -n 's/.*Blockcount: \\([0-9]*\\).*/\\1/p'); [ -n \"$n\" ] || exit 1; s=$((s + n)); done; echo $((s * 512))",
		      paths, img, OFF);
}

int main(void)
{
	struct extfs_info info;
	_cleanup_free_ char *img = NULL, *why = NULL, *feat = NULL, *uuid = NULL;
	uint64_t bytes = 0, want;

	tdir_make("test-extfs");
	need_tools("mke2fs debugfs resize2fs");
	img = tpath("disk.img");

	/* /d: a 3 MB file and a hard link to it, a subdirectory with a key, a symlink to the root;
	 * then a 40 MB file of unwritten extents (allocated, never written) */
	CHECK(sh("{ mkdir -p src/d/s src/other && head -c 3000000 /dev/urandom > src/d/a && ln src/d/a src/d/hard && "
		 "head -c 12345 /dev/urandom > src/d/s/key && ln -s / src/d/up && head -c 5000000 /dev/urandom > src/other/x && "
		 "mke2fs -q -F -t ext4 -b 4096 -U 0d6c4e57-7e41-493d-a531-809dda00e0f5 -d src fs.img 64M && "
		 "debugfs -w -R 'write /dev/null d/big' fs.img && debugfs -w -R 'sif /d/big size 41943040' fs.img && "
		 "debugfs -w -R 'fallocate /d/big 0 10239' fs.img && "
		 "truncate -s 80M disk.img && dd if=fs.img of=disk.img bs=1M seek=1 conv=notrunc,sparse status=none; "
		 "} >setup.log 2>&1 || { cat setup.log >&2; exit 1; }") == 0);

	CHECK(extfs_info(img, OFF, &info, &why) == 0);
	CHECK_U64(info.block_size, dump_u64(img, "Block size"));
	CHECK_U64(info.block_size, 4096);
	CHECK_U64(info.block_count, dump_u64(img, "Block count"));
	CHECK_U64(info.block_count, 16384);
	CHECK_U64(info.free_blocks, dump_u64(img, "Free blocks"));
	CHECK_U64(info.inode_count, dump_u64(img, "Inode count"));
	CHECK_U64(info.free_inodes, dump_u64(img, "Free inodes"));
	CHECK_U64(info.blocks_per_group, dump_u64(img, "Blocks per group"));
	CHECK_U64(info.inodes_per_group, dump_u64(img, "Inodes per group"));
	uuid = dump(img, "Filesystem UUID");
	CHECK_STR(info.uuid, uuid);
	CHECK_STR(info.uuid, "0d6c4e57-7e41-493d-a531-809dda00e0f5");
	/* the feature list as e2fsprogs spells it (debugfs and dumpe2fs alike), in its order */
	feat = dump(img, "Filesystem features");
	CHECK_STR(info.features, feat);
	CHECK(strstr(info.features, "extent") && strstr(info.features, "has_journal"));
	CHECK(info.clean);
	/* never below what resize2fs -P would shrink it to */
	want = sh_u64("resize2fs -P '%s?offset=%llu' 2>/dev/null | sed -n 's/.*minimum size of the filesystem: //p'", img, OFF);
	CHECK(want != UINT64_MAX);
	CHECK(info.min_blocks >= want);
	CHECK(info.min_blocks < info.block_count);
	fprintf(stderr, "# min_blocks %" PRIu64 ", resize2fs -P %" PRIu64 "\n", info.min_blocks, want);

	/* du: every inode under /d once (the hard link is the same inode), the symlink's own blocks
	 * (none: a fast symlink), not the root it points to */
	want = blockcount(img, "/d /d/a /d/s /d/s/key /d/big /d/up");
	CHECK(want != UINT64_MAX && want > 40000000);
	CHECK(extfs_du(img, OFF, "/d", &bytes) == 0);
	CHECK_U64(bytes, want);
	/* unwritten extents count: /d/big alone is its 10,240 blocks */
	CHECK(extfs_du(img, OFF, "/d/big", &bytes) == 0);
	CHECK_U64(bytes, blockcount(img, "/d/big"));
	CHECK(bytes >= 10240ULL * 4096);
	CHECK(extfs_du(img, OFF, "/d/s", &bytes) == 0);
	CHECK_U64(bytes, blockcount(img, "/d/s /d/s/key"));
	CHECK(extfs_du(img, OFF, "/nosuch", &bytes) == -ENOENT);

	/* a file read through libext2fs, byte for byte as debugfs dumps it; what is not one is refused */
	{
		_cleanup_free_ char *text = NULL, *w = NULL, *want = sh_str("debugfs -R 'dump /d/s/key /dev/stdout' "
									     "'%s?offset=%llu' 2>/dev/null | sha256sum | cut -c1-64", img, OFF);
		char hex[65];
		size_t len = 0;

		CHECK(extfs_read_file(img, OFF, "/d/s/key", 1 << 20, &text, &len, &w) == 0);
		CHECK_U64(len, 12345);
		CHECK(sha256_buf(text, len, hex) == 0);
		CHECK_STR(hex, want);
		CHECK(extfs_read_file(img, OFF, "/d/up", 1 << 20, &text, &len, &w) == -ENODEV);     /* a symlink, not followed */
		CHECK(extfs_read_file(img, OFF, "/d/up/d/a", 1 << 20, &text, &len, &w) == -ENOTDIR); /* nor on the way */
		CHECK(extfs_read_file(img, OFF, "/d", 1 << 20, &text, &len, &w) == -ENODEV);
		CHECK(extfs_read_file(img, OFF, "/d/nosuch", 1 << 20, &text, &len, &w) == -ENOENT);
		CHECK(extfs_read_file(img, OFF, "/d/s/key", 1000, &text, &len, &w) == -EFBIG);
		CHECK(extfs_read_file(img, OFF, "/", 1000, &text, &len, &w) == -EINVAL);
	}

	/* an error recorded in the superblock: not clean */
	CHECK(sh("cp --sparse=always disk.img err.img && debugfs -w -R 'ssv state 3' 'err.img?offset=%llu' >/dev/null 2>&1", OFF) == 0);
	{
		_cleanup_free_ char *e = tpath("err.img");

		CHECK(extfs_info(e, OFF, &info, NULL) == 0);
		CHECK(!info.clean);
	}
	/* more free blocks than blocks: a sentence, not arithmetic on it */
	CHECK(sh("cp --sparse=always disk.img bad.img && debugfs -w -R 'ssv free_blocks_count 99999999' 'bad.img?offset=%llu' >/dev/null 2>&1",
		 OFF) == 0);
	{
		_cleanup_free_ char *b = tpath("bad.img"), *w = NULL;

		CHECK(extfs_info(b, OFF, &info, &w) == -EUCLEAN);
		CHECK(w && strstr(w, "more free blocks than blocks"));
		CHECK(extfs_du(b, OFF, "/d", &bytes) == -EUCLEAN);
	}
	/* no filesystem at offset 0 (zeros): an error with a reason; a missing file: -ENOENT */
	free(why), why = NULL;
	CHECK(extfs_info(img, 0, &info, &why) < 0);
	CHECK(why && strstr(why, "cannot open the ext filesystem at offset 0"));
	{
		_cleanup_free_ char *m = tpath("missing.img");

		CHECK(extfs_info(m, 0, &info, NULL) == -ENOENT);
	}
	return tap_done();
}
