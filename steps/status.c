/* SPDX-License-Identifier: MIT */
/* status: which steps are done, their verdicts and why, and the next step for the chosen path. */
#include "steps.h"

#include "report.h"

static const struct step_option status_options[] = {
	{ { "path", required_argument, NULL, 'p' }, "fresh|clone",
	  "the migration path: fresh install + restore (default), or filesystem-aware\n"
	  "clone; without it, the records say which was taken" },
	STEP_OPTIONS_END,
};

const struct step step_status = {
	.name = "status",
	.summary = "which steps are done, their verdicts and why, and what to run next",
	.synopsis = "swaptool status [--path fresh|clone]\n",
	.options = status_options,
	.run = step_status_run,
	.render = step_status_render,
	.flags = STEP_READS_STATE,
};

static char *command_for(const char *step, json_object *pre, json_object *backup)
{
	const char *src = schema_preflight_source_path(pre) ?: "/dev/nvme0";
	const char *spec = schema_preflight_target_spec(pre) ?: "SIZE|DEVICE";
	struct schema_archive a;
	const char *tar;

	schema_archive(backup, &a);
	tar = a.path ?: "TARBALL";
	if (streq(step, "preflight"))
		return xstrdup("swaptool preflight /dev/nvme0 --target SIZE|DEVICE|IMAGE   (the new drive's bytes, e.g. 2000398934016)");
	if (streq(step, "backup"))
		return xstrdup("swaptool backup");
	if (streq(step, "plan"))
		return xasprintf("swaptool plan %s --target %s --rehearse", src, spec);
	if (streq(step, "clone"))
		return xasprintf("swaptool clone %s TARGET --yes   (on the rescue stick: 'swaptool rescue --out /dev/sdX --yes' "
				 "writes one; after the swap, 'swaptool import /dev/sdX')", src);
	if (streq(step, "restore"))
		return xasprintf("swaptool restore %s   (after installing DGX OS on the new drive)", tar);
	if (streq(step, "verify"))
		return xasprintf("swaptool verify %s", tar);
	if (streq(step, "accept"))
		return xstrdup("swaptool accept   (the Engram shard through the profile, else the disk that holds /)");
	return xstrdup("swaptool report --key FILE --identity NAME");
}

/* What status works from: every step's record (NULL where it has not run), the path, the rows. */
struct status_job {
	struct ctx *ctx;
	struct record *rec;
	json_object *recs[SS_N];
	const char *path_arg, *path_from;
	json_object *steps, *next;
};

static void status_job_free(struct status_job *j)
{
	for (size_t i = 0; i < SS_N; i++)
		json_object_put(j->recs[i]);
}

/* Options: --path. 0, or the exit code of a usage error. */
static int parse_args(struct status_job *j, int argc, char **argv)
{
	int c;

	while ((c = getopt_long(argc, argv, "", step_getopt(status_options), NULL)) != -1) {
		switch (c) {
		case 'p': j->path_arg = optarg; break;
		default: return step_bad_option(j->ctx, argc, argv);
		}
	}
	if (optind < argc)
		return ctx_error(j->ctx, EXIT_USAGE, "unexpected argument '%s'; see 'swaptool help status'", argv[optind]);
	if (j->path_arg && !streq(j->path_arg, "fresh") && !streq(j->path_arg, "clone"))
		return ctx_error(j->ctx, EXIT_USAGE, "bad --path '%s': 'fresh' (install + restore) or 'clone' (filesystem-aware clone)",
				 j->path_arg);
	return 0;
}

/* Every step's record; a damaged one (of the wrong shape too: src/schema.h) is an error that names
 * it, since guessing past it would misstate where the swap stands. 0, or the exit code. */
static int load_records(struct status_job *j)
{
	for (size_t i = 0; i < SS_N; i++) {
		_cleanup_free_ char *lwhy = NULL;
		int r = record_load_why(j->ctx->state_dir, schema_steps[i], &j->recs[i], &lwhy);

		if (r < 0 && r != -ENOENT)
			return ctx_error(j->ctx, EXIT_FAILED, "cannot read the record '%s/%s.json': %s; move it away or rerun '%s'",
					 j->ctx->state_dir, schema_steps[i], lwhy, schema_steps[i]);
	}
	return 0;
}

/* The chosen path: --path, else the records (a clone or a restore says which was taken), else
 * preflight's possible paths, else path 1, the incident's recommendation. */
static void choose_path(struct status_job *j)
{
	json_object *pre = j->recs[SS_PREFLIGHT];

	j->path_from = "option";
	if (j->path_arg)
		return;
	j->path_from = "records";
	if (j->recs[SS_CLONE])
		j->path_arg = "clone";
	else if (j->recs[SS_RESTORE])
		j->path_arg = "fresh";
	else if (schema_preflight_path_known(pre, SCHEMA_PATH_FRESH_INSTALL) &&
		 !schema_preflight_path_possible(pre, SCHEMA_PATH_FRESH_INSTALL) &&
		 schema_preflight_path_possible(pre, SCHEMA_PATH_FS_CLONE))
		j->path_arg = "clone";
	else {
		j->path_arg = "fresh";
		j->path_from = "default";
	}
}

static bool on_path(const char *path, const char *step)
{
	/* path 1 of docs/incident.md (recommended) skips plan and clone; path 2 skips restore */
	if (streq(path, "clone"))
		return !streq(step, "restore");
	return !streq(step, "plan") && !streq(step, "clone");
}

/* One step's judgement: report's own record by its report verdict, the others as the report judges
 * them; accept without the engine gates is at most a warning. */
static enum status judge(json_object *o, size_t ss, char **why, bool *engine_missing)
{
	enum status st;

	*engine_missing = false;
	if (ss == SS_REPORT) {
		const char *rv = schema_report_verdict(o);
		*why = o ? xasprintf("%s: %s", rv ?: "?", schema_report_why(o) ?: "") : xstrdup("not run");
		return !o ? ST_SKIP : streq(rv, "accepted") ? ST_PASS : streq(rv, "rejected") ? ST_FAIL : ST_WARN;
	}
	st = report_judge_step(schema_steps[ss], o, why);
	if (ss == SS_ACCEPT && o && st != ST_FAIL) {
		bool run, failed;
		schema_accept_engine_gates(o, &run, &failed);
		if (!run) {
			st = ST_WARN;
			*engine_missing = true;
		}
	}
	return st;
}

/* Why the step is the next one to run, or NULL when it is done: not run, failed, accept without the
 * engine gates, or a report older than a record it should hold. */
static char *next_why(const struct status_job *j, size_t ss, enum status st, const char *why, bool engine_missing)
{
	const char *step = schema_steps[ss], *made = schema_finished(j->recs[SS_REPORT]);

	if (!j->recs[ss])
		return xasprintf("'%s' has not run", step);
	if (st == ST_FAIL && ss != SS_PLAN)
		return xasprintf("'%s' failed: %s; fix that and run it again", step, why);
	if (engine_missing)
		return xstrdup("accept ran without the engine gates: run the cold-boot 157 K first-touch prompt and "
			       "the full 97-scenario bench (the profile's [engine] gates) with accept");
	for (size_t i = 0; ss == SS_REPORT && made && i < SS_REPORT; i++)
		if (schema_finished(j->recs[i]) && strcmp(schema_finished(j->recs[i]), made) > 0)
			return xasprintf("the report is older than the '%s' record: make it again", schema_steps[i]);
	return NULL;
}

/* One row of the table and one check per step on the path or with a record; the first step of
 * the path not done becomes `next`. */
static void add_step(struct status_job *j, size_t ss)
{
	const char *step = schema_steps[ss], *state;
	json_object *o = j->recs[ss], *s;
	bool here = on_path(j->path_arg, step), engine_missing;
	_cleanup_free_ char *why = NULL, *nwhy = NULL;
	enum status st;

	if (!here && !o)
		return;
	st = judge(o, ss, &why, &engine_missing);
	state = !o ? "missing" : st == ST_FAIL ? "failed" : st == ST_WARN ? "warn" :
		streq(report_step_word(step, o, st), REPORT_VERDICT_TRAP) ? REPORT_VERDICT_TRAP : "done";
	s = json_object_new_object();
	jset_str(s, "step", step);
	jset_str(s, "state", state);
	jset_str(s, "verdict", schema_verdict(o));
	jset_str(s, "finished", schema_finished(o));
	jset_str(s, "host", schema_host(o));
	jset_bool(s, "on_path", here);
	jset_str(s, "why", why);
	json_object_array_add(j->steps, s);
	record_check(j->rec, step, o ? st : ST_SKIP, "%s", why);

	if (j->next || !here || !(nwhy = next_why(j, ss, st, why, engine_missing)))
		return;
	_cleanup_free_ char *cmd = command_for(step, j->recs[SS_PREFLIGHT], j->recs[SS_BACKUP]);
	j->next = json_object_new_object();
	jset_str(j->next, "step", step);
	jset_str(j->next, "command", cmd);
	jset_str(j->next, "why", nwhy);
}

/* status, phase by phase: options, the records, the path, one row per step, the next step. */
int step_status_run(struct ctx *ctx, int argc, char **argv, struct record *rec)
{
	struct status_job j = { .ctx = ctx, .rec = rec };
	int r;

	r = parse_args(&j, argc, argv);
	if (r == 0)
		r = load_records(&j);
	if (r) {
		status_job_free(&j);
		return r;
	}
	choose_path(&j);
	j.steps = json_object_new_array();
	for (size_t i = 0; i < SS_N; i++)
		add_step(&j, i);
	if (!j.next) {
		j.next = json_object_new_object();
		jset_str(j.next, "step", NULL);
		jset_str(j.next, "command", NULL);
		jset_str(j.next, "why", "nothing: every step of the path is done and the report is current");
	}
	jset_str(rec->root, "path", streq(j.path_arg, "clone") ? "fs-clone" : "fresh-install");
	jset_str(rec->root, "path_from", j.path_from);
	json_object_object_add(rec->root, "steps", j.steps);
	json_object_object_add(rec->root, "next", j.next);
	status_job_free(&j);
	record_finish(rec);
	return record_exit_code(rec);
}

void step_status_render(const struct ctx *ctx, json_object *record)
{
	json_object *steps = jget(record, "steps"), *next = jget(record, "next");
	_cleanup_table_ struct table *t = table_new(5);

	out_line(ctx, "path: %s (%s)", streq(jget_str(record, "path"), "fs-clone") ? "filesystem-aware clone" : "fresh install + restore",
		 streq(jget_str(record, "path_from"), "option") ? "--path" :
		 streq(jget_str(record, "path_from"), "records") ? "from the records" : "default; --path clone for the other");
	table_header(t, "step", "state", "finished", "host", "why");
	for (size_t i = 0; i < jarray_len(steps); i++) {
		json_object *s = jarray_at(steps, i);
		const char *state = jget_str(s, "state");
		/* preflight's "trap" is done (a path exists) but keeps its own word; "failed" is fail */
		table_row(t, jget_str(s, "step"), streq(state, "missing") ? "-" : out_word(ctx, streq(state, "failed") ? "fail" : state),
			  jget_str(s, "finished"),
			  jget_str(s, "host"), jget_str(s, "why"));
	}
	table_print(ctx, t);
	out_line(ctx, "%s", "");
	out_line(ctx, "next: %s", jget_str(next, "why") ?: "");
	if (jget_str(next, "command"))
		out_line(ctx, "  %s", jget_str(next, "command"));
}
