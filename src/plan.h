/* SPDX-License-Identifier: MIT */
/* The migration plan as data (src/plan.c): path 1 (fresh install + restore) as a checklist, path 2
 * (clone with shrink) as exact actions; its fingerprint; as JSON and as a bash script. Running it
 * (apply, rehearse) is planrun.h. */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

#include "bridge.h"
#include "gptwrite.h"
#include "freshfit.h"
#include "layout.h"
#include "profile.h"
#include "size.h"

enum plan_act {
	PA_CHECK,        /* sizes, serials, fingerprint, refusals: before anything is written */
	PA_E2FSCK,       /* e2fsck -fn of a source ext filesystem: clean or refuse */
	PA_SHRINK,       /* resize2fs on the way: the used blocks below the new end are on the target, it
			  * moves the rest down from the read-only source (src/composite.h) */
	PA_WRITE_TABLE,  /* the target's GPT (written last: until then the target has no table) */
	PA_COPY_RAW,     /* exact bytes of a partition that is not ext */
	PA_COPY_USED,    /* used blocks of an ext filesystem (below its new end when it shrinks) */
	PA_GROW,         /* resize2fs of the target's filesystem to fill its partition */
	PA_FSCK,         /* e2fsck -fn of the target's filesystem */
	PA_VERIFY,       /* the target's table and identifiers against the plan */
	PA_MANUAL,       /* something a person does (boot, fstab) */
};
const char *plan_act_name(enum plan_act a); /* "copy-used-blocks" ... */

struct plan_action {
	enum plan_act kind;
	unsigned part;          /* partition number; 0 = the whole disk */
	uint64_t src_offset;    /* bytes */
	uint64_t tgt_offset;    /* bytes */
	uint64_t bytes;         /* copy-raw: exact length; copy-used: the partition's room on the target */
	uint32_t block_size;    /* ext actions */
	uint64_t blocks_from, blocks_to; /* shrink/grow: block counts */
	bool destructive;       /* writes the source or the target */
	char *title;            /* one line for people, with the figures */
	char *precondition;
	char *evidence;         /* what it leaves to check */
	char *command;          /* the equivalent shell command ($SOURCE, $TARGET, $UNDO) */
};

struct plan_part {
	unsigned number;
	uint64_t src_start_lba, src_end_lba; /* source LBAs, inclusive */
	uint64_t tgt_start_lba, tgt_end_lba; /* target LBAs, inclusive */
	uint64_t offset;                     /* bytes; the same on both disks */
	uint64_t src_bytes, tgt_bytes;
	char type_guid[37], part_guid[37];
	char name[148];
	uint64_t attrs;
	char fs_type[32], fs_uuid[64], fs_label[64];
	bool is_ext;
	uint32_t block_size;
	uint64_t block_count, new_block_count, min_blocks, free_blocks;
	bool crosses_end;
	/* ext: the cost of path 2 */
	uint64_t past_cut_bytes;      /* in use past the new end: resize2fs moves them */
	uint64_t past_cut_data_bytes; /* of those, file data (not unwritten extents) */
	uint64_t meta_bytes;          /* metadata a rehearsal copies (unused inode tables left out: holes) */
	uint64_t data_bytes;          /* everything the used-block copy reads */
};

struct plan_step {       /* path 1: one numbered item of the checklist */
	char *title;
	char *command;       /* NULL when there is nothing to type */
	char *note;
};

struct plan {
	char fingerprint[65];        /* of the source and target as they are now */
	char fingerprint_shrunk[65]; /* the same after the planned shrink (a rerun after it is fine) */
	char *src_path;
	char *src_serial, *src_model;
	struct lba_geometry src_geo, tgt_geo;
	char *tgt_spec;
	char *tgt_path;              /* when the target was given as a device or image */
	char *tgt_serial;
	int64_t delta_bytes;
	char table_kind[8];
	char disk_guid[37];
	bool raw_possible, clone_possible, needs_shrink;
	bool lba_size_unsafe;        /* layout's: path 2 refused for the LBA sizes */
	bool slot_lba_differs;       /* layout's: the target presents other LBAs here than in the slot */
	char clone_why[512];
	struct plan_part *parts;
	size_t nparts;
	struct plan_action *acts;
	size_t nacts;
	struct plan_step *fresh;
	size_t nfresh;
	uint64_t refetchable_bytes;  /* 0 when unknown */
	uint64_t irreplaceable_bytes; /* the profile's backup paths, measured offline; 0 when unknown */
	struct fresh_fit fit;        /* path 1 against the target: src/freshfit.h, as preflight judges it */
	char *stores_missing;        /* "PATH (SIZE), ..." of the stores that do not fit after path 1; NULL when all do */
	uint64_t refetch_minutes;
	bool with_cost;              /* built with PLAN_COST: the parts' past_cut_* and the cost figures hold */
	uint64_t link_mbps;          /* plan_limit_link: the slowest USB link a drive sits behind; 0 none */
	const char *link_side;       /* "source" or "target": whose link that is */
	/* plan_attach: how each drive is attached ("nvme", "usb", "file"...; NULL unknown or a size) and
	 * the USB bridge it sits behind (vendor_id NULL: none) */
	const char *src_transport, *tgt_transport;
	struct disk_bridge src_bridge, tgt_bridge;
};

/* What plan_build measures beyond the layout. PLAN_COST: the cost of path 2 (below), which reads
 * the filesystems (two inode scans, seconds on the incident's disk); clone has no use for it, as
 * the shrink measures what it moves itself. */
enum plan_opts {
	PLAN_COST = 1u << 0,
};

/* Build the plan from a layout (layout_analyze of the source against the target). `home` is the
 * node user's home inside the source's root filesystem ("/home/nv"), for the re-fetchable sizes;
 * NULL skips them. `opts`: enum plan_opts. */
int plan_build(const struct layout *l, const struct profile *prof, const char *tgt_spec, const char *tgt_path,
	       const char *tgt_serial, const char *home, unsigned opts, struct plan *p);
void plan_free(struct plan *p);

/* The target as plan and clone were given it. */
struct plan_target {
	const char *spec;    /* as given: a size, a device or an image */
	const char *path;    /* the device or image; NULL when given as a size */
	const char *serial;  /* NULL when unknown */
	uint64_t bytes;
	uint32_t lba_size;
	uint32_t slot_lba_size; /* its LBA size in the slot, read through its USB bridge; 0 unknown */
};
/* What plan and clone share: the layout of the open source `src` against the target (into *l)
 * and the plan built from it (into *p). `home` NULL: the node user's home (node_home), none when
 * it cannot be told. `opts`: plan_build's. Reads only. Returns 0 or a negative errno with *why; *l
 * and *p are the caller's to free either way. */
int plan_for(struct disk *src, const struct plan_target *t, const struct profile *prof, const char *home,
	     unsigned opts, struct layout *l, struct plan *p, char **why);

/* The cost of path 2. Bytes in use past the new ends of the filesystems that shrink (what the
 * shrink moves; *data: of them, file data); the scratch space a rehearsal needs; the clone's
 * time in seconds, estimated at plan_rate read and written. Only for a plan built with PLAN_COST. */
#define PLAN_RATE 1.9e9 /* bytes/s: the write-up's sequential NVMe rate */
uint64_t plan_past_cut_bytes(const struct plan *p, uint64_t *data);
uint64_t plan_rehearse_need(const struct plan *p);
double plan_clone_seconds(const struct plan *p);
/* The clone's rate: PLAN_RATE, or for a drive behind a USB link of link_mbps about 80 % of the
 * link's raw rate (its line code and the storage protocol), whichever is lower. */
double plan_rate(const struct plan *p);
/* A drive of `side` is behind a USB link of link_mbps (0: unknown, ignored): the slowest one counts. */
void plan_limit_link(struct plan *p, const char *side, uint64_t link_mbps);
/* The drive of `side` ("source" or "target") is attached by `transport` (static: disk_transport's
 * words or "file") and, when b->vendor_id is set, sits behind that USB bridge, which the plan takes
 * over (*b is emptied); its link then limits the pace as plan_limit_link says. The record's source
 * and target carry both. */
void plan_attach(struct plan *p, const char *side, const char *transport, struct disk_bridge *b);

/* The fingerprint of a layout as plan_build computes it (lower-case hex sha256). */
void plan_fingerprint(const struct layout *l, bool shrunk, char out[65]);

/* The target's GPT the plan writes. */
void plan_gpt(const struct plan *p, struct gpt_new *t); /* t->parts allocated; free() it */

/* The plan as JSON (the `plan` object of the record). */
json_object *plan_json(const struct plan *p);

/* `s` as one bash word that expands to exactly `s`: single quotes, ' as \', control bytes as
 * $'\xNN'; "''" for "". The only way the script embeds a string it did not write itself. */
char *shell_quote(const char *s);

/* A bash script (set -euo pipefail) that checks sizes, serials and the fingerprint before each
 * destructive command and stops at the first surprise. `swaptool` is the command to call back. */
char *plan_script(const struct plan *p, const char *swaptool);
