/* SPDX-License-Identifier: MIT */
/* The source's partitions and filesystems fitted against a target: the clone trap, to the byte. */
#include "util.h"
#include "layout.h"

#include <inttypes.h>

static bool is_ext(const char *type)
{
	return streq(type, "ext2") || streq(type, "ext3") || streq(type, "ext4");
}

static void why_not(struct layout *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void why_not(struct layout *l, const char *fmt, ...)
{
	va_list ap;

	if (!l->fs_clone_possible)
		return; /* keep the first reason */
	l->fs_clone_possible = false;
	va_start(ap, fmt);
	vsnprintf(l->fs_clone_why, sizeof(l->fs_clone_why), fmt, ap);
	va_end(ap);
}

/* What partition i's filesystem is at the target's LBA size: NULL when it works there (an ext
 * block or a FAT sector a whole number of target LBAs), else the words that say why not. */
static const char *lba_misfit(const struct layout *l, size_t i, char *buf, size_t len)
{
	const struct part_fs *f = &l->fs[i];
	uint32_t tl = l->tgt_geo.lba_size;

	if (f->is_ext && f->ext_err == 0) {
		if (fs_sector_fits(f->ext.block_size, tl))
			return NULL;
		snprintf(buf, len, "holds %s with %u-byte blocks", f->id.type, f->ext.block_size);
	} else if (streq(f->id.type, "vfat") && f->fat_sector) {
		if (fs_sector_fits(f->fat_sector, tl))
			return NULL;
		snprintf(buf, len, "holds a FAT with %u-byte sectors", f->fat_sector);
	} else
		snprintf(buf, len, "holds %s, copied raw", f->id.type[0] ? f->id.type : "no filesystem swaptool knows");
	return buf;
}

/* Another LBA size on the target: the GPT is rewritten in its LBAs, but the filesystems are copied
 * as they are, and a FAT ESP formatted with 512-byte sectors does not mount on a 4096-byte-sector
 * drive (Linux: "FAT-fs: logical sector size too small"; the firmware does not read it either).
 * A target that presents another LBA size now than it will in the slot (a USB bridge) gets a GPT
 * in the wrong units. Path 2 is refused unless every partition's filesystem works at the target's
 * LBA size (docs/swaptool-plan.1, "LBA sizes"). */
static void fit_lba_size(struct layout *l)
{
	uint32_t sl = l->src_geo.lba_size, tl = l->tgt_geo.lba_size;
	char buf[128];

	if (!l->lba_size_differs)
		return;
	for (size_t i = 0; i < l->table.nparts; i++) {
		const char *misfit = lba_misfit(l, i, buf, sizeof(buf));

		if (!misfit)
			continue;
		l->lba_size_unsafe = true;
		why_not(l, "the source has %u-byte LBAs and the target %u-byte ones, and partition %u %s: a GPT and a FAT "
			   "ESP raw-copied from %u-byte sectors do not work on a %u-byte-sector drive; use path 1 (fresh "
			   "install + restore), or put the target where it presents the LBA size it will have in the slot",
			sl, tl, l->table.parts[i].number, misfit, sl, tl);
		return;
	}
}

/* A target that presents one LBA size through its USB bridge and will present another in the slot
 * (a bridge that reports 4096-byte blocks for a drive formatted with 512-byte LBAs, or the reverse):
 * the GPT would be written in the bridge's units and be found nowhere in the slot (issue 29: OVMF
 * finds no GPT). Refused, not planned for the slot's size: what clone writes, verifies and checks is
 * read back through the same bridge, so a disk laid out for other units could not be proven here. */
static void fit_slot_lba(struct layout *l)
{
	uint32_t tl = l->tgt_geo.lba_size, slot = l->tgt_slot_lba;

	if (!l->slot_lba_differs)
		return;
	l->lba_size_unsafe = true;
	why_not(l, "the target presents %u-byte LBAs here, but its namespace is formatted with %u-byte LBAs (read "
		   "through its USB bridge), the size it presents in the slot: a GPT and filesystems written here would "
		   "be in the wrong units there; clone with the target in the slot or in an enclosure that presents "
		   "%u-byte LBAs, or use path 1 (fresh install + restore)",
		tl, slot, slot);
}

/* Path 2 keeps every partition's start and shrinks only the last one to end at the target's
 * last usable LBA; that works when nothing else crosses the end and its filesystem's data fits. */
static void fit_fs_clone(struct layout *l)
{
	const struct ptable *t = &l->table;
	uint32_t sl = l->src_geo.lba_size, tl = l->tgt_geo.lba_size;
	size_t last = 0;

	l->fs_clone_possible = true;
	if (l->table_problems) {
		why_not(l, "the source's partition table is invalid (%s); repair it (sgdisk -v names the same problems)",
			l->table_why);
		return;
	}
	if (t->kind != PT_GPT) {
		why_not(l, "the source has %s; path 2 rewrites a GPT and needs one on the source",
			t->kind == PT_DOS ? "an MBR table" : "no partition table");
		return;
	}
	if (t->nparts == 0) {
		why_not(l, "the source's GPT has no partitions");
		return;
	}
	fit_slot_lba(l);
	fit_lba_size(l);
	for (size_t i = 1; i < t->nparts; i++)
		if (t->parts[i].end_lba > t->parts[last].end_lba)
			last = i;
	for (size_t i = 0; i < t->nparts; i++) {
		const struct part *p = &t->parts[i];
		struct part_fit *f = &l->fit[i];
		uint64_t start_bytes = p->start_lba * sl, new_start;

		if (start_bytes % tl) {
			why_not(l, "partition %u starts at byte %" PRIu64 ", not a whole %u-byte target LBA", p->number,
				start_bytes, tl);
			continue;
		}
		new_start = start_bytes / tl;
		if (new_start < l->tgt_geo.first_usable_lba) {
			why_not(l, "partition %u starts before the target's first usable LBA %" PRIu64, p->number,
				l->tgt_geo.first_usable_lba);
			continue;
		}
		if (i != last) {
			f->new_end_lba = ((p->end_lba + 1) * sl) / tl - 1;
			f->new_block_count = l->fs[i].is_ext ? l->fs[i].ext.block_count : 0;
			if (f->crosses_end)
				why_not(l, "partition %u is not the last one and ends past the target's last usable LBA "
					   "%" PRIu64 "; only the last partition can be shrunk",
					p->number, l->tgt_geo.last_usable_lba);
			continue;
		}
		/* The last partition ends at the target's last usable LBA: shrink (or grow) to fill. */
		f->new_end_lba = l->tgt_geo.last_usable_lba;
		if (new_start >= f->new_end_lba) {
			why_not(l, "partition %u starts past the target's end", p->number);
			continue;
		}
		if (!l->fs[i].is_ext) {
			if (f->crosses_end)
				why_not(l, "partition %u crosses the target's end and holds %s, which swaptool cannot shrink",
					p->number, l->fs[i].id.type[0] ? l->fs[i].id.type : "no filesystem it knows");
			f->new_end_lba = ((p->end_lba + 1) * sl) / tl - 1;
			continue;
		}
		/* The open error first: an ext4 that blkid knows but libext2fs refused has no block size. */
		if (l->fs[i].ext_err < 0 || l->fs[i].ext.block_size == 0) {
			why_not(l, "the filesystem of partition %u cannot be read: %s", p->number,
				l->fs[i].ext_why[0] ? l->fs[i].ext_why : strerror(-l->fs[i].ext_err));
			continue;
		}
		uint64_t new_bytes = (f->new_end_lba - new_start + 1) * tl;
		uint64_t blocks = new_bytes / l->fs[i].ext.block_size;

		f->new_block_count = blocks;
		if (l->fs[i].ext.min_blocks > blocks)
			why_not(l, "the data of partition %u needs %" PRIu64 " blocks, the target leaves room for %" PRIu64,
				p->number, l->fs[i].ext.min_blocks, blocks);
	}
}

int layout_analyze(struct disk *src, uint64_t tgt_bytes, uint32_t tgt_lba_size, struct layout *l, char **why)
{
	return layout_analyze_slot(src, tgt_bytes, tgt_lba_size, 0, l, why);
}

int layout_analyze_slot(struct disk *src, uint64_t tgt_bytes, uint32_t tgt_lba_size, uint32_t tgt_slot_lba,
			struct layout *l, char **why)
{
	int r;

	*l = (struct layout){ .src = src, .tgt_slot_lba = tgt_slot_lba,
			      .slot_lba_differs = tgt_slot_lba && tgt_slot_lba != tgt_lba_size };
	*why = NULL;
	r = lba_geometry(tgt_bytes, tgt_lba_size, &l->tgt_geo);
	if (r < 0)
		return set_why(why, r,
			       "the target (%" PRIu64 " bytes, %u-byte LBAs) is too small to hold a GPT", tgt_bytes,
			       tgt_lba_size);
	if (lba_geometry(src->size_bytes, src->lba_size, &l->src_geo) < 0)
		return set_why(why, -EINVAL,
			       "the source '%s' (%" PRIu64 " bytes) is too small to be a boot disk", src->path,
			       src->size_bytes);
	if (src->size_bytes > INT64_MAX || tgt_bytes > INT64_MAX)
		return set_why(why, -EOVERFLOW, "sizes beyond 8 EiB are not supported");
	l->delta_bytes = (int64_t)tgt_bytes - (int64_t)src->size_bytes;
	l->lba_size_differs = src->lba_size != tgt_lba_size;
	r = ptable_read(src->fd, src->dev, src->lba_size, src->size_bytes, &l->table, why);
	if (r < 0)
		return r;
	l->table_problems = ptable_check(&l->table, &l->table_why);
	l->fs = xcalloc(l->table.nparts ? l->table.nparts : 1, sizeof(*l->fs));
	l->fit = xcalloc(l->table.nparts ? l->table.nparts : 1, sizeof(*l->fit));
	for (size_t i = 0; i < l->table.nparts; i++) {
		const struct part *p = &l->table.parts[i];
		uint64_t off, end_bytes, tgt_end, fs_bytes;
		struct part_fs *fs = &l->fs[i];
		bool ovf;

		/* The entry's LBAs come from the disk: a partition that ends before it starts, or past
		 * the disk, or beyond 64-bit byte offsets is not probed (ptable_check has named it). */
		tgt_end = (l->tgt_geo.last_usable_lba + 1) * (uint64_t)tgt_lba_size; /* <= tgt_bytes */
		if (p->start_lba > p->end_lba)
			continue;
		ovf = u64_mul(p->start_lba, src->lba_size, &off) < 0 || u64_add(p->end_lba, 1, &end_bytes) < 0 ||
		      u64_mul(end_bytes, src->lba_size, &end_bytes) < 0;
		if (ovf || end_bytes > src->size_bytes) {
			l->fit[i].crosses_end = ovf || end_bytes > tgt_end;
			continue;
		}

		probe_fs(src->fd, off, p->size_bytes, &fs->id);
		if (streq(fs->id.type, "vfat") && probe_fat_sector_size(src->fd, off, &fs->fat_sector) < 0)
			fs->fat_sector = 0;
		if (is_ext(fs->id.type)) {
			_cleanup_free_ char *ewhy = NULL;

			fs->is_ext = true;
			fs->ext_err = extfs_info(src->dev, off, &fs->ext, &ewhy);
			if (fs->ext_err < 0)
				snprintf(fs->ext_why, sizeof(fs->ext_why), "%s", ewhy ? ewhy : strerror(-fs->ext_err));
			else if (u64_mul(fs->ext.block_count, fs->ext.block_size, &fs_bytes) < 0 || fs_bytes > p->size_bytes) {
				/* libext2fs is opened at an offset and never sees the partition's end: a
				 * superblock claiming more blocks than the partition holds is found here */
				snprintf(fs->ext_why, sizeof(fs->ext_why),
					 "its superblock counts %" PRIu64 " blocks of %u B, more than partition %u's %" PRIu64
					 " bytes",
					 fs->ext.block_count, fs->ext.block_size, p->number, p->size_bytes);
				fs->ext_err = -EUCLEAN;
			}
		}
		l->fit[i].crosses_end = end_bytes > tgt_end;
	}
	/* A raw sector copy is valid only onto a disk at least as large with the same LBA size, here and
	 * in the slot. */
	l->raw_clone_possible = tgt_bytes >= src->size_bytes && !l->lba_size_differs && !l->slot_lba_differs;
	fit_fs_clone(l);
	return 0;
}

void layout_free(struct layout *l)
{
	ptable_free(&l->table);
	free(l->table_why);
	l->table_why = NULL;
	free(l->fs);
	free(l->fit);
	l->fs = NULL;
	l->fit = NULL;
}
