/* SPDX-License-Identifier: MIT */
/* Allocated bytes of a tree, live (nftw) or offline (libext2fs): what a store occupies on the disk. */
#define _XOPEN_SOURCE 700
#include "util.h"
#include "usage.h"

#include <ftw.h>
#include <search.h>
#include <sys/stat.h>

static __thread uint64_t walk_bytes;
static __thread void *walk_seen; /* tsearch tree of (dev, ino) for hard links */

struct dev_ino {
	dev_t dev;
	ino_t ino;
};

static int cmp_dev_ino(const void *a, const void *b)
{
	const struct dev_ino *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

static int walk_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)path, (void)flag, (void)ftw;
	if (st->st_nlink > 1 && !S_ISDIR(st->st_mode)) {
		struct dev_ino *k = xcalloc(1, sizeof(*k)), **found;

		k->dev = st->st_dev;
		k->ino = st->st_ino;
		found = tsearch(k, &walk_seen, cmp_dev_ino);
		if (!found)
			abort();
		if (*found != k) {
			free(k);
			return 0;
		}
	}
	walk_bytes += (uint64_t)st->st_blocks * 512;
	return 0;
}

int usage_live(const char *path, uint64_t *bytes)
{
	int r;

	walk_bytes = 0;
	walk_seen = NULL;
	r = nftw(path, walk_one, 64, FTW_PHYS | FTW_MOUNT);
	tdestroy(walk_seen, free);
	walk_seen = NULL;
	if (r < 0)
		return -errno;
	*bytes = walk_bytes;
	return 0;
}

int usage_offline(const struct layout *l, const char *path, uint64_t *bytes)
{
	for (size_t i = 0; i < l->table.nparts; i++) {
		const struct part *p = &l->table.parts[i];
		int r;

		if (!l->fs[i].is_ext || l->fs[i].ext_err < 0)
			continue;
		r = extfs_du(l->src->dev, p->start_lba * l->src->lba_size, path, bytes);
		if (r != -ENOENT)
			return r;
	}
	return -ENOENT;
}
