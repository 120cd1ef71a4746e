/* SPDX-License-Identifier: MIT */
/* The source's layout against a target: what preflight reports and plan/clone execute.
 * One analysis, so that preflight's figures and the plan's actions can never disagree. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "disk.h"
#include "extfs.h"
#include "gpt.h"
#include "probe.h"
#include "size.h"

struct part_fs {
	struct fs_id id;          /* libblkid: type, UUID, LABEL */
	bool is_ext;              /* ext2/3/4, so extfs is filled */
	struct extfs_info ext;
	int ext_err;              /* negative errno when libext2fs could not open it or it is corrupt */
	char ext_why[256];        /* the sentence for ext_err */
	uint32_t fat_sector;      /* vfat: bytes per sector from its boot sector; 0 otherwise or unreadable */
};

struct part_fit {
	bool crosses_end;         /* ends past the target's last usable LBA */
	uint64_t new_end_lba;     /* fs_clone: where it ends on the target (in target LBAs) */
	uint64_t new_block_count; /* fs_clone: the filesystem's block count after shrink */
};

struct layout {
	struct disk *src;
	struct ptable table;      /* in source LBAs */
	struct part_fs *fs;       /* one per table.parts[i] */
	struct part_fit *fit;     /* one per table.parts[i] */
	struct lba_geometry src_geo, tgt_geo;
	int64_t delta_bytes;      /* target minus source */
	bool raw_clone_possible;
	bool fs_clone_possible;
	char fs_clone_why[512];   /* why not, when it is not */
	bool lba_size_differs;
	bool lba_size_unsafe;     /* they differ and a partition would not work at the target's, or the target
				   * presents another LBA size than it will in the slot: path 2 refused */
	uint32_t tgt_slot_lba;    /* the target's LBA size in the slot, read through its USB bridge; 0 unknown */
	bool slot_lba_differs;    /* known, and not the LBA size the target presents here */
	size_t table_problems;    /* ptable_check: what sgdisk -v would call a problem */
	char *table_why;          /* their sentences; NULL when none */
};

/* Read the source's table and filesystems and fit them against a target of `tgt_bytes`
 * with `tgt_lba_size`-byte LBAs. Reads only. */
int layout_analyze(struct disk *src, uint64_t tgt_bytes, uint32_t tgt_lba_size, struct layout *l, char **why);
/* The same for a target whose own LBA size, the one it presents in the slot, is known (read through its
 * USB bridge, src/usbnvme.h): `tgt_slot_lba`, 0 when unknown. When it is not `tgt_lba_size` a GPT and
 * filesystems written here would be in the wrong units there: a raw clone and path 2 are refused. */
int layout_analyze_slot(struct disk *src, uint64_t tgt_bytes, uint32_t tgt_lba_size, uint32_t tgt_slot_lba,
			struct layout *l, char **why);
void layout_free(struct layout *l);
