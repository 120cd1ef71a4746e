/* SPDX-License-Identifier: MIT */
/* backup: the node's irreplaceable config (controller.key, ~/.ssh, netplan, fstab, hosts) as a
 * verified gzip pax tarball with a manifest, written atomically, optionally copied off the drive. */
#include "steps.h"
#include "schema.h"
#include "tarball.h"
#include "rootpath.h"
#include "size.h"

#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>

static const struct step_option backup_options[] = {
	STEP_OPT_HOME("home of the node's user, as the node sees it (default: $SUDO_USER's, else $HOME)"),
	STEP_OPT_ROOT("read the backup set under DIR instead of / (offline or demo trees)"),
	{ { "out", required_argument, NULL, 'o' }, "FILE",
	  "the tarball (default ~/HOST-swap-backup-YYYYMMDD/HOST-config.tar.gz)" },
	{ { "copy-to", required_argument, NULL, 'c' }, "DIR",
	  "also copy it into DIR (off the drive being replaced), synced and hash-checked" },
	{ { "skip-unreadable", no_argument, NULL, 's' }, NULL,
	  "record unreadable files as skipped instead of failing (exit 3)" },
	STEP_OPTIONS_END,
};

const struct step step_backup = {
	.name = "backup",
	.summary = "the node's irreplaceable config (controller.key, ~/.ssh, netplan, fstab, hosts) as a verified tarball",
	.synopsis = "swaptool backup [--home DIR] [--root DIR] [--out FILE] [--copy-to DIR] [--skip-unreadable]\n",
	.options = backup_options,
	.run = step_backup_run,
	.render = step_backup_render,
	.flags = STEP_SAVES_RECORD,
};

/* The whole disk under a device number: "nvme0n1" for nvme0n1p2 (sysfs), or NULL. */
static char *whole_disk(dev_t dev)
{
	_cleanup_free_ char *link = xasprintf("/sys/dev/block/%u:%u", major(dev), minor(dev));
	_cleanup_free_ char *real = realpath(link, NULL);
	_cleanup_free_ char *part = NULL;
	char *base;

	if (!real)
		return NULL;
	part = xasprintf("%s/partition", real);
	if (access(part, F_OK) == 0) {
		char *slash = strrchr(real, '/');
		if (slash)
			*slash = '\0';
	}
	base = strrchr(real, '/');
	return xstrdup(base ? base + 1 : real);
}

/* Is `path` (or its directory) on the drive being replaced: the whole disk of / or of the
 * preflight record's source? *disk gets the whole-disk name when sysfs knows it. */
static bool on_replaced_drive(const char *path, dev_t root_dev, const char *rootd, const char *srcd, char **disk,
			      bool *same_src)
{
	struct stat st;

	*disk = NULL;
	*same_src = false;
	if (stat(path, &st) < 0)
		return false;
	*disk = whole_disk(st.st_dev);
	*same_src = *disk && srcd && streq(*disk, srcd);
	/* no block device behind it (overlay, tmpfs): the same filesystem as / is the best we know */
	return *same_src || (*disk && rootd ? streq(*disk, rootd) : st.st_dev == root_dev);
}

/* Where the tarball (and its copy) lie against / and the preflight source: the warning to copy it off. */
static void check_location(struct ctx *ctx, struct record *rec, const char *out, const char *copy_dir)
{
	_cleanup_free_ char *dir = xstrdup(out);
	_cleanup_free_ char *here = NULL, *rootd = NULL, *srcd = NULL, *copyd = NULL;
	json_object *pf = NULL, *loc = json_object_new_object();
	const char *src = NULL;
	struct stat rs, ss;
	bool bad, bad_copy = false, same_src = false, copy_src = false;

	if (stat("/", &rs) < 0)
		rs.st_dev = 0;
	rootd = whole_disk(rs.st_dev);
	/* source.device is the namespace when preflight was given the controller (/dev/nvme0, a
	 * character device); source.path is the block device otherwise */
	if (record_load(ctx->state_dir, "preflight", &pf) == 0)
		src = schema_preflight_source_device(pf);
	if (src && stat(src, &ss) == 0 && S_ISBLK(ss.st_mode))
		srcd = whole_disk(ss.st_rdev);
	bad = on_replaced_drive(dirname(dir), rs.st_dev, rootd, srcd, &here, &same_src);
	if (copy_dir)
		bad_copy = on_replaced_drive(copy_dir, rs.st_dev, rootd, srcd, &copyd, &copy_src);
	jset_str(loc, "device", here);
	jset_str(loc, "root_device", rootd);
	jset_str(loc, "preflight_source", src);
	jset_str(loc, "preflight_device", srcd);
	jset_bool(loc, "on_replaced_drive", bad);
	jset_str(loc, "copy_device", copyd);
	if (copy_dir)
		jset_bool(loc, "copy_on_replaced_drive", bad_copy);
	json_object_object_add(rec->root, "location", loc);
	if (bad && copy_dir && !bad_copy)
		record_check(rec, "location", ST_PASS, "the tarball lies on the drive being replaced (%s); its verified copy in '%s' does not (%s)",
			     here ? here : "same filesystem as /", copy_dir, copyd ? copyd : "other filesystem");
	else if (bad)
		record_check(rec, "location", ST_WARN, "the tarball %s on '%s', the drive being replaced (%s%s%s): copy it off (--copy-to DIR) before the swap",
			     copy_dir ? "and its copy lie" : "lies", here ? here : "the same filesystem as /",
			     same_src ? "preflight source '" : "the drive of /", same_src ? src : "", same_src ? "'" : "");
	else
		record_check(rec, "location", ST_PASS, "the tarball lies off the drive being replaced (%s)", here ? here : "other filesystem");
	json_object_put(pf);
}

/* Prepare the copy of the tarball in DIR: a temporary of our own (mkostemp), synced, read back
 * and compared by sha256; the caller renames it into place together with the tarball. */
static int copy_prepare(const char *from, const char *dir, const char *name, const char *want, uint64_t max, uid_t uid,
			gid_t gid, char **dest, char **tmp, char **why)
{
	_cleanup_free_ char *data = NULL;
	_cleanup_close_ int fd = -1, rfd = -1;
	size_t len;
	char hex[65];
	int r;

	*dest = xasprintf("%s/%s", dir, name);
	*tmp = xasprintf("%s.tmp.XXXXXX", *dest);
	r = read_input_at(AT_FDCWD, from, max, INPUT_NOFOLLOW, &data, &len, NULL);
	if (r < 0)
		return set_why(why, r, "cannot read '%s': %s", from, strerror(-r));
	r = mkdir_p(dir, 0700);
	if (r < 0)
		return set_why(why, r, "cannot create '%s': %s; check that DIR is a writable directory", dir, strerror(-r));
	arc_sweep_tmps(*dest);
	fd = mkostemp(*tmp, O_CLOEXEC);
	if (fd < 0)
		return set_why(why, -errno, "cannot create a file in '%s': %s; check that DIR is a writable directory", dir,
			       strerror(errno));
	r = fchmod(fd, 0600) < 0 ? -errno : write_all(fd, data, len);
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	if (r == 0 && geteuid() == 0 && uid != (uid_t)-1 && fchown(fd, uid, gid) < 0)
		r = -errno;
	if (r < 0) {
		set_why(why, r, "cannot copy the tarball to '%s': %s", *dest,
			r == -ENOSPC ? "no space left on the device" : strerror(-r));
		goto bad;
	}
	rfd = open_input_at(AT_FDCWD, *tmp, 0, INPUT_NOFOLLOW, NULL, NULL);
	r = rfd < 0 ? rfd : sha256_fd(rfd, hex, NULL);
	if (r < 0 || !streq(hex, want)) {
		r = set_why(why, -EIO, "the copy '%s' reads back with a different sha256; it was removed: check the medium",
			    *dest);
		goto bad;
	}
	return 0;
bad:
	unlink(*tmp);
	return r;
}

/* Is the existing file at `path` one of the inputs (same st_dev and st_ino)? Returns the input's name. */
static const char *same_as_input(const char *path, const struct arc_source *s, const char *state_dir)
{
	struct stat o, i;

	if (stat(path, &o) < 0)
		return NULL;
	for (size_t k = 0; k < s->man.n; k++)
		if (lstat(s->src[k], &i) == 0 && i.st_dev == o.st_dev && i.st_ino == o.st_ino)
			return s->src[k];
	for (size_t k = 0; state_dir && k < s->man.nst; k++) {
		static char buf[PATH_MAX];

		snprintf(buf, sizeof(buf), "%s/%s", state_dir, s->state[k].name);
		if (lstat(buf, &i) == 0 && i.st_dev == o.st_dev && i.st_ino == o.st_ino)
			return buf;
	}
	return NULL;
}

/* An output may replace an earlier tarball, never an input or something that is not a file. */
static int check_output(struct ctx *ctx, const char *what, const char *path, const struct arc_source *s)
{
	struct stat st;
	const char *in;

	if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode))
		return ctx_error(ctx, EXIT_FAILED, "%s '%s' exists and is a %s, not a tarball; name a new file", what, path,
				 file_kind(st.st_mode));
	in = same_as_input(path, s, ctx->state_dir);
	if (in)
		return ctx_error(ctx, EXIT_FAILED, "%s '%s' is '%s', a file this backup reads; name a new file outside the "
				 "backup set", what, path, in);
	return 0;
}

/* One backup run: what the command line asks, what was collected, and where it goes. */
struct backup_job {
	const char *home_opt, *root, *out_opt, *copy_dir;
	bool skip_unreadable;
	char *home, *why, *hp, *out, *tmp, *copy_dest, *copy_tmp;
	struct arc_source s;
	uid_t uid;
	gid_t gid;
	bool home_dir;
	char sha[65];
	uint64_t bytes;
};

static void backup_job_free(struct backup_job *j)
{
	arc_source_free(&j->s);
	free(j->home);
	free(j->why);
	free(j->hp);
	free(j->out);
	free(j->tmp);
	free(j->copy_dest);
	free(j->copy_tmp);
}

/* The options, then the home and the root they name; 0 or the exit code. */
static int backup_args(struct ctx *ctx, int argc, char **argv, struct backup_job *j)
{
	struct stat st;
	int c;

	while ((c = getopt_long(argc, argv, "", step_getopt(backup_options), NULL)) != -1) {
		switch (c) {
		case 'H':
			if (step_home_option(ctx, optarg))
				return EXIT_USAGE;
			j->home_opt = optarg;
			break;
		case 'r': j->root = optarg; break;
		case 'o': j->out_opt = optarg; break;
		case 'c': j->copy_dir = optarg; break;
		case 's': j->skip_unreadable = true; break;
		default: return step_bad_option(ctx, argc, argv);
		}
	}
	if (optind < argc)
		return ctx_error(ctx, EXIT_USAGE, "unexpected argument '%s'; see 'swaptool help backup'", argv[optind]);
	if (node_home(j->home_opt, &j->home) < 0 || j->home[0] != '/')
		return ctx_error(ctx, EXIT_USAGE, "no home directory for the node's user: pass --home /home/USER");
	if (stat(j->root, &st) < 0 || !S_ISDIR(st.st_mode))
		return ctx_error(ctx, EXIT_USAGE, "the root '%s' is not a directory; pass --root DIR", j->root);
	return 0;
}

/* The backup set from the profile; 0 or the exit code. */
static int backup_gather(struct ctx *ctx, struct backup_job *j)
{
	struct backup_opts bo = { .root = j->root, .home = j->home, .profile = ctx->profile, .state_dir = ctx->state_dir,
				  .skip_unreadable = j->skip_unreadable };
	int r;

	arc_catch_sigint(); /* SIGINT: the temporary is removed and the one document printed (exit 130) */
	r = backup_collect(&bo, &j->s, &j->why);
	if (r < 0)
		return ctx_error(ctx, r == -EINTR ? EXIT_INTERRUPTED : EXIT_FAILED, "%s%s", j->why ? j->why : strerror(-r),
				 r == -EINTR ? "; no tarball written" : "");
	if (j->s.unreadable) {
		ctx_error(ctx, EXIT_FAILED, "cannot read '%s' in the backup set; fix its permissions, or pass --skip-unreadable to record it as skipped",
			  j->s.unreadable);
		return EXIT_FAILED;
	}
	return 0;
}

/* What was collected, into the record: required files, skipped and missing paths, totals.
 * Returns whether every required file is there. */
static bool record_collected(struct record *rec, const struct backup_job *j)
{
	const struct arc_source *s = &j->s;
	json_object *arr, *o;
	bool req_ok = true;

	jset_str(rec->root, "root", j->root);
	jset_str(rec->root, "home", j->home);
	jset_str(rec->root, "user", s->man.user);
	arr = json_object_new_array();
	for (size_t i = 0; i < s->nreq; i++) {
		o = json_object_new_object();
		jset_str(o, "path", s->req[i].path);
		jset_bool(o, "found", s->req[i].ok);
		jset_u64(o, "bytes", s->req[i].size);
		jset_str(o, "problem", s->req[i].why);
		json_object_array_add(arr, o);
		if (!s->req[i].ok) {
			req_ok = false;
			record_check(rec, "required", ST_FAIL, "required file '%s' is %s: without it all agents must be re-paired; no tarball written",
				     s->req[i].path, s->req[i].why);
		}
	}
	json_object_object_add(rec->root, "required", arr);
	arr = json_object_new_array();
	for (size_t i = 0; i < s->nskipped; i++) {
		o = json_object_new_object();
		jset_str(o, "path", s->skipped[i].path);
		jset_str(o, "reason", s->skipped[i].reason);
		json_object_array_add(arr, o);
	}
	json_object_object_add(rec->root, "skipped", arr);
	arr = json_object_new_array();
	for (size_t i = 0; i < s->nmissing; i++)
		json_object_array_add(arr, json_object_new_string(s->missing[i].path));
	json_object_object_add(rec->root, "missing", arr);
	jset_u64(rec->root, "entries", s->man.n);
	jset_u64(rec->root, "data_bytes", s->data_bytes);
	jset_u64(rec->root, "state_records", s->man.nst);
	return req_ok;
}

/* the node's user owns the tarball: the owner of the home directory (resolved inside
 * the root: a symlinked home must not lead to this host's) */
static void backup_owner(struct backup_job *j)
{
	struct stat st;

	{
		_cleanup_close_ int rootfd = open(j->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		j->hp = rootfd >= 0 ? root_real(rootfd, j->home + 1, true) : NULL;
	}
	j->home_dir = j->hp && stat(j->hp, &st) == 0 && S_ISDIR(st.st_mode);
	if (j->home_dir && geteuid() == 0) {
		j->uid = st.st_uid;
		j->gid = st.st_gid;
	}
}

/* Without --out: HOME/HOST-swap-backup-DAY/HOST-config.tar.gz, its directory made and given to the
 * node's user; 0 or the exit code. */
static int default_out(struct ctx *ctx, struct backup_job *j)
{
	char day[16];
	time_t now = time(NULL);
	struct tm tm;
	_cleanup_free_ char *dir = NULL;
	int r;

	if (!j->home_dir)
		return ctx_error(ctx, EXIT_FAILED, "the home '%s' is not a directory inside the root '%s'; pass --out FILE", j->home,
				 j->root);
	gmtime_r(&now, &tm);
	strftime(day, sizeof(day), "%Y%m%d", &tm);
	dir = xasprintf("%s/%s-swap-backup-%s", j->hp, host_name(), day);
	r = mkdir_p(dir, 0700);
	if (r < 0)
		return ctx_error(ctx, EXIT_FAILED, "cannot create '%s': %s; pass --out FILE", dir, strerror(-r));
	/* The home belongs to the node's user: a link planted under this name must not
	 * make root chown or write elsewhere (O_NOFOLLOW, then fchown on what was opened). */
	{
		_cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

		if (dfd < 0)
			return ctx_error(ctx, EXIT_FAILED, "'%s' is not a directory (%m): it is not swaptool's; pass --out FILE",
					 dir);
		if (j->uid != (uid_t)-1 && fchown(dfd, j->uid, j->gid) < 0)
			return ctx_error(ctx, EXIT_FAILED, "cannot give '%s' to the node's user: %m", dir);
	}
	j->out = xasprintf("%s/%s-config.tar.gz", dir, host_name());
	return 0;
}

/* The tarball's path and its copy's, neither of them an input; 0 or the exit code. */
static int backup_outputs(struct ctx *ctx, struct backup_job *j)
{
	int r;

	if (j->out_opt)
		j->out = xstrdup(j->out_opt);
	else if ((r = default_out(ctx, j)))
		return r;
	if (check_output(ctx, "--out", j->out, &j->s))
		return EXIT_FAILED;
	if (j->copy_dir) {
		_cleanup_free_ char *o2 = xstrdup(j->out);

		j->copy_dest = xasprintf("%s/%s", j->copy_dir, basename(o2));
		if (check_output(ctx, "the copy", j->copy_dest, &j->s))
			return EXIT_FAILED;
	}
	return 0;
}

/* The tarball and its copy: written, read back, then renamed into place; 0 or the exit code. */
static int backup_write(struct ctx *ctx, struct backup_job *j)
{
	int r = arc_write_tmp(&j->s, j->out, j->uid, j->gid, j->sha, &j->bytes, &j->tmp, &j->why);

	if (r < 0)
		return ctx_error(ctx, r == -EINTR ? EXIT_INTERRUPTED : EXIT_FAILED, "%s%s", j->why ? j->why : strerror(-r),
				 r == -EINTR ? "; no tarball written" : "");
	/* Both outputs or neither: the copy is made and checked from the temporary, then the two
	 * renames follow each other. */
	if (j->copy_dir) {
		_cleanup_free_ char *o2 = xstrdup(j->out), *cwhy = NULL;

		free(j->copy_dest);
		r = copy_prepare(j->tmp, j->copy_dir, basename(o2), j->sha, ctx->profile->limits.tarball_bytes, j->uid, j->gid,
				 &j->copy_dest, &j->copy_tmp, &cwhy);
		if (r < 0) {
			unlink(j->tmp);
			return ctx_error(ctx, EXIT_FAILED, "%s; no tarball written", cwhy);
		}
	}
	if (arc_interrupted) {
		unlink(j->tmp);
		if (j->copy_tmp)
			unlink(j->copy_tmp);
		return ctx_error(ctx, EXIT_INTERRUPTED, "interrupted; no tarball written");
	}
	r = arc_commit(j->tmp, j->out, &j->why);
	if (r == 0 && j->copy_tmp)
		r = arc_commit(j->copy_tmp, j->copy_dest, &j->why);
	else if (j->copy_tmp)
		unlink(j->copy_tmp);
	if (r < 0)
		return ctx_error(ctx, EXIT_FAILED, "%s", j->why ? j->why : strerror(-r));
	return 0;
}

/* What was written, into the record: the archive, its read-back, what was left out, the copy. */
static void record_written(struct ctx *ctx, struct record *rec, const struct backup_job *j)
{
	const struct arc_source *s = &j->s;
	json_object *arr, *o = json_object_new_object();

	jset_str(o, "path", j->out);
	jset_u64(o, "bytes", j->bytes);
	jset_str(o, "sha256", j->sha);
	jset_str(o, "format", "gzip pax");
	json_object_object_add(rec->root, "archive", o);
	record_check(rec, "readback", ST_PASS, "read back: %zu entries and %zu state record(s) match the manifest's sha256",
		     s->man.n, s->man.nst);
	if (s->nskipped > 0) {
		bool unread = false;
		for (size_t i = 0; i < s->nskipped; i++)
			if (startswith(s->skipped[i].reason, "unreadable"))
				unread = true;
		record_check(rec, "skipped", unread ? ST_WARN : ST_PASS, "%zu entr%s skipped: '%s' (%s)%s", s->nskipped,
			     s->nskipped == 1 ? "y" : "ies", s->skipped[0].path, s->skipped[0].reason, s->nskipped > 1 ? ", ..." : "");
	}
	if (s->nmissing > 0)
		record_check(rec, "backup-set", ST_WARN, "%zu backup path(s) do not exist: '%s'%s", s->nmissing, s->missing[0].path,
			     s->nmissing > 1 ? ", ..." : "");
	arr = json_object_new_array();
	if (j->copy_dir) {
		const char *dest = j->copy_dest;

		o = json_object_new_object();
		jset_str(o, "path", dest);
		jset_str(o, "sha256", j->sha);
		jset_bool(o, "verified", true);
		json_object_array_add(arr, o);
		record_check(rec, "copy", ST_PASS, "copied to '%s', synced, sha256 checked", dest);
	}
	json_object_object_add(rec->root, "copies", arr);
	check_location(ctx, rec, j->out, j->copy_dir);
}

/* collect, record, and unless a required file is missing: write, record */
static int backup_run(struct ctx *ctx, struct backup_job *j, struct record *rec)
{
	int r = backup_gather(ctx, j);

	if (r)
		return r;
	if (!record_collected(rec, j)) {
		json_object_object_add(rec->root, "archive", NULL);
		record_finish(rec);
		return record_exit_code(rec);
	}
	record_check(rec, "required", ST_PASS, "%zu required file(s) present and non-empty", j->s.nreq);
	backup_owner(j);
	if ((r = backup_outputs(ctx, j)) || (r = backup_write(ctx, j)))
		return r;
	record_written(ctx, rec, j);
	record_finish(rec);
	return record_exit_code(rec);
}

int step_backup_run(struct ctx *ctx, int argc, char **argv, struct record *rec)
{
	struct backup_job j = { .root = "/", .uid = (uid_t)-1, .gid = (gid_t)-1 };
	int r = backup_args(ctx, argc, argv, &j);

	if (r == 0)
		r = backup_run(ctx, &j, rec);
	backup_job_free(&j);
	return r;
}

void step_backup_render(const struct ctx *ctx, json_object *record)
{
	json_object *a = jget(record, "archive"), *sk = jget(record, "skipped"), *cp = jget(record, "copies");
	char b1[32], b2[32];

	if (a) {
		out_heading(ctx, "backup");
		out_line(ctx, "  tarball  %s", jget_str(a, "path"));
		out_line(ctx, "  size     %s bytes (%s)", fmt_thousands(jget_u64(a, "bytes"), b1),
			 fmt_decimal(jget_u64(a, "bytes"), b2));
		out_line(ctx, "  sha256   %s", jget_str(a, "sha256"));
		out_line(ctx, "  entries  %" PRIu64 " (+ %" PRIu64 " step records)", jget_u64(record, "entries"),
			 jget_u64(record, "state_records"));
		for (size_t i = 0; cp && i < json_object_array_length(cp); i++)
			out_line(ctx, "  copy     %s", jget_str(json_object_array_get_idx(cp, i), "path"));
	}
	if (sk && json_object_array_length(sk) > 0) {
		_cleanup_table_ struct table *t = table_new(2);

		out_heading(ctx, "skipped");
		table_header(t, "path", "reason");
		for (size_t i = 0; i < json_object_array_length(sk); i++) {
			json_object *o = json_object_array_get_idx(sk, i);
			table_row(t, jget_str(o, "path"), jget_str(o, "reason"));
		}
		table_print(ctx, t);
	}
	out_checks(ctx, record);
	out_verdict(ctx, record, "%s", a ? "" : "no tarball written");
}
