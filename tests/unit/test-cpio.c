/* SPDX-License-Identifier: MIT */
/* cpio (src/cpio.c): a newc archive of a directory, files from memory and from a descriptor, a symlink
 * and a device node, listed and unpacked by GNU cpio (plain, and through zcat when gzip-compressed);
 * two archives of the same entries are the same bytes; what newc cannot say is refused. */
#include "util.h" /* first: the headers of src/ take size_t, bool from it */
#include "cpio.h"
#include "tap.h"
#include "testsh.h"

#include <fcntl.h>
#include <sys/stat.h>

static int build(const char *name, int level)
{
	_cleanup_free_ char *path = tpath(name), *big = tpath("big");
	_cleanup_close_ int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	_cleanup_close_ int src = open(big, O_RDONLY | O_CLOEXEC);
	struct stat st;
	struct cpio c;
	int r;

	if (fd < 0 || src < 0 || fstat(src, &st) < 0)
		return -errno;
	r = cpio_open(&c, fd, level, 1700000000);
	if (r == 0)
		r = cpio_add_dir(&c, "usr", 0755);
	if (r == 0)
		r = cpio_add_dir(&c, "usr/bin", 0755);
	if (r == 0)
		r = cpio_add_data(&c, "init", 0755, "#!/bin/sh\necho hi\n", 18);
	if (r == 0)
		r = cpio_add_data(&c, "empty", 0600, "", 0);
	if (r == 0)
		r = cpio_add_fd(&c, "usr/bin/big", 0644, src, (uint64_t)st.st_size);
	if (r == 0)
		r = cpio_add_symlink(&c, "bin", "usr/bin");
	if (r == 0)
		r = cpio_add_node(&c, "console", S_IFCHR | 0600, 5, 1);
	if (r == 0)
		r = cpio_finish(&c);
	CHECK_U64(c.entries, 7);
	if (level == 0)
		CHECK_U64(c.out_bytes, c.raw_bytes);
	else
		CHECK(c.out_bytes < c.raw_bytes);
	cpio_free(&c);
	return r;
}

int main(void)
{
	_cleanup_free_ char *list = NULL, *listz = NULL;
	struct cpio c;
	int fd;

	tdir_make("test-cpio");
	need_tools("cpio zcat cmp");
	/* 300 KiB of mixed bytes: more than one chunk of the compressor's output buffer when plain */
	CHECK(sh("{ head -c 200000 /dev/urandom; yes swaptool | head -c 107200; } > big") == 0);

	CHECK(build("plain.cpio", 0) == 0);
	CHECK(build("gz.cpio", 6) == 0);
	CHECK(build("plain2.cpio", 0) == 0);
	CHECK(sh("cmp -s plain.cpio plain2.cpio") == 0); /* same entries, same bytes */
	CHECK(sh("[ $(($(stat -c %%s plain.cpio) %% 4)) = 0 ]") == 0);

	/* GNU cpio's listing: names, types, modes, the link, the node, the sizes */
	list = sh_str("cpio -itv --quiet < plain.cpio | awk '{ print $1, $5, $NF }'");
	CHECK_STR(list, "drwxr-xr-x 0 usr\ndrwxr-xr-x 0 usr/bin\n-rwxr-xr-x 18 init\n-rw------- 0 empty\n"
			"-rw-r--r-- 307200 usr/bin/big\nlrwxrwxrwx 7 usr/bin\ncrw------- 5, console");
	listz = sh_str("zcat gz.cpio | cpio -itv --quiet | awk '{ print $1, $5, $NF }'");
	CHECK_STR(listz, list);
	/* unpacked (no device node as a user), every byte as it went in */
	CHECK(sh("mkdir x && cd x && zcat ../gz.cpio | cpio -idm --quiet --nonmatching console 2>/dev/null && "
		 "cmp usr/bin/big ../big && [ \"$(cat init)\" = \"$(printf '#!/bin/sh\\necho hi')\" ] && [ ! -s empty ] && "
		 "[ \"$(readlink bin)\" = usr/bin ] && [ $(stat -c %%Y init) = 1700000000 ]") == 0);

	/* what newc cannot hold, or a name the kernel would not take */
	fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	CHECK(cpio_open(&c, fd, 10, 0) == -EINVAL);
	CHECK(cpio_open(&c, fd, 0, 0) == 0);
	CHECK(cpio_add_data(&c, "/abs", 0644, "x", 1) == -EINVAL);
	CHECK(cpio_add_data(&c, "", 0644, "x", 1) == -EINVAL);
	CHECK(cpio_add_fd(&c, "huge", 0644, fd, 1ull << 32) == -EINVAL);
	CHECK(cpio_add_node(&c, "notnode", S_IFREG | 0644, 1, 1) == -EINVAL);
	CHECK_U64(c.entries, 0);
	cpio_free(&c);
	close(fd);
	return tap_done();
}
