/* SPDX-License-Identifier: MIT */
/* usage_live counts what du -sxB1 counts: allocated bytes, one filesystem, symlinks not followed,
 * hard links once. The reference is du itself, run on the same tree. */
#include "util.h"
#include "usage.h"
#include "tap.h"

#include <fcntl.h>
#include <sys/stat.h>

static uint64_t du_bytes(const char *dir)
{
	_cleanup_free_ char *cmd = xasprintf("du -sxB1 '%s'", dir);
	FILE *p = popen(cmd, "r");
	unsigned long long v = 0;

	CHECK(p != NULL);
	if (p) {
		CHECK(fscanf(p, "%llu", &v) == 1);
		pclose(p);
	}
	return v;
}

static void write_bytes(const char *path, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	char buf[4096];

	memset(buf, 0x5a, sizeof(buf));
	CHECK(fd >= 0);
	while (n > 0) {
		size_t k = n < sizeof(buf) ? n : sizeof(buf);
		CHECK(write(fd, buf, k) == (ssize_t)k);
		n -= k;
	}
	close(fd);
}

int main(void)
{
	char dir[] = "/var/tmp/swaptool-usage-XXXXXX";
	uint64_t bytes = 0;

	CHECK(mkdtemp(dir) != NULL);
	_cleanup_free_ char *sub = xasprintf("%s/a/b", dir);
	_cleanup_free_ char *f1 = xasprintf("%s/a/one", dir);
	_cleanup_free_ char *f2 = xasprintf("%s/a/b/two", dir);
	_cleanup_free_ char *hl = xasprintf("%s/a/b/two-again", dir);
	_cleanup_free_ char *sl = xasprintf("%s/a/to-etc", dir);
	_cleanup_free_ char *sparse = xasprintf("%s/sparse", dir);
	CHECK(mkdir_p(sub, 0755) == 0);
	write_bytes(f1, 10000);
	write_bytes(f2, 300000);
	CHECK(link(f2, hl) == 0);       /* counted once */
	CHECK(symlink("/etc", sl) == 0); /* never followed */
	int fd = open(sparse, O_WRONLY | O_CREAT, 0644);
	CHECK(fd >= 0 && ftruncate(fd, 1 << 30) == 0); /* a 1 GiB hole allocates nothing */
	close(fd);

	CHECK(usage_live(dir, &bytes) == 0);
	CHECK_U64(bytes, du_bytes(dir));
	CHECK(bytes < (1 << 20));
	CHECK(usage_live("/nonexistent/swaptool", &bytes) == -ENOENT);

	_cleanup_free_ char *rm = xasprintf("rm -rf '%s'", dir);
	CHECK(system(rm) == 0);
	return tap_done();
}
