/* SPDX-License-Identifier: MIT */
/* Paths under a root (src/rootpath.c): archive paths safe to join to a root, state-record names,
 * a path resolved inside a root as if it were "/", owner names and ids on a root. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

/* The longest archive path (src/manifest.h's entries, tarball entries, undo paths). */
#define ARC_MAX_PATH 1024

/*
 * A relative archive path that is safe to join to a root: not empty, not absolute, no
 * "..", "." or empty component, no control characters, at most ARC_MAX_PATH bytes.
 * Returns 0, or -EINVAL with *why a static reason ("absolute path", "'..' component").
 */
int path_check(const char *p, const char **why);
/* Strip one trailing '/' (directory entries) into a new string. */
char *path_normalize(const char *p);
/* A state-record name: [A-Za-z0-9._-]+ ending in ".json", no leading dot. */
bool state_name_ok(const char *name);

/* ---- paths and names on a root ---- */

/* Is `root` this running system ("/" or the same directory by identity)? */
bool root_is_live(const char *root);
/* Open the directory `rel` below rootfd, its symlinks resolved as if rootfd were "/"
 * (openat2 RESOLVE_IN_ROOT; a component walk where the kernel lacks it). Returns fd or -errno. */
int root_open_dir(int rootfd, const char *rel);
/* The component walk alone (an O_PATH descriptor): what root_open_dir falls back to. */
int walk_in_root(int rootfd, const char *rel);
/* The path on this machine that `rel` names inside the root: its directory resolved inside
 * the root, the last component too when follow_last. NULL with errno when it does not resolve. */
char *root_real(int rootfd, const char *rel, bool follow_last);
/* Owner names on a root: the live system's NSS for "/", else ROOT/etc/passwd and
 * ROOT/etc/group read through the root (never this host's); the number when unnamed. */
char *root_user_name(const char *root, uid_t uid);
char *root_group_name(const char *root, gid_t gid);
/* Resolve a user or group name on the root: NSS for the live system, else ROOT/etc/passwd and
 * ROOT/etc/group (read through the root, parsed by glibc's fgetpwent_r/fgetgrent_r); a name of digits is that number.
 * -ENOENT: no such name; -ENOMEDIUM: an offline root without its own etc/passwd (etc/group). */
int lookup_user(const char *root, const char *name, uid_t *uid);
int lookup_group(const char *root, const char *name, gid_t *gid);
