/* SPDX-License-Identifier: MIT */
/* fscopy: used-block copy of small ext4 images made with mke2fs/debugfs (unwritten extents
 * included), checked with e2fsck -fn and file hashes; raw copies with exact byte counts; the
 * metadata-only copy with the orphan file, quota and EA inodes; the features it understands. */
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "fscopy.h"
#include "tap.h"
#include "util.h"

static char dir[] = "/tmp/test-fscopy.XXXXXX";

static int shf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int shf(const char *fmt, ...)
{
	_cleanup_free_ char *cmd = NULL, *full = NULL;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&cmd, fmt, ap) < 0)
		abort();
	va_end(ap);
	full = xasprintf("cd '%s' && (%s)", dir, cmd);
	/* bash for <( ): run it as an argument vector, not through sh */
	pid_t pid = fork();
	int status = -1;
	if (pid == 0) {
		execlp("bash", "bash", "-c", full, (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static uint64_t allocated(const char *name)
{
	_cleanup_free_ char *p = xasprintf("%s/%s", dir, name);
	struct stat st;

	return stat(p, &st) == 0 ? (uint64_t)st.st_blocks * 512 : 0;
}

/* An ext4 of `mib` MiB with `bs`-byte blocks, 3 MB of random data, a key file, and a 40 MB
 * file of unwritten extents, placed at 1 MiB of a 2x-sized sparse "disk". */
static void make_source(unsigned bs, unsigned mib)
{
	/* Every step must work: a failed step fails the test here, not later as a puzzling copy.
	 * debugfs exits 0 even when its request fails, so what it made is read back. */
	CHECK(shf("{ rm -rf d fs.img src.img && mkdir -p d/home/nv/.config/flare/orbit && "
		  "head -c 3000000 /dev/urandom > d/a.bin && head -c 12345 /dev/urandom > d/home/nv/.config/flare/orbit/controller.key && "
		  "mke2fs -q -F -t ext4 -b %u -d d fs.img %uM && "
		  "debugfs -w -R 'write /dev/null big' fs.img && debugfs -w -R 'sif /big size 41943040' fs.img && "
		  "debugfs -w -R 'fallocate /big 0 %u' fs.img && "
		  "truncate -s %uM src.img && dd if=fs.img of=src.img bs=1M seek=1 conv=notrunc,sparse status=none; "
		  "} >setup.log 2>&1 || { cat setup.log >&2; exit 1; }",
		  bs, mib, 41943040 / bs - 1, 2 * mib + 2) == 0);
	CHECK(shf("[ \"$(debugfs -R 'cat /home/nv/.config/flare/orbit/controller.key' fs.img 2>/dev/null | wc -c)\" = 12345 ] && "
		  "[ \"$(debugfs -R 'cat /a.bin' fs.img 2>/dev/null | wc -c)\" = 3000000 ] && "
		  "debugfs -R 'stat /big' fs.img 2>/dev/null | grep -q 'Size: 41943040' && "
		  "[ \"$(debugfs -R 'ex /big' fs.img 2>/dev/null | grep -c Uninit)\" -gt 0 ]") == 0);
}

static void check_target(unsigned mib, uint64_t off_mib)
{
	/* the filesystem as it sits on the target, checked by e2fsck and by content */
	CHECK(shf("dd if=tgt.img of=out.img bs=1M skip=%" PRIu64 " count=%u status=none conv=sparse", off_mib, mib) == 0);
	CHECK(shf("e2fsck -fn out.img >e2fsck.log 2>&1") == 0);
	CHECK(shf("for f in /a.bin /home/nv/.config/flare/orbit/controller.key; do "
		  "  [ \"$(debugfs -R \"cat $f\" fs.img 2>/dev/null | sha256sum)\" = \"$(debugfs -R \"cat $f\" out.img 2>/dev/null | sha256sum)\" ] || exit 1; done") == 0);
	/* the unwritten file still reads as 40 MB of zeros */
	CHECK(shf("[ \"$(debugfs -R 'cat /big' out.img 2>/dev/null | tr -d '\\0' | wc -c)\" = 0 ] && "
		  "[ \"$(debugfs -R 'cat /big' out.img 2>/dev/null | wc -c)\" = 41943040 ]") == 0);
	CHECK(shf("[ \"$(dumpe2fs -h fs.img 2>/dev/null | grep UUID)\" = \"$(dumpe2fs -h out.img 2>/dev/null | grep UUID)\" ]") == 0);
}

static void ext_case(unsigned bs)
{
	const unsigned mib = 96;
	_cleanup_free_ char *src = xasprintf("%s/src.img", dir), *tgt = xasprintf("%s/tgt.img", dir), *why = NULL;
	_cleanup_close_ int sfd = -1, dfd = -1;
	struct copy_stats st;
	struct ext_runs er;

	make_source(bs, mib);
	/* the target is full of junk: free blocks stay junk, used blocks must not */
	CHECK(shf("head -c %uM /dev/zero | tr '\\0' '\\252' > tgt.img", mib + 4) == 0);
	sfd = open(src, O_RDONLY);
	dfd = open(tgt, O_RDWR);
	CHECK(sfd >= 0 && dfd >= 0);

	CHECK(fscopy_ext_runs(src, 1 << 20, &er, &why) == 0);
	CHECK_U64(er.block_size, bs);
	CHECK_U64(er.block_count, (uint64_t)mib * 1048576 / bs);
	CHECK_U64(er.unwritten_blocks, 41943040 / bs);
	CHECK(er.nruns > 0);
	ext_runs_free(&er);

	/* too small a target partition is refused before a byte moves */
	CHECK(fscopy_ext(src, sfd, 1 << 20, dfd, 2 << 20, (uint64_t)mib * 1048576 - bs, NULL, &st, &why) == -ENOSPC);
	CHECK(why && strstr(why, "shrink it first"));

	CHECK(fscopy_ext(src, sfd, 1 << 20, dfd, 2 << 20, (uint64_t)mib * 1048576, NULL, &st, &why) == 0);
	CHECK_U64(st.unwritten_bytes, 41943040);
	CHECK(st.total_bytes < (uint64_t)mib * 1048576 - 41943040);
	CHECK(st.data_bytes >= 3000000);
	CHECK_U64(st.data_bytes + st.hole_bytes, st.total_bytes);
	CHECK_U64(st.total_bytes + st.skipped_bytes, (uint64_t)mib * 1048576);
	check_target(mib, 2);
}

static void raw_case(void)
{
	_cleanup_free_ char *src = xasprintf("%s/raw.img", dir), *tgt = xasprintf("%s/rawt.img", dir);
	_cleanup_close_ int sfd = -1, dfd = -1;
	struct copy_stats st;
	/* 40 MiB sparse source: data at 0 and at 30 MiB, an odd length of 33,554,433 + 7 bytes */
	const uint64_t len = 33554440;

	CHECK(shf("truncate -s 40M raw.img && head -c 1000000 /dev/urandom | dd of=raw.img conv=notrunc status=none && "
		  "head -c 777 /dev/urandom | dd of=raw.img bs=1 seek=31457280 conv=notrunc status=none && "
		  "head -c 50M /dev/zero | tr '\\0' x > rawt.img") == 0);
	sfd = open(src, O_RDONLY);
	dfd = open(tgt, O_RDWR);
	CHECK(fscopy_raw(sfd, 512, dfd, 4096 + 3, len, NULL, &st) == 0);
	CHECK_U64(st.total_bytes, len);
	CHECK_U64(st.data_bytes + st.hole_bytes, len);
	CHECK(st.hole_bytes > 20u << 20);
	CHECK(shf("cmp <(dd if=raw.img bs=1M skip=512 count=%" PRIu64 " status=none iflag=skip_bytes,count_bytes) "
		  "<(dd if=rawt.img bs=1M skip=4099 count=%" PRIu64 " status=none iflag=skip_bytes,count_bytes)",
		  len, len) == 0);
	/* exactly len bytes: the byte before and the byte after are untouched */
	CHECK(shf("[ \"$(dd if=rawt.img bs=1 skip=4098 count=1 status=none)\" = x ] && "
		  "[ \"$(dd if=rawt.img bs=1 skip=%" PRIu64 " count=1 status=none)\" = x ]",
		  4099 + len) == 0);
	/* holes stay holes on an image target */
	CHECK(allocated("rawt.img") < 30u << 20);
}

/* The metadata-only copy of an ext4 with every inode that holds metadata past the reserved range:
 * the orphan file and the project quota file (mke2fs puts them at inodes 12 and 13) and an EA
 * inode (a 6000-byte attribute value on 4 KiB blocks), with metadata_csum_seed as newer mke2fs
 * make it. Without them the copy is not clean: e2fsck checks the orphan file's block tails, the
 * quota files' content and the EA inode's hash. The file data itself is left out. */
static void meta_case(void)
{
	const unsigned mib = 64;
	_cleanup_free_ char *src = xasprintf("%s/msrc.img", dir), *tgt = xasprintf("%s/mtgt.img", dir), *why = NULL;
	_cleanup_free_ char *unknown = NULL;
	_cleanup_close_ int sfd = -1, dfd = -1;
	struct copy_stats st;

	CHECK(shf("{ rm -rf md mfs.img && mkdir md && head -c 3000000 /dev/urandom > md/a.bin && "
		  "head -c 6000 /dev/urandom | base64 -w0 | head -c 6000 > ea.val && "
		  "mke2fs -q -F -t ext4 -b 4096 -O orphan_file,metadata_csum_seed,quota,project,ea_inode "
		  "-E quotatype=usrquota:grpquota:prjquota -d md mfs.img %uM && "
		  "debugfs -w -R 'ea_set -f ea.val /a.bin user.big' mfs.img && "
		  /* debugfs counts neither the EA inode's blocks in i_blocks nor in the quota: e2fsck
		   * makes the source consistent (exit 1: it fixed something) */
		  "{ e2fsck -fy mfs.img; [ $? -le 1 ]; } && "
		  "truncate -s %uM msrc.img && dd if=mfs.img of=msrc.img bs=1M seek=1 conv=notrunc,sparse status=none; "
		  "} >msetup.log 2>&1 || { cat msetup.log >&2; exit 1; }", mib, mib + 2) == 0);
	/* what was made is read back: debugfs exits 0 when a request fails */
	CHECK(shf("dumpe2fs -h mfs.img 2>/dev/null | grep -q 'Orphan file inode: *1[23]' && "
		  "dumpe2fs -h mfs.img 2>/dev/null | grep -q 'Project quota inode: *1[23]' && "
		  "debugfs -R 'ea_list /a.bin' mfs.img 2>/dev/null | grep -q 'user.big'") == 0);
	CHECK(shf("e2fsck -fn mfs.img >/dev/null 2>&1") == 0);
	CHECK(fscopy_ext_meta_check(src, 1 << 20, &unknown, &why) == 0);
	CHECK(unknown == NULL);
	CHECK(shf("truncate -s %uM mtgt.img", mib + 2) == 0);
	sfd = open(src, O_RDONLY);
	dfd = open(tgt, O_RDWR);
	CHECK(sfd >= 0 && dfd >= 0);
	CHECK(fscopy_ext_meta(src, sfd, 1 << 20, dfd, 1 << 20, (uint64_t)mib * 1048576, NULL, &st, &why) == 0);
	/* the file's 3 MB of data stayed behind, the metadata inodes came along */
	CHECK(st.unwritten_bytes >= 3000000);
	CHECK(shf("dd if=mtgt.img of=mout.img bs=1M skip=1 count=%u status=none conv=sparse && "
		  "e2fsck -fn mout.img >me2fsck.log 2>&1 || { cat me2fsck.log >&2; exit 1; }", mib) == 0);
	CHECK(shf("[ \"$(debugfs -R 'cat /a.bin' mout.img 2>/dev/null | tr -d '\\0' | wc -c)\" = 0 ]") == 0);
}

/* The feature words against what the metadata copy understands, named as libe2p names them. */
static void features_case(void)
{
	_cleanup_free_ char *a = NULL, *b = NULL, *c = NULL;

	/* what mke2fs 1.47 makes by default, with orphan_file and metadata_csum_seed */
	a = fscopy_meta_unknown_features(0x1000 | 0x3c, 0x2000 | 0x2c2, 0x47b);
	CHECK(a == NULL);
	b = fscopy_meta_unknown_features(0x2000 | 0x40 | 0x3c, 0x2c2, 0x47b | 0x80);
	/* has_snapshot last: e2p 1.47.0 names it FEATURE_R7, others snapshot_bitmap */
	CHECK(b && strncmp(b, "lazy_bg, FEATURE_C13, ", 22) == 0 && !strchr(b + 22, ','));
	c = fscopy_meta_unknown_features(0, 1u << 31, 0);
	CHECK_STR(c, "FEATURE_I31");
}

int main(void)
{
	if (system("command -v mke2fs >/dev/null && command -v debugfs >/dev/null && command -v e2fsck >/dev/null") != 0)
		return 77;
	CHECK(mkdtemp(dir) != NULL);
	ext_case(1024);
	ext_case(4096);
	raw_case();
	meta_case();
	features_case();
	if (!tap_failures)
		shf("rm -rf '%s'", dir);
	else
		fprintf(stderr, "left %s for inspection\n", dir);
	return tap_done();
}
