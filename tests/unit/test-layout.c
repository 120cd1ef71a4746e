/* SPDX-License-Identifier: MIT */
/* layout (src/layout.c): mkdisk's scaled disk (4 GiB, GPT: FAT16 p1, ext4 p2 to the end) fitted
 * against targets of the same size, 512 MiB smaller, far too small, with 4096-byte LBAs, and too
 * small for a GPT; and an MBR disk. The target's last usable LBA is sgdisk's on a sparse file
 * of that size; partitions, UUIDs and block counts are sgdisk's, blkid's and debugfs's. */
#include "util.h"
#include "layout.h"
#include "tap.h"
#include "testsh.h"

#define GiB (1ULL << 30)
#define MiB (1ULL << 20)

/* sgdisk's last usable LBA of an empty GPT on a disk of BYTES with LBA-byte sectors */
static uint64_t last_usable(uint64_t bytes, unsigned lba)
{
	if (lba != 512) /* sgdisk takes an image's sector size from nothing: use the arithmetic of the GPT */
		return bytes / lba - 1 - 1 - (128 * 128 + lba - 1) / lba;
	return sh_u64("rm -f t.img && truncate -s %" PRIu64 " t.img && sgdisk -o t.img >/dev/null && sgdisk -E t.img", bytes);
}

int main(void)
{
	const char *mkdisk = getenv("MKDISK");
	_cleanup_free_ char *img = NULL, *why = NULL, *uuid = NULL;
	struct disk d;
	struct layout l;
	uint64_t end, start2, blocks, p1_start, p1_end;

	if (!mkdisk) {
		fprintf(stderr, "SKIP: MKDISK not set (run through meson test)\n");
		return 77;
	}
	tdir_make("test-layout");
	need_tools("sgdisk sfdisk mke2fs blkid debugfs");
	CHECK(sh("'%s' scaled s.img > s.json", mkdisk) == 0);
	img = tpath("s.img");
	CHECK(disk_open(img, 512, &d, &why) == 0);

	/* the same size: every path possible, nothing crosses */
	CHECK(layout_analyze(&d, 4 * GiB, 512, &l, &why) == 0);
	CHECK(l.table.kind == PT_GPT);
	CHECK_U64(l.table.nparts, sh_u64("sgdisk -p s.img | grep -c '^ *[0-9]'"));
	CHECK_U64(l.table.nparts, 2);
	start2 = sh_u64("sgdisk -i 2 s.img | sed -n 's/^First sector: \\([0-9]*\\).*/\\1/p'");
	CHECK_U64(l.table.parts[1].start_lba, start2);
	CHECK_U64(l.table.parts[1].end_lba, sh_u64("sgdisk -i 2 s.img | sed -n 's/^Last sector: \\([0-9]*\\).*/\\1/p'"));
	CHECK_U64(l.table_problems, 0); /* sgdisk -v agrees */
	CHECK(sh("sgdisk -v s.img | grep -q 'No problems found'") == 0);
	CHECK(l.table_why == NULL);
	CHECK_STR(l.fs[0].id.type, "vfat");
	CHECK(!l.fs[0].is_ext);
	CHECK_STR(l.fs[1].id.type, "ext4");
	CHECK(l.fs[1].is_ext && l.fs[1].ext_err == 0);
	uuid = sh_str("blkid -p -O %" PRIu64 " -s UUID -o value s.img", start2 * 512);
	CHECK_STR(l.fs[1].id.uuid, uuid);
	CHECK_STR(l.fs[1].ext.uuid, uuid);
	CHECK_U64(l.fs[1].ext.block_count,
		  sh_u64("debugfs -R 'stats -h' 's.img?offset=%" PRIu64 "' 2>/dev/null | sed -n 's/^Block count: *//p'", start2 * 512));
	CHECK(l.raw_clone_possible && l.fs_clone_possible);
	CHECK(!l.lba_size_differs);
	CHECK(l.delta_bytes == 0);
	CHECK(!l.fit[0].crosses_end && !l.fit[1].crosses_end);
	CHECK_U64(l.fit[1].new_end_lba, last_usable(4 * GiB, 512));
	CHECK_U64(l.src_geo.last_usable_lba, 8388574); /* mkdisk's JSON: the source's own */
	/* p1's FAT: its bytes per sector, as od reads them at offset 11 of its boot sector */
	p1_start = l.table.parts[0].start_lba;
	p1_end = l.table.parts[0].end_lba;
	CHECK_U64(l.fs[0].fat_sector, sh_u64("od -An -tu2 -j %" PRIu64 " -N2 s.img", p1_start * 512 + 11));
	CHECK_U64(l.fs[0].fat_sector, 512);
	layout_free(&l);

	/* 512 MiB smaller: p2 crosses the end (the clone trap); raw is impossible, path 2 shrinks p2
	 * to end at the target's last usable LBA */
	CHECK(layout_analyze(&d, 4 * GiB - 512 * MiB, 512, &l, &why) == 0);
	end = last_usable(4 * GiB - 512 * MiB, 512);
	CHECK_U64(end, 7339998);
	CHECK(l.delta_bytes == -(int64_t)(512 * MiB));
	CHECK(!l.raw_clone_possible);
	CHECK(!l.fit[0].crosses_end);
	CHECK(l.fit[1].crosses_end);
	CHECK_U64(l.tgt_geo.last_usable_lba, end);
	CHECK_U64(l.fit[1].new_end_lba, end);
	blocks = (end - start2 + 1) * 512 / 4096;
	CHECK_U64(l.fit[1].new_block_count, blocks);
	CHECK(l.fs[1].ext.min_blocks <= blocks);
	CHECK(l.fs_clone_possible);
	if (!l.fs_clone_possible)
		fprintf(stderr, "# %s\n", l.fs_clone_why);
	/* p1 keeps its place and size */
	CHECK_U64(l.fit[0].new_end_lba, l.table.parts[0].end_lba);
	layout_free(&l);

	/* 1 GiB: the 1.47 GB of data do not fit; the reason names the blocks */
	CHECK(layout_analyze(&d, 1 * GiB, 512, &l, &why) == 0);
	CHECK(!l.fs_clone_possible && !l.raw_clone_possible);
	CHECK(strstr(l.fs_clone_why, "the data of partition 2 needs") != NULL);
	{
		_cleanup_free_ char *want = xasprintf("the target leaves room for %" PRIu64,
						     (last_usable(GiB, 512) - start2 + 1) * 512 / 4096);
		CHECK(strstr(l.fs_clone_why, want) != NULL);
	}
	layout_free(&l);

	/* 4096-byte LBAs on the target: raw copy impossible; the starts are whole 4 KiB, but p1's FAT
	 * has 512-byte sectors (offset 11 of its boot sector, read by od), which Linux refuses on a
	 * 4096-byte-sector drive (issue 29): path 2 is refused, naming both sizes; the fit is still shown */
	CHECK(layout_analyze(&d, 4 * GiB, 4096, &l, &why) == 0);
	CHECK(l.lba_size_differs && !l.raw_clone_possible);
	CHECK(!l.fs_clone_possible && l.lba_size_unsafe);
	CHECK(strstr(l.fs_clone_why, "the source has 512-byte LBAs and the target 4096-byte ones, and partition 1 "
				     "holds a FAT with 512-byte sectors") != NULL);
	CHECK(strstr(l.fs_clone_why, "use path 1") != NULL);
	CHECK_U64(l.tgt_geo.last_usable_lba, last_usable(4 * GiB, 4096));
	CHECK_U64(l.fit[1].new_end_lba, 1048570); /* 1,048,576 LBAs: header at 1,048,575, 4 of entries */
	CHECK_U64(l.fit[0].new_end_lba, (l.table.parts[0].end_lba + 1) / 8 - 1);
	layout_free(&l);

	/* the same disk with p1 re-made as a FAT of 4096-byte sectors (mkfs.vfat -S 4096, its offset
	 * counted in those sectors): every filesystem works at 4096-byte LBAs, path 2 holds */
	{
		struct disk d4;
		_cleanup_free_ char *img4 = tpath("s4.img");
		uint64_t p1 = p1_start, p1kib = (p1_end - p1_start + 1) / 2;

		CHECK(sh("cp --sparse=always s.img s4.img && mkfs.vfat --offset %" PRIu64 " -S 4096 --mbr=n --invariant "
			 "-F 16 s4.img %" PRIu64 " >/dev/null 2>&1", p1 * 512 / 4096, p1kib) == 0);
		CHECK(disk_open(img4, 512, &d4, &why) == 0);
		CHECK(layout_analyze(&d4, 4 * GiB, 4096, &l, &why) == 0);
		CHECK_U64(l.fs[0].fat_sector, 4096);
		CHECK(l.lba_size_differs && !l.lba_size_unsafe);
		CHECK(l.fs_clone_possible);
		layout_free(&l);
		disk_close(&d4);
	}

	/* too small for a GPT at all */
	free(why), why = NULL;
	CHECK(layout_analyze(&d, 8192, 512, &l, &why) < 0);
	CHECK(why && strstr(why, "too small to hold a GPT"));
	layout_free(&l);
	disk_close(&d);

	/* an MBR source (sfdisk, ext4 in its one partition): path 2 needs a GPT */
	free(why), why = NULL;
	CHECK(sh("truncate -s 64M m.img && printf 'label: dos\\n2048,,83\\n' | sfdisk -q m.img && "
		 "mke2fs -q -F -t ext4 -E offset=1048576 m.img 63M >/dev/null 2>&1") == 0);
	{
		_cleanup_free_ char *m = tpath("m.img");

		CHECK(disk_open(m, 512, &d, &why) == 0);
		CHECK(layout_analyze(&d, 48 * MiB, 512, &l, &why) == 0);
		CHECK(l.table.kind == PT_DOS);
		CHECK_U64(l.table.nparts, 1);
		CHECK_U64(l.table.parts[0].start_lba, 2048);
		CHECK_STR(l.fs[0].id.type, "ext4");
		CHECK(l.fit[0].crosses_end);
		CHECK(!l.fs_clone_possible);
		CHECK(strstr(l.fs_clone_why, "an MBR table") != NULL);
		CHECK(!l.raw_clone_possible);
		CHECK(l.delta_bytes == -16 * (int64_t)MiB);
		layout_free(&l);
		disk_close(&d);
	}
	return tap_done();
}
