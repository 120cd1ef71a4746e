/* SPDX-License-Identifier: MIT */
/* fat (src/fat.c): a FAT32 written at an offset of an image with nested directories, long and 8.3
 * names, an empty file and files of several clusters, checked by fsck.fat -n and read by mtools
 * (mdir, mcopy) independently, and read back by path; 4096-byte sectors; files that do not fit, bad
 * names, names that differ only in case; a damaged boot sector, FATs that differ, a looping chain. */
#include "util.h" /* first: the headers of src/ take size_t, bool from it */
#include "fat.h"
#include "tap.h"
#include "testsh.h"

#include <fcntl.h>

#define OFF (1u << 20)

struct set {
	struct fat_file f[6];
	char *want[6]; /* sha256sum's of the sources */
	size_t n;
};

static void set_open(struct set *s)
{
	static const char *const names[][2] = {
		{ "EFI/BOOT/BOOTX64.EFI", "a" },  { "loader/loader.conf", "b" },
		{ "loader/entries/swaptool-rescue.conf", "c" }, { "swaptool/vmlinuz", "d" },
		{ "swaptool/initrd.img", "e" }, { "empty", "z" },
	};

	s->n = ARRAY_SIZE(names);
	for (size_t i = 0; i < s->n; i++) {
		_cleanup_free_ char *p = tpath(names[i][1]);

		s->f[i] = (struct fat_file){ .path = names[i][0], .fd = open(p, O_RDONLY | O_CLOEXEC) };
		s->f[i].size = (uint64_t)lseek(s->f[i].fd, 0, SEEK_END);
		s->want[i] = sh_str("sha256sum < %s | cut -c1-64", names[i][1]);
	}
}

static void set_close(struct set *s)
{
	for (size_t i = 0; i < s->n; i++)
		close(s->f[i].fd), free(s->want[i]);
}

/* Every file of the set read back by path: the hash fat_write took, and the source's. */
static void read_back(int fd, uint64_t bytes, const struct set *s)
{
	for (size_t i = 0; i < s->n; i++) {
		_cleanup_free_ char *why = NULL;
		char hex[65] = "";
		uint64_t size = 0;

		CHECK(fat_file_sha256(fd, OFF, bytes, s->f[i].path, hex, &size, &why) == 0);
		CHECK_STR(hex, s->f[i].sha256);
		CHECK_STR(hex, s->want[i]);
		CHECK_U64(size, s->f[i].size);
	}
}

int main(void)
{
	_cleanup_free_ char *why = NULL, *img = NULL, *img4k = NULL, *dir = NULL;
	struct set s;
	uint64_t bytes;
	int fd;
	char hex[65];
	uint64_t size;

	tdir_make("test-fat");
	need_tools("fsck.fat mdir mcopy");
	CHECK(sh("head -c 140891 /dev/urandom > a && printf 'default x\\n' > b && printf 'title t\\n' > c && "
		 "head -c 3000000 /dev/urandom > d && head -c 9000001 /dev/urandom > e && : > z") == 0);
	set_open(&s);
	bytes = fat_min_bytes(s.f, s.n, 512);
	CHECK(bytes >= 32ull << 20 && bytes % (1u << 20) == 0);
	CHECK(fat_min_bytes(s.f, s.n, 4096) >= 256ull << 20); /* 65,525 clusters of 4 KiB at least */

	img = tpath("disk.img");
	fd = open(img, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	CHECK(ftruncate(fd, OFF + (off_t)bytes + OFF) == 0);
	CHECK(fat_write(fd, OFF, bytes, 512, OFF / 512, "swaptool", 0x1234abcd, 1700000000, s.f, s.n, &why) == 0);
	read_back(fd, bytes, &s);

	/* independent readers: fsck.fat on the partition's bytes, mtools through the offset */
	CHECK(sh("dd if=disk.img of=part.img bs=1M skip=1 count=%llu status=none && fsck.fat -n part.img >fsck.log 2>&1 || "
		 "{ cat fsck.log >&2; exit 1; }", (unsigned long long)(bytes >> 20)) == 0);
	dir = sh_str("mdir -i part.img -/ -b ::/ | sed 's|^::/||' | sort | tr '\\n' ' '");
	CHECK_STR(dir, "EFI/ EFI/BOOT/ EFI/BOOT/BOOTX64.EFI empty loader/ loader/entries/ "
		       "loader/entries/swaptool-rescue.conf loader/loader.conf swaptool/ swaptool/initrd.img swaptool/vmlinuz ");
	CHECK(sh("mcopy -i part.img ::/swaptool/initrd.img - | cmp - e && mcopy -i part.img ::/EFI/BOOT/BOOTX64.EFI - | cmp - a && "
		 "mcopy -i part.img ::/loader/entries/swaptool-rescue.conf - | cmp - c") == 0);
	CHECK(sh("[ \"$(mlabel -i part.img -s :: 2>/dev/null | sed 's/.* is //; s/ *$//')\" = SWAPTOOL ] || "
		 "[ -z \"$(command -v mlabel)\" ]") == 0);
	/* case does not matter to a FAT reader */
	CHECK(fat_file_sha256(fd, OFF, bytes, "efi/boot/bootx64.efi", hex, &size, &why) == 0);
	CHECK_STR(hex, s.f[0].sha256);
	CHECK(fat_file_sha256(fd, OFF, bytes, "swaptool/missing", hex, &size, &why) == -ENOENT);
	CHECK(fat_file_sha256(fd, OFF, bytes, "swaptool", hex, &size, &why) == -EISDIR);
	CHECK(fat_file_sha256(fd, OFF, bytes, "empty/x", hex, &size, &why) == -ENOTDIR);

	/* damaged: FATs that differ, a chain that loops, a boot sector of nonsense */
	CHECK(sh("cp disk.img bad1.img && printf '\\x07' | dd of=bad1.img bs=1 seek=$((%u + 32 * 512 + 40)) conv=notrunc status=none",
		 OFF) == 0);
	{
		_cleanup_free_ char *p = tpath("bad1.img");
		_cleanup_close_ int b = open(p, O_RDONLY | O_CLOEXEC);

		CHECK(fat_file_sha256(b, OFF, bytes, "swaptool/vmlinuz", hex, &size, &why) == -EBADMSG);
		CHECK(why && strstr(why, "two FATs differ"));
	}
	/* the root directory's cluster (2) points to itself, in both FATs */
	CHECK(sh("cp disk.img bad2.img && fatsz=$(od -An -tu4 -j $((%u + 36)) -N4 disk.img | tr -d ' ') && "
		 "for k in 0 1; do printf '\\x02\\x00\\x00\\x00' | dd of=bad2.img bs=1 "
		 "seek=$((%u + (32 + k * fatsz) * 512 + 8)) conv=notrunc status=none; done", OFF, OFF) == 0);
	{
		_cleanup_free_ char *p = tpath("bad2.img");
		_cleanup_close_ int b = open(p, O_RDONLY | O_CLOEXEC);

		CHECK(fat_file_sha256(b, OFF, bytes, "swaptool/vmlinuz", hex, &size, &why) == -EBADMSG);
		CHECK(why && strstr(why, "not sound"));
	}
	CHECK(sh("cp disk.img bad3.img && printf '\\x03\\x00' | dd of=bad3.img bs=1 seek=$((%u + 11)) conv=notrunc status=none",
		 OFF) == 0);
	{
		_cleanup_free_ char *p = tpath("bad3.img");
		_cleanup_close_ int b = open(p, O_RDONLY | O_CLOEXEC);

		CHECK(fat_file_sha256(b, OFF, bytes, "swaptool/vmlinuz", hex, &size, &why) == -EBADMSG);
		CHECK(fat_file_sha256(b, OFF, 1u << 20, "swaptool/vmlinuz", hex, &size, &why) == -EBADMSG);
	}
	close(fd);

	/* 4096-byte sectors (a 4Kn drive): fsck.fat reads it too */
	bytes = fat_min_bytes(s.f, s.n, 4096);
	img4k = tpath("disk4k.img");
	fd = open(img4k, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	CHECK(ftruncate(fd, OFF + (off_t)bytes) == 0);
	CHECK(fat_write(fd, OFF, bytes, 4096, OFF / 4096, "SWAPTOOL", 1, 1700000000, s.f, s.n, &why) == 0);
	read_back(fd, bytes, &s);
	CHECK(sh("dd if=disk4k.img of=part4k.img bs=1M skip=1 status=none && fsck.fat -n part4k.img >/dev/null 2>&1") == 0);
	close(fd);

	/* what does not fit, or cannot be named */
	fd = open(img, O_RDWR | O_CLOEXEC);
	CHECK(fat_write(fd, OFF, 20u << 20, 512, 0, "X", 1, 0, s.f, s.n, &why) == -ENOSPC); /* too few clusters for FAT32 */
	s.f[1].size = 1ull << 30;
	CHECK(fat_write(fd, OFF, bytes, 512, 0, "X", 1, 0, s.f, s.n, &why) == -ENOSPC);
	CHECK(why && strstr(why, "clusters"));
	s.f[1].size = 10;
	s.f[1].path = "Swaptool/VMLINUZ";
	CHECK(fat_write(fd, OFF, bytes, 512, 0, "X", 1, 0, s.f, s.n, &why) == -EEXIST);
	s.f[1].path = "a:b";
	CHECK(fat_write(fd, OFF, bytes, 512, 0, "X", 1, 0, s.f, s.n, &why) == -EINVAL);
	CHECK(fat_min_bytes(s.f, s.n, 512) == 0);
	close(fd);
	set_close(&s);
	return tap_done();
}
