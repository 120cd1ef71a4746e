/* SPDX-License-Identifier: MIT */
/* Executing path 2: one executor for `clone` and `plan --rehearse`, and the rehearsal's scratch copies. */
#include "planrun.h"

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <time.h>

#include "ident.h"
#include "composite.h"
#include "proc.h"
#include "relocate.h"
#include "json.h"
#include "util.h"

/* The stop flag of the run in progress (plan_apply's), seen by run_tool. */
static volatile sig_atomic_t *g_stop;

/* Run a tool with an argument vector (no shell) through proc_run: its own process group, killed
 * when the run is stopped (SIGINT, SIGTERM: what it works on, a composite file, can then be
 * unmounted) and when swaptool dies (resize2fs on a composite whose server is gone would only
 * fail later, and one on a target would race a rerun). Its output (stdout+stderr, last 4 KiB) in
 * *out. Returns its exit code (127: not installed), or a negative errno when it could not start. */
static int run_tool(char *const argv[], char **out)
{
	static char magic[] = "E2FSPROGS_LIBMAGIC_SUPPRESS=1";
	char *env[] = { magic, NULL };
	struct proc_opts o = { .argv = argv, .setenv = env, .stop = g_stop, .die_with_parent = true };
	struct proc_result res;
	int r = proc_run(&o, &res);

	if (r < 0)
		return r;
	if (out) {
		*out = res.tail;
		res.tail = NULL;
	}
	r = proc_exit_code(&res);
	proc_result_free(&res);
	return r;
}

/* The last non-empty line of a tool's output, for a one-line detail. */
static const char *last_line(char *s)
{
	char *e;

	if (!s)
		return "";
	e = s + strlen(s);
	while (e > s && (e[-1] == '\n' || e[-1] == ' '))
		*--e = '\0';
	while (e > s && e[-1] != '\n')
		e--;
	return e;
}

/* Whether writing `tgt` could touch `src`, decided on open descriptors by kernel facts (ident.h).
 * Neither is claimed here: a target that cannot be opened is left to the executor to report. */
int plan_overlaps(const char *src, const char *tgt, char **why)
{
	_cleanup_close_ int a = open(src, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	_cleanup_close_ int b = open(tgt, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	struct stat sa, sb;

	if (a < 0 || b < 0 || fstat(a, &sa) < 0 || fstat(b, &sb) < 0)
		return 0;
	/* a directory, FIFO or character device is no disk: the steps say so in their own words */
	if (!(S_ISREG(sa.st_mode) || S_ISBLK(sa.st_mode)) || !(S_ISREG(sb.st_mode) || S_ISBLK(sb.st_mode)))
		return 0;
	return ident_overlap(a, b, why);
}

/* Size and logical block size of a held disk or image (lba 0 for an image: the plan's). */
static int fd_geometry(int fd, uint64_t *bytes, uint32_t *lba, bool *blk)
{
	struct stat st;
	int ssz = 0;

	if (fstat(fd, &st) < 0)
		return -errno;
	*blk = S_ISBLK(st.st_mode);
	*bytes = (uint64_t)st.st_size;
	*lba = 0;
	if (!*blk)
		return 0;
	if (ioctl(fd, BLKGETSIZE64, bytes) < 0 || ioctl(fd, BLKSSZGET, &ssz) < 0)
		return -errno;
	*lba = (uint32_t)ssz;
	return 0;
}

static char *fs_path(const char *dev, uint64_t off)
{
	return xasprintf("%s?offset=%" PRIu64, dev, off);
}

struct run {
	const struct plan *p;
	struct plan_env *env;
	bool wiped;
	char *detail;
	struct ident_hold sh, th; /* source and target, held from the check to the end of the run */
};

/* The target against the source on these descriptors: not the same bytes, and neither in use
 * under another name (a loop device over the same file, mounted or open). */
static int check_pair(struct run *R, int sfd, int tfd)
{
	struct plan_env *env = R->env;
	_cleanup_free_ char *w = NULL;
	int r;

	r = ident_overlap(sfd, tfd, &w);
	if (r > 0)
		return set_why(&env->why, -EINVAL, "the target '%s' is the source '%s' or overlaps it (%s); name the new drive",
			       env->tgt, env->src, w);
	if (r < 0)
		return set_why(&env->why, r, "cannot tell whether the target '%s' overlaps the source '%s': %s; name the "
				"new drive", env->tgt, env->src, w ? w : strerror(-r));
	r = ident_in_use(tfd, &w);
	if (r > 0)
		return set_why(&env->why, -EBUSY, "the target '%s' is in use: %s; unmount it and detach that loop device "
				"(losetup -d), then retry", env->tgt, w);
	if (r == 0)
		r = ident_in_use(sfd, &w);
	if (r > 0)
		return set_why(&env->why, -EBUSY, "the source '%s' is in use: %s; unmount it and detach that loop device "
				"(losetup -d), then retry", env->src, w);
	if (r < 0)
		return set_why(&env->why, r, "cannot tell whether '%s' or '%s' is in use: %s", env->src, env->tgt,
			       w ? w : strerror(-r));
	return 0;
}

/* Open source and target once, check them, then hold both exclusively until the run ends
 * (ident.h: O_EXCL on a block device, flock on an image). Every later read or write goes
 * through these descriptors or their /proc name, so what was checked is what is written. */
static int hold_pair(struct run *R)
{
	struct plan_env *env = R->env;
	int r;

	r = ident_hold_open(env->src, false, &R->sh);
	if (r < 0)
		return set_why(&env->why, r, "cannot open the source '%s': %s", env->src, strerror(-r));
	r = ident_hold_open(env->tgt, true, &R->th);
	if (r == -ENOENT)
		return set_why(&env->why, r, "cannot open the target '%s': %s; create the image at %" PRIu64
				" bytes or name the new drive", env->tgt, strerror(-r), R->p->tgt_geo.bytes);
	if (r < 0)
		return set_why(&env->why, r, "cannot open the target '%s' for writing: %s", env->tgt, strerror(-r));
	/* first on the unclaimed descriptors (an overlap is named as such, not as "busy") ... */
	r = check_pair(R, R->sh.anchor, R->th.anchor);
	if (r < 0)
		return r;
	r = ident_hold_claim(&R->sh);
	if (r == -EBUSY)
		return set_why(&env->why, r, "the source '%s' is mounted or held by another program; unmount it (boot a live "
				"environment) and retry", env->src);
	if (r < 0)
		return set_why(&env->why, r, "cannot open the source '%s': %s", env->src, strerror(-r));
	r = ident_hold_claim(&R->th);
	if (r == -EBUSY)
		return set_why(&env->why, r, "the target '%s' is mounted or held by another program; unmount it and retry",
			       env->tgt);
	if (r < 0)
		return set_why(&env->why, r, "cannot open the target '%s' for writing: %s", env->tgt, strerror(-r));
	/* ... then on the claimed ones that will be read and written */
	return check_pair(R, R->sh.fd, R->th.fd);
}

/* A held descriptor, claimed again after a tool that needed the device to itself. */
static int held(struct run *R, struct ident_hold *h)
{
	bool src = h == &R->sh;
	int r = ident_hold_resume(h);

	if (r < 0)
		return set_why(&R->env->why, r, "the %s '%s' was taken by another program while swaptool ran e2fsck or "
				"resize2fs on it (%s); nothing else was written, rerun the clone", src ? "source" : "target",
			       src ? R->env->src : R->env->tgt, strerror(-r));
	return h->fd;
}

/* run_tool on a held device: e2fsck -fy and resize2fs open a block device O_EXCL themselves, so
 * the claim is handed to them for their run and taken back after it (an image keeps its lock). */
static int run_tool_held(struct ident_hold *h, char *const argv[], char **out)
{
	int r;

	ident_hold_pause(h);
	r = run_tool(argv, out);
	(void)ident_hold_resume(h); /* a failure shows at the next use (held()) */
	return r;
}

static int act_check(struct run *R)
{
	const struct plan *p = R->p;
	struct plan_env *env = R->env;
	uint64_t sbytes, tbytes;
	uint32_t slba, tlba;
	bool sblk, tblk;
	int r;

	env->refusal = 1;
	r = hold_pair(R);
	if (r < 0)
		return r;
	if ((r = fd_geometry(R->sh.fd, &sbytes, &slba, &sblk)) < 0)
		return set_why(&env->why, r, "cannot read the size of the source '%s': %s", env->src, strerror(-r));
	if ((r = fd_geometry(R->th.fd, &tbytes, &tlba, &tblk)) < 0)
		return set_why(&env->why, r, "cannot read the size of the target '%s': %s", env->tgt, strerror(-r));
	if (sbytes != p->src_geo.bytes)
		return set_why(&env->why, -ESTALE, "the source '%s' is %" PRIu64 " bytes, the plan was made for %" PRIu64
				"; re-run 'swaptool plan'", env->src, sbytes, p->src_geo.bytes);
	if (tbytes < p->tgt_geo.bytes)
		return set_why(&env->why, -ENOSPC, "the target '%s' is %" PRIu64 " bytes, smaller than the %" PRIu64
				" the plan needs", env->tgt, tbytes, p->tgt_geo.bytes);
	if (tbytes != p->tgt_geo.bytes || (tblk && tlba != p->tgt_geo.lba_size))
		return set_why(&env->why, -ESTALE, "the target '%s' is %" PRIu64 " bytes with %u-byte LBAs, the plan was made "
				"for %" PRIu64 " with %u; re-run 'swaptool plan SOURCE --target %s'", env->tgt, tbytes,
			       tblk ? tlba : p->tgt_geo.lba_size, p->tgt_geo.bytes, p->tgt_geo.lba_size, env->tgt);
	if (sblk && slba != p->src_geo.lba_size)
		return set_why(&env->why, -ESTALE, "the source's LBA size changed; re-run 'swaptool plan'");

	/* The fingerprint of the source as it is now against the plan's: another disk in the slot, a
	 * repartitioned source or a resized filesystem all stop here. */
	{
		struct disk d = { .fd = -1 };
		struct layout l = { 0 };
		_cleanup_free_ char *w = NULL;
		char fp[65];

		/* the held inode, by its /proc name: the fingerprint is of what will be read */
		r = disk_open(R->sh.proc, p->src_geo.lba_size, &d, &w);
		if (r < 0)
			return set_why(&env->why, r, "cannot read the source '%s': %s", env->src, w ? w : strerror(-r));
		r = layout_analyze(&d, p->tgt_geo.bytes, p->tgt_geo.lba_size, &l, &w);
		if (r < 0) {
			disk_close(&d);
			return set_why(&env->why, r, "cannot analyse the source '%s': %s", env->src, w ? w : strerror(-r));
		}
		plan_fingerprint(&l, false, fp);
		if (!env->rehearsal && p->src_serial && d.serial && !streq(p->src_serial, d.serial))
			r = set_why(&env->why, -ESTALE, "the source's serial is '%s', the plan was made for '%s'", d.serial,
				    p->src_serial);
		else if (!streq(fp, p->fingerprint))
			r = set_why(&env->why, -ESTALE, "the source '%s' no longer matches the plan (fingerprint %.12s, planned "
					"%.12s); re-run 'swaptool plan'", env->src, fp, p->fingerprint);
		else if (!l.fs_clone_possible)
			r = set_why(&env->why, -ENOSPC, "path 2 is not possible: %s", l.fs_clone_why);
		for (size_t i = 0; r == 0 && i < p->nparts; i++) {
			const struct plan_part *pp = &p->parts[i];

			if (pp->is_ext && !l.fs[i].ext.clean)
				r = set_why(&env->why, -EUCLEAN,
					    "the filesystem of partition %u on the source needs e2fsck (not cleanly unmounted, "
					    "or errors recorded); run 'e2fsck -f %s?offset=%" PRIu64 "' (or on the partition) and plan again",
					    pp->number, env->src, pp->offset);
		}
		if (r == 0)
			R->detail = xasprintf("source %" PRIu64 " B, target %" PRIu64 " B, fingerprint %.12s", sbytes, tbytes, fp);
		layout_free(&l);
		disk_close(&d);
		if (r < 0)
			return r;
	}
	env->refusal = 0;
	return 0;
}

static int act_e2fsck(struct run *R, const struct plan_action *a, bool target)
{
	_cleanup_free_ char *dev = fs_path(target ? R->env->tgt : R->env->src, target ? a->tgt_offset : a->src_offset);
	_cleanup_free_ char *out = NULL;
	char *argv[] = { "e2fsck", "-fn", dev, NULL };
	int r = run_tool(argv, &out);

	if (r < 0)
		return set_why(&R->env->why, r, "cannot run e2fsck: %s", strerror(-r));
	if (r == 127)
		return set_why(&R->env->why, -ENOENT, "e2fsck is not installed; install e2fsprogs");
	if (r != 0) {
		if (!target)
			R->env->refusal = 1;
		return set_why(&R->env->why, -EUCLEAN,
			       "the filesystem of partition %u on the %s needs e2fsck (e2fsck -fn exited %d: %s); run "
			       "'e2fsck -f %s' and plan again",
			       a->part, target ? "target" : "source", r, last_line(out), dev);
	}
	R->detail = xasprintf("clean: %s", last_line(out));
	return 0;
}

static int ext_blocks(const char *dev, uint64_t off, uint64_t *blocks, char *uuid, char **why)
{
	struct extfs_info info;
	int r = extfs_info(dev, off, &info, why);

	if (r < 0)
		return r;
	*blocks = info.block_count;
	if (uuid)
		memcpy(uuid, info.uuid, sizeof(info.uuid));
	return 0;
}

static int open_pair(struct run *R, int *sfd, int *tfd)
{
	int r;

	*sfd = held(R, &R->sh);
	if (*sfd < 0)
		return *sfd;
	*tfd = held(R, &R->th);
	if (*tfd < 0)
		return *tfd;
	/* Mark the target incomplete before its first byte changes: with no table on it, an
	 * interrupted clone leaves a disk nothing will boot or mount, and a rerun starts over. */
	if (!R->wiped) {
		r = check_pair(R, *sfd, *tfd);
		if (r < 0) {
			/* nothing written to the target, and the source is never written */
			R->env->refusal = true;
			return r;
		}
		r = gpt_wipe(*tfd, R->p->tgt_geo.lba_size, R->p->tgt_geo.lba_count);
		if (r < 0)
			return set_why(&R->env->why, r, "cannot wipe the table of the target '%s': %s", R->env->tgt,
				       strerror(-r));
		R->wiped = true;
		R->env->target_touched = true;
	}
	return 0;
}

/* The shrink on the way: resize2fs runs on the composite file, whose bytes below the new end are
 * the target partition (the used blocks there already copied) and above it the source, read
 * only. resize2fs moves what lies past the new end down into the target and rewrites the
 * metadata there; what it writes above the new end stays in memory and is dropped. The
 * source is opened read-only and never written. */
static int act_shrink(struct run *R, const struct plan_action *a)
{
	struct plan_env *env = R->env;
	int sfd = -1, tfd = -1; /* held: closed when the run ends */
	_cleanup_free_ char *out = NULL, *w = NULL, *n = xasprintf("%" PRIu64, a->blocks_to);
	struct composite_stats cs = { 0 };
	struct reloc_stats rs;
	struct composite *c = NULL;
	double t_reloc = 0, t_rs = 0, t_end = 0;
	struct ext_past past;
	uint64_t blocks = 0;
	const char *dir = env->scratch ? env->scratch : getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char b[6][32];
	int r, q;

	r = fscopy_ext_past(R->sh.proc, a->src_offset, a->blocks_to, &past, &w);
	if (r < 0)
		ext_past_free(&past);
	if (r < 0)
		return set_why(&env->why, r, "cannot read the filesystem of partition %u: %s", a->part, w ? w : strerror(-r));
	r = open_pair(R, &sfd, &tfd);
	if (r < 0) {
		ext_past_free(&past);
		return r;
	}
	{
		struct composite_opts o = {
			.src_fd = sfd, .tgt_fd = tfd, .src_off = a->src_offset, .tgt_off = a->tgt_offset,
			.cut = a->blocks_to * (uint64_t)a->block_size, .size = a->blocks_from * (uint64_t)a->block_size,
			/* progress comes from the relocation, which moves nearly all of it */
			.runs = (const uint64_t(*)[2])past.run, .nruns = past.nruns,
		};

		r = composite_mount(dir, &o, &c, &w);
		if (r < 0)
			ext_past_free(&past);
		if (r < 0)
			return set_why(&env->why, r, "cannot present partition %u to resize2fs: %s", a->part, w ? w : strerror(-r));
	}
	/* file data first, one extent at a time; then resize2fs moves what is left (metadata) and
	 * writes the smaller filesystem */
	t_reloc = mono_s();
	{
		struct reloc_opts ro = { .stop = env->copy.stop, .progress = env->copy.progress, .ud = env->copy.ud,
					 .total = past.used_bytes };

		r = relocate_past_cut(composite_path(c), a->blocks_to, &ro, &rs, &w);
	}
	if (r < 0) {
		composite_unmount(c, NULL);
		ext_past_free(&past);
		return set_why(&env->why, r, "moving the data of partition %u below its new end failed: %s; the source was "
				"not written", a->part, w ? w : strerror(-r));
	}
	{
		char *argv[] = { "resize2fs", "-f", (char *)composite_path(c), n, NULL };

		/* -f: it skips only resize2fs's "run e2fsck -f first" (e2fsck -fn ran on the source
		 * one action before) and its minimum-size check (the plan checked min_blocks) */
		t_rs = mono_s();
		r = run_tool(argv, &out);
		t_end = mono_s();
	}
	q = composite_unmount(c, &cs);
	ext_past_free(&past);
	if (r == 127)
		return set_why(&env->why, -ENOENT, "resize2fs is not installed; install e2fsprogs");
	if (r != 0)
		return set_why(&env->why, r < 0 ? r : -EIO, "resize2fs of partition %u on its way to the target failed (exit %d): "
				"%s; the source was not written", a->part, r, last_line(out));
	if (q < 0)
		return set_why(&env->why, q, "I/O error under resize2fs of partition %u: %s; the source was not written", a->part,
			       strerror(-q));
	r = ext_blocks(R->th.proc, a->tgt_offset, &blocks, NULL, &w);
	if (r < 0 || blocks != a->blocks_to)
		return set_why(&env->why, -EIO, "after resize2fs partition %u on the target has %" PRIu64 " blocks, not %" PRIu64,
			       a->part, blocks, a->blocks_to);
	R->detail = xasprintf("%" PRIu64 " -> %" PRIu64 " blocks on the target; %s B in use past the new end moved "
			      "(%s B of it data; %" PRIu64 " extents of %" PRIu64 " files moved whole in %.1f s, the rest by "
			      "resize2fs in %.1f s); %s B read from the source, %s B written to the target (%s B more of zeros "
			      "left as holes), %s B written above the new end kept in memory; the source was not written",
			      a->blocks_from, a->blocks_to, fmt_thousands(past.used_bytes, b[0]),
			      fmt_thousands(past.data_bytes, b[1]), rs.extents, rs.inodes, t_rs - t_reloc, t_end - t_rs,
			      fmt_thousands(cs.src_read_bytes, b[2]),
			      fmt_thousands(cs.tgt_write_bytes, b[3]), fmt_thousands(cs.tgt_zero_bytes, b[4]),
			      fmt_thousands(cs.overlay_bytes, b[5]));
	return 0;
}

static char *copy_detail(const struct copy_stats *st)
{
	char b[5][32];

	return xasprintf("%s B: %s B data, %s B holes, %s B skipped (%s B unwritten), %.1f s, %.0f MB/s",
			 fmt_thousands(st->total_bytes, b[0]), fmt_thousands(st->data_bytes, b[1]),
			 fmt_thousands(st->hole_bytes, b[2]), fmt_thousands(st->skipped_bytes, b[3]),
			 fmt_thousands(st->unwritten_bytes, b[4]), st->seconds,
			 st->seconds > 0 ? st->data_bytes / st->seconds / 1e6 : 0.0);
}

static int act_copy(struct run *R, const struct plan_action *a)
{
	int sfd = -1, tfd = -1; /* held: closed when the run ends */
	_cleanup_free_ char *w = NULL;
	struct copy_stats st = { 0 };
	int r;

	r = open_pair(R, &sfd, &tfd);
	if (r < 0)
		return r;
	if (a->kind == PA_COPY_RAW)
		r = fscopy_raw(sfd, a->src_offset, tfd, a->tgt_offset, a->bytes, &R->env->copy, &st);
	else
		r = fscopy_ext_below(R->sh.proc, sfd, a->src_offset, tfd, a->tgt_offset, a->bytes, a->blocks_to,
				     &R->env->copy, &st, &w);
	if (r == -EINTR)
		return set_why(&R->env->why, r, "interrupted while copying partition %u; the target has no table, rerun "
				"the clone to start over", a->part);
	if (r < 0)
		return set_why(&R->env->why, r, "copying partition %u failed: %s", a->part, w ? w : strerror(-r));
	R->detail = copy_detail(&st);
	return 0;
}

static int act_grow(struct run *R, const struct plan_action *a)
{
	/* the held target by its /proc name: the tools write the inode that was checked */
	_cleanup_free_ char *dev = fs_path(R->th.proc, a->tgt_offset), *out = NULL, *w = NULL;
	_cleanup_free_ char *n = xasprintf("%" PRIu64, a->blocks_to);
	char *fsck[] = { "e2fsck", "-fy", dev, NULL };
	char *rs[] = { "resize2fs", dev, n, NULL };
	uint64_t blocks = 0;
	struct stat st;
	int r;

	/* e2fsck -fy first: resize2fs insists on a check after the last mount, and the copy
	 * carries the source's mount time. It only writes the target. */
	r = run_tool_held(&R->th, fsck, &out);
	if (r != 0 && r != 1)
		return set_why(&R->env->why, -EIO, "e2fsck of partition %u on the target failed (exit %d): %s", a->part, r,
			       last_line(out));
	free(out);
	out = NULL;
	if (fstat(R->th.anchor, &st) == 0 && S_ISREG(st.st_mode)) {
		/* resize2fs sets an image file's size to the filesystem's, blind to ?offset=: it would
		 * cut the target image short by the partition's offset. Through a composite file that
		 * is all target, its truncate changes nothing. */
		_cleanup_close_ int tfd = open(R->th.proc, O_RDWR | O_CLOEXEC);
		struct composite_opts o = { .src_fd = -1, .tgt_fd = tfd, .tgt_off = a->tgt_offset,
					    .cut = a->blocks_to * (uint64_t)a->block_size,
					    .size = a->blocks_to * (uint64_t)a->block_size };
		const char *dir = R->env->scratch ? R->env->scratch : getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
		struct composite *c = NULL;
		int q;

		if (tfd < 0)
			return set_why(&R->env->why, -errno, "cannot open the target '%s': %m", R->env->tgt);
		r = composite_mount(dir, &o, &c, &w);
		if (r < 0)
			return set_why(&R->env->why, r, "cannot present partition %u to resize2fs: %s", a->part, w ? w : strerror(-r));
		rs[1] = (char *)composite_path(c);
		r = run_tool(rs, &out);
		q = composite_unmount(c, NULL);
		if (r == 0 && q < 0)
			return set_why(&R->env->why, q, "I/O error under resize2fs of partition %u: %s", a->part, strerror(-q));
	} else
		r = run_tool_held(&R->th, rs, &out);
	if (r != 0)
		return set_why(&R->env->why, -EIO, "resize2fs of partition %u on the target failed (exit %d): %s", a->part, r,
			       last_line(out));
	r = ext_blocks(R->th.proc, a->tgt_offset, &blocks, NULL, &w);
	if (r < 0 || blocks != a->blocks_to)
		return set_why(&R->env->why, -EIO, "partition %u on the target has %" PRIu64 " blocks after the grow, not %" PRIu64,
			       a->part, blocks, a->blocks_to);
	R->detail = xasprintf("%" PRIu64 " -> %" PRIu64 " blocks", a->blocks_from, a->blocks_to);
	return 0;
}

static int act_write_table(struct run *R)
{
	_cleanup_free_ char *w = NULL;
	struct gpt_new t;
	int tfd, r;

	tfd = held(R, &R->th);
	if (tfd < 0)
		return tfd;
	plan_gpt(R->p, &t);
	r = gpt_write(tfd, R->env->tgt, &t, &w);
	free(t.parts);
	R->env->target_touched = true;
	if (r < 0)
		return set_why(&R->env->why, r, "%s", w ? w : strerror(-r));
	R->detail = xasprintf("GPT with %zu partitions, backup header at LBA %" PRIu64, R->p->nparts, R->p->tgt_geo.last_lba);
	return 0;
}

static void add_check_v(json_object *checks, const char *id, const char *status, const char *fmt, va_list ap)
{
	json_object *c = json_object_new_object();
	char *s = NULL;

	if (vasprintf(&s, fmt, ap) < 0)
		abort();
	jset_str(c, "id", id);
	jset_str(c, "status", status);
	jset_str(c, "summary", s);
	free(s);
	json_object_array_add(checks, c);
}

/* A check with its status ("pass", "fail", "skip"); add_check: pass or fail. */
static void add_check_as(json_object *checks, const char *id, const char *status, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void add_check_as(json_object *checks, const char *id, const char *status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	add_check_v(checks, id, status, fmt, ap);
	va_end(ap);
}

static void add_check(json_object *checks, const char *id, bool pass, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void add_check(json_object *checks, const char *id, bool pass, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	add_check_v(checks, id, pass ? "pass" : "fail", fmt, ap);
	va_end(ap);
}

/* What makes the target boot at its LBA size, which the table and UUID checks do not see (issue 29:
 * "6 checks passed" on a disk that did not boot): the GPT's header ("EFI PART") at LBA 1 counted in
 * the target's `lba`-byte blocks, the plan made for those blocks, and each FAT's bytes per sector
 * (boot sector offset 11) and each ext block a whole number of them, as Linux needs to mount them. */
static void verify_lba(const struct plan *p, int fd, uint32_t lba, json_object *checks, bool *ok)
{
	char sig[8] = { 0 };
	bool hdr;

	hdr = lba >= sizeof(sig) && pread_all(fd, sig, sizeof(sig), lba) == 0 && memcmp(sig, "EFI PART", 8) == 0;
	add_check(checks, "target-lba-size", hdr && lba == p->tgt_geo.lba_size,
		  "the GPT header is %sat LBA 1 of %u-byte blocks, the target's; the plan wrote %u-byte LBAs",
		  hdr ? "" : "NOT ", lba, p->tgt_geo.lba_size);
	if (!hdr || lba != p->tgt_geo.lba_size)
		*ok = false;
	for (size_t i = 0; i < p->nparts; i++) {
		const struct plan_part *pp = &p->parts[i];
		_cleanup_free_ char *cid = xasprintf("sector-size-p%u", pp->number);
		uint32_t bps = 0;
		bool fits;

		if (pp->is_ext) {
			fits = fs_sector_fits(pp->block_size, lba);
			add_check(checks, cid, fits, "partition %u: %s blocks of %u B on %u-byte LBAs%s", pp->number,
				  pp->fs_type, pp->block_size, lba, fits ? "" : ": Linux cannot mount it on this drive");
		} else if (streq(pp->fs_type, "vfat")) {
			if (probe_fat_sector_size(fd, pp->offset, &bps) < 0) {
				add_check(checks, cid, false, "partition %u: no FAT boot sector with a valid bytes-per-sector "
					  "on the target", pp->number);
				*ok = false;
				continue;
			}
			fits = fs_sector_fits(bps, lba);
			if (fits)
				add_check(checks, cid, true, "partition %u: FAT sectors of %u B on %u-byte LBAs", pp->number,
					  bps, lba);
			else
				add_check(checks, cid, false, "partition %u: FAT sectors of %u B on %u-byte LBAs: Linux refuses "
					  "it (logical sector size too small) and the firmware may too; re-create the ESP "
					  "with mkfs.vfat -S %u, or take path 1", pp->number, bps, lba, lba);
		} else
			continue;
		if (!fits)
			*ok = false;
	}
}

/* The target against the plan, with the partition table read back by our reader, the
 * filesystems by libblkid/libext2fs and the table checked by sgdisk -v. */
int plan_verify_target(const struct plan *p, const char *tgt, json_object *checks, bool *ok)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *w = NULL, *out = NULL;
	struct ptable t = { 0 };
	uint64_t bytes;
	uint32_t lba;
	bool blk, good;
	json_object *c;
	char b[2][32];
	int r;

	*ok = true;
/* ADD_AS: a check with its status ("pass", "fail", "skip": a check that could not be made is
 * a skip, never a pass); ADD: pass or fail by a condition. Only a fail clears *ok. */
#define ADD_AS(id, status, ...)                                               \
	do {                                                                  \
		const char *_st = (status);                                   \
		c = json_object_new_object();                                 \
		jset_str(c, "id", id);                                        \
		jset_str(c, "status", _st);                                   \
		_cleanup_free_ char *_s = xasprintf(__VA_ARGS__);             \
		jset_str(c, "summary", _s);                                   \
		json_object_array_add(checks, c);                             \
		if (streq(_st, "fail"))                                       \
			*ok = false;                                          \
	} while (0)
#define ADD(id, st, ...) ADD_AS(id, (st) ? "pass" : "fail", __VA_ARGS__)

	fd = open(tgt, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	{
		struct stat st;

		if (fstat(fd, &st) < 0)
			return -errno;
		blk = S_ISBLK(st.st_mode);
		bytes = st.st_size;
		lba = p->tgt_geo.lba_size;
		if (blk) {
			int ssz = 0;

			if (ioctl(fd, BLKGETSIZE64, &bytes) < 0 || ioctl(fd, BLKSSZGET, &ssz) < 0)
				return -errno;
			lba = ssz;
		}
	}
	/* before the table: a table that cannot be read at the target's LBA size is what it explains */
	verify_lba(p, fd, lba, checks, ok);
	r = ptable_read(fd, tgt, lba, bytes, &t, &w);
	if (r < 0) {
		ADD("target-table", false, "cannot read the target's table: %s", w ? w : strerror(-r));
		return 0;
	}
	good = t.kind == PT_GPT && t.primary_ok && t.backup_ok;
	ADD("target-table", good, "GPT on the target: primary %s, backup %s", t.primary_ok ? "valid" : "INVALID",
	    t.backup_ok ? "valid" : "INVALID");
	ADD("gpt-backup-header", t.backup_header_lba == p->tgt_geo.last_lba,
	    "backup header at LBA %s, the target's last LBA is %s", fmt_thousands(t.backup_header_lba, b[0]),
	    fmt_thousands(p->tgt_geo.last_lba, b[1]));
	c = json_object_array_get_idx(checks, json_object_array_length(checks) - 1);
	jset_u64(c, "backup_header_lba", t.backup_header_lba);
	jset_u64(c, "target_last_lba", p->tgt_geo.last_lba);

	/* sgdisk reads an image file as 512-byte sectors: it can judge a 512-byte target, or any
	 * block device (it asks the kernel for the sector size). */
	if (blk || p->tgt_geo.lba_size == 512) {
		char *argv[] = { "sgdisk", "-v", (char *)tgt, NULL };

		r = run_tool(argv, &out);
		if (r == 127)
			ADD_AS("sgdisk", "skip", "not checked: sgdisk is not installed (install gdisk for an independent "
			       "check of the table)");
		else
			ADD("sgdisk", r == 0 && out && strstr(out, "No problems found"), "sgdisk -v: %s",
			    out && strstr(out, "No problems found") ? "no problems found" : last_line(out));
	}
	good = t.nparts == p->nparts && streq(t.disk_guid, p->disk_guid);
	for (size_t i = 0; good && i < p->nparts; i++) {
		const struct plan_part *pp = &p->parts[i];
		const struct part *q = &t.parts[i];

		good = q->number == pp->number && q->start_lba == pp->tgt_start_lba && q->end_lba == pp->tgt_end_lba &&
		       streq(q->part_guid, pp->part_guid) && streq(q->type_guid, pp->type_guid) && q->attrs == pp->attrs &&
		       streq(q->name ? q->name : "", pp->name);
	}
	ADD("partuuids", good, "%zu partitions: starts, ends, type and partition GUIDs, names, attributes and the disk GUID %s",
	    p->nparts, good ? "as planned" : "DIFFER from the plan");
	for (size_t i = 0; i < p->nparts; i++) {
		const struct plan_part *pp = &p->parts[i];
		struct fs_id id = { 0 };
		_cleanup_free_ char *cid = xasprintf("fs-p%u", pp->number);

		probe_fs(fd, pp->offset, pp->tgt_bytes, &id);
		if (!pp->is_ext) {
			ADD(cid, streq(id.uuid, pp->fs_uuid) && streq(id.type, pp->fs_type), "partition %u: %s UUID %s (source %s)",
			    pp->number, id.type[0] ? id.type : "none", id.uuid[0] ? id.uuid : "none",
			    pp->fs_uuid[0] ? pp->fs_uuid : "none");
			continue;
		}
		uint64_t blocks = 0;
		_cleanup_free_ char *w2 = NULL;
		r = ext_blocks(tgt, pp->offset, &blocks, NULL, &w2);
		ADD(cid, r == 0 && streq(id.uuid, pp->fs_uuid) && blocks == pp->new_block_count,
		    "partition %u: %s UUID %s, %s blocks (planned %s)", pp->number, id.type[0] ? id.type : "none",
		    id.uuid[0] ? id.uuid : "none", fmt_thousands(blocks, b[0]), fmt_thousands(pp->new_block_count, b[1]));
	}
#undef ADD
#undef ADD_AS
	ptable_free(&t);
	return 0;
}

static int act_verify(struct run *R)
{
	json_object *checks = json_object_new_array();
	bool ok;
	int r = plan_verify_target(R->p, R->th.anchor >= 0 ? R->th.proc : R->env->tgt, checks, &ok);
	size_t n = json_object_array_length(checks), skipped = 0;
	const char *first = NULL;

	for (size_t i = 0; i < n; i++) {
		json_object *c = json_object_array_get_idx(checks, i);
		const char *st = jget_str(c, "status");

		if (streq(st, "skip"))
			skipped++;
		else if (streq(st, "fail") && !first)
			first = jget_str(c, "summary");
	}
	if (r < 0)
		r = set_why(&R->env->why, r, "cannot verify the target '%s': %s", R->env->tgt, strerror(-r));
	else if (!ok)
		r = set_why(&R->env->why, -EIO, "the target does not match the plan: %s", first ? first : "?");
	else
		R->detail = skipped ? xasprintf("%zu checks passed, %zu skipped", n - skipped, skipped)
				    : xasprintf("%zu checks passed", n);
	json_object_put(checks);
	return r;
}

/* The tools and the copy reach the drives through the holds' /proc/PID/fd names, so that every
 * access lands on the inode that was checked; an error says the names the operator gave. */
static void name_drives(struct run *R)
{
	/* the longer name first, so that ".../fd/4" does not eat the start of ".../fd/41" */
	bool tfirst = strlen(R->th.proc) > strlen(R->sh.proc);
	const struct ident_hold *h[] = { tfirst ? &R->th : &R->sh, tfirst ? &R->sh : &R->th };
	const char *name[] = { tfirst ? R->env->tgt : R->env->src, tfirst ? R->env->src : R->env->tgt };

	for (size_t i = 0; i < 2 && R->env->why; i++) {
		if (h[i]->anchor < 0 || !name[i])
			continue;
		char *s = str_replace_all(R->env->why, h[i]->proc, name[i]);

		free(R->env->why);
		R->env->why = s;
	}
}

int plan_apply(const struct plan *p, struct plan_env *env)
{
	struct run R = { .p = p, .env = env, .sh = IDENT_HOLD_INIT, .th = IDENT_HOLD_INIT };
	int r = 0;

	if (!p->clone_possible || !p->nacts)
		return set_why(&env->why, -ENOSPC, "path 2 is not possible: %s", p->clone_why);
	g_stop = env->copy.stop;
	for (size_t i = 0; i < p->nacts; i++) {
		const struct plan_action *a = &p->acts[i];
		double t0 = mono_s();

		if (env->copy.stop && *env->copy.stop) {
			r = set_why(&env->why, -EINTR, "interrupted before %s", plan_act_name(a->kind));
			break;
		}
		if (env->start)
			env->start(env->ud, i, a);
		free(R.detail);
		R.detail = NULL;
		switch (a->kind) {
		case PA_CHECK: r = act_check(&R); break;
		case PA_E2FSCK: r = act_e2fsck(&R, a, false); break;
		case PA_SHRINK: r = act_shrink(&R, a); break;
		case PA_COPY_RAW:
		case PA_COPY_USED: r = act_copy(&R, a); break;
		case PA_GROW: r = act_grow(&R, a); break;
		case PA_FSCK: r = act_e2fsck(&R, a, true); break;
		case PA_WRITE_TABLE: r = act_write_table(&R); break;
		case PA_VERIFY: r = act_verify(&R); break;
		case PA_MANUAL: R.detail = xstrdup("for the operator"); break;
		}
		if (r < 0 && env->copy.stop && *env->copy.stop) {
			/* run_tool stops a running tool at the stop flag: its failure is the stop */
			r = set_why(&env->why, -EINTR, "interrupted during %s%s; %s", plan_act_name(a->kind),
				    a->kind == PA_SHRINK ? " (the source was not written)" : "",
				    env->target_touched ? "the target has no table: rerun the clone to start over"
							: "nothing was written to the target");
			env->refusal = 0;
		}
		if (r < 0)
			name_drives(&R);
		if (env->done)
			env->done(env->ud, i, a, r, mono_s() - t0, r < 0 ? env->why : R.detail);
		if (r < 0)
			break;
	}
	g_stop = NULL;
	free(R.detail);
	ident_hold_close(&R.sh);
	ident_hold_close(&R.th);
	return r;
}

/* Real disk used by the regular files directly in `dir`. */
static uint64_t dir_usage(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	uint64_t sum = 0;

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		struct stat st;

		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
			sum += (uint64_t)st.st_blocks * 512;
	}
	closedir(d);
	return sum;
}

static void rm_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d)))
		if (!streq(e->d_name, ".") && !streq(e->d_name, ".."))
			(void)unlinkat(dirfd(d), e->d_name, 0);
	closedir(d);
	(void)rmdir(dir);
}

struct rh {
	struct rehearse_result *res;
	const char *dir;
	const struct copy_opts *copy;
};

/* each action of the rehearsal, named to its progress line */
static void rh_start(void *ud, size_t i, const struct plan_action *a)
{
	const struct rh *h = ud;

	(void)i;
	if (h->copy->phase)
		h->copy->phase(h->copy->ud, plan_act_name(a->kind));
}

static void rh_done(void *ud, size_t i, const struct plan_action *a, int r, double secs, const char *detail)
{
	struct rh *h = ud;
	json_object *o = json_object_new_object();
	uint64_t u = dir_usage(h->dir);

	if (u > h->res->scratch_peak_bytes)
		h->res->scratch_peak_bytes = u;
	jset_u64(o, "n", i + 1);
	jset_str(o, "action", plan_act_name(a->kind));
	if (a->part)
		jset_u64(o, "partition", a->part);
	jset_double(o, "seconds", secs);
	jset_str(o, "status", r < 0 ? "fail" : "pass");
	jset_str(o, "detail", detail);
	json_object_array_add(h->res->actions, o);
}

/* Build the scratch source: the source's GPT regions, raw copies of the non-ext partitions
 * (holes kept) and metadata-only copies of the ext ones, each at its own offset. */
static int scratch_source(const struct plan *p, const char *src, const char *img,
			  const struct copy_opts *copy, char **why)
{
	_cleanup_close_ int sfd = open(src, O_RDONLY | O_CLOEXEC), dfd = -1;
	const struct lba_geometry *g = &p->src_geo;
	int r;

	if (sfd < 0)
		return set_why(why, -errno, "cannot open the source '%s': %m", src);
	dfd = open(img, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (dfd < 0)
		return set_why(why, -errno, "cannot create '%s': %m", img);
	if (ftruncate(dfd, g->bytes) < 0)
		return set_why(why, -errno, "cannot size '%s' to %" PRIu64 " bytes: %m", img, g->bytes);
	/* Protective MBR + primary header + entries (LBA 0-33 at 512 B), and the backup entries +
	 * header (the last 33 LBAs). */
	r = fscopy_raw(sfd, 0, dfd, 0, g->first_usable_lba * g->lba_size, copy, NULL);
	if (r == 0)
		r = fscopy_raw(sfd, (g->last_usable_lba + 1) * g->lba_size, dfd, (g->last_usable_lba + 1) * g->lba_size,
			       (g->last_lba - g->last_usable_lba) * g->lba_size, copy, NULL);
	if (r < 0)
		return set_why(why, r, "cannot copy the source's table: %s", strerror(-r));
	for (size_t i = 0; i < p->nparts; i++) {
		const struct plan_part *pp = &p->parts[i];

		if (!pp->is_ext) {
			r = fscopy_raw(sfd, pp->offset, dfd, pp->offset, pp->src_bytes, copy, NULL);
			if (r < 0)
				return set_why(why, r, "cannot copy partition %u: %s", pp->number, strerror(-r));
			continue;
		}
		_cleanup_free_ char *w = NULL;

		/* What e2image -r copies (no file data), but placed straight at the partition's offset
		 * of the scratch disk: e2image -O into a 2 TB file writes its zeros (1.1 GB, 28 s),
		 * and e2image then a sparse placement costs 26 s on the incident; this takes ~2 s. */
		r = fscopy_ext_meta(src, sfd, pp->offset, dfd, pp->offset, pp->src_bytes, copy, NULL, &w);
		if (r < 0)
			return set_why(why, r, "cannot copy the metadata of partition %u: %s", pp->number, w ? w : strerror(-r));
	}
	return 0;
}

int plan_rehearse(const struct plan *p, const char *scratch, struct copy_opts *copy, struct rehearse_result *res,
		  char **why)
{
	_cleanup_free_ char *dir = NULL, *src = NULL, *tgt = NULL;
	struct plan_env env = { 0 };
	struct statvfs vfs;
	struct rh h;
	uint64_t need;
	double t0 = mono_s();
	int r;

	*res = (struct rehearse_result){ .actions = json_object_new_array(), .checks = json_object_new_array() };
	if (!p->clone_possible)
		return set_why(why, -ENOSPC, "path 2 is not possible, nothing to rehearse: %s", p->clone_why);
	/* The copy carries what it understands: a feature it does not know could be metadata it
	 * leaves out, and e2fsck would then blame the source for the copy's gap. Say which. */
	for (size_t i = 0; i < p->nparts; i++) {
		const struct plan_part *pp = &p->parts[i];
		_cleanup_free_ char *unknown = NULL, *w = NULL;

		if (!pp->is_ext)
			continue;
		r = fscopy_ext_meta_check(p->src_path, pp->offset, &unknown, &w);
		if (r < 0)
			return set_why(why, r, "cannot read the features of partition %u: %s", pp->number, w ? w : strerror(-r));
		if (r > 0) {
			add_check_as(res->checks, "features", "warn",
				     "the filesystem of partition %u has ext4 feature%s %s, which the rehearsal's metadata "
				     "copy does not understand, so it did not run (this says nothing against the source); "
				     "prove path 2 by a clone onto a spare drive, or take path 1",
				     pp->number, strchr(unknown, ',') ? "s" : "", unknown);
			res->not_run = true;
			res->seconds = mono_s() - t0;
			return 0;
		}
	}
	add_check(res->checks, "features", true, "every ext4 feature of the source is one the metadata copy understands");
	/* Room first: what the copies hold at most (the blocks that move stay holes), checked
	 * before the first file is made rather than found by filling a disk. */
	need = plan_rehearse_need(p);
	if (statvfs(scratch, &vfs) < 0)
		return set_why(why, -errno, "cannot use the scratch directory '%s': %m; pass --scratch DIR", scratch);
	res->scratch_free_bytes = (uint64_t)vfs.f_bavail * vfs.f_frsize;
	if (res->scratch_free_bytes < need) {
		char b[2][32];
		return set_why(why, -ENOSPC, "the scratch directory '%s' has %s free, the rehearsal needs %s; pass --scratch DIR "
				"on a filesystem with more room", scratch, fmt_decimal(res->scratch_free_bytes, b[0]),
			       fmt_decimal(need, b[1]));
	}
	dir = xasprintf("%s/swaptool-rehearse.XXXXXX", scratch);
	if (!mkdtemp(dir))
		return set_why(why, -errno, "cannot create a directory in '%s': %m", scratch);
	src = xasprintf("%s/source.img", dir);
	tgt = xasprintf("%s/target.img", dir);
	h = (struct rh){ res, dir, copy };

	if (copy->phase)
		copy->phase(copy->ud, "copy-metadata");
	r = scratch_source(p, p->src_path, src, copy, why);
	if (r < 0)
		goto out;
	{
		_cleanup_close_ int tfd = open(tgt, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

		if (tfd < 0 || ftruncate(tfd, p->tgt_geo.bytes) < 0) {
			r = set_why(why, -errno, "cannot create the scratch target '%s': %m", tgt);
			goto out;
		}
	}
	add_check(res->checks, "scratch-copy", true, "metadata copies of the source in %s (%.1f s)", dir, mono_s() - t0);
	if (dir_usage(dir) > res->scratch_peak_bytes)
		res->scratch_peak_bytes = dir_usage(dir);

	env.src = src;
	env.tgt = tgt;
	env.scratch = dir;
	env.rehearsal = true;
	env.copy = *copy;
	env.done = rh_done;
	env.start = rh_start;
	env.ud = &h;
	r = plan_apply(p, &env);
	if (r < 0) {
		add_check(res->checks, "apply", false, "%s", env.why ? env.why : strerror(-r));
		free(env.why);
		r = 0;
		res->ok = false;
	} else {
		bool ok = false;
		size_t n = json_object_array_length(res->actions), fsck = 0;

		for (size_t i = 0; i < p->nacts; i++)
			if (p->acts[i].kind == PA_FSCK)
				fsck++;
		add_check(res->checks, "apply", true, "%zu actions of path 2 ran on the scratch copies", n);
		if (fsck)
			add_check(res->checks, "e2fsck", true, "e2fsck -fn clean on %zu target filesystem%s", fsck,
				  fsck == 1 ? "" : "s");
		else
			add_check_as(res->checks, "e2fsck", "skip", "not checked: the plan has no ext filesystem");
		r = plan_verify_target(p, tgt, res->checks, &ok);
		if (r < 0)
			set_why(why, r, "cannot verify the scratch target: %s", strerror(-r));
		res->ok = ok;
	}
out:
	if (dir_usage(dir) > res->scratch_peak_bytes)
		res->scratch_peak_bytes = dir_usage(dir);
	rm_dir(dir);
	res->seconds = mono_s() - t0;
	return r;
}
