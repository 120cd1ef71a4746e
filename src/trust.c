/* SPDX-License-Identifier: MIT */
/* Trust of a path by its owners and modes, walked with O_PATH|O_NOFOLLOW from / (src/trust.h). */
#include "trust.h"

#include <fcntl.h>
#include <limits.h>
#include <string.h>

#include "util.h"

/* As the kernel and glibc's realpath allow (MAXSYMLINKS). */
#define TRUST_MAX_LINKS 40

int trust_check_stat(const struct stat *st, uid_t owner, char **why)
{
	return stat_trusted(st, "it", owner, false, why);
}

/* The next component of *rest (skipping slashes and "."), NUL-terminated in place; NULL at the end. */
static char *next_name(char **rest)
{
	char *p = *rest, *name;

	for (;;) {
		while (*p == '/')
			p++;
		if (p[0] == '.' && (p[1] == '/' || p[1] == '\0')) {
			p++;
			continue;
		}
		break;
	}
	if (!*p) {
		*rest = p;
		return NULL;
	}
	name = p;
	p += strcspn(p, "/");
	if (*p)
		*p++ = '\0';
	*rest = p;
	return name;
}

/* Whether *rest holds no more component. */
static bool at_end(const char *rest)
{
	_cleanup_free_ char *copy = xstrdup(rest);
	char *p = copy;

	return next_name(&p) == NULL;
}

int trust_check(const char *path, uid_t owner, unsigned flags, char **why)
{
	_cleanup_free_ char *buf = NULL, *shown = xstrdup("");
	_cleanup_close_ int dfd = -1;
	char *rest;
	unsigned links = 0;
	struct stat st;
	bool end;

	if (!path || !*path)
		return set_why(why, -EINVAL, "no path");
	if (path[0] == '/')
		buf = xstrdup(path);
	else {
		_cleanup_free_ char *cwd = getcwd(NULL, 0);
		if (!cwd)
			return set_why(why, -errno, "cannot find the working directory: %m");
		buf = xasprintf("%s/%s", cwd, path);
	}
	rest = buf;
	dfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || fstat(dfd, &st) < 0)
		return set_why(why, -errno, "cannot look at '/': %m");
	end = at_end(rest);
	if (stat_trusted(&st, "directory '/'", owner, !end, why) < 0)
		return -EPERM;
	while (!end) {
		char *name = next_name(&rest);
		_cleanup_free_ char *here = NULL, *what = NULL;
		int fd;

		if (!name)
			break;
		end = at_end(rest);
		here = streq(name, "..") ? xstrdup(shown) : xasprintf("%s/%s", shown, name);
		if (streq(name, "..")) { /* the parent: judged as any directory on the way */
			char *slash = strrchr(here, '/');
			if (slash)
				*slash = '\0';
		}
		if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			if (errno == ENOENT && (flags & TRUST_MISSING_OK))
				return 0;
			return set_why(why, -errno, "cannot look at '%s': %m", *here ? here : "/");
		}
		what = xasprintf("%s '%s'", S_ISDIR(st.st_mode) ? "directory" : "file", *here ? here : "/");
		if (S_ISLNK(st.st_mode)) {
			/* The link's directory was judged above; the link itself must be trusted (a sticky /tmp
			 * lets anyone add one), then its target is walked as if it stood here. */
			char target[PATH_MAX];
			ssize_t n;
			char *nb;

			free(what);
			what = xasprintf("'%s'", here);
			if (stat_trusted(&st, what, owner, false, why) < 0)
				return -EPERM;
			if (++links > TRUST_MAX_LINKS)
				return set_why(why, -ELOOP, "'%s': more than %d symbolic links", path, TRUST_MAX_LINKS);
			n = readlinkat(dfd, name, target, sizeof(target) - 1);
			if (n < 0)
				return set_why(why, -errno, "cannot read the symbolic link '%s': %m", here);
			target[n] = '\0';
			nb = xasprintf("%s/%s", target, rest);
			free(buf);
			buf = nb;
			rest = buf;
			if (target[0] == '/') {
				close(dfd);
				dfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
				if (dfd < 0)
					return set_why(why, -errno, "cannot look at '/': %m");
				free(shown);
				shown = xstrdup("");
			}
			end = at_end(rest);
			continue;
		}
		if (!S_ISDIR(st.st_mode)) {
			if (!end)
				return set_why(why, -ENOTDIR, "'%s' is not a directory", here);
			return stat_trusted(&st, what, owner, false, why) < 0 ? -EPERM : 0;
		}
		fd = openat(dfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			return set_why(why, -errno, "cannot look at '%s': %m", here);
		close(dfd);
		dfd = fd;
		/* judged by the directory opened, not by the name looked at before */
		if (fstat(dfd, &st) < 0)
			return set_why(why, -errno, "cannot look at '%s': %m", here);
		if (stat_trusted(&st, what, owner, !end, why) < 0)
			return -EPERM;
		free(shown);
		shown = TAKE_PTR(here);
	}
	return 0;
}

int trust_check_path(const char *path, uid_t owner, char **why)
{
	return trust_check(path, owner, 0, why);
}
