/* SPDX-License-Identifier: MIT */
/* A FUSE file that is the target below a cut and the read-only source above it, so resize2fs can
 * shrink a filesystem on its way from the source to the target without writing the source. */
#pragma once

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

struct composite;

struct composite_stats {
	uint64_t src_read_bytes;     /* read from the source (above the cut) */
	uint64_t tgt_read_bytes;     /* read from the target (below the cut) */
	uint64_t tgt_write_bytes;    /* written to the target */
	uint64_t tgt_zero_bytes;     /* all-zero blocks made holes on an image target instead */
	uint64_t overlay_bytes;      /* written above the cut: kept in memory, then dropped */
};

/*
 * Mount, in a new directory under `dir`, one file of `size` bytes whose bytes [0, cut) are
 * tgt_fd@tgt_off (read and written) and [cut, size) read from src_fd@src_off + the same offset,
 * with writes there going to an anonymous memory overlay (the source fd is read-only and is only
 * read). The file is served by a child process of its own (single-threaded, in its own process
 * group, with its own descriptors of the two disks and none other of the caller's), so the caller
 * runs no thread and may fork the tools that use the file; the server unmounts and ends when the
 * caller dies. Nothing is reported by it while it runs.
 */
struct composite_opts {
	int src_fd, tgt_fd;
	uint64_t src_off, tgt_off, cut, size;
	/* Byte ranges (start, length) of the file above the cut that hold something, sorted; the
	 * rest (free blocks, blocks of unwritten extents) reads as zeros without touching the source.
	 * NULL: read everything. */
	const uint64_t (*runs)[2];
	size_t nruns;
};
int composite_mount(const char *dir, const struct composite_opts *o, struct composite **out, char **why);
/* The path of the composite file. */
const char *composite_path(const struct composite *c);
/* Unmount, let the server end, remove the directory, free; the figures of its life in *st (may be
 * NULL). Returns the first I/O error the file met (negative errno), -EIO when the server died,
 * 0 when none. */
int composite_unmount(struct composite *c, struct composite_stats *st);
