/* SPDX-License-Identifier: MIT */
/* relocate (src/relocate.c): an ext4 whose files lie past a cut (a 9 MB file and 8 MB of unwritten
 * extents, written after a 40 MB filler of unwritten extents that is then removed) has every extent moved below it, as
 * debugfs's extent listing shows; e2fsck -fn finds it clean, the file reads the same, the unwritten
 * file still reads as zeros, and resize2fs can then shrink it to the cut. The figures match the
 * extents debugfs listed before. A stop flag set before the start stops it with -EINTR. */
#include <signal.h>

#include "util.h"
#include "relocate.h"
#include "tap.h"
#include "testsh.h"

#define CUT 11000ULL

/* the last physical block any extent of FILE covers, as debugfs lists them */
static uint64_t last_block(const char *img, const char *file)
{
	return sh_u64("debugfs -R 'ex %s' %s 2>/dev/null | awk 'NR > 1 && $9 == \"-\" { if ($10 > m) m = $10 } END { print m + 0 }'",
		      file, img);
}

static uint64_t blocks_past(const char *img, const char *file, uint64_t cut)
{
	return sh_u64("debugfs -R 'ex %s' %s 2>/dev/null | awk -v c=%" PRIu64 " 'NR > 1 && $9 == \"-\" { "
		      "s = $8 < c ? c : $8; if ($10 >= s) n += $10 - s + 1 } END { print n + 0 }'", file, img, cut);
}

static uint64_t progress_calls, progress_last;

static void progress(void *ud, uint64_t done, uint64_t total)
{
	(void)ud;
	progress_calls++;
	CHECK(done >= progress_last && done <= total);
	progress_last = done;
}

static void make(const char *name)
{
	/* the filler is 40 MB of unwritten extents: it only has to take the low blocks first */
	CHECK(sh("{ [ -e hi ] || head -c 9000000 /dev/urandom > hi; "
		 "mke2fs -q -F -t ext4 -b 4096 %s 64M && debugfs -w -R 'write /dev/null filler' %s && "
		 "debugfs -w -R 'fallocate /filler 0 9765' %s && debugfs -w -R 'write hi hi' %s && "
		 "debugfs -w -R 'write /dev/null un' %s && debugfs -w -R 'sif /un size 8388608' %s && "
		 "debugfs -w -R 'fallocate /un 0 2047' %s && debugfs -w -R 'rm filler' %s; } >setup.log 2>&1 || { cat setup.log >&2; exit 1; }",
		 name, name, name, name, name, name, name, name) == 0);
}

int main(void)
{
	_cleanup_free_ char *img = NULL, *why = NULL;
	struct reloc_stats st = { 0 };
	struct reloc_opts o = { .progress = progress, .total = 1 };
	uint64_t hi_past, un_past;
	volatile sig_atomic_t stop = 0;

	tdir_make("test-relocate");
	need_tools("mke2fs debugfs e2fsck resize2fs");
	img = tpath("fs.img");
	make("fs.img");
	/* the layout the test needs: both files past the cut (else it proves nothing) */
	hi_past = blocks_past("fs.img", "/hi", CUT);
	un_past = blocks_past("fs.img", "/un", CUT);
	CHECK(last_block("fs.img", "/hi") >= CUT && hi_past > 0);
	CHECK(last_block("fs.img", "/un") >= CUT && un_past > 0);
	CHECK(sh("debugfs -R 'ex /un' fs.img 2>/dev/null | grep -q Uninit") == 0);
	o.total = (hi_past + un_past) * 4096;

	CHECK(relocate_past_cut(img, CUT, &o, &st, &why) == 0);
	if (why)
		fprintf(stderr, "# %s\n", why);
	CHECK(last_block("fs.img", "/hi") < CUT);
	CHECK(last_block("fs.img", "/un") < CUT);
	CHECK_U64(st.blocks, hi_past + un_past);
	CHECK_U64(st.copied_blocks, hi_past); /* the unwritten extent got new addresses, no bytes */
	CHECK_U64(st.inodes, 2);
	CHECK(st.extents >= 2);
	CHECK(progress_calls > 0);
	CHECK_U64(progress_last, o.total); /* the bytes moved, all of them by the end */
	CHECK(sh("e2fsck -fn fs.img >fsck.log 2>&1 || { cat fsck.log >&2; exit 1; }") == 0);
	CHECK(sh("cmp <(debugfs -R 'cat /hi' fs.img 2>/dev/null) hi") == 0);
	CHECK(sh("[ \"$(debugfs -R 'cat /un' fs.img 2>/dev/null | tr -d '\\0' | wc -c)\" = 0 ]") == 0);
	CHECK(sh("debugfs -R 'ex /un' fs.img 2>/dev/null | grep -q Uninit") == 0); /* still unwritten */
	/* what is left past the cut is metadata: resize2fs shrinks to the cut and the result is clean */
	CHECK(sh("resize2fs fs.img %llu >resize.log 2>&1 || { cat resize.log >&2; exit 1; }", CUT) == 0);
	CHECK(sh("e2fsck -fn fs.img >fsck.log 2>&1 || { cat fsck.log >&2; exit 1; }") == 0);
	CHECK_U64(sh_u64("dumpe2fs -h fs.img 2>/dev/null | sed -n 's/^Block count: *//p'"), CUT);
	CHECK(sh("cmp <(debugfs -R 'cat /hi' fs.img 2>/dev/null) hi") == 0);

	/* nothing past the cut: nothing moved */
	st = (struct reloc_stats){ 0 };
	CHECK(relocate_past_cut(img, CUT, NULL, &st, &why) == 0);
	CHECK_U64(st.blocks, 0);
	CHECK_U64(st.inodes, 0);

	/* stopped before the first extent: -EINTR, and the filesystem is still sound */
	make("stop.img");
	{
		_cleanup_free_ char *p = tpath("stop.img");
		struct reloc_opts so = { .stop = &stop };

		stop = 1;
		st = (struct reloc_stats){ 0 };
		CHECK(relocate_past_cut(p, CUT, &so, &st, &why) == -EINTR);
		CHECK(sh("e2fsck -fn stop.img >fsck.log 2>&1 || { cat fsck.log >&2; exit 1; }") == 0);
		CHECK(sh("cmp <(debugfs -R 'cat /hi' stop.img 2>/dev/null) hi") == 0);
	}
	/* not an ext filesystem */
	CHECK(sh("truncate -s 8M zero.img") == 0);
	{
		_cleanup_free_ char *z = tpath("zero.img");
		char *w = NULL;

		CHECK(relocate_past_cut(z, 100, NULL, &st, &w) < 0);
		free(w);
	}
	return tap_done();
}
