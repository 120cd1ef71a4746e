/* SPDX-License-Identifier: MIT */
/* Path 1 (fresh install + restore) against the target: what it puts on the new drive, to the byte.
 * One computation, so that preflight and plan cannot disagree on whether path 1 is possible. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "layout.h"

/* a store whose size could not be measured: never judged to fit, never added */
#define FRESH_FIT_UNKNOWN UINT64_MAX

struct fresh_fit {
	uint64_t used_bytes;    /* the source's filesystems: an ext one's used blocks, any other partition whole */
	uint64_t install_bytes; /* the OS install: used_bytes less the stores and the irreplaceable files */
	uint64_t need_bytes;    /* install_bytes + the irreplaceable files: what path 1 must fit */
	uint64_t room_bytes;    /* the target's usable LBAs, in bytes */
	uint64_t total_bytes;   /* need_bytes + the stores that fit after it */
	size_t unmeasured;      /* partitions whose used bytes cannot be told (fresh_fit_part): not counted */
	size_t stores_missing;  /* stores of known size that do not fit after need_bytes */
	bool possible;          /* need_bytes <= room_bytes */
};

/* What partition `i` of the layout puts on the new drive in a fresh install, into *bytes: an ext
 * filesystem its used blocks (data and metadata), an ESP (vfat) the whole partition (the installer
 * makes it again), swap or a partition without a filesystem nothing (the installer sizes swap; no
 * data of the node is on it; an MBR extended container holds the logical ones, counted on their own). false for a filesystem swaptool cannot measure (xfs,
 * btrfs, an ext one it cannot read): path 1 is judged without it and says so. */
bool fresh_fit_part(const struct layout *l, size_t i, uint64_t *bytes);

/* Judge path 1 against the layout's target. `refetch` and `keep`: the bytes of the re-fetchable
 * stores and the irreplaceable files (both measured from the source); `stores[n]`: each store it
 * re-creates, in the profile's order (FRESH_FIT_UNKNOWN when not measured); `fits[n]` gets whether
 * each fits after those before it. Every sum saturates at UINT64_MAX, which never fits. */
void fresh_fit(const struct layout *l, uint64_t refetch, uint64_t keep, const uint64_t *stores, size_t n, bool *fits,
	       struct fresh_fit *f);
