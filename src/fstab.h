/* SPDX-License-Identifier: MIT */
/* fstab/crypttab identifiers (UUID=, PARTUUID=, LABEL=, PARTLABEL=) and whether they resolve here (libblkid). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct fstab_issue {
	unsigned line;      /* 1-based line number */
	char *text;         /* the line as written */
	char *tag;          /* "UUID", "PARTUUID", "LABEL", "PARTLABEL" */
	char *value;
	char *target;       /* mount point (fstab) or mapping name (crypttab) */
	char *breaks;       /* what fails at boot when this line stays */
};

struct fstab_report {
	struct fstab_issue *v;
	size_t n;           /* unresolved lines */
	size_t ids;         /* identifier lines seen */
};

/* A resolver: true when TAG=VALUE names a device on this machine. */
typedef bool (*fstab_resolver)(const char *tag, const char *value, void *userdata);
/* The libblkid resolver: udev links first, then a probe of every block device (no cache file). */
bool fstab_resolve_blkid(const char *tag, const char *value, void *userdata);
void fstab_blkid_reset(void);

/*
 * Check each identifier line of `text`. `crypttab` selects the crypttab layout (device in
 * field 2) instead of fstab's (field 1). Lines naming /dev/disk/by-uuid/ etc. count as tags.
 */
int fstab_check(const char *text, bool crypttab, fstab_resolver resolve, void *userdata,
		struct fstab_report *rep);
void fstab_report_free(struct fstab_report *rep);
/* The unresolved lines as a JSON array of {line, text, tag, value, target, breaks} (verify's and
 * restore's records). */
struct json_object *fstab_report_json(const struct fstab_report *rep);
/* True when the file name is a crypttab ("crypttab", "crypttab.initramfs"). */
bool fstab_is_crypttab(const char *path);
