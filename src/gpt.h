/* SPDX-License-Identifier: MIT */
/* Partition tables through libfdisk: GPT (with our own check of both headers), MBR, none. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

struct part {
	unsigned number;          /* 1-based, as in /dev/nvme0n1p2 */
	uint64_t start_lba, end_lba; /* inclusive */
	uint64_t size_bytes;
	char type_guid[37];       /* GPT type GUID, upper case; MBR: "0x83" */
	char part_guid[37];       /* GPT unique partition GUID; "" for MBR */
	char *name;               /* GPT name; NULL for MBR */
	uint64_t attrs;           /* GPT attribute bits */
	bool container;           /* MBR extended partition: holds the logical ones */
};

enum ptable_kind { PT_NONE, PT_GPT, PT_DOS };

struct ptable {
	enum ptable_kind kind;
	uint32_t lba_size;
	uint64_t lba_count;
	/* GPT only */
	char disk_guid[37];
	uint64_t first_usable_lba, last_usable_lba;
	uint64_t backup_header_lba;  /* AlternateLBA of the header in use (primary if valid) */
	bool primary_ok, backup_ok;  /* header signature + CRC32s checked by us */
	uint64_t entries_lba, entries_lbas; /* the entry array of the header in use, and its length */
	struct part *parts;
	size_t nparts;
};

const char *ptable_kind_name(enum ptable_kind k); /* "gpt", "dos", "none" */

/* Read the table of the disk open at `fd` (image or block device, read-only). */
int ptable_read(int fd, const char *path, uint32_t lba_size, uint64_t size_bytes, struct ptable *t, char **why);
void ptable_free(struct ptable *t);

/* The table checked as `sgdisk -v` checks it, with overflow-checked arithmetic: the GPT's usable
 * range inside the disk and after its entry array; every partition starting no later than it ends,
 * inside the usable range (MBR: inside the disk), its byte offsets within 64 bits; no two
 * partitions overlapping (an MBR's extended container excepted). Returns the number of problems;
 * *problems (NULL when none) names them, "; "-separated, in the order found. */
size_t ptable_check(const struct ptable *t, char **problems);
