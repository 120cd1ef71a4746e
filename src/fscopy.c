/* SPDX-License-Identifier: MIT */
/* Copy a partition to a target: ext2/3/4 used blocks (bitmap minus unwritten extents) or raw bytes. */
#include "fscopy.h"

#include <ext2fs/ext2fs.h>
#include <e2p/e2p.h>
#include <et/com_err.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>

#include "extfs.h"
#include "util.h"

/* 8 MiB runs: large enough that a 4 KiB-per-block bitmap walk costs nothing next to the I/O
 * and an NVMe streams at full rate (the write-up's 1.9-3.0 GB/s), small enough for a smooth
 * progress line. */
#define COPY_BUF (8u << 20)
#define DIRECT_ALIGN 4096u

struct copier {
	int sfd, dfd;       /* buffered */
	int sdfd, ddfd;     /* O_DIRECT reopenings of block devices, or -1 */
	bool src_file, dst_file;
	char *buf;
	const struct copy_opts *o;
	struct copy_stats *st;
	uint64_t done, total;
	struct timespec t0;
};

static int copier_init(struct copier *c, int sfd, int dfd, const struct copy_opts *o, struct copy_stats *st)
{
	struct stat ss, ds;

	*c = (struct copier){ .sfd = sfd, .dfd = dfd, .sdfd = -1, .ddfd = -1, .o = o, .st = st };
	if (fstat(sfd, &ss) < 0 || fstat(dfd, &ds) < 0)
		return -errno;
	c->src_file = S_ISREG(ss.st_mode);
	c->dst_file = S_ISREG(ds.st_mode);
	/* O_DIRECT on block devices: a 1.8 TB stream through the page cache evicts everything
	 * else on a live system and costs a copy per byte; image files keep the page cache
	 * (they are usually sparse and cached). */
	if (!(o && o->no_direct)) {
		char p[64];

		if (S_ISBLK(ss.st_mode)) {
			snprintf(p, sizeof(p), "/proc/self/fd/%d", sfd);
			c->sdfd = open(p, O_RDONLY | O_DIRECT | O_CLOEXEC);
		}
		if (S_ISBLK(ds.st_mode)) {
			snprintf(p, sizeof(p), "/proc/self/fd/%d", dfd);
			c->ddfd = open(p, O_WRONLY | O_DIRECT | O_CLOEXEC);
		}
	}
	if (posix_memalign((void **)&c->buf, DIRECT_ALIGN, COPY_BUF) != 0)
		return -ENOMEM;
	(void)posix_fadvise(sfd, 0, 0, POSIX_FADV_SEQUENTIAL);
	c->t0.tv_sec = 0;
	if (st)
		st->seconds = mono_s();
	return 0;
}

static int copier_finish(struct copier *c, int r)
{
	if (r == 0 && fsync(c->dfd) < 0)
		r = -errno;
	if (c->sdfd >= 0)
		close(c->sdfd);
	if (c->ddfd >= 0)
		close(c->ddfd);
	free(c->buf);
	if (c->st)
		c->st->seconds = mono_s() - c->st->seconds;
	return r;
}

static bool aligned(uint64_t a, uint64_t b, uint64_t n)
{
	return a % DIRECT_ALIGN == 0 && b % DIRECT_ALIGN == 0 && n % DIRECT_ALIGN == 0;
}

static int tick(struct copier *c, uint64_t n)
{
	c->done += n;
	if (c->o && c->o->progress)
		c->o->progress(c->o->ud, c->done, c->total);
	if (c->o && c->o->stop && *c->o->stop)
		return -EINTR;
	return 0;
}

/* Make [off, off+len) of the target read as zeros without writing data where possible. */
static int zero_target(struct copier *c, uint64_t off, uint64_t len)
{
	if (c->dst_file) {
		if (fallocate(c->dfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off, len) == 0)
			return 0;
	} else if (off % 512 == 0 && len % 512 == 0) {
		uint64_t range[2] = { off, len };

		if (ioctl(c->dfd, BLKZEROOUT, range) == 0)
			return 0;
	}
	memset(c->buf, 0, COPY_BUF);
	while (len) {
		size_t n = len < COPY_BUF ? len : COPY_BUF;
		int r = pwrite_all(c->dfd, c->buf, n, off);

		if (r < 0)
			return r;
		off += n;
		len -= n;
	}
	return 0;
}

static int copy_data(struct copier *c, uint64_t soff, uint64_t doff, uint64_t len)
{
	while (len) {
		size_t n = len < COPY_BUF ? len : COPY_BUF;
		bool al = aligned(soff, doff, n);
		int r;

		r = pread_all(al && c->sdfd >= 0 ? c->sdfd : c->sfd, c->buf, n, soff);
		if (r < 0)
			return r;
		/* A zero run on an image target becomes a hole: the target stays as sparse as the
		 * source, which is what keeps a rehearsal under 1 GB of real disk. */
		if (c->dst_file && buf_is_zero(c->buf, n)) {
			r = zero_target(c, doff, n);
			c->st->hole_bytes += n;
		} else {
			r = pwrite_all(al && c->ddfd >= 0 ? c->ddfd : c->dfd, c->buf, n, doff);
			c->st->data_bytes += n;
		}
		if (r < 0)
			return r;
		soff += n;
		doff += n;
		len -= n;
		r = tick(c, n);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Copy one range; on an image source, holes are found with SEEK_DATA/SEEK_HOLE and never read. */
static int copy_range(struct copier *c, uint64_t soff, uint64_t doff, uint64_t len)
{
	int r;

	if (!c->src_file)
		return copy_data(c, soff, doff, len);
	while (len) {
		off_t data = lseek(c->sfd, soff, SEEK_DATA);
		uint64_t hole_len, data_len;

		if (data < 0 && errno != ENXIO)
			return copy_data(c, soff, doff, len); /* no SEEK_DATA here: read it all */
		hole_len = data < 0 ? len : (uint64_t)data - soff;
		if (hole_len > len)
			hole_len = len;
		if (hole_len) {
			r = zero_target(c, doff, hole_len);
			if (r < 0)
				return r;
			c->st->hole_bytes += hole_len;
			soff += hole_len;
			doff += hole_len;
			len -= hole_len;
			r = tick(c, hole_len);
			if (r < 0)
				return r;
			if (!len)
				break;
		}
		off_t hole = lseek(c->sfd, soff, SEEK_HOLE);
		data_len = hole < 0 ? len : (uint64_t)hole - soff;
		if (data_len > len || data_len == 0)
			data_len = len;
		r = copy_data(c, soff, doff, data_len);
		if (r < 0)
			return r;
		soff += data_len;
		doff += data_len;
		len -= data_len;
	}
	return 0;
}

int fscopy_raw(int src_fd, uint64_t src_off, int dst_fd, uint64_t dst_off, uint64_t len, const struct copy_opts *o,
	       struct copy_stats *st)
{
	struct copy_stats dummy = { 0 };
	struct copier c;
	int r;

	if (!st)
		st = &dummy;
	*st = (struct copy_stats){ .total_bytes = len };
	r = copier_init(&c, src_fd, dst_fd, o, st);
	if (r < 0)
		return copier_finish(&c, r);
	c.total = len;
	r = copy_range(&c, src_off, dst_off, len);
	if (r == 0)
		st->runs = 1;
	return copier_finish(&c, r);
}

static int ext_err(char **why, errcode_t e, const char *what, const char *path)
{
	return set_why(why, e == EXT2_ET_NO_MEMORY ? -ENOMEM : -EIO, "%s '%s': %s", what, path, error_message(e));
}

static int unmark_block(ext2_filsys fs, blk64_t *blocknr, e2_blkcnt_t blockcnt, blk64_t ref_blk, int ref_offset,
			void *priv)
{
	struct { ext2fs_block_bitmap bm; uint64_t n; } *u = priv;

	(void)fs, (void)ref_blk, (void)ref_offset;
	if (blockcnt >= 0) { /* data, not an indirect block */
		ext2fs_unmark_block_bitmap2(u->bm, *blocknr);
		u->n++;
	}
	return 0;
}

/* Whether inode `ino` holds filesystem metadata although it may look like a regular file past
 * the reserved range: the superblock names the journal (tune2fs -j on a mounted filesystem makes
 * it /.journal, a regular file), the orphan file (mke2fs -O orphan_file, the default of newer
 * e2fsprogs, allocates it at the first free inode, 12, where e2fsck checks every block's magic
 * and checksum), the quota files (project quota is never a reserved inode) and the snapshot
 * inodes; a stale field costs only a file's data more copied. An EA inode holds an extended
 * attribute's value, whose hash e2fsck checks against its entry. */
static bool meta_inode(ext2_filsys fs, ext2_ino_t ino, const struct ext2_inode *inode)
{
	const struct ext2_super_block *sb = fs->super;
	const __u32 named[] = { sb->s_journal_inum, sb->s_orphan_file_inum, sb->s_usr_quota_inum, sb->s_grp_quota_inum,
				sb->s_prj_quota_inum, sb->s_snapshot_inum, sb->s_snapshot_list };

	if (ino < EXT2_FIRST_INO(fs->super) || (inode->i_flags & EXT4_EA_INODE_FL))
		return true;
	for (size_t i = 0; i < ARRAY_SIZE(named); i++)
		if (named[i] && named[i] == ino)
			return true;
	return false;
}

/* Unmark from `bm` (a copy of the block bitmap) the data blocks of every unwritten extent or,
 * with `all_data`, every data block of regular files (the journal, the reserved inodes and the
 * other inodes that hold metadata kept: meta_inode). */
static errcode_t unmark_data(ext2_filsys fs, ext2fs_block_bitmap bm, bool all_data, uint64_t *count)
{
	ext2_inode_scan scan = NULL;
	struct ext2_inode inode;
	ext2_ino_t ino;
	errcode_t e;

	e = ext2fs_open_inode_scan(fs, 0, &scan);
	if (e)
		return e;
	/* Skip inode tables that were never initialised (lazy_itable_init): with 122 M inodes on
	 * a 1.86 TiB filesystem, reading them all would dominate the copy. */
	ext2fs_inode_scan_flags(scan, EXT2_SF_SKIP_MISSING_ITABLE, 0);
	for (;;) {
		ext2_extent_handle_t h = NULL;
		struct ext2fs_extent ex;
		int op = EXT2_EXTENT_ROOT;

		e = ext2fs_get_next_inode(scan, &ino, &inode);
		if (e == EXT2_ET_BAD_BLOCK_IN_INODE_TABLE)
			continue;
		if (e || !ino)
			break;
		if (!inode.i_links_count)
			continue;
		if (all_data) {
			if (meta_inode(fs, ino, &inode) || !LINUX_S_ISREG(inode.i_mode) ||
			    (inode.i_flags & EXT4_INLINE_DATA_FL))
				continue;
			if (!(inode.i_flags & EXT4_EXTENTS_FL)) {
				struct { ext2fs_block_bitmap bm; uint64_t n; } u = { bm, 0 };

				/* block-mapped: data blocks only, the indirect blocks stay */
				ext2fs_block_iterate3(fs, ino, BLOCK_FLAG_READ_ONLY | BLOCK_FLAG_DATA_ONLY, NULL,
						      unmark_block, &u);
				*count += u.n;
				continue;
			}
		} else if (!(inode.i_flags & EXT4_EXTENTS_FL))
			continue;
		if (ext2fs_extent_open2(fs, ino, &inode, &h))
			continue; /* not an extent tree we can read: copy its blocks, do not guess */
		while (ext2fs_extent_get(h, op, &ex) == 0) {
			op = EXT2_EXTENT_NEXT;
			if (!(ex.e_flags & EXT2_EXTENT_FLAGS_LEAF))
				continue;
			if (!all_data && !(ex.e_flags & EXT2_EXTENT_FLAGS_UNINIT))
				continue;
			if (!ex.e_len || ex.e_pblk + ex.e_len > ext2fs_blocks_count(fs->super))
				continue;
			ext2fs_unmark_block_bitmap_range2(bm, ex.e_pblk, ex.e_len);
			*count += ex.e_len;
		}
		ext2fs_extent_free(h);
	}
	ext2fs_close_inode_scan(scan);
	return e;
}

void ext_runs_free(struct ext_runs *er)
{
	free(er->run);
	er->run = NULL;
	er->nruns = 0;
}

/* The ext filesystem at src_off in src_path, opened read-only with its block bitmap loaded. */
static int open_with_bitmap(const char *src_path, uint64_t src_off, ext2_filsys *fs, char **why)
{
	_cleanup_free_ char *opts = xasprintf("offset=%" PRIu64, src_off);
	errcode_t e = ext2fs_open2(src_path, opts, EXT2_FLAG_64BITS, 0, 0, unix_io_manager, fs);

	if (e)
		return ext_err(why, e, "cannot open the ext filesystem in", src_path);
	e = ext2fs_read_block_bitmap(*fs);
	if (e)
		return ext_err(why, e, "cannot read the block bitmap of", src_path);
	return 0;
}

static int ext_runs(const char *src_path, uint64_t src_off, bool meta, struct ext_runs *er, char **why)
{
	_cleanup_extfs_ ext2_filsys fs = NULL;
	ext2fs_block_bitmap bm = NULL;
	blk64_t first, end, b;
	size_t cap = 0;
	errcode_t e;
	int r;

	*er = (struct ext_runs){ 0 };
	r = open_with_bitmap(src_path, src_off, &fs, why);
	if (r < 0)
		return r;
	e = ext2fs_copy_bitmap(fs->block_map, &bm);
	if (e)
		return ext_err(why, e, "cannot copy the block bitmap of", src_path);
	er->block_size = fs->blocksize;
	er->block_count = ext2fs_blocks_count(fs->super);
	first = fs->super->s_first_data_block;
	end = er->block_count - 1;
	for (b = first; b <= end; b++) {
		blk64_t z;

		if (ext2fs_find_first_set_block_bitmap2(fs->block_map, b, end, &b))
			break;
		if (ext2fs_find_first_zero_block_bitmap2(fs->block_map, b, end, &z))
			z = end + 1;
		er->used_blocks += z - b;
		b = z;
	}
	/* bigalloc bitmaps count clusters: an unwritten extent may share a cluster with written
	 * data, so there we copy every used cluster. */
	if (!ext2fs_has_feature_bigalloc(fs->super)) {
		e = unmark_data(fs, bm, meta, &er->unwritten_blocks);
		if (e) {
			ext2fs_free_block_bitmap(bm);
			return ext_err(why, e, "cannot walk the inodes of", src_path);
		}
	}
	/* Metadata blocks the bitmap may not carry: the MMP block (mke2fs marks it in use, an old
	 * tune2fs -O mmp did not always) and the snapshots' exclude bitmaps (one block per group). */
	if (ext2fs_has_feature_mmp(fs->super) && fs->super->s_mmp_block >= first && fs->super->s_mmp_block <= end)
		ext2fs_mark_block_bitmap2(bm, fs->super->s_mmp_block);
	if (ext2fs_has_feature_exclude_bitmap(fs->super))
		for (dgrp_t g = 0; g < fs->group_desc_count; g++) {
			struct ext4_group_desc *gd = (struct ext4_group_desc *)ext2fs_group_desc(fs, fs->group_desc, g);
			blk64_t x = gd->bg_exclude_bitmap_lo;

			if (ext2fs_has_feature_64bit(fs->super) && EXT2_DESC_SIZE(fs->super) >= EXT2_MIN_DESC_SIZE_64BIT)
				x |= (blk64_t)gd->bg_exclude_bitmap_hi << 32;
			if (x >= first && x <= end)
				ext2fs_mark_block_bitmap2(bm, x);
		}
	/* Block 0 holds the boot sector and, at 1 KiB, the superblock when blocks are 4 KiB; it is
	 * always in use on a 4 KiB filesystem, and copied. With 1 KiB blocks, block 0 is outside
	 * the bitmap (first data block 1) and holds only the boot sector: copy it too. */
	if (first) {
		er->run = xcalloc(1, sizeof(*er->run));
		er->run[0][0] = 0;
		er->run[0][1] = first;
		er->nruns = 1;
		cap = 1;
	}
	for (b = first; b <= end; b++) {
		blk64_t z;

		if (ext2fs_find_first_set_block_bitmap2(bm, b, end, &b))
			break;
		if (ext2fs_find_first_zero_block_bitmap2(bm, b, end, &z))
			z = end + 1;
		if (er->nruns && er->run[er->nruns - 1][0] + er->run[er->nruns - 1][1] == b)
			er->run[er->nruns - 1][1] += z - b;
		else {
			if (er->nruns == cap) {
				cap = cap ? cap * 2 : 1024;
				er->run = realloc(er->run, cap * sizeof(*er->run));
				if (!er->run)
					abort();
			}
			er->run[er->nruns][0] = b;
			er->run[er->nruns][1] = z - b;
			er->nruns++;
		}
		b = z;
	}
	ext2fs_free_block_bitmap(bm);
	return 0;
}

int fscopy_ext_runs(const char *src_path, uint64_t src_off, struct ext_runs *er, char **why)
{
	return ext_runs(src_path, src_off, false, er, why);
}

int fscopy_ext_meta_runs(const char *src_path, uint64_t src_off, struct ext_runs *er, char **why)
{
	return ext_runs(src_path, src_off, true, er, why);
}

static int ext_copy(const char *src_path, int src_fd, uint64_t src_off, int dst_fd, uint64_t dst_off, uint64_t dst_len,
		    uint64_t below, bool meta, const struct copy_opts *o, struct copy_stats *st, char **why)
{
	struct copy_stats dummy = { 0 };
	struct ext_runs er;
	struct copier c;
	uint64_t fs_bytes, total = 0;
	int r;

	if (!st)
		st = &dummy;
	*st = (struct copy_stats){ 0 };
	r = ext_runs(src_path, src_off, meta, &er, why);
	if (r < 0)
		return r;
	/* `below`: only the blocks under the new end of a filesystem that shrinks on its way
	 * (the rest moves down with resize2fs afterwards) */
	if (below && below < er.block_count) {
		size_t k = 0;

		for (size_t i = 0; i < er.nruns; i++) {
			if (er.run[i][0] >= below)
				break;
			if (er.run[i][0] + er.run[i][1] > below)
				er.run[i][1] = below - er.run[i][0];
			k = i + 1;
		}
		er.nruns = k;
		er.block_count = below;
	}
	if (u64_mul(er.block_count, er.block_size, &fs_bytes) < 0 || fs_bytes > dst_len) {
		set_why(why, -ENOSPC, "the filesystem in '%s' is %" PRIu64 " blocks of %u bytes, more than the %" PRIu64
			" bytes of its target partition; shrink it first (resize2fs)",
			src_path, er.block_count, er.block_size, dst_len);
		ext_runs_free(&er);
		return -ENOSPC;
	}
	for (size_t i = 0; i < er.nruns; i++)
		total += er.run[i][1] * er.block_size;
	st->total_bytes = total;
	st->unwritten_bytes = er.unwritten_blocks * er.block_size;
	st->skipped_bytes = fs_bytes - total;
	st->runs = er.nruns;
	r = copier_init(&c, src_fd, dst_fd, o, st);
	c.total = total;
	for (size_t i = 0; r == 0 && i < er.nruns; i++) {
		uint64_t off = er.run[i][0] * er.block_size, len = er.run[i][1] * er.block_size;

		r = copy_range(&c, src_off + off, dst_off + off, len);
	}
	ext_runs_free(&er);
	if (r < 0 && r != -EINTR)
		set_why(why, r, "copying the used blocks of '%s' failed: %s", src_path, strerror(-r));
	return copier_finish(&c, r);
}

int fscopy_ext(const char *src_path, int src_fd, uint64_t src_off, int dst_fd, uint64_t dst_off, uint64_t dst_len,
	       const struct copy_opts *o, struct copy_stats *st, char **why)
{
	return ext_copy(src_path, src_fd, src_off, dst_fd, dst_off, dst_len, 0, false, o, st, why);
}

int fscopy_ext_below(const char *src_path, int src_fd, uint64_t src_off, int dst_fd, uint64_t dst_off, uint64_t dst_len,
		     uint64_t below, const struct copy_opts *o, struct copy_stats *st, char **why)
{
	return ext_copy(src_path, src_fd, src_off, dst_fd, dst_off, dst_len, below, false, o, st, why);
}

void ext_past_free(struct ext_past *p)
{
	free(p->run);
	p->run = NULL;
	p->nruns = 0;
}

int fscopy_ext_past(const char *src_path, uint64_t src_off, uint64_t cut, struct ext_past *p, char **why)
{
	_cleanup_extfs_ ext2_filsys fs = NULL;
	struct ext_runs er;
	blk64_t end, b;
	int r;

	*p = (struct ext_past){ 0 };
	r = open_with_bitmap(src_path, src_off, &fs, why);
	if (r < 0)
		return r;
	p->block_size = fs->blocksize;
	/* inode-table blocks past each group's last used inode: never written by the kernel
	 * (lazy init) or zeroed, so a rehearsal's copy of them is holes */
	if (ext2fs_has_group_desc_csum(fs))
		for (dgrp_t g = 0; g < fs->group_desc_count; g++)
			p->itable_unused_bytes += (uint64_t)ext2fs_bg_itable_unused(fs, g) * EXT2_INODE_SIZE(fs->super) /
						  fs->blocksize * fs->blocksize;
	end = ext2fs_blocks_count(fs->super) - 1;
	for (b = cut; b <= end; b++) {
		blk64_t z;

		if (ext2fs_find_first_set_block_bitmap2(fs->block_map, b, end, &b))
			break;
		if (ext2fs_find_first_zero_block_bitmap2(fs->block_map, b, end, &z))
			z = end + 1;
		p->used_bytes += (z - b) * fs->blocksize;
		b = z;
	}
	ext2fs_close_free(&fs);
	r = ext_runs(src_path, src_off, false, &er, why);
	if (r < 0)
		return r;
	for (size_t i = 0; i < er.nruns; i++) {
		uint64_t s = er.run[i][0], n = er.run[i][1];

		p->all_data_bytes += n * er.block_size;
		if (s + n <= cut)
			continue;
		if (s < cut) {
			n -= cut - s;
			s = cut;
		}
		p->data_bytes += n * er.block_size;
		if (!p->run)
			p->run = xcalloc(er.nruns, sizeof(*p->run));
		p->run[p->nruns][0] = s * er.block_size;
		p->run[p->nruns][1] = n * er.block_size;
		p->nruns++;
	}
	ext_runs_free(&er);
	r = ext_runs(src_path, src_off, true, &er, why);
	if (r < 0)
		return r;
	for (size_t i = 0; i < er.nruns; i++)
		p->meta_bytes += er.run[i][1] * er.block_size;
	ext_runs_free(&er);
	return 0;
}

int fscopy_ext_meta(const char *src_path, int src_fd, uint64_t src_off, int dst_fd, uint64_t dst_off, uint64_t dst_len,
		    const struct copy_opts *o, struct copy_stats *st, char **why)
{
	return ext_copy(src_path, src_fd, src_off, dst_fd, dst_off, dst_len, 0, true, o, st, why);
}

/* What the metadata-only copy understands, by feature word (compat, incompat, ro_compat): the
 * features whose metadata it knows to carry (a block in use that is no regular file's data,
 * and the inodes of meta_inode) or that change nothing about which blocks are metadata. Left
 * out on purpose: lazy_bg (groups without bitmaps), exclude_bitmap and has_snapshot (next3
 * snapshots: files that hold old copies of metadata), replica, compression, dirdata and
 * shared_blocks (a data block another inode may own too), journal_dev (an external journal is
 * no filesystem to copy). Any bit outside these, named by libe2p, stops a rehearsal with its
 * name rather than letting e2fsck blame the source for a copy that left something out. */
#define COPY_COMPAT                                                                                                \
	(EXT2_FEATURE_COMPAT_DIR_PREALLOC | EXT2_FEATURE_COMPAT_IMAGIC_INODES | EXT3_FEATURE_COMPAT_HAS_JOURNAL |  \
	 EXT2_FEATURE_COMPAT_EXT_ATTR | EXT2_FEATURE_COMPAT_RESIZE_INODE | EXT2_FEATURE_COMPAT_DIR_INDEX |         \
	 EXT4_FEATURE_COMPAT_SPARSE_SUPER2 | EXT4_FEATURE_COMPAT_FAST_COMMIT | EXT4_FEATURE_COMPAT_STABLE_INODES | \
	 EXT4_FEATURE_COMPAT_ORPHAN_FILE)
#define COPY_INCOMPAT                                                                                             \
	(EXT2_FEATURE_INCOMPAT_FILETYPE | EXT3_FEATURE_INCOMPAT_RECOVER | EXT2_FEATURE_INCOMPAT_META_BG |        \
	 EXT3_FEATURE_INCOMPAT_EXTENTS | EXT4_FEATURE_INCOMPAT_64BIT | EXT4_FEATURE_INCOMPAT_MMP |                \
	 EXT4_FEATURE_INCOMPAT_FLEX_BG | EXT4_FEATURE_INCOMPAT_EA_INODE | EXT4_FEATURE_INCOMPAT_CSUM_SEED |      \
	 EXT4_FEATURE_INCOMPAT_LARGEDIR | EXT4_FEATURE_INCOMPAT_INLINE_DATA | EXT4_FEATURE_INCOMPAT_ENCRYPT |    \
	 EXT4_FEATURE_INCOMPAT_CASEFOLD)
#define COPY_RO_COMPAT                                                                                            \
	(EXT2_FEATURE_RO_COMPAT_SPARSE_SUPER | EXT2_FEATURE_RO_COMPAT_LARGE_FILE | EXT4_FEATURE_RO_COMPAT_HUGE_FILE | \
	 EXT4_FEATURE_RO_COMPAT_GDT_CSUM | EXT4_FEATURE_RO_COMPAT_DIR_NLINK | EXT4_FEATURE_RO_COMPAT_EXTRA_ISIZE |   \
	 EXT4_FEATURE_RO_COMPAT_QUOTA | EXT4_FEATURE_RO_COMPAT_BIGALLOC | EXT4_FEATURE_RO_COMPAT_METADATA_CSUM |     \
	 EXT4_FEATURE_RO_COMPAT_READONLY | EXT4_FEATURE_RO_COMPAT_PROJECT | EXT4_FEATURE_RO_COMPAT_VERITY |          \
	 EXT4_FEATURE_RO_COMPAT_ORPHAN_PRESENT)

char *fscopy_meta_unknown_features(uint32_t compat, uint32_t incompat, uint32_t ro_compat)
{
	/* e2p's numbering of the words: E2P_FEATURE_COMPAT 0, INCOMPAT 1, RO_INCOMPAT 2 */
	const uint32_t extra[3] = { compat & ~(uint32_t)COPY_COMPAT, incompat & ~(uint32_t)COPY_INCOMPAT,
				    ro_compat & ~(uint32_t)COPY_RO_COMPAT };
	char *list = NULL;

	for (int w = 0; w < 3; w++)
		for (int bit = 0; bit < 32; bit++) {
			char *n;

			if (!(extra[w] & (1U << bit)))
				continue;
			/* e2p names a bit it does not know FEATURE_C13, FEATURE_I31, FEATURE_R17 */
			n = xasprintf("%s%s%s", list ? list : "", list ? ", " : "", e2p_feature2string(w, 1U << bit));
			free(list);
			list = n;
		}
	return list;
}

int fscopy_ext_meta_check(const char *src_path, uint64_t src_off, char **unknown, char **why)
{
	_cleanup_free_ char *opts = xasprintf("offset=%" PRIu64, src_off);
	_cleanup_extfs_ ext2_filsys fs = NULL;
	/* read-only: an unknown ro_compat bit opens, an unknown incompat one is named by the library */
	errcode_t e = ext2fs_open2(src_path, opts, EXT2_FLAG_64BITS, 0, 0, unix_io_manager, &fs);

	*unknown = NULL;
	if (e)
		return ext_err(why, e, "cannot open the ext filesystem in", src_path);
	*unknown = fscopy_meta_unknown_features(fs->super->s_feature_compat, fs->super->s_feature_incompat,
						fs->super->s_feature_ro_compat);
	return *unknown ? 1 : 0;
}
