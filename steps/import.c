/* SPDX-License-Identifier: MIT */
/* import: the records the rescue stick kept (its preflight, plan and clone) into this node's state
 * directory after the swap, so that report signs them with accept's as one chain (swaptool-import(1)). */
#include "steps.h"

#include <fcntl.h>
#include <inttypes.h>
#include <sys/stat.h>

#include "extfs.h"
#include "rescue.h"
#include "schema.h"

static const struct step_operand import_operands[] = {
	{ "STICK", "the stick (/dev/sdX), its image file, or a directory holding its records" },
	{ 0 },
};

static const struct step_option import_options[] = {
	STEP_OPTIONS_END,
};

const struct step step_import = {
	.name = "import",
	.summary = "after the swap: take the rescue stick's records (clone among them) into this node's state",
	.synopsis = "swaptool import STICK\n",
	.operands = import_operands,
	.options = import_options,
	.notes = "exit: 0 imported (or already here), 3 unreadable, hostile, of another node, or not one chain\n",
	.run = step_import_run,
	.render = step_import_render,
	.flags = STEP_SAVES_RECORD,
};

struct import_rec {
	const char *step;
	char *text;
	size_t len;
	json_object *o;
};

struct import_job {
	struct ctx *ctx;
	const char *stick, *kind;
	char *dir;          /* DIR form: where the records are */
	uint64_t offset;    /* DEVICE or IMAGE form: the state partition's byte offset */
	struct import_rec recs[SS_N];
	size_t n;
};

static void job_free(struct import_job *j)
{
	free(j->dir);
	for (size_t i = 0; i < j->n; i++) {
		free(j->recs[i].text);
		json_object_put(j->recs[i].o);
	}
}

/* Where the stick's records are: a directory (the mounted state partition, or its swaptool/), or the
 * ext4 of a device or image found by its label. 0 or the exit code. */
static int locate(struct import_job *j)
{
	_cleanup_free_ char *w = NULL, *sub = NULL;
	_cleanup_close_ int fd = -1;
	struct stat st;
	int r;

	if (stat(j->stick, &st) < 0)
		return ctx_error(j->ctx, EXIT_FAILED, "cannot open the stick '%s': %m", j->stick);
	if (S_ISDIR(st.st_mode)) {
		sub = xasprintf("%s/%s", j->stick, RESCUE_STATE_DIR);
		j->kind = "directory";
		j->dir = stat(sub, &st) == 0 && S_ISDIR(st.st_mode) ? TAKE_PTR(sub) : xstrdup(j->stick);
		return 0;
	}
	if (!S_ISBLK(st.st_mode) && !S_ISREG(st.st_mode))
		return ctx_error(j->ctx, EXIT_FAILED, "the stick '%s' is a %s: name the USB drive, its image or a directory",
				 j->stick, file_kind(st.st_mode));
	j->kind = S_ISBLK(st.st_mode) ? "device" : "image";
	fd = open(j->stick, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return ctx_error(j->ctx, EXIT_FAILED, "cannot open the stick '%s': %m", j->stick);
	r = rescue_find_state(fd, j->stick, &j->offset, &w);
	if (r < 0)
		return ctx_error(j->ctx, EXIT_FAILED, "'%s': %s", j->stick, w);
	return 0;
}

/* One record of the stick, as text: -ENOENT when the stick has none of that step. */
static int read_one(struct import_job *j, const char *step, char **text, size_t *len, char **why)
{
	_cleanup_free_ char *file = NULL;

	if (j->dir) {
		file = xasprintf("%s/%s.json", j->dir, step);
		return read_input(file, RECORD_MAX_BYTES, INPUT_NOFOLLOW, text, len, why);
	}
	file = xasprintf("/%s/%s.json", RESCUE_STATE_DIR, step);
	return extfs_read_file(j->stick, j->offset, file, RECORD_MAX_BYTES, text, len, why);
}

/* Every record the stick holds, each checked as every reader checks one, each of this node. Nothing
 * is written unless all pass. 0 or the exit code. */
static int read_all_records(struct import_job *j)
{
	const char *here = host_name();

	for (size_t s = 0; s < SCHEMA_REPORTED_N; s++) {
		struct import_rec *x = &j->recs[j->n];
		_cleanup_free_ char *w = NULL;
		int r = read_one(j, schema_steps[s], &x->text, &x->len, &w);

		if (r == -ENOENT)
			continue;
		if (r == 0)
			r = record_parse(x->text, x->len, schema_steps[s], &x->o, &w);
		if (r < 0) {
			free(x->text);
			return ctx_error(j->ctx, EXIT_FAILED, "the stick's %s record cannot be taken: %s; nothing was imported",
					 schema_steps[s], w);
		}
		x->step = schema_steps[s];
		j->n++;
		if (!streq(schema_host(x->o), here))
			return ctx_error(j->ctx, EXIT_FAILED, "the stick's %s record is of node '%s', this is '%s': import it "
							      "on that node; nothing was imported", x->step,
					 schema_host(x->o) ?: "(none)", here);
	}
	if (!j->n)
		return ctx_error(j->ctx, EXIT_FAILED, "the stick '%s' holds no records: nothing to import", j->stick);
	return 0;
}

static struct import_rec *rec_of(struct import_job *j, const char *step)
{
	for (size_t i = 0; i < j->n; i++)
		if (streq(j->recs[i].step, step))
			return &j->recs[i];
	return NULL;
}

/* The stick's clone carried out the stick's plan: its fingerprint is the plan's (or the plan's
 * after the shrink). 0 or the exit code. */
static int check_chain(struct import_job *j, struct record *rec)
{
	struct import_rec *plan = rec_of(j, "plan"), *clone = rec_of(j, "clone");
	const char *fp = clone ? schema_clone_fingerprint(clone->o) : NULL;

	if (!clone) {
		record_check(rec, "chain", ST_WARN, "the stick holds no clone record: path 2 did not run from it (or ran "
			     "with another --state)");
		return 0;
	}
	if (plan && !(streq(fp, schema_plan_fingerprint(plan->o)) || streq(fp, schema_plan_fingerprint_shrunk(plan->o))))
		return ctx_error(j->ctx, EXIT_FAILED, "the stick's clone record (fingerprint %.12s) did not carry out its "
						      "plan (%.12s): not one chain; nothing was imported",
				 fp ?: "none", schema_plan_fingerprint(plan->o) ?: "none");
	record_check(rec, "chain", ST_PASS, "the stick's clone (%s) carried out %s (fingerprint %.12s)",
		     schema_verdict(clone->o) ?: "no verdict", plan ? "its plan" : "a plan not on the stick", fp ?: "none");
	return 0;
}

/* What to do with one record: write it, or keep the node's (the same, or newer). */
static const char *decide(struct import_job *j, const struct import_rec *x)
{
	_cleanup_free_ char *path = xasprintf("%s/%s.json", j->ctx->state_dir, x->step), *text = NULL;
	_cleanup_json_ json_object *mine = NULL;
	size_t len = 0;
	const char *a, *b;

	if (read_input(path, RECORD_MAX_BYTES, geteuid() == 0 ? INPUT_OURS : 0, &text, &len, NULL) < 0 ||
	    record_parse(text, len, x->step, &mine, NULL) < 0)
		return "imported";
	if (len == x->len && memcmp(text, x->text, len) == 0)
		return "already here";
	a = schema_finished(mine), b = schema_finished(x->o);
	if (a && b && strcmp(a, b) > 0)
		return "kept: newer here";
	return "imported, replacing an older one";
}

int step_import_run(struct ctx *ctx, int argc, char **argv, struct record *rec)
{
	struct import_job j = { .ctx = ctx };
	json_object *o, *list;
	size_t imported = 0;
	int c, r;

	while ((c = getopt_long(argc, argv, "", step_getopt(import_options), NULL)) != -1)
		return step_bad_option(ctx, argc, argv);
	if (argc - optind != 1)
		return ctx_error(ctx, EXIT_USAGE, "import needs STICK: the rescue stick's drive (/dev/sdX), its image, or a "
						  "directory of its records");
	j.stick = argv[optind];
	if ((r = locate(&j)) != 0 || (r = read_all_records(&j)) != 0 || (r = check_chain(&j, rec)) != 0) {
		job_free(&j);
		return r;
	}
	list = json_object_new_array();
	for (size_t i = 0; i < j.n && r == 0; i++) {
		struct import_rec *x = &j.recs[i];
		const char *what = decide(&j, x);
		_cleanup_free_ char *path = xasprintf("%s/%s.json", ctx->state_dir, x->step);
		char hex[65];

		if (startswith(what, "imported") && ((r = mkdir_p(ctx->state_dir, 0700)) < 0 ||
						     (r = write_file_atomic(path, x->text, x->len, 0600)) < 0))
			r = ctx_error(ctx, EXIT_FAILED, "cannot write '%s': %s", path, strerror(-r));
		imported += startswith(what, "imported");
		o = json_object_new_object();
		sha256_buf(x->text, x->len, hex);
		jset_str(o, "step", x->step);
		jset_str(o, "action", what);
		jset_str(o, "verdict", schema_verdict(x->o));
		jset_str(o, "finished", schema_finished(x->o));
		jset_str(o, "sha256", hex);
		json_object_array_add(list, o);
	}
	o = json_object_new_object();
	jset_str(o, "stick", j.stick);
	jset_str(o, "kind", j.kind);
	if (!j.dir)
		jset_u64(o, "offset_bytes", j.offset);
	json_object_object_add(o, "records", list);
	json_object_object_add(rec->root, "import", o);
	if (r == 0) {
		record_check(rec, "host", ST_PASS, "every record on the stick is of this node, '%s', and reads as its "
			     "step's record", host_name());
		record_check(rec, "records", ST_PASS, "%zu of the stick's %zu records imported into '%s'; 'swaptool report' "
			     "signs them with the rest", imported, j.n, ctx->state_dir);
		record_finish(rec);
		r = record_exit_code(rec);
	}
	job_free(&j);
	return r;
}

void step_import_render(const struct ctx *ctx, json_object *rec)
{
	json_object *o = jget(rec, "import"), *list = jget(o, "records");
	_cleanup_table_ struct table *t = table_new(4);

	out_heading(ctx, "import: %s (%s)", jget_str(o, "stick"), jget_str(o, "kind"));
	table_header(t, "record", "verdict", "finished", "action");
	for (size_t i = 0; i < jarray_len(list); i++) {
		json_object *x = jarray_at(list, i);

		table_cellf(t, "%s", jget_str(x, "step"));
		table_cellf(t, "%s", out_word(ctx, jget_str(x, "verdict")));
		table_cellf(t, "%s", jget_str(x, "finished") ?: "");
		table_cellf(t, "%s", jget_str(x, "action"));
	}
	table_print(ctx, t);
	out_line(ctx, "%s", "");
	out_checks(ctx, rec);
	out_verdict(ctx, rec, "next: swaptool accept, then swaptool report");
}
