/* SPDX-License-Identifier: MIT */
/* Write a target's GPT with libfdisk, and wipe one so an unfinished target carries no table. */
#include "gptwrite.h"

#include <inttypes.h>
#include <libfdisk/libfdisk.h>
#include <linux/fs.h>
#include <sys/ioctl.h>

#include "size.h"
#include "util.h"

static void fdisk_unref_contextp(struct fdisk_context **c) { if (*c) fdisk_unref_context(*c); }
static void fdisk_unref_partitionp(struct fdisk_partition **p) { if (*p) fdisk_unref_partition(*p); }

int lba_convert(uint64_t lba, uint32_t from, uint32_t to, uint64_t *out)
{
	uint64_t bytes;

	if (!from || !to || u64_mul(lba, from, &bytes) < 0)
		return -EOVERFLOW;
	if (bytes % to)
		return -EINVAL;
	*out = bytes / to;
	return 0;
}

int gpt_write(int fd, const char *path, const struct gpt_new *t, char **why)
{
	_cleanup_(fdisk_unref_contextp) struct fdisk_context *cxt = NULL;
	struct fdisk_label *lb;
	struct lba_geometry g;
	int r;

	if (lba_geometry(t->lba_count * (uint64_t)t->lba_size, t->lba_size, &g) < 0)
		return set_why(why, -EINVAL, "target '%s' is too small for a GPT", path);
	for (size_t i = 0; i < t->nparts; i++) {
		const struct gpt_new_part *p = &t->parts[i];

		if (p->start_lba < g.first_usable_lba || p->end_lba > g.last_usable_lba || p->end_lba < p->start_lba)
			return set_why(why, -ERANGE,
				    "partition %u (LBA %" PRIu64 "-%" PRIu64 ") does not fit the usable LBAs %" PRIu64
				    "-%" PRIu64 " of '%s'",
				    p->number, p->start_lba, p->end_lba, g.first_usable_lba, g.last_usable_lba, path);
	}

	cxt = fdisk_new_context();
	if (!cxt)
		return -ENOMEM;
	/* An image file has no sector size of its own: tell libfdisk the target's (4096 for a
	 * 4Kn drive, where the 128 entries take 4 LBAs instead of 32). */
	r = fdisk_save_user_sector_size(cxt, t->lba_size, t->lba_size);
	if (r < 0)
		return set_why(why, r, "libfdisk refused the sector size %u", t->lba_size);
	r = fdisk_assign_device_by_fd(cxt, fd, path, 0);
	if (r < 0)
		return set_why(why, r, "libfdisk cannot use '%s': %s", path, strerror(-r));
	fdisk_disable_dialogs(cxt, 1);
	if (fdisk_get_sector_size(cxt) != t->lba_size || fdisk_get_nsectors(cxt) != t->lba_count) {
		r = set_why(why, -EMEDIUMTYPE,
			 "target '%s' has %llu LBAs of %lu bytes, the plan expects %" PRIu64 " of %u; re-run 'swaptool plan'",
			 path, (unsigned long long)fdisk_get_nsectors(cxt), fdisk_get_sector_size(cxt), t->lba_count,
			 t->lba_size);
		goto out;
	}
	r = fdisk_create_disklabel(cxt, "gpt");
	if (r < 0) {
		r = set_why(why, r, "libfdisk cannot create a GPT on '%s': %s", path, strerror(-r));
		goto out;
	}
	lb = fdisk_get_label(cxt, "gpt");
	if (t->disk_guid[0]) {
		r = fdisk_set_disklabel_id_from_string(cxt, t->disk_guid);
		if (r < 0) {
			r = set_why(why, r, "libfdisk refused the disk GUID '%s'", t->disk_guid);
			goto out;
		}
	}
	for (size_t i = 0; i < t->nparts; i++) {
		const struct gpt_new_part *p = &t->parts[i];
		_cleanup_(fdisk_unref_partitionp) struct fdisk_partition *pa = fdisk_new_partition();
		struct fdisk_parttype *type;
		size_t no;

		if (!pa) {
			r = -ENOMEM;
			goto out;
		}
		type = fdisk_label_get_parttype_from_string(lb, p->type_guid);
		if (!type) {
			r = set_why(why, -EINVAL, "libfdisk refused the type GUID '%s' of partition %u", p->type_guid,
				 p->number);
			goto out;
		}
		fdisk_partition_set_partno(pa, p->number - 1);
		fdisk_partition_set_start(pa, p->start_lba);
		fdisk_partition_set_size(pa, p->end_lba - p->start_lba + 1);
		/* exact sizes: libfdisk would otherwise round the end down to its 1 MiB grain, and the
		 * last partition must end exactly at the last usable LBA */
		fdisk_partition_size_explicit(pa, 1);
		fdisk_partition_set_type(pa, type);
		fdisk_unref_parttype(type);
		if (p->part_guid[0])
			fdisk_partition_set_uuid(pa, p->part_guid);
		if (p->name[0])
			fdisk_partition_set_name(pa, p->name);
		r = fdisk_add_partition(cxt, pa, &no);
		if (r < 0) {
			r = set_why(why, r, "libfdisk cannot add partition %u (LBA %" PRIu64 "-%" PRIu64 ") to '%s': %s",
				 p->number, p->start_lba, p->end_lba, path, strerror(-r));
			goto out;
		}
		if (p->attrs) {
			r = fdisk_gpt_set_partition_attrs(cxt, no, p->attrs);
			if (r < 0) {
				r = set_why(why, r, "libfdisk refused the attributes of partition %u", p->number);
				goto out;
			}
		}
	}
	r = fdisk_write_disklabel(cxt);
	if (r < 0) {
		r = set_why(why, r, "cannot write the GPT to '%s': %s", path, strerror(-r));
		goto out;
	}
	if (fsync(fd) < 0) {
		r = set_why(why, -errno, "cannot flush the GPT of '%s': %m", path);
		goto out;
	}
	/* Ask the kernel to read the new table; a loop device without partscan says EINVAL,
	 * which is fine: partx -a makes the nodes there. */
	(void)ioctl(fd, BLKRRPART);
	r = 0;
out:
	fdisk_deassign_device(cxt, 1); /* does not close our fd: we own it */
	return r;
}

static int zero_range(int fd, uint64_t off, uint64_t len)
{
	static const char zero[65536];

	while (len) {
		size_t n = len < sizeof(zero) ? len : sizeof(zero);
		ssize_t w = pwrite(fd, zero, n, off);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		off += w;
		len -= w;
	}
	return 0;
}

int gpt_wipe(int fd, uint32_t lba_size, uint64_t lba_count)
{
	uint64_t head = (2 + gpt_entry_lbas(lba_size)) * lba_size; /* MBR, header, 128 entries */
	uint64_t tail = (1 + gpt_entry_lbas(lba_size)) * lba_size; /* entries, backup header */
	uint64_t bytes;
	int r;

	if (u64_mul(lba_count, lba_size, &bytes) < 0 || bytes < head + tail)
		return -EINVAL;
	r = zero_range(fd, 0, head);
	if (r == 0)
		r = zero_range(fd, bytes - tail, tail);
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	return r;
}
