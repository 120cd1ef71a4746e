/* SPDX-License-Identifier: MIT */
/* The drive-class catalogue: which NVMe drives suit sustained large-working-set random reads. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

struct profile;

/* Ordered from best to worst, so the worse of two verdicts is the larger. */
enum drive_verdict { DRIVE_UNKNOWN, DRIVE_REFERENCE, DRIVE_SUITED, DRIVE_MEASURE, DRIVE_AVOID };

const char *drive_verdict_name(enum drive_verdict v); /* "avoid", ... "unknown" */
int drive_verdict_parse(const char *s, enum drive_verdict *v);

/* A capacity the drive is sold in, with its exact namespace size ("2TB" = 3,907,029,168 x 512 B). */
struct drive_sku {
	const char *label;   /* as in the model name: "2TB", "1TB" */
	uint64_t lba_count;
	uint32_t lba_size;
};
#define DRIVE_MAX_SKUS 4

struct drive_entry {
	const char *name;       /* display name: "KingSpec XG7000" */
	const char *match;      /* model patterns separated by '|'; compared as drive_model_matches() does */
	const char *controller;
	const char *dram;       /* "none (DRAM-less)", "DRAM" */
	uint64_t hmb_mb;        /* host memory buffer it declares, MiB ("MB" as docs/incident.md writes it); 0 none/unknown */
	const char *nand;
	enum drive_verdict verdict;
	const char *reason;     /* why, for people */
	const char *note;       /* a naming trap or other warning; NULL when none */
	struct drive_sku skus[DRIVE_MAX_SKUS];
};

/* The built-in catalogue (src/drives.c), in the incident's order. */
extern const struct drive_entry drive_catalogue[];
extern const unsigned drive_catalogue_len;

struct drive_class {
	bool known;             /* found in the profile or the built-in catalogue */
	unsigned profile_line;  /* > 0: a [drive NAME] section of the profile at this line */
	struct drive_entry e;   /* strings borrowed from the table or the profile */
};

/*
 * Does `model` match `patterns` ("MP600 MINI|MP600MINI")? Case, spaces, '-' and '_' are ignored
 * on both sides, so "Corsair MP600 Mini 2TB", "CORSAIR MP600 MINI" and "mp600-mini" all match
 * "MP600 MINI". Returns the length of the longest matching pattern (normalized), 0 when none.
 */
unsigned drive_model_matches(const char *model, const char *patterns);

/*
 * Look `model` up: the profile's [drive NAME] sections first (a user entry overrides the
 * built-in one), then the built-in table; within each, the longest matching pattern wins.
 * Returns 1 when found (c->known), 0 when not (c zeroed).
 */
int drive_lookup(const struct profile *p, const char *model, struct drive_class *c);

/* The SKU whose label appears in `model` ("... 2TB"), or NULL. */
const struct drive_sku *drive_sku_for(const struct drive_class *c, const char *model);

/*
 * The verdict for a drive: its catalogue verdict when known; else judged by what it reports:
 * hmpre > 0 means it depends on a host memory buffer (DRAM-less), so "measure" (the incident's
 * point: DRAM-less alone is not the verdict); no HMB: unknown, left to `swaptool accept`.
 * *why is an allocated sentence for people. have_hmpre: false when nothing is reported (a model
 * name given by hand).
 */
enum drive_verdict drive_judge(const struct drive_class *c, bool have_hmpre, uint32_t hmpre, char **why);
