/* SPDX-License-Identifier: MIT */
/* Who may change a file root acts on: the file, and every directory on its path up to /, must be
 * root's (or the trusted owner's) and writable by no one else, as sshd's StrictModes asks. */
#pragma once

#include <stdbool.h>
#include <sys/stat.h>
#include <sys/types.h>

/* Flags of trust_check. */
enum {
	/* A path that does not exist yet (a state directory mkdir_p will make): the part that exists is
	 * judged and 0 returned at the first missing component. */
	TRUST_MISSING_OK = 1 << 0,
};

/* Judge PATH for a process that trusts `owner` and root: walking from / (a relative PATH from the
 * working directory), every directory on the way must be owned by root or `owner` and not writable
 * by group or others, unless it is sticky (/tmp: only an entry's owner may rename or remove it, and
 * every entry on the way must be trusted too); the file itself (or the last directory) must be owned
 * by root or `owner` and not writable by group or others, sticky or not. A symlink on the way must be
 * owned by root or `owner`; its target is then judged the same way (at most 40 links). Returns 0;
 * -EPERM with *why naming the path and the owner or mode that is wrong; another -errno (-ENOENT,
 * -EACCES, -ELOOP) with *why when the path cannot be walked. */
int trust_check(const char *path, uid_t owner, unsigned flags, char **why);
/* trust_check without flags. */
int trust_check_path(const char *path, uid_t owner, char **why);
/* The same judgement of one open file or directory by its stat (the last component): owned by root or
 * `owner`, not writable by group or others. *why (when not NULL) says which, without the path. */
int trust_check_stat(const struct stat *st, uid_t owner, char **why);
