/* SPDX-License-Identifier: MIT */
/* Move the file data that lies past a filesystem's new end below it, one extent at a time, so
 * that resize2fs is left with the metadata to move. */
#pragma once

#include <signal.h>
#include <stdint.h>

struct reloc_stats {
	uint64_t extents;         /* extents (or pieces of them) moved */
	uint64_t blocks;          /* blocks they cover */
	uint64_t copied_blocks;   /* of those, initialised: their bytes were copied */
	uint64_t inodes;          /* inodes that had data past the cut */
};

/*
 * In the ext2/3/4 at `path` (opened read-write through libext2fs; for the shrink on the way,
 * the composite file), give every extent of a regular file or directory that lies at or past
 * block `cut` new blocks below it: the bytes of initialised extents are copied, an unwritten
 * extent only gets its new address (its bytes mean nothing). Reserved inodes (the journal),
 * block-mapped files and everything else past the cut are left to resize2fs, which this
 * leaves with a valid filesystem. resize2fs would remap the same blocks one block at a time
 * (an extent-tree update and checksum per block: minutes for the ~48 GB of a used incident
 * disk); here it is one update per extent.
 */
struct reloc_opts {
	volatile sig_atomic_t *stop;  /* non-zero: stop at the next extent, -EINTR */
	/* after each extent: bytes moved so far of `total` */
	void (*progress)(void *ud, uint64_t done, uint64_t total);
	void *ud;
	uint64_t total;
};
int relocate_past_cut(const char *path, uint64_t cut, const struct reloc_opts *o, struct reloc_stats *st, char **why);
