/* SPDX-License-Identifier: MIT */
/* Allocated bytes under a path: on the live system (mounted) or inside an offline ext filesystem. */
#pragma once

#include <stdint.h>

#include "layout.h"

/* Live: st_blocks of everything under `path`, one filesystem, symlinks not followed, hard links once. */
int usage_live(const char *path, uint64_t *bytes);
/* Offline: `path` (absolute, as on the node) looked up in each ext filesystem of the layout; the
 * first that holds it answers. -ENOENT when none does. */
int usage_offline(const struct layout *l, const char *path, uint64_t *bytes);
