/* SPDX-License-Identifier: MIT */
/* Write a target's GPT with libfdisk: the source's partitions (starts, GUIDs, names, attributes)
 * re-expressed in the target's LBAs, and wipe a table so an unfinished target carries none. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct gpt_new_part {
	unsigned number;             /* 1-based; gaps allowed */
	uint64_t start_lba, end_lba; /* inclusive, target LBAs */
	char type_guid[37];
	char part_guid[37];
	char name[148];              /* UTF-8; GPT holds 36 UTF-16 code units */
	uint64_t attrs;
};

struct gpt_new {
	uint32_t lba_size;
	uint64_t lba_count;          /* the target's whole LBAs; backup header at lba_count - 1 */
	char disk_guid[37];
	struct gpt_new_part *parts;
	size_t nparts;
};

/* Convert `lba` of `from`-byte LBAs to `to`-byte LBAs; -EINVAL when it is not a whole
 * number of target LBAs (a 512-byte start of 2049 has no 4096-byte equivalent). */
int lba_convert(uint64_t lba, uint32_t from, uint32_t to, uint64_t *out);

/* Write `t` to the open target (image or block device, opened read-write): protective MBR,
 * primary header and entries, backup entries and header at the last LBA. *why is allocated. */
int gpt_write(int fd, const char *path, const struct gpt_new *t, char **why);

/* Zero the protective MBR, the primary header + entries and the backup entries + header, so
 * that no tool sees a table on the target until gpt_write runs (an interrupted clone leaves an
 * unpartitioned disk rather than a table pointing at half-copied filesystems). */
int gpt_wipe(int fd, uint32_t lba_size, uint64_t lba_count);
