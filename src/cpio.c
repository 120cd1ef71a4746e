/* SPDX-License-Identifier: MIT */
/* newc cpio archives, plain or gzip-compressed through zlib: the rescue stick's initramfs. */
#include "util.h"
#include "cpio.h"

#include <sys/stat.h>
#include <zlib.h>

#define CPIO_CHUNK (256u << 10)

int cpio_open(struct cpio *c, int fd, int gzip_level, time_t mtime)
{
	*c = (struct cpio){ .fd = fd, .mtime = mtime, .ino = 1 };
	if (gzip_level < 0 || gzip_level > 9)
		return -EINVAL;
	if (!gzip_level)
		return 0;
	c->z = xcalloc(1, sizeof(*c->z));
	c->buf = xcalloc(1, CPIO_CHUNK);
	/* 16 + 15: a gzip header and trailer around the deflate stream, the kernel's unpacker's format */
	if (deflateInit2(c->z, gzip_level, Z_DEFLATED, 16 + 15, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		free(c->z);
		c->z = NULL;
		return -ENOMEM;
	}
	return 0;
}

void cpio_free(struct cpio *c)
{
	if (c->z) {
		deflateEnd(c->z);
		free(c->z);
		c->z = NULL;
	}
	free(c->buf);
	c->buf = NULL;
}

/* Bytes of the archive, through the compressor when there is one; `flush` Z_FINISH at the end. */
static int put(struct cpio *c, const void *data, size_t len, int flush)
{
	int r, zr;

	c->raw_bytes += len;
	if (!c->z) {
		r = write_all(c->fd, data, len);
		if (r == 0)
			c->out_bytes += len;
		return r;
	}
	c->z->next_in = (unsigned char *)data;
	c->z->avail_in = (uInt)len;
	do {
		c->z->next_out = c->buf;
		c->z->avail_out = CPIO_CHUNK;
		zr = deflate(c->z, flush);
		if (zr == Z_STREAM_ERROR)
			return -EIO;
		size_t n = CPIO_CHUNK - c->z->avail_out;
		if (n) {
			r = write_all(c->fd, c->buf, n);
			if (r < 0)
				return r;
			c->out_bytes += n;
		}
	} while (c->z->avail_out == 0 || (flush == Z_FINISH && zr != Z_STREAM_END));
	return 0;
}

/* Zeros up to the next multiple of 4 of the archive's length (newc pads header+name and data). */
static int pad4(struct cpio *c)
{
	static const char zero[4];
	size_t n = (4 - (c->raw_bytes & 3)) & 3;

	return n ? put(c, zero, n, Z_NO_FLUSH) : 0;
}

static int header(struct cpio *c, const char *path, mode_t mode, uint64_t size, uint32_t nlink, unsigned rmaj,
		  unsigned rmin)
{
	char h[111];
	size_t namesize = strlen(path) + 1;
	int r;

	/* newc counts in 32-bit hex: a member of 4 GiB or more, or a name past 4 KiB, has no header */
	if (size > UINT32_MAX || namesize > 4096 || path[0] == '/' || !path[0])
		return -EINVAL;
	snprintf(h, sizeof(h), "070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X", c->ino++, (unsigned)mode, 0u, 0u,
		 nlink, (unsigned)(uint32_t)c->mtime, (unsigned)size, 0u, 0u, rmaj, rmin, (unsigned)namesize, 0u);
	r = put(c, h, 110, Z_NO_FLUSH);
	if (r == 0)
		r = put(c, path, namesize, Z_NO_FLUSH);
	if (r == 0)
		r = pad4(c);
	if (r == 0)
		c->entries++;
	return r;
}

int cpio_add_dir(struct cpio *c, const char *path, mode_t mode)
{
	return header(c, path, S_IFDIR | (mode & 07777), 0, 2, 0, 0);
}

int cpio_add_data(struct cpio *c, const char *path, mode_t mode, const void *data, size_t len)
{
	int r = header(c, path, S_IFREG | (mode & 07777), len, 1, 0, 0);

	if (r == 0)
		r = put(c, data, len, Z_NO_FLUSH);
	return r ? r : pad4(c);
}

int cpio_add_symlink(struct cpio *c, const char *path, const char *target)
{
	size_t len = strlen(target);
	int r = header(c, path, S_IFLNK | 0777, len, 1, 0, 0);

	if (r == 0)
		r = put(c, target, len, Z_NO_FLUSH);
	return r ? r : pad4(c);
}

int cpio_add_node(struct cpio *c, const char *path, mode_t mode, unsigned major, unsigned minor)
{
	if (!S_ISCHR(mode) && !S_ISBLK(mode))
		return -EINVAL;
	return header(c, path, mode, 0, 1, major, minor);
}

int cpio_add_fd(struct cpio *c, const char *path, mode_t mode, int src, uint64_t size)
{
	_cleanup_free_ unsigned char *buf = xcalloc(1, CPIO_CHUNK);
	uint64_t done = 0;
	int r = header(c, path, S_IFREG | (mode & 07777), size, 1, 0, 0);

	while (r == 0 && done < size) {
		size_t n = size - done < CPIO_CHUNK ? (size_t)(size - done) : CPIO_CHUNK;

		r = pread_all(src, buf, n, done);
		if (r == 0)
			r = put(c, buf, n, Z_NO_FLUSH);
		done += n;
		if (r == 0 && c->progress)
			c->progress(c->ud, c->raw_bytes);
	}
	return r ? r : pad4(c);
}

int cpio_finish(struct cpio *c)
{
	int r = header(c, "TRAILER!!!", 0, 0, 1, 0, 0);

	c->entries--; /* the trailer is no entry */
	if (r == 0 && c->z)
		r = put(c, "", 0, Z_FINISH);
	return r;
}
