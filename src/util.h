/* SPDX-License-Identifier: MIT */
/* Small shared helpers: cleanup attributes, checked arithmetic, strings, hashing, files. */
#pragma once

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Cleanup helpers, one per handle kind; each accepts NULL or -1. */
static inline void freep(void *p) { free(*(void **)p); }
static inline void closep(int *fd) { if (*fd >= 0) { int e = errno; close(*fd); errno = e; } }
static inline void fclosep(FILE **f) { if (*f) fclose(*f); }
#define _cleanup_(f) __attribute__((cleanup(f)))
#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)
#define _cleanup_fclose_ _cleanup_(fclosep)
/* json-c objects: _cleanup_json_ in src/json.h (this header does not depend on json-c). */

/* Hand a cleanup-owned value to the caller: the variable is reset so cleanup skips it. */
#define TAKE_PTR(p) ({ __typeof__(p) _t = (p); (p) = NULL; _t; })
#define TAKE_FD(fd) ({ int _t = (fd); (fd) = -1; _t; })

/* Checked uint64 arithmetic: returns -EOVERFLOW instead of wrapping. */
static inline int u64_add(uint64_t a, uint64_t b, uint64_t *out)
{
	return __builtin_add_overflow(a, b, out) ? -EOVERFLOW : 0;
}
static inline int u64_mul(uint64_t a, uint64_t b, uint64_t *out)
{
	return __builtin_mul_overflow(a, b, out) ? -EOVERFLOW : 0;
}
static inline int u64_sub(uint64_t a, uint64_t b, uint64_t *out)
{
	return __builtin_sub_overflow(a, b, out) ? -EOVERFLOW : 0;
}

static inline bool streq(const char *a, const char *b) { return a && b && strcmp(a, b) == 0; }
static inline bool startswith(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Replace *why (when why is not NULL) with a formatted message and return r, so that error paths
 * read `return set_why(why, -EINVAL, "'%s' is not ...", path);`. */
int set_why(char **why, int r, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* asprintf that aborts on out-of-memory: an allocation failure of a few bytes is not recoverable here. */
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *xstrdup(const char *s);
void *xcalloc(size_t n, size_t size);
/* A copy of s with every occurrence of `from` (not empty) replaced by `to`. */
char *str_replace_all(const char *s, const char *from, const char *to);
/* A growing list of owned strings (profile paths, paths restore created). */
struct strlist {
	char **v;
	size_t n;
};
void strlist_add(struct strlist *l, const char *s);
void strlist_clear(struct strlist *l);

/* Read a whole small file (sysfs attribute, key file) into a NUL-terminated buffer. */
int read_file_all(const char *path, size_t max, char **out, size_t *len);
/* Read one sysfs-style attribute and strip trailing whitespace. */
int read_attr(const char *path, char **out);

/* All of buf to / from a file descriptor, retrying short transfers and EINTR; a transfer of
 * nothing (end of file, full device) is -EIO. */
int write_all(int fd, const void *buf, size_t len);
int read_all(int fd, void *buf, size_t len);
/* The same at a file offset (pwrite/pread). */
int pwrite_all(int fd, const void *buf, size_t len, uint64_t off);
int pread_all(int fd, void *buf, size_t len, uint64_t off);
/* Whether n bytes of buf are all zero (a block that may stay a hole). */
bool buf_is_zero(const void *buf, size_t n);
/* Keep the last cap bytes of a stream (a child's output) in tail: append n bytes, dropping the oldest. */
void tail_append(char *tail, size_t cap, size_t *len, const char *buf, size_t n);

/* Write a file atomically: temp file beside it, fsync, rename, fsync of the directory. */
int write_file_atomic(const char *path, const void *data, size_t len, mode_t mode);
int fsync_parent_dir(const char *path);
/* mkdir -p with the given mode for the directories it creates. */
int mkdir_p(const char *path, mode_t mode);

/* SHA-256 helpers (OpenSSL libcrypto); hex is 64 chars + NUL. */
int sha256_buf(const void *buf, size_t len, char hex[65]);
int sha256_fd(int fd, char hex[65], uint64_t *bytes);
int sha256_path(const char *path, char hex[65], uint64_t *bytes);

/* The monotonic clock (CLOCK_MONOTONIC): for durations and deadlines, never for dates. */
uint64_t mono_ns(void);
double mono_s(void);

/* The node's host name (short form, as docs/incident.md names nodes: dgx4). */
const char *host_name(void);
/* ISO 8601 UTC time ("2026-11-04T10:00:00Z") of a wall-clock time. */
void iso8601_utc(time_t t, char buf[32]);
/* The home of the node's user: --home, else $SUDO_USER's, else $HOME. */
int node_home(const char *override, char **out);

/* Outside inputs (a dump, a signature, a report, a record, the profile): open read-only without
 * ever blocking and refuse what is not a regular file before reading a byte, so that a FIFO, a
 * terminal, /dev/zero or a directory named as an input is a message, not a hang or an endless read.
 * The open is O_NONBLOCK (a FIFO without a writer would block in open) and O_NOCTTY; after fstat
 * says regular file O_NONBLOCK is cleared. INPUT_ALLOW_BLOCK also accepts a block device (a disk is
 * read whole only by steps that mean it); INPUT_NOFOLLOW refuses a final symlink; INPUT_OURS refuses
 * with -EPERM a file that is neither this process's euid's nor root's, or that group or others may
 * write (trust_check_stat, src/trust.h: a record root reads must be root's). A regular file
 * larger than max_bytes (0: no cap) is refused with -EFBIG. Returns the fd, or a negative errno
 * with *why (when why is not NULL) set to what is wrong, without the path: "it is a FIFO, not a
 * regular file". */
enum { INPUT_ALLOW_BLOCK = 1 << 0, INPUT_NOFOLLOW = 1 << 1, INPUT_OURS = 1 << 2 };
int open_input(const char *path, uint64_t max_bytes, unsigned flags, char **why);
/* open_input, then the whole file into a NUL-terminated buffer; a file that grows past max_bytes
 * while it is read is -EFBIG too. */
int read_input(const char *path, size_t max_bytes, unsigned flags, char **out, size_t *len, char **why);
/* The same relative to a directory descriptor (AT_FDCWD: the current directory); *st (when not
 * NULL) gets the file's fstat. Not a regular file (FIFO, device, socket) is -ENODEV. */
struct stat;
int open_input_at(int dirfd, const char *path, uint64_t max_bytes, unsigned flags, struct stat *st, char **why);
int read_input_at(int dirfd, const char *path, size_t max_bytes, unsigned flags, char **out, size_t *len, char **why);
/* "FIFO", "character device", "directory"...: for messages. */
const char *file_kind(mode_t m);

/* UTF-8 as JSON requires (RFC 8259 §8.1): the length of the valid sequence at s (1-4), or 0 when
 * the bytes there are not one (a stray continuation, an overlong form, a surrogate, past U+10FFFF,
 * cut short). */
size_t utf8_seq_len(const char *s);
bool utf8_valid(const char *s);
/* A copy of s with every byte that does not start a valid sequence replaced by U+FFFD. */
char *utf8_sanitize(const char *s);
/* A copy of s fit for a message: a newline, a tab or an escape as \n, \t, \e, any other control
 * byte and each byte that is not valid UTF-8 as \xHH, a backslash as \\ (a file name with a
 * newline in it must not start a line of its own, nor an escape sequence reach the terminal). */
char *str_escape(const char *s);

/* Whether one file or directory, by its stat, is root's or `owner`'s and writable by no one else
 * (src/trust.h walks a whole path with it): 0, or -EPERM with *why naming `what` ("'PATH'", "it")
 * and the owner or mode that is wrong. `inner`: a directory on the way, where a sticky one (/tmp)
 * may be writable by others. */
int stat_trusted(const struct stat *st, const char *what, uid_t owner, bool inner, char **why);
