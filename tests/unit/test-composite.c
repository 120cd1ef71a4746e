/* SPDX-License-Identifier: MIT */
/* composite (src/composite.c): a real FUSE file over two image files, an ext4 split at a cut (the
 * target holds the bytes below it, the source, at an offset, the rest): cmp finds it the whole
 * filesystem and e2fsck -fn finds it clean; a write below the cut lands on the target, one above
 * stays in memory (the source's sha256 unchanged); the figures at unmount; runs (the rest reads as
 * zeros without touching the source); a cut past the end refused. Skips (77) without /dev/fuse or
 * where FUSE may not mount (as tests/cli/43-accept-fuse.sh). */
#include <fcntl.h>
#include <sys/stat.h>

#include "util.h"
#include "composite.h"
#include "tap.h"
#include "testsh.h"

#define MiB (1ULL << 20)
#define SIZE (16 * MiB)
#define CUT (8 * MiB)

static int src_fd = -1, tgt_fd = -1;

static int mount_it(const uint64_t (*runs)[2], size_t nruns, struct composite **c, char **why)
{
	struct composite_opts o = { .src_fd = src_fd, .tgt_fd = tgt_fd, .src_off = MiB, .tgt_off = 0, .cut = CUT,
				    .size = SIZE, .runs = runs, .nruns = nruns };
	_cleanup_free_ char *mnt = tpath("mnt");

	return composite_mount(mnt, &o, c, why);
}

int main(void)
{
	struct composite *c = NULL;
	struct composite_stats st = { 0 };
	_cleanup_free_ char *why = NULL, *src = NULL, *tgt = NULL, *sum0 = NULL, *sum1 = NULL, *path = NULL;
	struct stat sb;
	int r;

	if (access("/dev/fuse", R_OK | W_OK) < 0) {
		fprintf(stderr, "SKIP: no /dev/fuse\n");
		return 77;
	}
	tdir_make("test-composite");
	need_tools("mke2fs e2fsck cmp sha256sum");
	CHECK(sh("mkdir mnt") == 0); /* the composite makes its own directory below it */
	/* the source: 1 MiB of other bytes, then a 16 MiB ext4; the target: its first 8 MiB, zeros after */
	CHECK(sh("{ mkdir d && head -c 3000000 /dev/urandom > d/a && mke2fs -q -F -t ext4 -b 4096 -d d fs.img 16M && "
		 "{ head -c 1048576 /dev/urandom; cat fs.img; } > src.img && truncate -s 16M tgt.img && "
		 "dd if=fs.img of=tgt.img bs=1M count=8 conv=notrunc status=none; } >setup.log 2>&1 || { cat setup.log >&2; exit 1; }") == 0);
	src = tpath("src.img");
	tgt = tpath("tgt.img");
	src_fd = open(src, O_RDONLY | O_CLOEXEC);
	tgt_fd = open(tgt, O_RDWR | O_CLOEXEC);
	CHECK(src_fd >= 0 && tgt_fd >= 0);
	sum0 = sh_str("sha256sum < src.img");

	r = mount_it(NULL, 0, &c, &why);
	if (r < 0) {
		fprintf(stderr, "SKIP: cannot mount a FUSE file here: %s\n", why ? why : strerror(-r));
		return 77;
	}
	path = xstrdup(composite_path(c));
	CHECK(stat(path, &sb) == 0 && (uint64_t)sb.st_size == SIZE);
	/* the whole filesystem, as cmp and e2fsck see it */
	{
		_cleanup_free_ char *cmd = xasprintf("cmp '%s' fs.img", path);
		CHECK(sh("%s", cmd) == 0);
	}
	CHECK(sh("e2fsck -fn '%s' >fsck.log 2>&1 || { cat fsck.log >&2; exit 1; }", path) == 0);
	/* a write below the cut reaches the target; one above it is read back but reaches nothing */
	CHECK(sh("printf 'BELOWCUT' | dd of='%s' bs=1 seek=%llu conv=notrunc status=none && "
		 "printf 'ABOVECUT' | dd of='%s' bs=1 seek=%llu conv=notrunc status=none",
		 path, 4 * MiB, path, 12 * MiB) == 0);
	CHECK(sh("[ \"$(dd if=tgt.img bs=1 skip=%llu count=8 status=none)\" = BELOWCUT ]", 4 * MiB) == 0);
	CHECK(sh("[ \"$(dd if='%s' bs=1 skip=%llu count=8 status=none)\" = ABOVECUT ]", path, 12 * MiB) == 0);
	CHECK(sh("cmp -n %llu <(dd if=tgt.img bs=1M skip=8 status=none) /dev/zero", 8 * MiB) == 0);
	CHECK_U64(composite_unmount(c, &st), 0);
	c = NULL;
	sum1 = sh_str("sha256sum < src.img");
	CHECK_STR(sum1, sum0);
	CHECK(st.tgt_write_bytes >= 8);
	CHECK(st.overlay_bytes >= 8);
	CHECK(st.src_read_bytes >= CUT && st.src_read_bytes <= 2 * CUT); /* the part above the cut, read at least once */
	CHECK(st.tgt_read_bytes >= CUT);
	CHECK(access(path, F_OK) < 0); /* unmounted, its directory removed */

	/* runs: only [cut, cut + 1 MiB) holds something; the rest reads as zeros, the source untouched there */
	{
		static const uint64_t runs[1][2] = { { CUT, MiB } };

		free(why), why = NULL;
		CHECK(mount_it(runs, 1, &c, &why) == 0);
		if (c) {
			free(path);
			path = xstrdup(composite_path(c));
			CHECK(sh("cmp <(dd if='%s' bs=1M skip=8 count=1 status=none) <(dd if=src.img bs=1M skip=9 count=1 status=none)",
				 path) == 0);
			CHECK(sh("cmp -n %llu <(dd if='%s' bs=1M skip=9 status=none) /dev/zero", 7 * MiB, path) == 0);
			st = (struct composite_stats){ 0 };
			CHECK_U64(composite_unmount(c, &st), 0);
			CHECK(st.src_read_bytes > 0 && st.src_read_bytes <= MiB);
		}
	}

	/* a cut past the file's end */
	{
		struct composite_opts o = { .src_fd = src_fd, .tgt_fd = tgt_fd, .cut = SIZE + 1, .size = SIZE };
		_cleanup_free_ char *mnt = tpath("mnt");

		free(why), why = NULL;
		c = NULL;
		CHECK(composite_mount(mnt, &o, &c, &why) == -EINVAL);
		CHECK(why && strstr(why, "a cut at byte"));
	}
	close(src_fd);
	close(tgt_fd);
	return tap_done();
}
