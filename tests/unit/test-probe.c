/* SPDX-License-Identifier: MIT */
/* probe (src/probe.c): type, UUID and LABEL at an offset of a real image (mkdisk scaled: FAT16 and
 * ext4 at their partitions' offsets), each checked against blkid -p; nothing where nothing is;
 * two signatures at once are ambivalent; offsets past libblkid's signed 64 bits are refused. */
#include <fcntl.h>

#include "util.h" /* first: the headers of src/ take size_t, bool from it */
#include "probe.h"
#include "tap.h"
#include "testsh.h"

/* blkid -p's value of TAG at OFFSET of the image */
static char *blkid(const char *img, uint64_t off, uint64_t size, const char *tag)
{
	return sh_str("blkid -p -O %" PRIu64 " -S %" PRIu64 " -s %s -o value %s", off, size, tag, img);
}

static void same_as_blkid(int fd, uint64_t off, uint64_t size, const char *type)
{
	struct fs_id id;
	_cleanup_free_ char *t = blkid("s.img", off, size, "TYPE"), *u = blkid("s.img", off, size, "UUID"),
			    *l = blkid("s.img", off, size, "LABEL");

	CHECK(probe_fs(fd, off, size, &id) == 0);
	CHECK_STR(id.type, type);
	CHECK_STR(id.type, t);
	CHECK_STR(id.uuid, u);
	CHECK_STR(id.label, l);
}

int main(void)
{
	const char *mkdisk = getenv("MKDISK");
	struct fs_id id;
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *img = NULL;

	if (!mkdisk) {
		fprintf(stderr, "SKIP: MKDISK not set (run through meson test)\n");
		return 77;
	}
	tdir_make("test-probe");
	need_tools("blkid jq mke2fs mkfs.vfat");
	CHECK(sh("'%s' scaled s.img > s.json", mkdisk) == 0);
	img = tpath("s.img");
	fd = open(img, O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0);

	/* p1 FAT16 at 1 MiB (64 MiB), p2 ext4 at 65 MiB to the end, as mkdisk reports them */
	CHECK_U64(sh_u64("jq .partition_table.partitions[0].fs.offset_bytes s.json"), 1048576);
	CHECK_U64(sh_u64("jq .partition_table.partitions[1].fs.offset_bytes s.json"), 68157440);
	same_as_blkid(fd, 1048576, 67108864, "vfat");
	probe_fs(fd, 1048576, 67108864, &id);
	CHECK_STR(id.uuid, "D6C4-0001");
	CHECK_STR(id.label, "EFI");
	same_as_blkid(fd, 68157440, 4226792960ULL, "ext4");
	probe_fs(fd, 68157440, 4226792960ULL, &id);
	CHECK_STR(id.uuid, "0d6c4e57-7e41-493d-a531-809dda000002");
	CHECK_STR(id.label, "");

	/* the whole disk holds a protective MBR and a GPT, no filesystem (partitions are not probed) */
	CHECK(probe_fs(fd, 0, 1048576, &id) == 0);
	CHECK_STR(id.type, "");
	/* zeros: nothing */
	CHECK(sh("truncate -s 8M z.img") == 0);
	{
		_cleanup_free_ char *z = tpath("z.img");
		_cleanup_close_ int zfd = open(z, O_RDONLY | O_CLOEXEC);

		CHECK(probe_fs(zfd, 0, 8 << 20, &id) == 0);
		CHECK_STR(id.type, "");
		CHECK(id.uuid[0] == '\0' && id.label[0] == '\0');
	}
	/* a FAT boot sector and an ext4 superblock in one region, each found by its own prober (-n):
	 * ambivalent, never one of the two, in every release: libblkid 2.38 (Debian 12) returns -2 for
	 * it and blkid -p exits 8; 2.41 (Debian 13) returns -1, a plain error, and blkid -p exits 2 */
	CHECK(sh("truncate -s 16M amb.img e.img && mkfs.vfat amb.img >/dev/null && mke2fs -q -F -t ext4 e.img && "
		 "dd if=e.img of=amb.img bs=1024 skip=1 seek=1 count=1 conv=notrunc status=none") == 0);
	CHECK(sh("blkid -p -n ext4 amb.img >/dev/null 2>&1 && blkid -p -n vfat amb.img >/dev/null 2>&1") == 0);
	CHECK(sh("blkid -p amb.img >/dev/null 2>&1; r=$?; [ $r = 8 ] || [ $r = 2 ]") == 0);
	{
		_cleanup_free_ char *a = tpath("amb.img");
		_cleanup_close_ int afd = open(a, O_RDONLY | O_CLOEXEC);

		CHECK(probe_fs(afd, 0, 16 << 20, &id) == -EUCLEAN);
	}
	/* FAT's bytes per sector (offset 11, little-endian): mkdisk's ESP at 1 MiB has 512, as od reads it */
	{
		unsigned char boot[512] = { 0 };
		uint32_t bps = 0;

		CHECK(probe_fat_sector_size(fd, 1048576, &bps) == 0);
		CHECK_U64(bps, sh_u64("od -An -tu2 -j %d -N2 s.img", 1048576 + 11));
		CHECK_U64(bps, 512);
		CHECK(probe_fat_sector_size(fd, 68157440, &bps) == -EINVAL); /* p2: ext4, no FAT boot sector */
		boot[510] = 0x55, boot[511] = 0xAA;
		boot[11] = 0x00, boot[12] = 0x10; /* 4096 */
		CHECK(fat_sector_size(boot, &bps) == 0);
		CHECK_U64(bps, 4096);
		boot[11] = 0x00, boot[12] = 0x01; /* 256: below what FAT allows */
		CHECK(fat_sector_size(boot, &bps) == -EINVAL);
		boot[11] = 0x00, boot[12] = 0x03; /* 768: not a power of two */
		CHECK(fat_sector_size(boot, &bps) == -EINVAL);
		boot[11] = 0x00, boot[12] = 0x20; /* 8192: above what Linux mounts */
		CHECK(fat_sector_size(boot, &bps) == -EINVAL);
		boot[12] = 0x02, boot[511] = 0; /* 512 without the boot signature */
		CHECK(fat_sector_size(boot, &bps) == -EINVAL);
		/* the rule of the clone's verification: at least the drive's block, a whole number of them */
		CHECK(fs_sector_fits(512, 512) && fs_sector_fits(4096, 512) && fs_sector_fits(4096, 4096));
		CHECK(!fs_sector_fits(512, 4096) && !fs_sector_fits(2048, 4096) && !fs_sector_fits(4096, 0));
	}
	/* libblkid's offsets are signed 64-bit: past that is refused, not wrapped */
	CHECK(probe_fs(fd, (uint64_t)INT64_MAX + 1, 4096, &id) == -EOVERFLOW);
	CHECK(probe_fs(fd, 4096, (uint64_t)INT64_MAX, &id) == -EOVERFLOW);
	return tap_done();
}
