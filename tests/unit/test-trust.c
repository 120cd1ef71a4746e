/* SPDX-License-Identifier: MIT */
/* trust.c: a path is trusted when no one but root or its owner can change it or a directory above it. */
#include "trust.h"
#include "util.h"
#include "tap.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>

static char *dir;

static char *at(const char *name)
{
	return xasprintf("%s/%s", dir, name);
}

/* trust_check as this process's euid; *why into `why` (freed by the caller), -errno returned. */
static int judge(const char *path, unsigned flags, char **why)
{
	free(*why);
	*why = NULL;
	return trust_check(path, geteuid(), flags, why);
}

static void modes(void)
{
	_cleanup_free_ char *f = at("p.ini"), *sub = at("sub"), *sf = at("sub/p.ini"), *sticky = at("sticky"),
			    *stf = at("sticky/p.ini"), *why = NULL, *rel = NULL;
	int fd = open(f, O_WRONLY | O_CREAT | O_EXCL, 0644);

	CHECK(fd >= 0);
	close(fd);
	CHECK(judge(f, 0, &why) == 0);
	CHECK(chmod(f, 0664) == 0);
	CHECK(judge(f, 0, &why) == -EPERM);
	CHECK(why && strstr(why, "is writable by its group (mode 0664)"));
	CHECK(chmod(f, 0666) == 0);
	CHECK(judge(f, 0, &why) == -EPERM);
	CHECK(why && strstr(why, "writable by group and others (mode 0666)") && strstr(why, "p.ini"));
	CHECK(chmod(f, 0600) == 0);

	/* a directory on the way that others may write, plain or sticky */
	CHECK(mkdir(sub, 0700) == 0 && mkdir(sticky, 0700) == 0);
	fd = open(sf, O_WRONLY | O_CREAT | O_EXCL, 0600);
	close(fd);
	fd = open(stf, O_WRONLY | O_CREAT | O_EXCL, 0600);
	close(fd);
	CHECK(judge(sf, 0, &why) == 0);
	CHECK(chmod(sub, 0777) == 0);
	CHECK(judge(sf, 0, &why) == -EPERM);
	CHECK(why && strstr(why, "directory '") && strstr(why, "/sub' is writable by group and others (mode 0777)"));
	CHECK(chmod(sticky, 01777) == 0);
	CHECK(judge(stf, 0, &why) == 0);      /* /tmp's rule: only the entry's owner may replace it */
	CHECK(judge(sticky, 0, &why) == -EPERM); /* but as the last directory (a state directory) it is not ours */
	CHECK(why && strstr(why, "(mode 1777)"));

	/* relative, with "." and ".." */
	rel = xasprintf("%s/./sticky/../p.ini", dir + 1);
	CHECK(chdir("/") == 0);
	CHECK(judge(rel, 0, &why) == 0);
	free(rel);
	rel = xasprintf("%s/sub/../p.ini", dir);
	CHECK(judge(rel, 0, &why) == -EPERM); /* sub is still 0777 */

	/* missing */
	free(rel);
	rel = at("none/deeper");
	CHECK(judge(rel, 0, &why) == -ENOENT);
	CHECK(why && strstr(why, "No such file"));
	CHECK(judge(rel, TRUST_MISSING_OK, &why) == 0);
	free(rel);
	rel = at("sub/none");
	CHECK(judge(rel, TRUST_MISSING_OK, &why) == -EPERM); /* what exists above is judged */
	free(rel);
	rel = at("p.ini/x");
	CHECK(judge(rel, 0, &why) == -ENOTDIR);
}

static void links(void)
{
	_cleanup_free_ char *f = at("p.ini"), *good = at("good"), *bad = at("bad"), *loop = at("loop"),
			    *rel = at("rel"), *why = NULL;

	/* a link is judged, then its target: a link to the unsafe sub/p.ini is unsafe */
	CHECK(symlink(f, good) == 0);
	CHECK(judge(good, 0, &why) == 0);
	CHECK(symlink("sub/p.ini", rel) == 0);
	CHECK(judge(rel, 0, &why) == -EPERM);
	CHECK(why && strstr(why, "/sub' is writable"));
	CHECK(symlink(rel, bad) == 0);
	CHECK(judge(bad, 0, &why) == -EPERM);
	CHECK(symlink("loop", loop) == 0);
	CHECK(judge(loop, 0, &why) == -ELOOP);
	if (geteuid() == 0) {
		/* owners: root trusts root alone; a link in a sticky directory is another user's to add */
		_cleanup_free_ char *stf = at("sticky/p.ini"), *stl = at("sticky/l");
		CHECK(chown(f, 65534, 65534) == 0);
		CHECK(trust_check_path(f, 0, &why) == -EPERM);
		CHECK(why && strstr(why, "is owned by uid 65534") && strstr(why, "not by root"));
		free(why);
		why = NULL;
		CHECK(trust_check_path(f, 65534, &why) == 0); /* as its owner would */
		CHECK(chown(f, 0, 0) == 0);
		CHECK(symlink(stf, stl) == 0);
		CHECK(trust_check_path(stl, 0, &why) == 0);
		CHECK(lchown(stl, 65534, 65534) == 0);
		CHECK(trust_check_path(stl, 0, &why) == -EPERM);
		CHECK(why && strstr(why, "the symbolic link '") && strstr(why, "owned by uid 65534"));
	}
}

static void stats(void)
{
	struct stat st = { .st_mode = S_IFREG | 0600, .st_uid = 0 };
	_cleanup_free_ char *why = NULL;

	CHECK(trust_check_stat(&st, 0, &why) == 0);
	st.st_mode = S_IFREG | 0620;
	CHECK(trust_check_stat(&st, 0, &why) == -EPERM);
	CHECK_STR(why, "it is writable by its group (mode 0620)");
	free(why);
	why = NULL;
	st.st_mode = S_IFDIR | 01777; /* the last component: sticky does not help */
	CHECK(trust_check_stat(&st, 0, NULL) == -EPERM);
	st.st_mode = S_IFREG | 0600;
	st.st_uid = 1234;
	CHECK(trust_check_stat(&st, 0, &why) == -EPERM);
	CHECK(why && strstr(why, "it is owned by uid 1234"));
	CHECK(trust_check_stat(&st, 1234, NULL) == 0);
}

int main(void)
{
	char tmpl[] = "/tmp/test-trust.XXXXXX";

	dir = mkdtemp(tmpl);
	CHECK(dir != NULL);
	if (!dir)
		return tap_done();
	modes();
	links();
	stats();
	_cleanup_free_ char *cmd = xasprintf("rm -rf '%s'", dir);
	CHECK(system(cmd) == 0);
	return tap_done();
}
