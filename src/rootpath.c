/* SPDX-License-Identifier: MIT */
/* Paths under a root: archive-path safety, resolution inside a root as if it were "/" (openat2,
 * else a component walk), and owner names from the root's own etc/passwd and etc/group. */
#include "util.h"
#include "rootpath.h"

#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <linux/openat2.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/syscall.h>

/* ---------------------------------------------------------------- archive paths ---- */

int path_check(const char *p, const char **why)
{
	size_t len = p ? strlen(p) : 0;

	if (len == 0)
		return *why = "empty path", -EINVAL;
	if (len > ARC_MAX_PATH)
		return *why = "path longer than 1024 bytes", -EINVAL;
	if (p[0] == '/')
		return *why = "absolute path", -EINVAL;
	for (const char *s = p; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return *why = "control character in the path", -EINVAL;
	for (const char *s = p; *s;) {
		size_t n = strcspn(s, "/");

		if (n == 0)
			return *why = "empty path component", -EINVAL;
		if (n == 2 && s[0] == '.' && s[1] == '.')
			return *why = "'..' component", -EINVAL;
		if (n == 1 && s[0] == '.')
			return *why = "'.' component", -EINVAL;
		s += n;
		if (*s == '/') {
			s++;
			if (!*s)
				return *why = "trailing '/'", -EINVAL;
		}
	}
	return 0;
}

char *path_normalize(const char *p)
{
	char *s = xstrdup(p);
	size_t n = strlen(s);

	if (n > 1 && s[n - 1] == '/')
		s[n - 1] = '\0';
	return s;
}

bool state_name_ok(const char *name)
{
	size_t n = name ? strlen(name) : 0;

	if (n < 6 || n > 128 || name[0] == '.' || !streq(name + n - 5, ".json"))
		return false;
	for (const char *p = name; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		      *p == '.' || *p == '_' || *p == '-'))
			return false;
	return true;
}

/* ---------------------------------------------------------------- paths under a root ---- */

bool root_is_live(const char *root)
{
	struct stat a, b;

	return !root || streq(root, "/") ||
	       (stat(root, &a) == 0 && stat("/", &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino);
}

/* Resolve the directory `rel` below rootfd component by component, following symlinks as if
 * rootfd were "/" (".." stops there, an absolute target restarts there): where the kernel has
 * no openat2 (before Linux 5.6) or a filter refuses it. Returns an O_PATH descriptor. */
int walk_in_root(int rootfd, const char *rel)
{
	_cleanup_free_ char *todo = xstrdup(rel);
	int stack[1100]; /* a 1,024-byte path has at most 512 components; links add at most 40 restarts */
	size_t n = 0;
	int links = 0, r = 0;

	stack[n] = openat(rootfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (stack[n] < 0)
		return -errno;
	n++;
	for (;;) {
		const char *s = todo;
		_cleanup_free_ char *comp = NULL;
		char *next;
		struct stat st;
		size_t len;

		while (*s == '/')
			s++;
		if (!*s)
			break;
		len = strcspn(s, "/");
		comp = strndup(s, len);
		next = xstrdup(s + len);
		if (!comp)
			abort();
		free(todo);
		todo = next;
		if (streq(comp, "."))
			continue;
		if (streq(comp, "..")) {
			if (n > 1)
				close(stack[--n]);
			continue;
		}
		if (fstatat(stack[n - 1], comp, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			r = -errno;
			break;
		}
		if (S_ISLNK(st.st_mode)) {
			char t[4096];
			ssize_t k = readlinkat(stack[n - 1], comp, t, sizeof(t) - 1);

			if (++links > 40 || k < 0) {
				r = k < 0 ? -errno : -ELOOP;
				break;
			}
			t[k] = '\0';
			if (t[0] == '/')
				while (n > 1)
					close(stack[--n]);
			next = xasprintf("%s/%s", t, todo);
			free(todo);
			todo = next;
			continue;
		}
		if (!S_ISDIR(st.st_mode)) {
			r = -ENOTDIR;
			break;
		}
		if (n == ARRAY_SIZE(stack)) {
			r = -ENAMETOOLONG;
			break;
		}
		stack[n] = openat(stack[n - 1], comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (stack[n] < 0) {
			r = -errno;
			break;
		}
		n++;
	}
	if (r == 0)
		r = TAKE_FD(stack[n - 1]), n--;
	while (n > 0)
		close(stack[--n]);
	return r;
}

int root_open_dir(int rootfd, const char *rel)
{
	struct open_how how = { .flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
				.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };
	int fd, pfd;

	if (!*rel)
		rel = ".";
	/* ENOSYS before Linux 5.6, EPERM under a seccomp filter, EAGAIN when a rename raced the
	 * lookup: the component walk below does the same job */
	fd = (int)syscall(SYS_openat2, rootfd, rel, &how, sizeof(how));
	if (fd >= 0 || (errno != ENOSYS && errno != EPERM && errno != E2BIG && errno != EAGAIN))
		return fd >= 0 ? fd : -errno;
	pfd = walk_in_root(rootfd, rel);
	if (pfd < 0)
		return pfd;
	fd = openat(pfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	fd = fd < 0 ? -errno : fd;
	close(pfd);
	return fd;
}

char *root_real(int rootfd, const char *rel, bool follow_last)
{
	_cleanup_free_ char *cur = xstrdup(rel);

	for (int links = 0; links <= 40; links++) {
		_cleanup_free_ char *dir = xstrdup(cur);
		char *slash = strrchr(dir, '/');
		const char *leaf = slash ? slash + 1 : dir;
		_cleanup_close_ int fd = -1;
		char link[64], real[PATH_MAX], t[PATH_MAX];
		struct stat st;
		ssize_t n;

		if (slash)
			*slash = '\0';
		fd = root_open_dir(rootfd, slash ? dir : "");
		if (fd < 0) {
			errno = -fd;
			return NULL;
		}
		/* a last component that is a symlink: its target, again inside the root */
		if (follow_last && *leaf && fstatat(fd, leaf, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
			n = readlinkat(fd, leaf, t, sizeof(t) - 1);
			if (n < 0)
				return NULL;
			t[n] = '\0';
			free(cur);
			cur = t[0] == '/' ? xstrdup(t + 1) : xasprintf("%s%s%s", slash ? dir : "", slash ? "/" : "", t);
			continue;
		}
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		n = readlink(link, real, sizeof(real) - 1);
		if (n < 0)
			return NULL;
		real[n] = '\0';
		if (!*leaf || streq(leaf, "."))
			return xstrdup(real);
		if (streq(leaf, "..")) {
			/* the parent, but never above the root */
			_cleanup_free_ char *up = xasprintf("%s/..", slash ? dir : "");
			_cleanup_close_ int ufd = root_open_dir(rootfd, up);

			if (ufd < 0) {
				errno = -ufd;
				return NULL;
			}
			snprintf(link, sizeof(link), "/proc/self/fd/%d", ufd);
			n = readlink(link, real, sizeof(real) - 1);
			if (n < 0)
				return NULL;
			real[n] = '\0';
			return xstrdup(real);
		}
		return xasprintf("%s%s%s", real, streq(real, "/") ? "" : "/", leaf);
	}
	errno = ELOOP;
	return NULL;
}

/* ---- names and ids: the root's own etc/passwd and etc/group (an offline root is not this host) ---- */

/* Read ROOT/etc/FILE through the root (its symlinks resolved inside it); -ENOMEDIUM when it has none. */
/* ROOT/etc/FILE resolved through the root (it may be a link to ../usr/share/...); NULL with
 * -ENOMEDIUM in *r when the root has none. */
static char *root_db_path(const char *root, const char *file, int *r)
{
	_cleanup_close_ int rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	_cleanup_free_ char *rel = xasprintf("etc/%s", file);
	char *real;

	if (rootfd < 0) {
		*r = -errno;
		return NULL;
	}
	real = root_real(rootfd, rel, true);
	*r = real ? 0 : errno == ENOENT || errno == ENOTDIR ? -ENOMEDIUM : -errno;
	return real;
}

/* One restore looks up thousands of owners: keep each file read, until it changes (a restore
 * may itself bring back etc/passwd before verify runs in the same process). */
static int root_db(const char *root, const char *file, char **text)
{
	static struct {
		char *root, *text;
		dev_t dev;
		ino_t ino;
		struct timespec mtime;
		off_t size;
		int r;
	} slot[2];
	int k = streq(file, "group"), r;
	_cleanup_free_ char *path = root_db_path(root, file, &r);
	struct stat st = { 0 };

	if (path && stat(path, &st) < 0)
		r = errno == ENOENT ? -ENOMEDIUM : -errno;
	if (r < 0)
		return r;
	if (!streq(slot[k].root, root) || slot[k].dev != st.st_dev || slot[k].ino != st.st_ino || slot[k].size != st.st_size ||
	    slot[k].mtime.tv_sec != st.st_mtim.tv_sec || slot[k].mtime.tv_nsec != st.st_mtim.tv_nsec) {
		free(slot[k].root);
		free(slot[k].text);
		slot[k].text = NULL;
		slot[k].root = xstrdup(root);
		slot[k].dev = st.st_dev, slot[k].ino = st.st_ino, slot[k].size = st.st_size, slot[k].mtime = st.st_mtim;
		slot[k].r = read_input_at(AT_FDCWD, path, 16 << 20, INPUT_NOFOLLOW, &slot[k].text, NULL, NULL);
	}
	if (slot[k].r < 0)
		return slot[k].r == -ENOENT ? -ENOMEDIUM : slot[k].r;
	*text = xstrdup(slot[k].text);
	return 0;
}

/* One entry of a passwd or group file, read by glibc's own parser (fgetpwent_r, fgetgrent_r: the
 * format nss_files reads, comments and malformed lines skipped) into a buffer that grows on ERANGE
 * (the stream is then back at the start of that line). 1: an entry, 0: the end, <0: an error. */
static int db_next(FILE *f, bool group, char **buf, size_t *len, const char **name, unsigned long *id)
{
	for (;;) {
		struct passwd pw, *pwp = NULL;
		struct group gr, *grp = NULL;
		int r = group ? fgetgrent_r(f, &gr, *buf, *len, &grp) : fgetpwent_r(f, &pw, *buf, *len, &pwp);

		if (r == ERANGE && *len < (64u << 20)) {
			free(*buf);
			*buf = xcalloc(1, *len *= 2);
			continue;
		}
		if (r == ENOENT)
			return 0;
		if (r != 0)
			return -r;
		*name = group ? grp->gr_name : pwp->pw_name;
		*id = group ? grp->gr_gid : pwp->pw_uid;
		return 1;
	}
}

/* Find an entry of a passwd/group file's text by name, or by id when name is NULL. NIS lines
 * ("+", "-") name no one. */
static bool db_find(const char *text, bool group, const char *name, unsigned long id, char **name_out,
		    unsigned long *id_out)
{
	_cleanup_fclose_ FILE *f = fmemopen((void *)text, strlen(text), "r");
	size_t len = 4096;
	_cleanup_free_ char *buf = xcalloc(1, len);
	const char *n = NULL;
	unsigned long v = 0;

	if (!f || !*text)
		return false;
	while (db_next(f, group, &buf, &len, &n, &v) > 0) {
		if (!*n || *n == '+' || *n == '-' || v > UINT32_MAX - 1)
			continue;
		if (name ? streq(n, name) : v == id) {
			if (name_out)
				*name_out = xstrdup(n);
			if (id_out)
				*id_out = v;
			return true;
		}
	}
	return false;
}

static bool all_digits(const char *s)
{
	if (!s || !*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

static int lookup_name(const char *root, bool group, const char *name, unsigned long *id)
{
	_cleanup_free_ char *text = NULL;
	int r;

	if (root_is_live(root)) {
		struct passwd *pw = group ? NULL : getpwnam(name);
		struct group *gr = group ? getgrnam(name) : NULL;

		if (pw || gr) {
			*id = pw ? pw->pw_uid : gr->gr_gid;
			return 0;
		}
		r = -ENOENT;
	} else {
		r = root_db(root, group ? "group" : "passwd", &text);
		if (r == 0)
			r = db_find(text, group, name, 0, NULL, id) ? 0 : -ENOENT;
	}
	if (r < 0 && all_digits(name)) { /* stored by number: the backup had no name for it */
		*id = strtoul(name, NULL, 10);
		return 0;
	}
	return r;
}

int lookup_user(const char *root, const char *name, uid_t *uid)
{
	unsigned long v;
	int r = lookup_name(root, false, name, &v);

	if (r == 0)
		*uid = (uid_t)v;
	return r;
}

int lookup_group(const char *root, const char *name, gid_t *gid)
{
	unsigned long v;
	int r = lookup_name(root, true, name, &v);

	if (r == 0)
		*gid = (gid_t)v;
	return r;
}

static char *id_name(const char *root, bool group, unsigned long id)
{
	_cleanup_free_ char *text = NULL;
	char *name = NULL;

	if (root_is_live(root)) {
		struct passwd *pw = group ? NULL : getpwuid((uid_t)id);
		struct group *gr = group ? getgrgid((gid_t)id) : NULL;

		if (pw || gr)
			return xstrdup(pw ? pw->pw_name : gr->gr_name);
	} else if (root_db(root, group ? "group" : "passwd", &text) == 0 && db_find(text, group, NULL, id, &name, NULL))
		return name;
	return xasprintf("%lu", id);
}

char *root_user_name(const char *root, uid_t uid)
{
	return id_name(root, false, uid);
}

char *root_group_name(const char *root, gid_t gid)
{
	return id_name(root, true, gid);
}
