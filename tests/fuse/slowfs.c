/* SPDX-License-Identifier: MIT */
/* slowfs: a FUSE filesystem serving one file, /data, with injected EIO and latency that grows with
 * the working set (a DRAM-less drive's mapping-cache misses), for the accept fault tests.
 *
 *   slowfs MOUNTPOINT -f [--size=BYTES] [--eio-every=N] [--base-us=N] [--miss-us=N] [--cache=BYTES]
 *
 * Every 4 KiB block holds non-zero data derived from its index. With --eio-every=N, block b
 * fails with EIO when b % N == N - 1. The latency of a read is base-us while the span of the last
 * 64 read offsets fits in --cache bytes (the "mapping table" fits), and grows towards
 * base-us + miss-us as the span exceeds it: uniform reads over a working set W > cache miss with
 * probability about 1 - cache/W, like the incident's 40 MB HMB against a 98 GB table. */
#define FUSE_USE_VERSION 31

#include <errno.h>
#include <fuse.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

struct opts {
	unsigned long long size, eio_every, base_us, miss_us, cache;
};
static struct opts o = { .size = 256ULL << 20, .base_us = 50, .miss_us = 2000, .cache = 8ULL << 20 };

#define OPT(t, p) { t, offsetof(struct opts, p), 0 }
static const struct fuse_opt optspec[] = {
	OPT("--size=%llu", size),
	OPT("--eio-every=%llu", eio_every),
	OPT("--base-us=%llu", base_us),
	OPT("--miss-us=%llu", miss_us),
	OPT("--cache=%llu", cache),
	FUSE_OPT_END,
};

#define RECENT 64
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t recent[RECENT];
static unsigned nrecent, pos;

static int sf_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	(void)fi;
	memset(st, 0, sizeof(*st));
	if (strcmp(path, "/") == 0) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
		return 0;
	}
	if (strcmp(path, "/data") == 0) {
		st->st_mode = S_IFREG | 0444;
		st->st_nlink = 1;
		st->st_size = (off_t)o.size;
		st->st_blocks = (blkcnt_t)(o.size / 512);
		return 0;
	}
	return -ENOENT;
}

static int sf_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off, struct fuse_file_info *fi,
		      enum fuse_readdir_flags flags)
{
	(void)off, (void)fi, (void)flags;
	if (strcmp(path, "/") != 0)
		return -ENOENT;
	fill(buf, ".", NULL, 0, 0);
	fill(buf, "..", NULL, 0, 0);
	fill(buf, "data", NULL, 0, 0);
	return 0;
}

static int sf_open(const char *path, struct fuse_file_info *fi)
{
	if (strcmp(path, "/data") != 0)
		return -ENOENT;
	if ((fi->flags & O_ACCMODE) != O_RDONLY)
		return -EACCES;
	fi->direct_io = 1; /* no page cache: every read reaches us, so latency and EIO are seen */
	return 0;
}

static uint64_t latency_us(uint64_t off)
{
	uint64_t lo = UINT64_MAX, hi = 0, span;

	pthread_mutex_lock(&lock);
	recent[pos] = off;
	pos = (pos + 1) % RECENT;
	if (nrecent < RECENT)
		nrecent++;
	for (unsigned i = 0; i < nrecent; i++) {
		if (recent[i] < lo)
			lo = recent[i];
		if (recent[i] > hi)
			hi = recent[i];
	}
	pthread_mutex_unlock(&lock);
	span = hi - lo + 4096;
	if (span <= o.cache)
		return o.base_us;
	return o.base_us + o.miss_us * (span - o.cache) / span;
}

static int sf_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
	uint64_t us, first, end;
	struct timespec ts;

	(void)fi;
	if (strcmp(path, "/data") != 0)
		return -ENOENT;
	if ((uint64_t)off >= o.size)
		return 0;
	if ((uint64_t)off + size > o.size)
		size = (size_t)(o.size - (uint64_t)off);
	first = (uint64_t)off / 4096;
	end = ((uint64_t)off + size + 4095) / 4096;
	us = latency_us((uint64_t)off);
	ts.tv_sec = (time_t)(us / 1000000);
	ts.tv_nsec = (long)(us % 1000000) * 1000;
	nanosleep(&ts, NULL);
	for (uint64_t b = first; b < end; b++)
		if (o.eio_every && b % o.eio_every == o.eio_every - 1)
			return -EIO;
	for (size_t i = 0; i < size; i += 8) {
		uint64_t at = (uint64_t)off + i, w = ((at / 4096) << 20 | (at % 4096)) | 1;
		memcpy(buf + i, &w, size - i < 8 ? size - i : 8);
	}
	return (int)size;
}

static const struct fuse_operations ops = {
	.getattr = sf_getattr,
	.readdir = sf_readdir,
	.open = sf_open,
	.read = sf_read,
};

int main(int argc, char **argv)
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	int r;

	if (fuse_opt_parse(&args, &o, optspec, NULL) < 0)
		return 2;
	if (o.size % 4096 || !o.size) {
		fprintf(stderr, "slowfs: --size must be a positive multiple of 4096\n");
		return 2;
	}
	r = fuse_main(args.argc, args.argv, &ops, NULL);
	fuse_opt_free_args(&args);
	return r;
}
