/* SPDX-License-Identifier: MIT */
/* The backup manifest (docs/design.md, schema swaptool-manifest/1): entries, JSON, path safety. */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

#include "util.h" /* struct strlist */

#define MANIFEST_NAME "swaptool-manifest.json"
#define MANIFEST_SCHEMA "swaptool-manifest/1"
#define STATE_DIR_NAME "swaptool-state"

/*
 * Fixed limits; the ones a site may need to move (entries, bytes, records) are the profile's
 * [limits] (struct arc_limits, swaptool-profile(5)). 16 MiB of manifest holds ~50,000 entries.
 */
#define ARC_MAX_MANIFEST (16ULL << 20)
/* The temporaries restore writes beside each destination (a name reserved for swaptool:
 * backup skips them, a manifest may not list them, restore and verify find them). */
#define RESTORE_TMP_PREFIX ".swaptool-restore."

enum mtype { MT_FILE, MT_DIR, MT_SYMLINK, MT_HARDLINK };

struct mentry {
	char *path;       /* relative to the root, no leading '/', no trailing '/' */
	enum mtype type;
	uint32_t mode;    /* permission bits, 07777 */
	uint32_t uid, gid;
	char *user, *group; /* names: restore maps them to this machine's ids */
	uint64_t size;
	char sha256[65];  /* regular files; "" otherwise */
	char *link;       /* symlink target, or the hard link's target path; NULL otherwise */
	int64_t mtime;
	bool parent;      /* an ancestor of a backup path, stored for ownership; never changed when present */
};

struct mstate {
	char *name;       /* "preflight.json" */
	uint64_t size;
	char sha256[65];
};

struct manifest {
	char *host, *user, *home, *created;
	struct mentry *e;
	size_t n, cap;
	struct mstate *st;
	size_t nst;
	bool undo;                  /* an undo archive written by restore */
	struct strlist undo_created;/* undo: paths restore created, removed again by --undo */
	size_t *index;              /* sorted indices of e[] for manifest_find */
};

const char *mtype_name(enum mtype t);
int mtype_parse(const char *s, enum mtype *t);
struct mentry *manifest_add(struct manifest *m, const char *path);
void manifest_free(struct manifest *m);
json_object *manifest_to_json(const struct manifest *m);
/* Parse and check a manifest; on error *why is an allocated reason. Builds the index. */
int manifest_parse(const char *text, size_t len, struct manifest *m, char **why);
/* (Re)build the lookup index after adding entries; -EEXIST when a path is listed twice. */
int manifest_index(struct manifest *m, const char **dup);
const struct mentry *manifest_find(const struct manifest *m, const char *path);
