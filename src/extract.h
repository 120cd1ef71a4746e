/* SPDX-License-Identifier: MIT */
/* Restore (src/extract.c): a validated archive (tarball.h) extracted safely under a root: the plan
 * (no writes), the undo archive, atomic per-entry writes, the fstab trap, --map-user, and the
 * temporaries an interrupted restore leaves. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "fstab.h"
#include "profile.h"
#include "tarball.h"

/* "old=new" user/group name maps (--map-user). */
struct name_map {
	char **from, **to;
	size_t n;
};
int name_map_add(struct name_map *m, const char *spec);
void name_map_free(struct name_map *m);
const char *name_map_apply(const struct name_map *m, const char *name);

enum restore_action { RA_CREATE, RA_REPLACE, RA_UNCHANGED, RA_KEEP, RA_REMOVE };
const char *restore_action_name(enum restore_action a);

struct restore_step {
	const struct arc_item *item; /* NULL for an undo removal */
	char *dest;                  /* relative path written (fstab.pre-swap for a kept fstab) */
	enum restore_action action;
	uid_t uid;
	gid_t gid;
};

struct restore_fstab {
	char *path;                  /* "etc/fstab" */
	char *kept_as;               /* "etc/fstab.pre-swap" when the trap fired, else NULL */
	struct fstab_report rep;
};

struct restore_opts {
	const char *root;
	const struct profile *profile;
	const struct name_map *map;
	const char *state_dir;       /* where swaptool-state/ goes; NULL: not restored */
	const char *undo_path;       /* where the undo tarball goes; NULL: none (undo mode) */
	fstab_resolver resolve;
	void *resolve_data;
};

struct restore_plan {
	struct restore_step *v;
	size_t n;
	struct restore_fstab *fst;
	size_t nfst;
	struct strlist created;      /* paths that did not exist (for the undo archive) */
	struct strlist strays;       /* temporaries of an interrupted restore beside the destinations: apply removes them */
	size_t ncreate, nreplace, nunchanged, nremove;
};

/* Check the archive against the root (ancestors that are symlinks, type conflicts, owner
 * names) and decide each entry's action, the fstab trap included. Writes nothing. */
int restore_plan(const struct arc *a, const struct restore_opts *o, struct restore_plan *p, char **why);
/* Save what the plan replaces into o->undo_path, remove p->strays, then write. SIGINT
 * (arc_catch_sigint) before the first rename returns -EINTR with every temporary removed. */
int restore_apply(const struct arc *a, const struct restore_opts *o, struct restore_plan *p, char **why);
void restore_plan_free(struct restore_plan *p);

/* Temporaries of an interrupted restore (RESTORE_TMP_PREFIX) in directory `dfd` (relative
 * name `dir`, "" for the root itself): added to `found` as relative paths; removed when
 * `remove`. Only regular files and symlinks are swaptool's: anything else is left alone. */
int restore_strays(int dfd, const char *dir, struct strlist *found, bool remove);
/* The directories to search for them among `paths` (relative): the root (""), each path's
 * directory and each path, sorted, without repeats; the caller frees each and the array. */
char **stray_dirs(char *const *paths, size_t n, size_t *count);
