/* SPDX-License-Identifier: MIT */
/* verify (src/verify.c): the live system under a root against a backup's manifest. */
#pragma once

#include "fstab.h"

struct arc;
struct name_map;
struct profile;
struct record;

/* Check the live system under `root` against the manifest of `a` and add the checks to `rec`:
 * entries present/type/content/mode/owner/links, required files (controller.key), ~/.ssh
 * permissions, fstab identifiers, /etc/hosts. Returns the number of failed checks. */
int verify_system(const struct arc *a, const char *root, const struct name_map *map, const struct profile *p,
		  fstab_resolver resolve, void *resolve_data, struct record *rec);
