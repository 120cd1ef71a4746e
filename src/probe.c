/* SPDX-License-Identifier: MIT */
/* Filesystem identity through libblkid, probing a region of an open device or image. */
#include "util.h"
#include "probe.h"

#include <blkid/blkid.h>

static void blkid_probe_freep(blkid_probe *p) { if (*p) blkid_free_probe(*p); }

static void copy_value(blkid_probe pr, const char *name, char *dst, size_t len)
{
	const char *v = NULL;

	if (blkid_probe_lookup_value(pr, name, &v, NULL) == 0 && v)
		snprintf(dst, len, "%s", v);
}

/* How many superblocks the probe finds one by one, as wipefs(8) lists them (at most 16). */
static unsigned signatures(blkid_probe pr)
{
	unsigned n = 0;

	blkid_reset_probe(pr);
	while (n < 16 && blkid_do_probe(pr) == 0)
		n++;
	return n;
}

int probe_fs(int fd, uint64_t offset, uint64_t size, struct fs_id *id)
{
	_cleanup_(blkid_probe_freep) blkid_probe pr = blkid_new_probe();
	int r;

	*id = (struct fs_id){ 0 };
	if (!pr)
		return -ENOMEM;
	/* The region comes from a partition entry on the disk: libblkid takes signed 64-bit offsets. */
	if (offset > INT64_MAX || size > INT64_MAX - offset)
		return -EOVERFLOW;
	if (blkid_probe_set_device(pr, fd, (blkid_loff_t)offset, (blkid_loff_t)size) < 0)
		return -EIO;
	blkid_probe_enable_superblocks(pr, 1);
	blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE | BLKID_SUBLKS_UUID | BLKID_SUBLKS_LABEL);
	blkid_probe_enable_partitions(pr, 0);
	r = blkid_do_safeprobe(pr);
	if (r == 1)
		return 0; /* nothing there: type stays "" */
	/* ambivalent: more than one signature. libblkid 2.41 (Debian 13) reports it as -1, a plain
	 * error, where 2.38 says -2: counted again, so that both read as ambivalent */
	if (r == -2 || (r == -1 && signatures(pr) > 1))
		return -EUCLEAN;
	if (r < 0)
		return -EIO;
	copy_value(pr, "TYPE", id->type, sizeof(id->type));
	copy_value(pr, "UUID", id->uuid, sizeof(id->uuid));
	copy_value(pr, "LABEL", id->label, sizeof(id->label));
	return 0;
}

int fat_sector_size(const unsigned char boot[512], uint32_t *bps)
{
	uint32_t v = (uint32_t)boot[11] | (uint32_t)boot[12] << 8;

	if (boot[510] != 0x55 || boot[511] != 0xAA)
		return -EINVAL;
	if (v != 512 && v != 1024 && v != 2048 && v != 4096)
		return -EINVAL;
	*bps = v;
	return 0;
}

int probe_fat_sector_size(int fd, uint64_t offset, uint32_t *bps)
{
	unsigned char boot[512];
	int r = pread_all(fd, boot, sizeof(boot), offset);

	if (r < 0)
		return r;
	return fat_sector_size(boot, bps);
}
