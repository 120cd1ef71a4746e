/* SPDX-License-Identifier: MIT */
/* Extent-at-a-time relocation of the file data past a filesystem's new end, before resize2fs. */
#include "relocate.h"

#include <ext2fs/ext2fs.h>
#include <et/com_err.h>
#include <inttypes.h>

#include "util.h"

#define COPY_BLOCKS 2048u

struct reloc {
	ext2_filsys fs;
	ext2fs_block_bitmap avail; /* the block map with everything past the cut marked in use */
	blk64_t cut;
	char *buf;
	struct reloc_stats *st;
	const struct reloc_opts *o;
};

/* libext2fs allocates extent-tree blocks (a node split) through this: below the cut too. */
static struct reloc *g_reloc;
static errcode_t alloc_below(ext2_filsys fs, blk64_t goal, blk64_t *ret)
{
	struct reloc *R = g_reloc;
	errcode_t e;

	if (goal >= R->cut)
		goal = fs->super->s_first_data_block;
	e = ext2fs_new_block2(fs, goal, R->avail, ret);
	if (!e)
		ext2fs_mark_block_bitmap2(R->avail, *ret);
	return e;
}

/* A free run below the cut of up to `want` blocks (at least one); *got its length. */
static errcode_t new_run(struct reloc *R, blk64_t want, blk64_t *pblk, blk64_t *got)
{
	for (;;) {
		blk64_t len = 0;
		errcode_t e = ext2fs_new_range(R->fs, EXT2_NEWRANGE_MIN_LENGTH, R->fs->super->s_first_data_block, want,
					       R->avail, pblk, &len);

		if (!e) {
			*got = len < want && len ? len : want;
			return 0;
		}
		if (want == 1)
			return e;
		want /= 2; /* no run that long: take it in shorter pieces */
	}
}

static errcode_t copy_blocks(struct reloc *R, blk64_t from, blk64_t to, blk64_t n)
{
	while (n) {
		unsigned k = n < COPY_BLOCKS ? (unsigned)n : COPY_BLOCKS;
		errcode_t e = io_channel_read_blk64(R->fs->io, from, (int)k, R->buf);

		if (!e)
			e = io_channel_write_blk64(R->fs->io, to, (int)k, R->buf);
		if (e)
			return e;
		from += k;
		to += k;
		n -= k;
	}
	return 0;
}

/* Move the leaf extent the handle is on, all of it past the cut, below it. */
static errcode_t move_extent(struct reloc *R, ext2_extent_handle_t h, struct ext2fs_extent ex)
{
	bool uninit = ex.e_flags & EXT2_EXTENT_FLAGS_UNINIT;
	blk64_t lblk = ex.e_lblk, old = ex.e_pblk, left = ex.e_len;
	bool first = true;

	while (left) {
		blk64_t nb, n;
		struct ext2fs_extent piece;
		errcode_t e = new_run(R, left, &nb, &n);

		if (e)
			return e;
		if (!uninit) {
			e = copy_blocks(R, old, nb, n);
			if (e)
				return e;
			R->st->copied_blocks += n;
		}
		ext2fs_mark_block_bitmap_range2(R->avail, nb, (unsigned)n);
		ext2fs_block_alloc_stats_range(R->fs, nb, (unsigned)n, +1);
		piece = (struct ext2fs_extent){ .e_lblk = lblk, .e_pblk = nb, .e_len = (__u32)n,
						.e_flags = uninit ? EXT2_EXTENT_FLAGS_UNINIT : 0 };
		/* the first piece takes the extent's place (shortened when the run was shorter),
		 * the others follow it */
		e = first ? ext2fs_extent_replace(h, 0, &piece) : ext2fs_extent_insert(h, EXT2_EXTENT_INSERT_AFTER, &piece);
		if (e)
			return e;
		/* the old blocks are free only once nothing points at them */
		ext2fs_block_alloc_stats_range(R->fs, old, (unsigned)n, -1);
		first = false;
		R->st->extents++;
		R->st->blocks += n;
		if (R->o && R->o->progress)
			R->o->progress(R->o->ud, R->st->blocks * R->fs->blocksize, R->o->total);
		lblk += n;
		old += n;
		left -= n;
	}
	return 0;
}

static errcode_t relocate_inode(struct reloc *R, ext2_ino_t ino, struct ext2_inode *inode, bool *moved)
{
	ext2_extent_handle_t h = NULL;
	struct ext2fs_extent ex;
	int op = EXT2_EXTENT_ROOT;
	errcode_t e;

	*moved = false;
	e = ext2fs_extent_open2(R->fs, ino, inode, &h);
	if (e)
		return 0; /* not a tree we can read: resize2fs will judge it */
	while ((e = ext2fs_extent_get(h, op, &ex)) == 0) {
		op = EXT2_EXTENT_NEXT;
		if (!(ex.e_flags & EXT2_EXTENT_FLAGS_LEAF) || !ex.e_len || ex.e_pblk + ex.e_len <= R->cut)
			continue;
		if (ex.e_pblk < R->cut) {
			/* across the cut: the part below stays, the part above becomes its own extent */
			struct ext2fs_extent low = ex, high = ex;
			blk64_t keep = R->cut - ex.e_pblk;

			low.e_len = (__u32)keep;
			high.e_lblk += keep;
			high.e_pblk = R->cut;
			high.e_len -= (__u32)keep;
			e = ext2fs_extent_replace(h, 0, &low);
			if (!e)
				e = ext2fs_extent_insert(h, EXT2_EXTENT_INSERT_AFTER, &high);
			if (e)
				break;
			ex = high;
		}
		e = move_extent(R, h, ex);
		if (e)
			break;
		*moved = true;
	}
	ext2fs_extent_free(h);
	return e == EXT2_ET_EXTENT_NO_NEXT ? 0 : e;
}

static int fail(char **why, errcode_t e, const char *what)
{
	return set_why(why, e == EXT2_ET_NO_MEMORY ? -ENOMEM : e == EXT2_ET_BLOCK_ALLOC_FAIL ? -ENOSPC : -EIO, "%s: %s",
		       what, error_message(e));
}

int relocate_past_cut(const char *path, uint64_t cut, const struct reloc_opts *o, struct reloc_stats *st, char **why)
{
	struct reloc R = { .cut = cut, .st = st, .o = o };
	ext2_inode_scan scan = NULL;
	struct ext2_inode inode;
	ext2_ino_t ino;
	blk64_t end;
	errcode_t e;
	int r = 0;

	*st = (struct reloc_stats){ 0 };
	e = ext2fs_open2(path, NULL, EXT2_FLAG_RW | EXT2_FLAG_64BITS, 0, 0, unix_io_manager, &R.fs);
	if (e)
		return fail(why, e, "cannot open the filesystem to relocate");
	end = ext2fs_blocks_count(R.fs->super);
	/* bigalloc allocates clusters: left to resize2fs, like everything this does not know */
	if (cut >= end || ext2fs_has_feature_bigalloc(R.fs->super)) {
		ext2fs_close_free(&R.fs);
		return 0;
	}
	e = ext2fs_read_bitmaps(R.fs);
	if (!e)
		e = ext2fs_copy_bitmap(R.fs->block_map, &R.avail);
	if (e) {
		r = fail(why, e, "cannot read the block bitmap");
		goto out;
	}
	ext2fs_mark_block_bitmap_range2(R.avail, cut, (unsigned)(end - cut));
	R.buf = xcalloc(COPY_BLOCKS, R.fs->blocksize);
	g_reloc = &R;
	ext2fs_set_alloc_block_callback(R.fs, alloc_below, NULL);
	e = ext2fs_open_inode_scan(R.fs, 0, &scan);
	if (e) {
		r = fail(why, e, "cannot scan the inodes");
		goto out;
	}
	ext2fs_inode_scan_flags(scan, EXT2_SF_SKIP_MISSING_ITABLE, 0);
	for (;;) {
		bool moved;

		e = ext2fs_get_next_inode(scan, &ino, &inode);
		if (e == EXT2_ET_BAD_BLOCK_IN_INODE_TABLE)
			continue;
		if (e) {
			r = fail(why, e, "cannot scan the inodes");
			break;
		}
		if (!ino)
			break;
		if (o && o->stop && *o->stop) {
			r = set_why(why, -EINTR, "interrupted");
			break;
		}
		/* regular files and directories with extent trees; reserved inodes (the journal, whose
		 * copy the superblock keeps) and the rest are resize2fs's */
		if (!inode.i_links_count || inode.i_dtime || ino < EXT2_FIRST_INO(R.fs->super) ||
		    !(inode.i_flags & EXT4_EXTENTS_FL) || (inode.i_flags & EXT4_INLINE_DATA_FL) ||
		    !(LINUX_S_ISREG(inode.i_mode) || LINUX_S_ISDIR(inode.i_mode)))
			continue;
		e = relocate_inode(&R, ino, &inode, &moved);
		if (e) {
			_cleanup_free_ char *w = xasprintf("cannot relocate the blocks of inode %u", ino);

			r = fail(why, e, w);
			break;
		}
		st->inodes += moved;
	}
	ext2fs_close_inode_scan(scan);
out:
	g_reloc = NULL;
	free(R.buf);
	if (R.avail)
		ext2fs_free_block_bitmap(R.avail);
	if (r == 0) {
		e = ext2fs_close_free(&R.fs);
		if (e)
			r = fail(why, e, "cannot write the relocated filesystem's metadata");
	} else {
		/* nothing flushed: the target is rewritten by a rerun anyway */
		R.fs->flags &= ~EXT2_FLAG_DIRTY;
		ext2fs_close_free(&R.fs);
	}
	return r;
}
