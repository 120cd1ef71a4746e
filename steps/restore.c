/* SPDX-License-Identifier: MIT */
/* restore: validate a whole backup tarball, then write it under --root atomically, keeping an
 * undo tarball, not restoring an fstab whose devices are gone; ends by running verify. */
#include "steps.h"
#include "extract.h"
#include "tarball.h"
#include "verify.h"

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <sys/stat.h>
#include <time.h>

static const struct step_option restore_options[] = {
	STEP_OPT_ROOT("write under DIR (default /); only entries the manifest lists"),
	{ { "dry-run", no_argument, NULL, 'n' }, NULL,
	  "say what would be created, replaced, kept or refused; write nothing" },
	STEP_OPT_MAP_USER,
	{ { "undo-out", required_argument, NULL, 'U' }, "FILE",
	  "a new file for the undo tarball (default STATE/restore-undo-TIME-PID.tar.gz)" },
	{ { "undo", no_argument, NULL, 'u' }, NULL,
	  "put back what an earlier restore replaced and remove what it created" },
	STEP_OPTIONS_END,
};

const struct step step_restore = {
	.name = "restore",
	.summary = "check a whole backup tarball, then put it back under --root atomically, with undo; then verify",
	.synopsis = "swaptool restore TARBALL [--root DIR] [--dry-run] [--map-user OLD=NEW]... [--undo-out FILE]\n"
		    "swaptool restore --undo UNDO.tar.gz [--root DIR]\n",
	.options = restore_options,
	.run = step_restore_run,
	.render = step_restore_render,
	.flags = STEP_SAVES_RECORD,
};

/* The canonical path a file would have once created: its longest existing ancestor through
 * realpath, then the rest as written. */
static char *canon(const char *path)
{
	_cleanup_free_ char *abs = path[0] == '/' ? xstrdup(path) : NULL;
	char *cut;

	if (!abs) {
		char cwd[PATH_MAX];

		if (!getcwd(cwd, sizeof(cwd)))
			return xstrdup(path);
		abs = xasprintf("%s/%s", cwd, path);
	}
	for (cut = abs + strlen(abs);; ) {
		char saved = *cut;
		_cleanup_free_ char *real = NULL;

		*cut = '\0';
		real = realpath(*abs ? abs : "/", NULL);
		*cut = saved;
		if (real)
			return xasprintf("%s%s", streq(real, "/") && *cut == '/' ? "" : real, cut);
		while (cut > abs && *--cut != '/')
			;
		if (cut == abs)
			return xstrdup(path);
	}
}

/*
 * The undo tarball is an output: it must not be the backup being restored, any file that
 * exists (an operator's file, a file of the root), or a path this restore writes, or the
 * restore would destroy its own input or its own way back. By identity where the file exists.
 */
static int check_undo_out(struct ctx *ctx, const char *undo_out, const char *tarball, const char *root,
			  const struct restore_plan *p)
{
	struct stat u, t;
	_cleanup_free_ char *cu = NULL, *croot = NULL;

	if (lstat(undo_out, &u) == 0) {
		if (stat(tarball, &t) == 0 && u.st_dev == t.st_dev && u.st_ino == t.st_ino)
			return ctx_error(ctx, EXIT_FAILED, "--undo-out '%s' is the backup '%s' itself; name a new file; nothing was written",
					 undo_out, tarball);
		return ctx_error(ctx, EXIT_FAILED, "--undo-out '%s' already exists (a %s); name a new file; nothing was written",
				 undo_out, file_kind(u.st_mode));
	}
	cu = canon(undo_out);
	croot = canon(root);
	for (size_t i = 0; i < p->n; i++) {
		_cleanup_free_ char *d = xasprintf("%s/%s", streq(croot, "/") ? "" : croot, p->v[i].dest);

		if (streq(d, cu) || (startswith(cu, d) && cu[strlen(d)] == '/'))
			return ctx_error(ctx, EXIT_FAILED, "--undo-out '%s' is a path this restore writes ('/%s'); name a file "
					 "outside the restored set; nothing was written", undo_out, p->v[i].dest);
	}
	return 0;
}

static json_object *fstab_json(const struct restore_plan *p)
{
	json_object *arr = json_object_new_array();

	for (size_t i = 0; i < p->nfst; i++) {
		json_object *o = json_object_new_object();

		jset_str(o, "path", p->fst[i].path);
		jset_str(o, "kept_as", p->fst[i].kept_as);
		jset_u64(o, "identifiers", p->fst[i].rep.ids);
		json_object_object_add(o, "unresolved", fstab_report_json(&p->fst[i].rep));
		json_object_array_add(arr, o);
	}
	return arr;
}

/* One restore run: what the command line asks, the tarball, and the plan made from it. */
struct restore_job {
	const char *root, *tarball, *undo_out;
	bool dry_run, undo;
	struct name_map map;
	struct arc a;
	struct restore_plan plan;
	struct restore_opts ro;
	char *why, *undo_path;
};

static void restore_job_free(struct restore_job *j)
{
	fstab_blkid_reset();
	restore_plan_free(&j->plan);
	arc_free(&j->a);
	name_map_free(&j->map);
	free(j->why);
	free(j->undo_path);
}

/* The options, the one TARBALL and the root; 0 or the exit code. */
static int restore_args(struct ctx *ctx, int argc, char **argv, struct restore_job *j)
{
	int c;

	while ((c = getopt_long(argc, argv, "", step_getopt(restore_options), NULL)) != -1) {
		switch (c) {
		case 'r': j->root = optarg; break;
		case 'n': j->dry_run = true; break;
		case 'u': j->undo = true; break;
		case 'U': j->undo_out = optarg; break;
		case 'm':
			if (step_parse_map_user(ctx, optarg, &j->map))
				return EXIT_USAGE;
			break;
		default:
			return step_bad_option(ctx, argc, argv);
		}
	}
	if (optind + 1 != argc)
		return ctx_error(ctx, EXIT_USAGE, "restore needs one TARBALL (or --undo UNDO.tar.gz); see 'swaptool help restore'");
	j->tarball = argv[optind];
	if (step_check_root(ctx, j->root))
		return EXIT_USAGE;
	return 0;
}

/* Without --undo-out: STATE/restore-undo-STAMP-PID.tar.gz. */
static char *undo_path_for(struct ctx *ctx, const struct restore_job *j)
{
	char stamp[32];
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	/* The pid keeps two restores within the same second from sharing (and overwriting) one undo. */
	return j->undo_out ? xstrdup(j->undo_out)
			   : xasprintf("%s/restore-undo-%s-%d.tar.gz", ctx->state_dir, stamp, (int)getpid());
}

/* The whole tarball checked, then the plan of what would change; false when nothing may be written
 * (the error already reported). */
static bool restore_prepare(struct ctx *ctx, struct restore_job *j)
{
	int r;

	/* SIGINT: stop cleanly and print the one document (exit 130), never die mid-write */
	arc_catch_sigint();
	r = arc_load(j->tarball, &ctx->profile->limits, &j->a, &j->why);
	if (r < 0) {
		ctx_error(ctx, r == -EINTR ? EXIT_INTERRUPTED : EXIT_FAILED, "%s; nothing was written", j->why ? j->why : strerror(-r));
		return false;
	}
	if (j->a.man.undo != j->undo) {
		ctx_error(ctx, EXIT_FAILED, j->undo ? "'%s' is not an undo tarball; nothing was written"
						    : "'%s' is an undo tarball; run 'swaptool restore --undo %s'; nothing was written",
			  j->tarball, j->tarball);
		return false;
	}
	if (!j->undo && !j->dry_run)
		j->undo_path = undo_path_for(ctx, j);
	j->ro = (struct restore_opts){ .root = j->root, .profile = ctx->profile, .map = &j->map,
				       .state_dir = j->undo ? NULL : ctx->state_dir, .undo_path = j->undo_path,
				       .resolve = fstab_resolve_blkid };
	r = restore_plan(&j->a, &j->ro, &j->plan, &j->why);
	if (r < 0) {
		ctx_error(ctx, EXIT_FAILED, "%s; nothing was written", j->why ? j->why : strerror(-r));
		return false;
	}
	if (j->undo_out && !j->undo && !j->dry_run && check_undo_out(ctx, j->undo_out, j->tarball, j->root, &j->plan))
		return false;
	if (arc_interrupted) {
		ctx_error(ctx, EXIT_INTERRUPTED, "interrupted; nothing was written");
		return false;
	}
	return true;
}

static json_object *actions_json(const struct restore_plan *plan)
{
	json_object *arr = json_object_new_array();

	for (size_t i = 0; i < plan->n; i++) {
		json_object *o = json_object_new_object();
		jset_str(o, "path", plan->v[i].dest);
		jset_str(o, "action", restore_action_name(plan->v[i].action));
		jset_str(o, "type", plan->v[i].item ? mtype_name(plan->v[i].item->m->type) : NULL);
		json_object_array_add(arr, o);
	}
	return arr;
}

/* The tarball and the plan, into the record: archive, actions, counts, fstab files, strays. */
static void record_plan(struct record *rec, const struct restore_job *j)
{
	const struct restore_plan *plan = &j->plan;
	json_object *o, *arr;

	o = json_object_new_object();
	jset_str(o, "path", j->tarball);
	jset_u64(o, "bytes", j->a.bytes);
	jset_str(o, "sha256", j->a.sha256);
	jset_str(o, "host", j->a.man.host);
	jset_str(o, "created", j->a.man.created);
	jset_u64(o, "entries", j->a.man.n);
	json_object_object_add(rec->root, "archive", o);
	jset_str(rec->root, "root", j->root);
	jset_bool(rec->root, "dry_run", j->dry_run);
	jset_bool(rec->root, "undo_mode", j->undo);
	json_object_object_add(rec->root, "actions", actions_json(plan));
	o = json_object_new_object();
	jset_u64(o, "create", plan->ncreate);
	jset_u64(o, "replace", plan->nreplace);
	jset_u64(o, "unchanged", plan->nunchanged);
	jset_u64(o, "remove", plan->nremove);
	json_object_object_add(rec->root, "counts", o);
	json_object_object_add(rec->root, "fstab", fstab_json(plan));
	record_check(rec, "archive", ST_PASS, "%zu entries and %zu step record(s) checked against the manifest: no absolute path, "
		     "'..', symlink crossing, device node or hash mismatch", j->a.man.n, j->a.man.nst);
	for (size_t i = 0; i < plan->nfst; i++) {
		const struct restore_fstab *f = &plan->fst[i];

		if (f->kept_as)
			record_check(rec, "fstab", ST_WARN, "'/%s' kept: %zu line(s) name devices that are not on this machine "
				     "(line %u: %s=%s, %s); the old file %s '/%s'", f->path, f->rep.n, f->rep.v[0].line,
				     f->rep.v[0].tag, f->rep.v[0].value, f->rep.v[0].breaks, j->dry_run ? "would go to" : "is in",
				     f->kept_as);
		else
			record_check(rec, "fstab", ST_PASS, "'/%s': its %zu identifier(s) resolve on this machine", f->path, f->rep.ids);
	}
	arr = json_object_new_array();
	for (size_t i = 0; i < plan->strays.n; i++)
		json_object_array_add(arr, json_object_new_string(plan->strays.v[i]));
	json_object_object_add(rec->root, "strays", arr);
	if (plan->strays.n > 0)
		record_check(rec, "strays", ST_WARN, "%zu temporar%s left by an interrupted restore %s: '/%s'%s", plan->strays.n,
			     plan->strays.n == 1 ? "y" : "ies", j->dry_run ? "would be removed" : "removed", plan->strays.v[0],
			     plan->strays.n > 1 ? ", ..." : "");
}

/* undo tarballs a killed restore was writing (copies of what it replaced) */
static void sweep_undo_tmps(const char *state_dir)
{
	DIR *d = opendir(state_dir);
	struct dirent *de;

	while (d && (de = readdir(d)))
		if (startswith(de->d_name, "restore-undo-") && strstr(de->d_name, ".tar.gz.tmp.")) {
			_cleanup_free_ char *base = xstrdup(de->d_name);
			_cleanup_free_ char *full = NULL;

			*strstr(base, ".tmp.") = '\0';
			full = xasprintf("%s/%s", state_dir, base);
			arc_sweep_tmps(full);
		}
	if (d)
		closedir(d);
}

/* The plan applied under the root; restore_apply's result, negative once the error is reported. */
static int restore_write(struct ctx *ctx, struct restore_job *j)
{
	int r;

	sweep_undo_tmps(ctx->state_dir);
	r = restore_apply(&j->a, &j->ro, &j->plan, &j->why);
	if (r == -EINTR) {
		if (j->undo_path && access(j->undo_path, F_OK) == 0)
			ctx_error(ctx, EXIT_INTERRUPTED, "%s: no file was replaced and its temporaries were removed; "
				  "'swaptool restore --undo %s' removes the directories it created", j->why, j->undo_path);
		else
			ctx_error(ctx, EXIT_INTERRUPTED, "%s: no file was replaced and its temporaries were removed", j->why);
	} else if (r < 0) {
		if (j->undo_path && access(j->undo_path, F_OK) == 0)
			ctx_error(ctx, EXIT_FAILED, "%s; what was replaced is in '%s': 'swaptool restore --undo %s' puts it back",
				  j->why, j->undo_path, j->undo_path);
		else
			ctx_error(ctx, EXIT_FAILED, "%s", j->why ? j->why : strerror(-r));
	}
	return r;
}

/* What was written, into the record: the undo tarball, the step records put back, the counts. */
static void record_written(struct record *rec, const struct restore_job *j)
{
	const struct restore_plan *plan = &j->plan;
	json_object *arr, *o = json_object_new_object();

	/* restore_apply writes an undo only when it replaced or created something. */
	if (j->undo_path && (plan->nreplace > 0 || plan->created.n > 0)) {
		jset_str(o, "path", j->undo_path);
		jset_u64(o, "saved", plan->nreplace);
		jset_u64(o, "created", plan->created.n);
		json_object_object_add(rec->root, "undo", o);
	} else {
		json_object_put(o);
		json_object_object_add(rec->root, "undo", NULL);
	}
	arr = json_object_new_array();
	for (size_t i = 0; !j->undo && i < j->a.man.nst; i++)
		json_object_array_add(arr, json_object_new_string(j->a.man.st[i].name));
	json_object_object_add(rec->root, "state_restored", arr);
	record_check(rec, "written", ST_PASS, "%zu created, %zu replaced, %zu unchanged%s%s", plan->ncreate, plan->nreplace,
		     plan->nunchanged, j->undo ? "" : "; undo: ", j->undo ? (plan->nremove ? ", created paths removed" : "")
									: jget_str(jget(rec->root, "undo"), "path") ?: "nothing to undo");
}

/* verify on the restored root, its own record saved; returns r, or the verify record's save result */
static int restore_verify(struct ctx *ctx, struct record *rec, struct restore_job *j, int r)
{
	struct record vr = { 0 };

	if (record_init(&vr, "verify") == 0) {
		json_object *vo = json_object_new_object();
		int failed = verify_system(&j->a, j->root, &j->map, ctx->profile, fstab_resolve_blkid, NULL, &vr);

		record_finish(&vr);
		jset_str(vr.root, "root", j->root);
		r = record_save(&vr, ctx->state_dir);
		jset_str(vo, "verdict", jget_str(vr.root, "verdict"));
		json_object_object_add(vo, "checks", json_object_get(vr.checks));
		json_object_object_add(rec->root, "verify", vo);
		record_check(rec, "verify", failed ? ST_FAIL : ST_PASS, "verify: %s (%d check%s failed)",
			     jget_str(vr.root, "verdict"), failed, failed == 1 ? "" : "s");
		record_free(&vr);
	}
	return r;
}

/* The root has changed: a record that cannot be saved must not read as "nothing happened". */
static int restore_save(struct ctx *ctx, struct record *rec, const struct restore_job *j, int r)
{
	record_finish(rec);
	if (r == 0)
		r = record_save(rec, ctx->state_dir);
	if (r < 0) {
		const char *u = jget_str(jget(rec->root, "undo"), "path");

		if (u)
			ctx_error(ctx, EXIT_FAILED, "the restore is complete and the root '%s' has changed, but its record cannot be "
				  "saved in '%s': %s; 'swaptool restore --undo %s' puts the root back", j->root, ctx->state_dir,
				  strerror(-r), u);
		else if (j->undo)
			ctx_error(ctx, EXIT_FAILED, "the undo is complete and the root '%s' is back as it was, but its record cannot "
				  "be saved in '%s': %s", j->root, ctx->state_dir, strerror(-r));
		else
			ctx_error(ctx, EXIT_FAILED, "the restore is complete (nothing needed replacing), but its record cannot be saved "
				  "in '%s': %s", ctx->state_dir, strerror(-r));
		return EXIT_FAILED;
	}
	return record_exit_code(rec);
}

/* check and plan, record the plan; unless --dry-run: write, record, verify, save */
static int restore_run(struct ctx *ctx, struct restore_job *j, struct record *rec)
{
	int r;

	if (!restore_prepare(ctx, j))
		return EXIT_FAILED;
	record_plan(rec, j);
	if (j->dry_run) {
		json_object_object_add(rec->root, "undo", NULL);
		record_check(rec, "dry-run", ST_PASS, "nothing written: %zu to create, %zu to replace, %zu unchanged", j->plan.ncreate,
			     j->plan.nreplace, j->plan.nunchanged);
		record_finish(rec);
		return record_exit_code(rec);
	}
	r = restore_write(ctx, j);
	if (r < 0)
		return EXIT_FAILED;
	record_written(rec, j);
	if (!j->undo)
		r = restore_verify(ctx, rec, j, r);
	return restore_save(ctx, rec, j, r);
}

int step_restore_run(struct ctx *ctx, int argc, char **argv, struct record *rec)
{
	struct restore_job j = { .root = "/" };
	int code = restore_args(ctx, argc, argv, &j);

	if (code == 0)
		code = restore_run(ctx, &j, rec);
	restore_job_free(&j);
	return code;
}

void step_restore_render(const struct ctx *ctx, json_object *record)
{
	json_object *acts = jget(record, "actions"), *fst = jget(record, "fstab"), *undo = jget(record, "undo");
	json_object *ver = jget(record, "verify");
	size_t n = acts ? json_object_array_length(acts) : 0;

	out_heading(ctx, "%s%s", jget_bool(record, "dry_run") ? "restore (dry run): " : "restore: ",
		    jget_str(jget(record, "archive"), "path"));
	if (n) {
		_cleanup_table_ struct table *t = table_new(3);
		size_t shown = 0;

		table_header(t, "action", "type", "path");
		for (size_t i = 0; i < n; i++) {
			json_object *o = json_object_array_get_idx(acts, i);

			/* unchanged entries are counted, not listed, once there are many */
			if (n > 50 && streq(jget_str(o, "action"), "unchanged"))
				continue;
			if (++shown > 200)
				break;
			table_row(t, jget_str(o, "action"), jget_str(o, "type"), jget_str(o, "path"));
		}
		table_print(ctx, t);
	}
	for (size_t i = 0; fst && i < json_object_array_length(fst); i++) {
		json_object *f = json_object_array_get_idx(fst, i), *u = jget(f, "unresolved");

		if (!jget_str(f, "kept_as"))
			continue;
		out_heading(ctx, "/%s kept: restoring it would break the boot", jget_str(f, "path"));
		for (size_t k = 0; k < json_object_array_length(u); k++) {
			json_object *l = json_object_array_get_idx(u, k);
			out_line(ctx, "  line %" PRIu64 ": %s", jget_u64(l, "line"), jget_str(l, "text"));
			out_line(ctx, "      %s=%s is not on this machine: %s", jget_str(l, "tag"), jget_str(l, "value"),
				 jget_str(l, "breaks"));
		}
		out_line(ctx, "  the old file is '/%s'; merge what you need by hand", jget_str(f, "kept_as"));
	}
	if (undo && jget_str(undo, "path"))
		out_line(ctx, "undo: swaptool restore --undo %s", jget_str(undo, "path"));
	if (ver) {
		json_object *tmp = json_object_new_object();

		json_object_object_add(tmp, "checks", json_object_get(jget(ver, "checks")));
		out_heading(ctx, "verify");
		out_checks(ctx, tmp);
		json_object_put(tmp);
		out_heading(ctx, "restore");
	}
	out_checks(ctx, record);
	out_verdict(ctx, record, "%s", "");
}
