/* SPDX-License-Identifier: MIT */
/* ext2/3/4 through libext2fs: geometry, cleanliness, our minimum-size estimate, allocated bytes of a tree. */
#include "util.h"
#include "extfs.h"

#include <inttypes.h>

#include <et/com_err.h>
#include <ext2fs/ext2fs.h>
#include <e2p/e2p.h>

void extfs_closep(ext2_filsys *fs)
{
	if (*fs)
		ext2fs_close_free(fs);
}

/* libext2fs speaks errcode_t; callers want a negative errno and a sentence. */
static int ext_err(errcode_t e)
{
	if (e > 0 && e < 4096)
		return -(int)e;
	return -EIO;
}

static int ext_open(const char *path, uint64_t offset, ext2_filsys *fs, char **why)
{
	char opts[64];
	errcode_t e;

	/* Without its table, error_message() says "Unknown code ext2 60", not "Corrupt superblock";
	 * com_err ignores a table added twice. */
	initialize_ext2_error_table();
	snprintf(opts, sizeof(opts), "offset=%llu", (unsigned long long)offset);
	/* Read-only: no EXT2_FLAG_RW, so nothing is ever written back. */
	e = ext2fs_open2(path, opts, EXT2_FLAG_64BITS | EXT2_FLAG_IGNORE_CSUM_ERRORS, 0, 0, unix_io_manager, fs);
	if (e)
		return set_why(why, ext_err(e), "cannot open the ext filesystem at offset %llu of '%s': %s",
			       (unsigned long long)offset, path, error_message(e));
	return 0;
}

/* Blocks a group's own metadata takes when the filesystem has `ngroups` groups: superblock
 * backup + descriptors + reserved GDT (only in groups that carry a backup), two bitmaps and the
 * inode table (counted per group even when flex_bg packs them elsewhere). */
static uint64_t group_overhead(ext2_filsys fs, dgrp_t g, uint64_t ngroups)
{
	uint64_t desc_blocks = (ngroups + EXT2_DESC_PER_BLOCK(fs->super) - 1) / EXT2_DESC_PER_BLOCK(fs->super);
	uint64_t o = 2 + fs->inode_blocks_per_group;

	if (ext2fs_bg_has_super(fs, g))
		o += 1 + desc_blocks + fs->super->s_reserved_gdt_blocks;
	return o;
}

/* The next flex-group boundary strictly above `groups` (a whole flex group more when it sits on
 * one), never past the filesystem's own group count. */
static uint64_t flex_end(uint64_t groups, uint64_t flex, uint64_t ngroups)
{
	uint64_t end = flex > 1 ? groups + flex - (groups & (flex - 1)) : groups;

	return end < ngroups ? end : ngroups;
}

/*
 * The smallest block count this filesystem can shrink to, computed from the superblock and the
 * group layout without running resize2fs. It follows the accounting resize2fs -P uses, because
 * a plan is only safe when resize2fs will agree to it:
 *  - the groups needed for the inodes in use come first;
 *  - data blocks are what is allocated minus every group's own metadata;
 *  - with flex_bg, the metadata of every group up to the end of the kept flex group is reserved
 *    (a flex group's worth of inode tables as slack, so the resize can always finish), and the
 *    groups that round up to that boundary do not count as room for data;
 *  - the last group needs its metadata plus its share of data, at least 50 blocks (below that,
 *    mke2fs and resize2fs drop a group), and must cover the end of its inode table;
 *  - extents may need new tree blocks while blocks move: (blocks given up)/500, capped at one
 *    extent block per (block size / 12 - 1) data blocks or one per inode in use.
 */
static uint64_t min_blocks_estimate(ext2_filsys fs)
{
	const uint64_t bpg = fs->super->s_blocks_per_group, total = ext2fs_blocks_count(fs->super);
	const uint64_t ngroups = fs->group_desc_count;
	const uint64_t inodes_used = fs->super->s_inodes_count - fs->super->s_free_inodes_count;
	const bool has_flex = ext2fs_has_feature_flex_bg(fs->super);
	const uint64_t flex = has_flex ? 1ULL << fs->super->s_log_groups_per_flex : 1;
	uint64_t data = total - ext2fs_free_blocks_count(fs->super);
	uint64_t groups, fend, room, counted = 0, tail = 0, need, itable_end, margin, worst;
	unsigned exts_per_block = fs->blocksize / sizeof(struct ext3_extent) - 1;

	for (dgrp_t g = 0; g < ngroups; g++) {
		uint64_t o = group_overhead(fs, g, ngroups);
		data = data > o ? data - o : 0;
	}
	groups = (inodes_used + fs->super->s_inodes_per_group - 1) / fs->super->s_inodes_per_group;
	if (groups == 0)
		groups = 1;
	fend = has_flex ? flex_end(groups, flex, ngroups) : groups;

	/* Room for data in the first `groups` groups, less the metadata reserved up to fend. */
	room = groups * bpg;
	for (uint64_t g = 0; g < fend; g++) {
		uint64_t o = group_overhead(fs, (dgrp_t)g, ngroups);

		if (g + 1 < groups)
			counted += bpg - o;
		room = room > o ? room - o : 0;
	}
	while (data > room && groups <= ngroups) {
		uint64_t extra = (data - room + bpg - 1) / bpg, g = fend;

		room += extra * bpg;
		counted += bpg - group_overhead(fs, (dgrp_t)(groups - 1), ngroups);
		groups += extra;
		if (!has_flex)
			fend = groups;
		else if (groups > fend)
			fend = flex_end(groups, flex, ngroups);
		for (; g < fend; g++) {
			uint64_t o = group_overhead(fs, (dgrp_t)g, ngroups);

			if (g + 1 < groups)
				counted += bpg - o;
			room -= o;
		}
	}

	/* More groups than the filesystem has: it cannot shrink (and group `groups - 1` has no
	 * descriptor to read). */
	if (groups > ngroups)
		return total;
	/* The last group: metadata from it (or from 0 inside the first flex group) to fend, plus data. */
	for (uint64_t g = has_flex && groups - 1 < flex ? 0 : groups - 1; g < fend; g++)
		tail += group_overhead(fs, (dgrp_t)g, ngroups);
	tail += counted < data && data - counted > 50 ? data - counted : 50;
	tail += fs->super->s_first_data_block;
	need = (groups - 1) * bpg + tail;
	itable_end = ext2fs_inode_table_loc(fs, (dgrp_t)(groups - 1)) + fs->inode_blocks_per_group;
	if (need < itable_end)
		need = itable_end;
	if (need >= total)
		return total;
	if (ext2fs_has_feature_extents(fs->super)) {
		worst = (data + exts_per_block - 1) / exts_per_block;
		if (worst < inodes_used)
			worst = inodes_used;
		margin = (total - need) / 500;
		need += margin < worst ? margin : worst;
	}
	return need;
}

/*
 * libext2fs opens superblocks whose counts contradict each other (more free blocks than blocks,
 * more free inodes than inodes, a flex_bg shift past 31): ext2fs_open2 checks what it needs to
 * read the group descriptors, not what our arithmetic divides by or shifts with. Every field the
 * estimate and the plan use is checked here, so a hostile or damaged superblock is a sentence,
 * never a division by zero or a read past the descriptor table. NULL when the fields are sane.
 */
static const char *superblock_insane(ext2_filsys fs)
{
	struct ext2_super_block *sb = fs->super;
	uint64_t blocks = ext2fs_blocks_count(sb), groups;

	if (fs->blocksize < 1024 || fs->blocksize > 65536 || (fs->blocksize & (fs->blocksize - 1)))
		return "its block size is not a power of two between 1024 and 65536";
	if (blocks == 0 || sb->s_first_data_block >= blocks)
		return "its block count is 0 or not past its first data block";
	if (ext2fs_free_blocks_count(sb) > blocks)
		return "it counts more free blocks than blocks";
	if (sb->s_inodes_count == 0 || sb->s_free_inodes_count > sb->s_inodes_count)
		return "it counts no inodes or more free inodes than inodes";
	if (sb->s_blocks_per_group == 0 || sb->s_inodes_per_group == 0 || fs->group_desc_count == 0)
		return "it has no blocks or no inodes per group";
	groups = (blocks - sb->s_first_data_block + sb->s_blocks_per_group - 1) / sb->s_blocks_per_group;
	if (groups != fs->group_desc_count || (uint64_t)sb->s_inodes_per_group * groups < sb->s_inodes_count)
		return "its group count does not follow from its block and inode counts";
	if (EXT2_DESC_PER_BLOCK(sb) == 0 || fs->inode_blocks_per_group >= sb->s_blocks_per_group)
		return "its group descriptors or inode tables do not fit a group";
	if (ext2fs_has_feature_flex_bg(sb) && sb->s_log_groups_per_flex > 31)
		return "its flex_bg group count is out of range";
	return NULL;
}

int extfs_info(const char *path, uint64_t offset, struct extfs_info *info, char **why)
{
	_cleanup_extfs_ ext2_filsys fs = NULL;
	struct ext2_super_block *sb;
	const char *insane;
	size_t flen = 0;
	int r = ext_open(path, offset, &fs, why);

	*info = (struct extfs_info){ 0 };
	if (r < 0)
		return r;
	insane = superblock_insane(fs);
	if (insane)
		return set_why(why, -EUCLEAN, "the ext superblock at offset %llu of '%s' is corrupt: %s",
			       (unsigned long long)offset, path, insane);
	sb = fs->super;
	info->block_size = fs->blocksize;
	info->block_count = ext2fs_blocks_count(sb);
	info->free_blocks = ext2fs_free_blocks_count(sb);
	info->inode_count = sb->s_inodes_count;
	info->free_inodes = sb->s_free_inodes_count;
	info->blocks_per_group = sb->s_blocks_per_group;
	info->inodes_per_group = sb->s_inodes_per_group;
	info->clean = (sb->s_state & EXT2_VALID_FS) && !(sb->s_state & EXT2_ERROR_FS);
	snprintf(info->uuid, sizeof(info->uuid),
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", sb->s_uuid[0], sb->s_uuid[1],
		 sb->s_uuid[2], sb->s_uuid[3], sb->s_uuid[4], sb->s_uuid[5], sb->s_uuid[6], sb->s_uuid[7],
		 sb->s_uuid[8], sb->s_uuid[9], sb->s_uuid[10], sb->s_uuid[11], sb->s_uuid[12], sb->s_uuid[13],
		 sb->s_uuid[14], sb->s_uuid[15]);
	/* Feature names as e2p (and tune2fs -l) spell them. */
	for (int compat = 0; compat < 3; compat++) {
		__u32 mask = compat == 0 ? sb->s_feature_compat : compat == 1 ? sb->s_feature_incompat
									      : sb->s_feature_ro_compat;
		for (int bit = 0; bit < 32; bit++) {
			const char *name;

			if (!(mask & (1U << bit)))
				continue;
			name = e2p_feature2string(compat, 1U << bit);
			if (flen + strlen(name) + 2 < sizeof(info->features))
				flen += (size_t)snprintf(info->features + flen, sizeof(info->features) - flen, "%s%s",
							 flen ? " " : "", name);
		}
	}
	info->min_blocks = min_blocks_estimate(fs);
	return 0;
}

struct du_walk {
	ext2_filsys fs;
	ext2fs_inode_bitmap seen; /* hard links count once */
	uint64_t blocks512;
	int err;
	unsigned depth;
};

static int du_inode(struct du_walk *w, ext2_ino_t ino);

static int du_entry(struct ext2_dir_entry *dirent, int offset, int blocksize, char *buf, void *priv)
{
	struct du_walk *w = priv;
	int namelen = ext2fs_dirent_name_len(dirent);

	(void)offset, (void)blocksize, (void)buf;
	if ((namelen == 1 && dirent->name[0] == '.') || (namelen == 2 && dirent->name[0] == '.' && dirent->name[1] == '.'))
		return 0;
	if (du_inode(w, dirent->inode) < 0)
		return DIRENT_ABORT;
	return 0;
}

static int du_inode(struct du_walk *w, ext2_ino_t ino)
{
	struct ext2_inode_large inode;
	errcode_t e;

	if (ext2fs_test_inode_bitmap2(w->seen, ino))
		return 0;
	ext2fs_mark_inode_bitmap2(w->seen, ino);
	e = ext2fs_read_inode_full(w->fs, ino, (struct ext2_inode *)&inode, sizeof(inode));
	if (e) {
		w->err = ext_err(e);
		return w->err;
	}
	/* i_blocks counts every allocated block, written or not: that is what the store occupies. */
	w->blocks512 += ext2fs_get_stat_i_blocks(w->fs, (struct ext2_inode *)&inode);
	if (LINUX_S_ISDIR(inode.i_mode)) {
		if (++w->depth > 256) {
			w->err = -ELOOP;
			return w->err;
		}
		e = ext2fs_dir_iterate(w->fs, ino, 0, NULL, du_entry, w);
		w->depth--;
		if (e && !w->err)
			w->err = ext_err(e);
	}
	return w->err;
}

int extfs_du(const char *path, uint64_t offset, const char *dir, uint64_t *bytes)
{
	_cleanup_extfs_ ext2_filsys fs = NULL;
	struct du_walk w = { 0 };
	ext2_ino_t ino;
	errcode_t e;
	int r = ext_open(path, offset, &fs, NULL);

	if (r < 0)
		return r;
	if (superblock_insane(fs))
		return -EUCLEAN;
	e = ext2fs_namei(fs, EXT2_ROOT_INO, EXT2_ROOT_INO, dir, &ino);
	if (e)
		return e == EXT2_ET_FILE_NOT_FOUND ? -ENOENT : ext_err(e);
	e = ext2fs_allocate_inode_bitmap(fs, "du", &w.seen);
	if (e)
		return ext_err(e);
	w.fs = fs;
	du_inode(&w, ino);
	ext2fs_free_inode_bitmap(w.seen);
	if (w.err < 0)
		return w.err;
	*bytes = w.blocks512 * 512;
	return 0;
}

/* The inode at `file`, walked a component at a time from the root: every component but the last a
 * directory, the last a regular file; a symlink anywhere is refused, not followed. */
static int walk_to_file(ext2_filsys fs, const char *file, ext2_ino_t *ino, struct ext2_inode *inode, char **why)
{
	_cleanup_free_ char *copy = xstrdup(file);
	char *save = NULL, *next;
	ext2_ino_t at = EXT2_ROOT_INO;
	errcode_t e;

	for (char *c = strtok_r(copy, "/", &save); c; c = next) {
		next = strtok_r(NULL, "/", &save);
		e = ext2fs_lookup(fs, at, c, (int)strlen(c), NULL, &at);
		if (e == EXT2_ET_FILE_NOT_FOUND)
			return set_why(why, -ENOENT, "'%s' is not there", file);
		if (e)
			return set_why(why, ext_err(e), "cannot look up '%s': %s", file, error_message(e));
		e = ext2fs_read_inode(fs, at, inode);
		if (e)
			return set_why(why, ext_err(e), "cannot read the inode of '%s': %s", c, error_message(e));
		if (next && !LINUX_S_ISDIR(inode->i_mode))
			return set_why(why, -ENOTDIR, "'%s' on the way to '%s' is not a directory", c, file);
		if (!next && !LINUX_S_ISREG(inode->i_mode))
			return set_why(why, -ENODEV, "'%s' is not a regular file", file);
	}
	if (at == EXT2_ROOT_INO)
		return set_why(why, -EINVAL, "'%s' names no file", file);
	*ino = at;
	return 0;
}

int extfs_read_file(const char *path, uint64_t offset, const char *file, size_t max, char **out, size_t *len,
		    char **why)
{
	_cleanup_extfs_ ext2_filsys fs = NULL;
	_cleanup_free_ char *buf = NULL;
	struct ext2_inode inode;
	ext2_file_t f = NULL;
	ext2_ino_t ino = 0;
	uint64_t size;
	unsigned got = 0;
	size_t done = 0;
	errcode_t e = 0;
	int r = ext_open(path, offset, &fs, why);

	if (r < 0)
		return r;
	if (superblock_insane(fs))
		return set_why(why, -EUCLEAN, "the filesystem is not sound: %s", superblock_insane(fs));
	if ((r = walk_to_file(fs, file, &ino, &inode, why)) < 0)
		return r;
	size = EXT2_I_SIZE(&inode);
	if (size > max)
		return set_why(why, -EFBIG, "'%s' is %" PRIu64 " bytes, more than the %zu allowed", file, size, max);
	buf = xcalloc(1, (size_t)size + 1);
	e = ext2fs_file_open(fs, ino, 0, &f);
	while (!e && done < size) {
		e = ext2fs_file_read(f, buf + done, (unsigned)(size - done), &got);
		if (!e && !got)
			e = EXT2_ET_SHORT_READ;
		done += got;
	}
	if (f)
		ext2fs_file_close(f);
	if (e)
		return set_why(why, ext_err(e), "cannot read '%s': %s", file, error_message(e));
	*out = TAKE_PTR(buf);
	*len = done;
	return 0;
}
