/* SPDX-License-Identifier: MIT */
/* src/rootpath.c: archive paths at their limits, a path resolved inside a root as if it were "/"
 * (openat2 and the component walk it falls back to), and owner names and ids from the root's own
 * etc/passwd and etc/group. */
#include "util.h"
#include "rootpath.h"
#include "tap.h"

#include <fcntl.h>
#include <sys/stat.h>

static void limits(void)
{
	char p[ARC_MAX_PATH + 2];
	const char *why = NULL;

	/* exactly ARC_MAX_PATH bytes is a path, one more is not */
	memset(p, 'a', sizeof(p));
	p[ARC_MAX_PATH] = '\0';
	CHECK(path_check(p, &why) == 0);
	p[ARC_MAX_PATH] = 'a';
	p[ARC_MAX_PATH + 1] = '\0';
	CHECK(path_check(p, &why) == -EINVAL);
	CHECK_STR(why, "path longer than 1024 bytes");
	CHECK(path_check(NULL, &why) == -EINVAL);
	CHECK_STR(why, "empty path");
	CHECK(path_check("etc/\x7f", &why) == -EINVAL);
	CHECK_STR(why, "control character in the path");
	/* one trailing '/' goes, "/" itself stays */
	_cleanup_free_ char *a = path_normalize("etc/"), *b = path_normalize("/"), *c = path_normalize("etc");
	CHECK_STR(a, "etc");
	CHECK_STR(b, "/");
	CHECK_STR(c, "etc");
	CHECK(state_name_ok("a.json"));
	CHECK(!state_name_ok(".json"));
	CHECK(!state_name_ok("pre flight.json"));
	CHECK(!state_name_ok(NULL));
	memset(p, 'a', 124);
	strcpy(p + 124, ".json"); /* 129 bytes */
	CHECK(!state_name_ok(p));
	p[123] = '\0';
	strcat(p, ".json"); /* 128 bytes */
	CHECK(state_name_ok(p));
}

static void put(const char *root, const char *rel, const char *text)
{
	_cleanup_free_ char *path = xasprintf("%s/%s", root, rel);

	CHECK(write_file_atomic(path, text, strlen(text), 0644) == 0);
}

static void link_at(const char *root, const char *rel, const char *target)
{
	_cleanup_free_ char *path = xasprintf("%s/%s", root, rel);

	CHECK(symlink(target, path) == 0);
}

static bool same_file(int fd, const char *path)
{
	struct stat a, b;

	return fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

static void resolve(const char *root)
{
	_cleanup_close_ int rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	_cleanup_free_ char *etc = xasprintf("%s/etc", root), *real = NULL;
	int fd;

	CHECK(rootfd >= 0);
	/* links that leave the root stay in it: an absolute target starts at the root, ".." stops there */
	link_at(root, "abs", "/etc");
	link_at(root, "up", "../../../../etc");
	link_at(root, "loop", "loop");
	fd = root_open_dir(rootfd, "abs");
	CHECK(fd >= 0 && same_file(fd, etc));
	if (fd >= 0)
		close(fd);
	fd = root_open_dir(rootfd, "up");
	CHECK(fd >= 0 && same_file(fd, etc));
	if (fd >= 0)
		close(fd);
	fd = root_open_dir(rootfd, "");
	CHECK(fd >= 0 && same_file(fd, root));
	if (fd >= 0)
		close(fd);
	CHECK(root_open_dir(rootfd, "missing") == -ENOENT);
	CHECK(root_open_dir(rootfd, "etc/passwd") == -ENOTDIR);
	/* the walk the kernel's openat2 is replaced by where it is missing: the same answers */
	fd = walk_in_root(rootfd, "abs");
	CHECK(fd >= 0 && same_file(fd, etc));
	if (fd >= 0)
		close(fd);
	fd = walk_in_root(rootfd, "up/../../abs/.");
	CHECK(fd >= 0 && same_file(fd, etc));
	if (fd >= 0)
		close(fd);
	CHECK(walk_in_root(rootfd, "loop") == -ELOOP);
	CHECK(walk_in_root(rootfd, "etc/passwd") == -ENOTDIR);
	CHECK(walk_in_root(rootfd, "missing/x") == -ENOENT);
	/* root_real: the directory resolved inside the root, the last component when asked */
	{
		_cleanup_free_ char *want = xasprintf("%s/passwd", etc), *rwant = realpath(want, NULL);

		real = root_real(rootfd, "abs/passwd", false);
		CHECK(real && rwant && streq(real, rwant));
		free(real);
		real = root_real(rootfd, "up/passwd", false);
		CHECK(real && rwant && streq(real, rwant));
	}
	{
		_cleanup_free_ char *rroot = realpath(root, NULL), *rl = xasprintf("%s/abs", rroot);
		_cleanup_free_ char *kept = root_real(rootfd, "abs", false), *followed = root_real(rootfd, "abs", true);
		_cleanup_free_ char *retc = realpath(etc, NULL), *top = root_real(rootfd, "..", false);

		CHECK(kept && streq(kept, rl));          /* the link itself */
		CHECK(followed && streq(followed, retc)); /* its target, inside the root */
		CHECK(top && streq(top, rroot));          /* never above the root */
	}
	errno = 0;
	CHECK(root_real(rootfd, "missing/x", false) == NULL && errno == ENOENT);
}

static void names(const char *root, const char *bare)
{
	uid_t uid = 0;
	gid_t gid = 0;

	/* an offline root names owners from its own files, never this host's */
	CHECK(lookup_user(root, "flare", &uid) == 0);
	CHECK_U64(uid, 4242);
	CHECK(lookup_group(root, "flare", &gid) == 0);
	CHECK_U64(gid, 4343);
	CHECK(lookup_user(root, "nobody-here", &uid) == -ENOENT);
	CHECK(lookup_user(root, "broken", &uid) == -ENOENT);
	CHECK(lookup_user(root, "+nisuser", &uid) == -ENOENT);
	CHECK(lookup_group(root, "big", &gid) == 0);
	CHECK_U64(gid, 5000);
	CHECK(lookup_user(root, "1234", &uid) == 0); /* a name of digits is that number */
	CHECK_U64(uid, 1234);
	_cleanup_free_ char *u = root_user_name(root, 4242), *g = root_group_name(root, 4343);
	_cleanup_free_ char *un = root_user_name(root, 77);
	CHECK_STR(u, "flare");
	CHECK_STR(g, "flare");
	CHECK_STR(un, "77"); /* unnamed: the number */
	/* a root without etc/passwd: -ENOMEDIUM, so callers can fall back to the backup's ids */
	CHECK(lookup_user(bare, "flare", &uid) == -ENOMEDIUM);
	CHECK(lookup_group(bare, "flare", &gid) == -ENOMEDIUM);
	_cleanup_free_ char *bn = root_user_name(bare, 4242);
	CHECK_STR(bn, "4242");
	CHECK(root_is_live(NULL));
	CHECK(root_is_live("/"));
	CHECK(root_is_live("/."));
	CHECK(!root_is_live(root));
}

int main(void)
{
	char root[] = "/tmp/test-rootpath.XXXXXX", bare[] = "/tmp/test-rootpath-bare.XXXXXX";

	limits();
	if (!mkdtemp(root) || !mkdtemp(bare)) {
		perror("mkdtemp");
		return 1;
	}
	{
		_cleanup_free_ char *etc = xasprintf("%s/etc", root), *share = xasprintf("%s/usr/share", root);

		CHECK(mkdir(etc, 0755) == 0);
		CHECK(mkdir_p(share, 0755) == 0);
	}
	/* read as glibc's nss_files reads them: a comment, a malformed line and a NIS line name no one */
	put(root, "etc/passwd", "# a comment\nroot:x:0:0::/root:/bin/sh\nbroken:x:notanumber:1::/:/bin/sh\n"
				"+nisuser::4242:4242:::\nflare:x:4242:4343::/home/flare:/bin/sh\n");
	{
		/* etc/group a link to ../usr/share/..., as some distributions ship it: read through the root;
		 * a group line longer than the parser's first buffer (6,000 members) before flare's */
		_cleanup_free_ char *members = xcalloc(1, 6000 * 8 + 1), *group = NULL;

		for (int i = 0; i < 6000; i++)
			sprintf(members + i * 8, "%s%06d", i ? ",u" : "uu", i);
		group = xasprintf("root:x:0:\nbig:x:5000:%s\nflare:x:4343:\n", members);
		put(root, "usr/share/group", group);
	}
	link_at(root, "etc/group", "/usr/share/group");
	resolve(root);
	names(root, bare);
	{
		_cleanup_free_ char *cmd = xasprintf("rm -rf '%s' '%s'", root, bare);

		CHECK(system(cmd) == 0);
	}
	return tap_done();
}
