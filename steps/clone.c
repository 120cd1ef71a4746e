/* SPDX-License-Identifier: MIT */
/* clone: path 2 on real disks (or image files), the same executor as plan --rehearse. */
#include "steps.h"
#include "schema.h"

#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>

#include "disk.h"
#include "ident.h"
#include "layout.h"
#include "planrun.h"
#include "size.h"

static const struct step_option clone_options[] = {
	{ { "yes", no_argument, NULL, 'y' }, NULL, "required: the whole target is overwritten" },
	{ { "fingerprint", required_argument, NULL, 'f' }, "HEX",
	  "the plan's fingerprint; default: the one 'swaptool plan' saved for SOURCE" },
	STEP_OPT_TARGET_LBA_SIZE("LBA size of an image-file TARGET (default 512)"),
	STEP_OPT_LBA_SIZE,
	STEP_OPTIONS_END,
};

const struct step step_clone = {
	.name = "clone",
	.summary = "path 2 on the disks: used-block copy, shrink on the way, new GPT, check (the source is only read)",
	.synopsis = "swaptool clone SOURCE TARGET --yes [--fingerprint HEX]\n",
	.options = clone_options,
	.notes = "exit: 0 done and verified, 1 a check of the result failed, 3 refused or failed, 130 interrupted\n",
	.run = step_clone_run,
	.render = step_clone_render,
	.flags = STEP_SAVES_RECORD,
};

struct clone_args {
	const char *source, *target, *fingerprint;
	uint32_t target_lba_size, image_lba_size;
	bool yes;
};

static volatile sig_atomic_t stop_flag;
static void on_sigint(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static int parse_args(struct ctx *ctx, int argc, char **argv, struct clone_args *a)
{
	int c;

	*a = (struct clone_args){ .target_lba_size = 512, .image_lba_size = 512 };
	while ((c = getopt_long(argc, argv, "", step_getopt(clone_options), NULL)) != -1) {
		switch (c) {
		case 'y': a->yes = true; break;
		case 'f': a->fingerprint = optarg; break;
		case 'T':
			if (step_parse_lba_size(ctx, "--target-lba-size", optarg, &a->target_lba_size))
				return EXIT_USAGE;
			break;
		case 'I':
			if (step_parse_lba_size(ctx, "--lba-size", optarg, &a->image_lba_size))
				return EXIT_USAGE;
			break;
		default: return step_bad_option(ctx, argc, argv);
		}
	}
	if (argc - optind != 2)
		return ctx_error(ctx, EXIT_USAGE, "clone needs SOURCE and TARGET; usage: swaptool clone /dev/nvme0n1 "
						  "/dev/nvme1n1 --yes");
	a->source = argv[optind];
	a->target = argv[optind + 1];
	return 0;
}

struct clone_ui {
	struct ctx *ctx;
	struct record *rec;
	json_object *actions;
	const char *what;
	double t0;
};

static void clone_progress(void *ud, uint64_t done, uint64_t total)
{
	struct clone_ui *u = ud;
	double el = mono_s() - u->t0, rate = el > 0 ? done / el : 0;
	char b[3][32];
	uint64_t left = rate > 0 && total > done ? (uint64_t)((total - done) / rate) : 0;

	out_progress(u->ctx, "%s: %s of %s, %s/s, %" PRIu64 ":%02" PRIu64 " left", u->what, fmt_decimal(done, b[0]),
		     fmt_decimal(total, b[1]), fmt_decimal((uint64_t)rate, b[2]), left / 60, left % 60);
}

static void clone_start(void *ud, size_t i, const struct plan_action *a)
{
	struct clone_ui *u = ud;
	static char what[64];

	(void)i;
	snprintf(what, sizeof(what), "%s%s%u", plan_act_name(a->kind), a->part ? " p" : "", a->part);
	if (!a->part)
		snprintf(what, sizeof(what), "%s", plan_act_name(a->kind));
	u->what = what;
	u->t0 = mono_s();
	out_progress(u->ctx, "%s ...", what);
}

static void clone_done(void *ud, size_t i, const struct plan_action *a, int r, double secs, const char *detail)
{
	struct clone_ui *u = ud;
	json_object *o = json_object_new_object();

	out_progress_end(u->ctx);
	jset_u64(o, "n", i + 1);
	jset_str(o, "action", plan_act_name(a->kind));
	if (a->part)
		jset_u64(o, "partition", a->part);
	jset_double(o, "seconds", secs);
	jset_str(o, "status", r < 0 ? "fail" : "pass");
	jset_str(o, "detail", detail);
	json_object_array_add(u->actions, o);
}

/* Whether the saved plan was made for this source: by identity (ident.h), never by the text of
 * the path ("./disk.img" and "disk.img" are one file, /dev/loop0 over it too). A record from
 * before identities were saved is matched through its path, opened now. */
static bool plan_is_for(json_object *plan, const char *key)
{
	const char *saved = schema_plan_source_identity(plan), *path = schema_plan_source_path(plan);
	_cleanup_free_ char *now = NULL;
	_cleanup_close_ int fd = -1;

	if (!key)
		return false;
	if (saved)
		return ident_key_same(saved, key);
	if (!path)
		return false;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	return fd >= 0 && ident_key_fd(fd, &now) == 0 && ident_key_same(now, key);
}

/* The fingerprint the operator agreed to: --fingerprint, else the one `swaptool plan` saved for
 * this source (`key`: its identity). */
static int expected_fingerprint(struct ctx *ctx, const struct clone_args *a, const struct plan *p, const char *key,
				bool *checked)
{
	_cleanup_json_ json_object *saved = NULL;
	const char *want = a->fingerprint;

	*checked = false;
	if (!want && record_load(ctx->state_dir, "plan", &saved) == 0) {
		if (plan_is_for(saved, key)) {
			uint64_t planned = schema_plan_target_bytes(saved);
			char b[2][32];

			if (planned && p->tgt_geo.bytes < planned)
				return ctx_error(ctx, EXIT_FAILED,
						 "the target '%s' is %s bytes, smaller than the %s bytes the plan needs; "
						 "name the drive the plan was made for, or plan again",
						 a->target, fmt_thousands(p->tgt_geo.bytes, b[0]), fmt_thousands(planned, b[1]));
			want = schema_plan_fingerprint(saved);
			/* a saved plan whose shrink already ran matches the shrunk fingerprint too */
			if (want && streq(schema_plan_fingerprint_shrunk(saved), p->fingerprint))
				want = p->fingerprint;
		}
	}
	if (!want)
		return 0;
	*checked = true;
	if (!streq(want, p->fingerprint) && !streq(want, p->fingerprint_shrunk))
		return ctx_error(ctx, EXIT_FAILED,
				 "the source or target no longer matches the plan (fingerprint %.12s, planned %.12s); "
				 "re-run 'swaptool plan %s --target %s' and check its figures",
				 p->fingerprint, want, a->source, a->target);
	return 0;
}

/* The whole-disk sysfs name of `path` when it is a block device ("nvme1n1"), else NULL: taken
 * before the clone starts, because a drive that vanishes takes its /dev node with it. */
static char *block_name(const char *path)
{
	struct stat st;
	char *name = NULL;

	if (stat(path, &st) < 0 || !S_ISBLK(st.st_mode) || sysfs_block_name(st.st_rdev, &name) < 0)
		return NULL;
	return name;
}

/* True when the block device that was `name` has left /sys/block. */
static bool gone(const char *name)
{
	_cleanup_free_ char *sys = NULL;

	if (!name)
		return false;
	sys = xasprintf("/sys/block/%s", name);
	return access(sys, F_OK) != 0;
}

/* A clone that failed because a drive left the machine (hot-unplugged, its controller reset away)
 * says so and names the drive, whatever error the copy happened to see (ENOSPC once the kernel
 * set its size to 0, EIO, ENXIO): exit 3, the job could not be done. `cause`: that error;
 * `target_state`: where that leaves the target. Returns -1 when both drives are still there. */
static int drive_vanished(struct ctx *ctx, const struct clone_args *a, const char *src_name, const char *tgt_name,
			  const char *cause, const char *target_state)
{
	if (gone(tgt_name))
		return ctx_error(ctx, EXIT_FAILED,
				 "the target drive '%s' under '%s' vanished during the clone (%s) and /sys/block/%s is "
				 "gone; %s: reseat or reconnect it, then run clone again",
				 tgt_name, a->target, cause, tgt_name, target_state);
	if (gone(src_name))
		return ctx_error(ctx, EXIT_FAILED,
				 "the source drive '%s' under '%s' vanished during the clone (%s) and /sys/block/%s is "
				 "gone; it was only read, and %s: reseat or reconnect it, then run clone again",
				 src_name, a->source, cause, src_name, target_state);
	return -1;
}

/* The options and the refusals before anything is read: no --yes, no target, a target that is the
 * source or overlaps it. 0 or the exit code. */
static int clone_args(struct ctx *ctx, int argc, char **argv, struct clone_args *a)
{
	_cleanup_free_ char *why = NULL;
	int r;

	r = parse_args(ctx, argc, argv, a);
	if (r)
		return r;
	if (!a->yes)
		return ctx_error(ctx, EXIT_FAILED,
				 "refusing to write '%s' without --yes: clone overwrites the whole target; read 'swaptool plan "
				 "%s --target %s' first",
				 a->target, a->source, a->target);
	if (access(a->target, F_OK) != 0)
		return ctx_error(ctx, EXIT_FAILED, "the target '%s' does not exist; name the new drive (or create the image "
						   "at its exact size)", a->target);
	r = plan_overlaps(a->source, a->target, &why);
	if (r > 0)
		return ctx_error(ctx, EXIT_FAILED, "the target '%s' is the source '%s' or overlaps it (%s); name the new drive",
				 a->target, a->source, why);
	if (r < 0)
		return ctx_error(ctx, EXIT_FAILED, "cannot tell whether the target '%s' overlaps the source '%s': %s",
				 a->target, a->source, why ? why : strerror(-r));
	return 0;
}

/* The plan for these disks, possible and the one the operator agreed to (*fp_checked: by its
 * fingerprint). 0 or the exit code; *l and *p are the caller's to free either way. */
static int clone_plan(struct ctx *ctx, const struct clone_args *a, struct layout *l, struct plan *p, bool *fp_checked)
{
	_cleanup_(disk_closep) struct disk src = { .fd = -1 };
	_cleanup_free_ char *key = NULL;
	int r;

	/* no PLAN_COST: the shrink measures what it moves itself */
	r = step_plan_for(ctx, a->source, a->image_lba_size, a->target, a->target_lba_size, NULL, 0, &src, l, p);
	if (r == 0 && src.fd >= 0)
		(void)ident_key_fd(src.fd, &key);
	disk_close(&src);
	if (r)
		return r;
	if (!p->clone_possible)
		return ctx_error(ctx, EXIT_FAILED, "path 2 is not possible: %s; follow path 1 of 'swaptool plan'", p->clone_why);
	return expected_fingerprint(ctx, a, p, key, fp_checked);
}

/* plan_apply with SIGINT and SIGTERM caught, its actions into ui->actions. 0 or the exit code of
 * a clone that failed, was refused or interrupted (ui->actions freed then). */
static int clone_apply(struct ctx *ctx, const struct clone_args *a, struct plan *p, struct clone_ui *ui,
		       const char *src_name, const char *tgt_name)
{
	struct plan_env env = { 0 };
	struct sigaction sa = { .sa_handler = on_sigint }, old, oldterm;
	int r, code, gone_code = -1;

	stop_flag = 0;
	sigaction(SIGINT, &sa, &old);
	/* SIGTERM stops the clone the same way: the tools it runs stop, the composite file of the
	 * shrink is unmounted, and the message says where the target stands */
	sigaction(SIGTERM, &sa, &oldterm);
	ui->actions = json_object_new_array();
	env.src = a->source;
	env.tgt = a->target;
	env.copy.progress = clone_progress;
	env.copy.ud = ui;
	env.copy.stop = &stop_flag;
	env.start = clone_start;
	env.done = clone_done;
	env.ud = ui;
	r = plan_apply(p, &env);
	sigaction(SIGINT, &old, NULL);
	sigaction(SIGTERM, &oldterm, NULL);
	out_progress_end(ctx);
	if (r >= 0)
		return 0;

	code = r == -EINTR ? EXIT_INTERRUPTED : EXIT_FAILED;
	if (r != -EINTR)
		gone_code = drive_vanished(ctx, a, src_name, tgt_name, env.why ?: strerror(-r),
					   env.target_touched ? "the target carries no table until a clone finishes"
							      : "nothing was written to the target");
	json_object_put(ui->actions);
	if (gone_code >= 0) {
		free(env.why);
		return gone_code;
	}
	r = ctx_error(ctx, code, "%s%s%s", env.why ? env.why : strerror(-r), env.refusal ? " (nothing was written)" : "",
		      !env.refusal && env.target_touched && r != -EINTR
			      ? "; the target carries no table until a clone finishes: rerun it to start over"
			      : "");
	free(env.why);
	return r;
}

/* The clone and its plan into the record. */
static void record_clone(struct record *rec, const struct clone_args *a, const struct plan *p, json_object *actions,
			 bool fp_checked)
{
	json_object *cj = json_object_new_object();

	jset_str(cj, "source", a->source);
	jset_str(cj, "target", a->target);
	jset_str(cj, "fingerprint", p->fingerprint);
	jset_bool(cj, "fingerprint_from_plan", fp_checked);
	jset_bool(cj, "source_written", false);
	json_object_object_add(cj, "actions", actions);
	json_object_object_add(rec->root, "clone", cj);
	json_object_object_add(rec->root, "plan", plan_json(p));
	jset_str(rec->root, "fingerprint", p->fingerprint);
}

/* The target read back against the plan, its checks into the record. -1, or the exit code when a
 * drive vanished meanwhile. */
static int clone_verify(struct ctx *ctx, struct record *rec, const struct clone_args *a, const struct plan *p,
			const char *src_name, const char *tgt_name)
{
	json_object *checks = json_object_new_array();
	bool ok;
	size_t n;
	int r;

	plan_verify_target(p, a->target, checks, &ok);
	r = ok ? -1 : drive_vanished(ctx, a, src_name, tgt_name, "reading the target back failed",
				     "the target was written but not read back");
	if (r >= 0) {
		json_object_put(checks);
		return r;
	}
	n = json_object_array_length(checks);
	for (size_t i = 0; i < n; i++) {
		json_object *c = json_object_array_get_idx(checks, i);
		enum status st = ST_FAIL;

		status_parse(jget_str(c, "status"), &st);
		json_object *rc = record_check(rec, jget_str(c, "id"), st, "%s", jget_str(c, "summary"));
		if (jget(c, "backup_header_lba")) {
			jset_u64(rc, "backup_header_lba", jget_u64(c, "backup_header_lba"));
			jset_u64(rc, "target_last_lba", jget_u64(c, "target_last_lba"));
		}
	}
	json_object_put(checks);
	return -1;
}

/* The phases, in order: the options and refusals, the plan, the clone, the record, the read-back. */
int step_clone_run(struct ctx *ctx, int argc, char **argv, struct record *rec)
{
	struct clone_args a;
	_cleanup_free_ char *src_name = NULL, *tgt_name = NULL;
	struct layout l = { 0 };
	struct plan p = { 0 };
	struct clone_ui ui = { .ctx = ctx, .rec = rec };
	bool fp_checked = false;
	int r;

	r = clone_args(ctx, argc, argv, &a);
	if (r)
		return r;
	r = clone_plan(ctx, &a, &l, &p, &fp_checked);
	if (r)
		goto out;
	src_name = block_name(a.source);
	tgt_name = block_name(a.target);
	r = clone_apply(ctx, &a, &p, &ui, src_name, tgt_name);
	if (r)
		goto out;
	record_clone(rec, &a, &p, ui.actions, fp_checked);
	r = clone_verify(ctx, rec, &a, &p, src_name, tgt_name);
	if (r >= 0)
		goto out;
	record_finish(rec);
	r = record_exit_code(rec);
out:
	layout_free(&l);
	plan_free(&p);
	return r;
}

void step_clone_render(const struct ctx *ctx, json_object *rec)
{
	json_object *c = jget(rec, "clone"), *acts = jget(c, "actions");
	size_t n = acts ? json_object_array_length(acts) : 0;
	_cleanup_table_ struct table *t = table_new(4);

	out_heading(ctx, "clone: %s -> %s", jget_str(c, "source"), jget_str(c, "target"));
	step_attached_line(ctx, jget(jget(rec, "plan"), "source"), jget(jget(rec, "plan"), "target"));
	table_header(t, "#", "action", "seconds", "detail");
	table_align(t, 2, ALIGN_RIGHT);
	for (size_t i = 0; i < n; i++) {
		json_object *x = json_object_array_get_idx(acts, i);

		table_cellf(t, "%" PRIu64, jget_u64(x, "n"));
		if (jget(x, "partition"))
			table_cellf(t, "%s p%" PRIu64, jget_str(x, "action"), jget_u64(x, "partition"));
		else
			table_cellf(t, "%s", jget_str(x, "action"));
		table_cellf(t, "%.2f", jget_double(x, "seconds"));
		table_cellf(t, "%s", jget_str(x, "detail") ? jget_str(x, "detail") : "");
	}
	table_print(ctx, t);
	out_line(ctx, "%s", "");
	out_checks(ctx, rec);
	out_verdict(ctx, rec, "%s", "remove the old drive before booting the new one (same PARTUUIDs and UUIDs)");
}
