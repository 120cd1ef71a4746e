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
	/* Called by plan_rehearse (src/planrun.h) when it starts another part of its work, named as
	 * plan_act_name names an action ("copy-used-blocks") or "copy-metadata"; NULL: not told. */
	void (*phase)(void *ud, const char *what);
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
 * kept, and the inodes the superblock names as metadata: orphan file, quota, snapshot, EA
 * inodes): what e2image -r copies; *er's unwritten_blocks then counts all file data left out. */
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
/* The same, only the blocks below block `below` (the new end of a filesystem that shrinks on its
 * way to the target; resize2fs moves the rest down afterwards). */
int fscopy_ext_below(const char *src_path, int src_fd, uint64_t src_off, int dst_fd, uint64_t dst_off, uint64_t dst_len,
		     uint64_t below, const struct copy_opts *o, struct copy_stats *st, char **why);
/* The features of the ext2/3/4 at `src_path`@`src_off` that fscopy_ext_meta does not understand
 * (a feature it cannot be trusted to copy the metadata of): 1 with their names, comma-separated,
 * in *unknown (free it), 0 with *unknown NULL when it understands them all. */
int fscopy_ext_meta_check(const char *src_path, uint64_t src_off, char **unknown, char **why);
/* The same on the superblock's three feature words; NULL when all are understood. */
char *fscopy_meta_unknown_features(uint32_t compat, uint32_t incompat, uint32_t ro_compat);

/* What lies at or past block `cut` of the ext2/3/4 at `src_path`@`src_off`: blocks in use per the
 * bitmap (what resize2fs moves), and of those the ones holding data (not unwritten extents). */
struct ext_past {
	uint32_t block_size;
	uint64_t used_bytes;
	uint64_t data_bytes;
	uint64_t all_data_bytes;  /* the used-block copy's bytes, the whole filesystem */
	uint64_t meta_bytes;      /* metadata only, the whole filesystem (what e2image -r copies) */
	uint64_t itable_unused_bytes; /* of those, inode tables past each group's used inodes */
	uint64_t (*run)[2];       /* bytes (from the filesystem's start, length) past the cut that hold
				   * metadata or data: the rest is free or unwritten */
	size_t nruns;
};
void ext_past_free(struct ext_past *p);
int fscopy_ext_past(const char *src_path, uint64_t src_off, uint64_t cut, struct ext_past *p, char **why);
