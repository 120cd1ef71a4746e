/* SPDX-License-Identifier: MIT */
/* status: which steps are done, their verdicts and why, and the next step for the chosen path. */
#include "steps.h"
#include "report.h"

static const struct option status_options[] = {
	{ "path", required_argument, NULL, 'p' },
	{ 0 },
};

const struct step step_status = {
	.name = "status",
	.summary = "which steps are done, their verdicts and why, and what to run next",
	.usage = "swaptool status [--path fresh|clone]\n"
		 "  --path fresh|clone  the migration path: fresh install + restore (default), or filesystem-aware\n"
		 "                      clone; without it, the records say which was taken\n",
	.options = status_options,
	.run = step_status_run,
	.render = step_status_render,
	.flags = 0,
};

/* Path 1 of docs/incident.md (recommended) and path 2. */
static const char *const path_fresh[] = { "preflight", "backup", "restore", "verify", "accept", "report", NULL };
static const char *const path_clone[] = { "preflight", "backup", "plan", "clone", "verify", "accept", "report", NULL };

static char *command_for(const char *step, json_object *pre, json_object *backup)
{
	const char *src = jget_str(jget(pre, "source"), "path") ?: "/dev/nvme0";
	const char *spec = jget_str(jget(pre, "target"), "spec") ?: "SIZE|DEVICE";
	json_object *a = jget(backup, "archive");
	const char *tar = a && json_object_is_type(a, json_type_object) ? jget_str(a, "path") : jget_str(backup, "archive");

	tar = tar ?: "TARBALL";
	if (streq(step, "preflight"))
		return xstrdup("swaptool preflight /dev/nvme0 --target SIZE|DEVICE|IMAGE   (the new drive's bytes, e.g. 2000398934016)");
	if (streq(step, "backup"))
		return xstrdup("swaptool backup");
	if (streq(step, "plan"))
		return xasprintf("swaptool plan %s --target %s --rehearse", src, spec);
	if (streq(step, "clone"))
		return xasprintf("swaptool clone %s TARGET --yes   (from a live USB environment)", src);
	if (streq(step, "restore"))
		return xasprintf("swaptool restore %s   (after installing DGX OS on the new drive)", tar);
	if (streq(step, "verify"))
		return xasprintf("swaptool verify %s", tar);
	if (streq(step, "accept"))
		return xstrdup("swaptool accept   (the Engram shard through the profile, else the disk that holds /)");
	return xstrdup("swaptool report --key FILE --identity NAME");
}

int step_status_run(struct ctx *ctx, int argc, char **argv, struct record *rec)
{
	const char *path_arg = NULL, *path_from = "option";
	const char *const *seq;
	json_object *recs[16] = { 0 }, *steps, *next = NULL, *report_rec = NULL;
	const char *names[16];
	size_t n = 0;
	int c, r;

	while ((c = getopt_long(argc, argv, "", status_options, NULL)) != -1) {
		switch (c) {
		case 'p': path_arg = optarg; break;
		default: return step_bad_option(ctx, argc, argv);
		}
	}
	if (optind < argc)
		return ctx_error(ctx, EXIT_USAGE, "unexpected argument '%s'; see 'swaptool help status'", argv[optind]);
	if (path_arg && !streq(path_arg, "fresh") && !streq(path_arg, "clone"))
		return ctx_error(ctx, EXIT_USAGE, "bad --path '%s': 'fresh' (install + restore) or 'clone' (filesystem-aware clone)",
				 path_arg);

	for (size_t i = 0; i <= report_known_steps_n; i++) {
		const char *step = i < report_known_steps_n ? report_known_steps[i] : "report";
		json_object *o = NULL;
		_cleanup_free_ char *lwhy = NULL;

		r = record_load_why(ctx->state_dir, step, &o, &lwhy);
		if (r < 0 && r != -ENOENT) {
			for (size_t j = 0; j < n; j++)
				json_object_put(recs[j]);
			return ctx_error(ctx, EXIT_FAILED, "cannot read the record '%s/%s.json': %s; move it away or rerun '%s'",
					 ctx->state_dir, step, lwhy, step);
		}
		names[n] = step;
		recs[n++] = o;
		if (streq(step, "report"))
			report_rec = o;
	}
#define REC(name) ({ json_object *_o = NULL; for (size_t _i = 0; _i < n; _i++) if (streq(names[_i], name)) _o = recs[_i]; _o; })
	/* The chosen path: --path, else the records (a clone or a restore says which was taken), else
	 * preflight's possible paths, else path 1, the incident's recommendation. */
	if (!path_arg) {
		json_object *pre = REC("preflight");
		path_from = "records";
		if (REC("clone"))
			path_arg = "clone";
		else if (REC("restore"))
			path_arg = "fresh";
		else if (pre && jget(jget(pre, "paths"), "fresh_install") &&
			 !jget_bool(jget(jget(pre, "paths"), "fresh_install"), "possible") &&
			 jget_bool(jget(jget(pre, "paths"), "fs_clone"), "possible"))
			path_arg = "clone";
		else {
			path_arg = "fresh";
			path_from = "default";
		}
	}
	seq = streq(path_arg, "clone") ? path_clone : path_fresh;

	steps = json_object_new_array();
	for (size_t i = 0; i < n; i++) {
		const char *step = names[i];
		bool on_path = false;
		_cleanup_free_ char *why = NULL;
		json_object *s, *o = recs[i];
		enum status st;
		const char *state;
		bool engine_missing = false;

		for (const char *const *p = seq; *p; p++)
			on_path = on_path || streq(*p, step);
		if (!on_path && !o)
			continue;
		if (streq(step, "report")) {
			const char *rv = jget_str(o, "report_verdict");
			st = !o ? ST_SKIP : streq(rv, "accepted") ? ST_PASS : streq(rv, "rejected") ? ST_FAIL : ST_WARN;
			why = o ? xasprintf("%s: %s", rv ?: "?", jget_str(o, "why") ?: "") : xstrdup("not run");
		} else
			st = report_judge_step(step, o, &why);
		if (streq(step, "accept") && o && st != ST_FAIL) {
			bool run, failed;
			report_engine_gates(o, &run, &failed);
			if (!run) {
				st = ST_WARN;
				engine_missing = true;
			}
		}
		state = !o ? "missing" : st == ST_FAIL ? "failed" : st == ST_WARN ? "warn" :
			streq(report_step_word(step, o, st), REPORT_VERDICT_TRAP) ? REPORT_VERDICT_TRAP : "done";
		s = json_object_new_object();
		jset_str(s, "step", step);
		jset_str(s, "state", state);
		jset_str(s, "verdict", jget_str(o, "verdict"));
		jset_str(s, "finished", jget_str(o, "finished"));
		jset_str(s, "host", jget_str(o, "host"));
		jset_bool(s, "on_path", on_path);
		jset_str(s, "why", why);
		json_object_array_add(steps, s);
		record_check(rec, step, o ? st : ST_SKIP, "%s", why);

		if (next || !on_path)
			continue;
		_cleanup_free_ char *cmd = NULL, *nwhy = NULL;
		if (!o)
			nwhy = xasprintf("'%s' has not run", step);
		else if (st == ST_FAIL && !streq(step, "plan"))
			nwhy = xasprintf("'%s' failed: %s; fix that and run it again", step, why);
		else if (engine_missing)
			nwhy = xstrdup("accept ran without the engine gates: run the cold-boot 157 K first-touch prompt and "
				       "the full 97-scenario bench (the profile's [engine] gates) with accept");
		else if (streq(step, "report") && report_rec) {
			/* a record newer than the report makes the report stale */
			const char *made = jget_str(report_rec, "finished");
			for (size_t j = 0; j < n && !nwhy; j++)
				if (recs[j] && recs[j] != report_rec && made && jget_str(recs[j], "finished") &&
				    strcmp(jget_str(recs[j], "finished"), made) > 0)
					nwhy = xasprintf("the report is older than the '%s' record: make it again", names[j]);
		}
		if (nwhy) {
			next = json_object_new_object();
			cmd = command_for(step, REC("preflight"), REC("backup"));
			jset_str(next, "step", step);
			jset_str(next, "command", cmd);
			jset_str(next, "why", nwhy);
		}
	}
	if (!next) {
		next = json_object_new_object();
		jset_str(next, "step", NULL);
		jset_str(next, "command", NULL);
		jset_str(next, "why", "nothing: every step of the path is done and the report is current");
	}
	jset_str(rec->root, "path", streq(path_arg, "clone") ? "fs-clone" : "fresh-install");
	jset_str(rec->root, "path_from", path_from);
	json_object_object_add(rec->root, "steps", steps);
	json_object_object_add(rec->root, "next", next);
#undef REC
	for (size_t i = 0; i < n; i++)
		json_object_put(recs[i]);
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
		enum status st = streq(state, "done") ? ST_PASS : streq(state, "warn") ? ST_WARN : streq(state, "failed") ? ST_FAIL : ST_SKIP;
		/* preflight's "trap" is done (a path exists) but keeps its own word */
		table_row(t, jget_str(s, "step"), streq(state, "missing") ? "-" : streq(state, REPORT_VERDICT_TRAP) ? "TRAP" :
			  out_status(ctx, st), jget_str(s, "finished"),
			  jget_str(s, "host"), jget_str(s, "why"));
	}
	table_print(ctx, t);
	out_line(ctx, "\nnext: %s", jget_str(next, "why") ?: "");
	if (jget_str(next, "command"))
		out_line(ctx, "  %s", jget_str(next, "command"));
}
