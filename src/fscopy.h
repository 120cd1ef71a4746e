/* SPDX-License-Identifier: MIT */
/* Copy a partition to a target: used blocks of an ext2/3/4 (libext2fs bitmaps, unwritten extents
 * skipped), or raw bytes; large sequential runs, holes kept as holes on image files. */
#pragma once

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

struct copy_opts {
	/* Called after each run of up to a few MiB: bytes handled so far of `total`. */
	void (*progress)(void *ud, uint64_t done, uint64_t total);
	void *ud;
	volatile sig_atomic_t *stop; /* non-zero: stop at the next run, return -EINTR */
	bool no_direct;              /* never O_DIRECT (tests; filesystems that refuse it) */
};

struct copy_stats {
	uint64_t total_bytes;      /* what the copy had to produce on the target */
	uint64_t data_bytes;       /* read from the source and written */
	uint64_t hole_bytes;       /* holes of an image source: punched or zeroed, not read */
	uint64_t skipped_bytes;    /* ext: blocks of unwritten extents and free blocks, not touched */
	uint64_t unwritten_bytes;  /* ext: of those, blocks allocated to unwritten extents */
	uint64_t runs;             /* contiguous runs copied */
	double seconds;
};

/* Raw copy of exactly `len` bytes from src_fd@src_off to dst_fd@dst_off. */
int fscopy_raw(int src_fd, uint64_t src_off, int dst_fd, uint64_t dst_off, uint64_t len, const struct copy_opts *o,
	       struct copy_stats *st);

/* The used-block map of the ext2/3/4 at `src_path`@`src_off`: blocks in use by the block bitmap,
 * minus the data blocks of unwritten extents (they read as zeros on any target, because the
 * extent says so, not the disk). Returns runs as pairs (first block, count); *nruns set. */
struct ext_runs {
	uint32_t block_size;
	uint64_t block_count;      /* the filesystem's size in blocks */
	uint64_t used_blocks;      /* in use per bitmap */
	uint64_t unwritten_blocks; /* of those, in unwritten extents (skipped) */
	uint64_t (*run)[2];
	size_t nruns;
};
int fscopy_ext_runs(const char *src_path, uint64_t src_off, struct ext_runs *er, char **why);
/* The same with every data block of regular files left out (the journal and the reserved inodes
 * kept): what e2image -r copies; *er's unwritten_blocks then counts all file data left out. */
int fscopy_ext_meta_runs(const char *src_path, uint64_t src_off, struct ext_runs *er, char **why);
void ext_runs_free(struct ext_runs *er);

/* Used-block copy of the ext2/3/4 at `src_path`@`src_off` (read through `src_fd`) to
 * dst_fd@dst_off; `dst_len` is the room on the target, checked against the block count. */
int fscopy_ext(const char *src_path, int src_fd, uint64_t src_off, int dst_fd, uint64_t dst_off, uint64_t dst_len,
	       const struct copy_opts *o, struct copy_stats *st, char **why);
/* Metadata-only copy (bitmaps, inode tables, directories, extent trees, journal; no file data),
 * for a rehearsal: an e2image -r placed straight at dst_off, holes kept. */
int fscopy_ext_meta(const char *src_path, int src_fd, uint64_t src_off, int dst_fd, uint64_t dst_off, uint64_t dst_len,
		    const struct copy_opts *o, struct copy_stats *st, char **why);
