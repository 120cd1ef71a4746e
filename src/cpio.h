/* SPDX-License-Identifier: MIT */
/* A newc ("070701") cpio archive written to a descriptor, gzip-compressed or plain: the rescue stick's
 * initramfs, which the kernel unpacks into its first root (Documentation/driver-api/early-userspace). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct z_stream_s;

/* Every entry belongs to root, is dated `mtime` (the same for all, so that two builds of the same
 * inputs are the same bytes) and has an inode number of its own; a directory has 2 links. */
struct cpio {
	int fd;
	struct z_stream_s *z;  /* NULL: written plain */
	uint32_t ino;
	uint64_t raw_bytes;    /* the archive's bytes before compression */
	uint64_t out_bytes;    /* bytes written to fd */
	uint32_t entries;
	time_t mtime;
	unsigned char *buf;    /* compression output */
	void (*progress)(void *ud, uint64_t raw_bytes);
	void *ud;
};

/* Start an archive on `fd` (at its current position); gzip_level 0 writes it plain, 1-9 through zlib
 * with a gzip header (the kernel's CONFIG_RD_GZIP, which every distribution kernel has). */
int cpio_open(struct cpio *c, int fd, int gzip_level, time_t mtime);
/* A directory; a path is relative to the root, without a leading "/" ("usr/bin"). The kernel makes
 * no missing parents: add each directory before what it holds. */
int cpio_add_dir(struct cpio *c, const char *path, mode_t mode);
/* A regular file of `len` bytes from memory. */
int cpio_add_data(struct cpio *c, const char *path, mode_t mode, const void *data, size_t len);
/* A regular file copied from the open `src` (read from offset 0 to exactly `size` bytes: a file that
 * shrinks meanwhile is -EIO, one that grows is cut at `size`). */
int cpio_add_fd(struct cpio *c, const char *path, mode_t mode, int src, uint64_t size);
/* A symbolic link to `target`. */
int cpio_add_symlink(struct cpio *c, const char *path, const char *target);
/* A character or block device node (mode holds S_IFCHR or S_IFBLK): /dev/console, which the kernel
 * opens for /init before anything can mount devtmpfs. */
int cpio_add_node(struct cpio *c, const char *path, mode_t mode, unsigned major, unsigned minor);
/* The trailer, then the compressor's end; the descriptor stays open. */
int cpio_finish(struct cpio *c);
/* Frees what cpio_open took (after cpio_finish, or instead of it on an error). */
void cpio_free(struct cpio *c);
