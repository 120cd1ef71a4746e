/* SPDX-License-Identifier: MIT */
/* ext2/3/4 through libext2fs: geometry, cleanliness, minimum size, allocated bytes under a path. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Cleanup for libext2fs's handle (ext2_filsys is a struct struct_ext2_filsys *): closed and freed,
 * NULL left alone. `_cleanup_extfs_ ext2_filsys fs = NULL;` wherever a function opens one. */
struct struct_ext2_filsys;
void extfs_closep(struct struct_ext2_filsys **fs);
#define _cleanup_extfs_ _cleanup_(extfs_closep)

struct extfs_info {
	uint32_t block_size;
	uint64_t block_count;
	uint64_t free_blocks;
	uint64_t inode_count, free_inodes;
	uint32_t blocks_per_group, inodes_per_group;
	bool clean;           /* valid, no errors recorded: no e2fsck needed */
	char features[512];   /* "has_journal ext_attr ... extent 64bit flex_bg" */
	uint64_t min_blocks;  /* our estimate of the smallest size it can shrink to; >= resize2fs -P */
	char uuid[37];
};

/* Open the ext2/3/4 filesystem at byte `offset` of `path` read-only and describe it. */
int extfs_info(const char *path, uint64_t offset, struct extfs_info *info, char **why);

/* Allocated bytes (i_blocks, so unwritten extents count) of everything under `dir` inside the
 * filesystem at `offset` of `path`; symlinks are not followed. -ENOENT when `dir` is absent. */
int extfs_du(const char *path, uint64_t offset, const char *dir, uint64_t *bytes);

/* The regular file at `file` (a path from the root of the ext filesystem at `offset` of `path`),
 * read through libext2fs without mounting and without writing: at most `max` bytes into *out
 * (NUL-terminated; *len its length). A symlink on the way or at the end is refused, not followed;
 * -ENOENT when it is not there, -ENODEV when it is not a regular file, -EFBIG when too large. */
int extfs_read_file(const char *path, uint64_t offset, const char *file, size_t max, char **out, size_t *len,
		    char **why);
