/* SPDX-License-Identifier: MIT */
/* Config tarballs through libarchive (src/tarball.c; named tarball, not archive: an "archive.h" here
 * would shadow libarchive's <archive.h> on the include path): collect the backup set, write and read
 * back, load and validate a whole archive. Paths and owner names under a root are rootpath.h, extraction
 * extract.h, the live system's check verify.h. */
#pragma once

#include <archive_entry.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "manifest.h"
#include "profile.h"

struct stat;

/* ---- interruption (paths under a root and names on a root: src/rootpath.h) ---- */

/* Set by SIGINT once arc_catch_sigint() ran: backup and restore stop between entries. */
extern volatile sig_atomic_t arc_interrupted;
void arc_catch_sigint(void);

/* ---- backup side ---- */

struct named_reason {
	char *path;
	char *reason;
};

struct required_file {
	char *path;    /* as the profile names it, expanded: "/home/nv/.config/flare/orbit/controller.key" */
	bool ok;       /* present, regular, non-empty and in the archive */
	uint64_t size;
	char *why;     /* when not ok: "missing", "empty", "not a regular file (directory)" */
};

struct state_blob {
	char *name;
	unsigned char *data;
	size_t len;
};

/* What goes into a tarball: the manifest, where each entry is read from, the state records. */
struct arc_source {
	struct manifest man;
	char **src;                 /* full path on this machine of man.e[i] */
	struct state_blob *state;   /* parallel to man.st */
	struct named_reason *skipped;
	size_t nskipped;
	struct named_reason *missing; /* backup paths that do not exist (not an error) */
	size_t nmissing;
	struct required_file *req;
	size_t nreq;
	char *unreadable;           /* set when a file could not be read and skipping was not asked */
	uint64_t data_bytes;
	const char *root;           /* whose etc/passwd names the owners ("/": this system) */
	const struct arc_limits *lim; /* NULL: the built-in limits */
};

struct backup_opts {
	const char *root;           /* "/" or a directory holding a node's tree */
	const char *home;           /* the node user's home as the node sees it: "/home/nv" */
	const struct profile *profile;
	const char *state_dir;      /* NULL: no records */
	bool skip_unreadable;
};

/* Walk the backup set. Returns 0 (check s->req / s->unreadable), or negative errno with *why. */
int backup_collect(const struct backup_opts *o, struct arc_source *s, char **why);
void arc_source_free(struct arc_source *s);

/* Write `s` as a gzip pax tarball to `out` atomically (temp, fsync, rename, fsync dir) with
 * mode 0600 and owner uid:gid (-1: unchanged); before the rename the temp file is read back
 * and every entry checked against the manifest: on any difference it is removed and -EIO
 * returned with *why. *sha256 / *bytes describe the file written. */
int arc_write(const struct arc_source *s, const char *out, uid_t uid, gid_t gid, char sha256[65],
	      uint64_t *bytes, char **why);
/* The same in two halves, so that a step can put several outputs in place together: the
 * verified temporary (its name in *tmp), then its rename over `out` (the temporary removed on failure). */
int arc_write_tmp(const struct arc_source *s, const char *out, uid_t uid, gid_t gid, char sha256[65],
		  uint64_t *bytes, char **tmp, char **why);
int arc_commit(const char *tmp, const char *out, char **why);
/* Remove OUT.tmp.XXXXXX regular files beside `out` (what a killed backup, copy or undo left:
 * copies of the keys). arc_write_tmp calls it; returns how many went. */
int arc_sweep_tmps(const char *out);

/* ---- restore side ---- */

struct arc_item {
	char *path;                 /* normalized archive path */
	struct archive_entry *ae;   /* cloned header: type, mode, owner, times, xattrs, ACLs */
	unsigned char *data;
	size_t len;
	const struct mentry *m;     /* its manifest entry */
};

struct arc {
	struct manifest man;
	struct arc_item *items;     /* entries in archive order, without manifest and state */
	size_t n;
	struct state_blob *state;   /* parallel to man.st */
	uint64_t bytes;             /* tarball size */
	char sha256[65];            /* tarball hash */
};

/*
 * Read the whole tarball and check it before anything is written: manifest first and well
 * formed; every archive entry listed and every listed entry present; types, sizes, hashes,
 * link targets; no absolute path, '..', device node, FIFO, path through a symlink of the same
 * archive, hard link out of the set; no truncated or corrupt stream; limits. Returns 0, or
 * -EBADMSG (hostile/corrupt: *why names the entry), -errno for I/O.
 */
int arc_load(const char *path, const struct arc_limits *lim, struct arc *a, char **why);
void arc_free(struct arc *a);
