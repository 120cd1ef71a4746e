/* SPDX-License-Identifier: MIT */
/* fleet: N nodes' records or reports in one view: drive model and class, the delta against the
 * target, the recommended path, accept figures divided by a reference node's (docs/incident.md judged
 * dgx4's XG7000 against dgx5), gates, and each node's status. */
#include "steps.h"
#include "nodes.h"
#include "report.h"
#include "schema.h"

#include <inttypes.h>
#include <math.h>

static const struct step_operand fleet_operands[] = {
	{ "RECORD", "preflight or accept records (STATE/STEP.json), report records or report.json" },
	{ 0 },
};

static const struct step_option fleet_options[] = {
	{ { "node", required_argument, NULL, 'N' }, "NAME=FILE",
	  "FILE is a record or report of node NAME (e.g. the inventory's name),\n"
	  "whatever host it claims; repeatable" },
	{ { "reference", required_argument, NULL, 'r' }, "HOST",
	  "the node the others' accept figures are divided by (default: the first\n"
	  "node whose accept passed)" },
	STEP_OPTIONS_END,
};

const struct step step_fleet = {
	.name = "fleet",
	.summary = "many nodes in one view: drive class, delta, path, accept figures against a reference, gates",
	.synopsis = "swaptool fleet [RECORD...] [--node NAME=FILE]... [--reference HOST]\n",
	.operands = fleet_operands,
	.options = fleet_options,
	.notes = "exit: 0 every node passes, 1 a node failed a step, 2 usage, 3 unreadable or malformed input,\n"
		 "or two records of one node that show different drives\n",
	.run = step_fleet_run,
	.render = step_fleet_render,
	.flags = 0,
};

/* Union of the run names of every node's accept record, in order of first appearance. */
static json_object *run_names(const struct node_set *set)
{
	json_object *names = json_object_new_array();

	for (size_t i = 0; i < set->nnodes; i++) {
		json_object *runs = schema_accept_runs(set->nodes[i].accept);
		for (size_t k = 0; runs && k < json_object_array_length(runs); k++) {
			const char *n = jget_str(jarray_at(runs, k), "name");
			bool seen = false;
			for (size_t j = 0; n && j < json_object_array_length(names); j++)
				seen = seen || streq(json_object_get_string(jarray_at(names, j)), n);
			if (n && !seen)
				json_object_array_add(names, json_object_new_string(n));
		}
	}
	return names;
}

static json_object *find_run(json_object *acc, const char *name)
{
	return schema_accept_run(acc, name);
}

/* The figures of one run, numbers only where the record has numbers. */
static json_object *run_figures(json_object *run)
{
	json_object *o = json_object_new_object(), *lat = jget_object(run, "lat_us");
	double v;
	int64_t n;

	jset_str(o, "name", jget_str(run, "name"));
	jset_str(o, "mode", jget_str(run, "mode"));
	if (jint(run, "inflight", &n))
		jset_i64(o, "inflight", n);
	if (jnum(run, "iops", &v))
		jset_double(o, "iops", v);
	if (jnum(run, "mb_s", &v))
		jset_double(o, "mb_s", v);
	if (jnum(lat, SCHEMA_LAT_P50, &v))
		jset_double(o, "p50_us", v);
	if (jnum(lat, SCHEMA_LAT_P99_9, &v))
		jset_double(o, "p99_9_us", v);
	return o;
}

/* field of `o` divided by the same field of `ref`, to three decimals (as compare does); null when
 * either is missing or the reference's is not positive. */
static void ratio(json_object *o, const char *key, json_object *ref, const char *field)
{
	double x, y;

	if (ref && jnum(ref, field, &x) && x > 0 && jnum(o, field, &y))
		jset_double(o, key, round(y / x * 1000) / 1000);
	else
		json_object_object_add(o, key, NULL);
}

/* The engine predicted from the node's accept (the run its engine-prediction check judged): the
 * worst chunk in seconds (null: it never completes), the margin and the status; null when the
 * record has no prediction. */
static json_object *prediction_view(json_object *acc)
{
	const char *run = NULL;
	json_object *p = schema_accept_prediction(acc, &run), *o;
	double v;

	if (!p)
		return NULL;
	o = json_object_new_object();
	jset_str(o, "run", run);
	jset_double(o, "worst_chunk_s", schema_prediction_s(p, "worst_chunk_s"));
	if (jnum(p, "margin", &v))
		jset_double(o, "margin", v);
	jset_str(o, "status", schema_prediction_status(p));
	return o;
}

static json_object *accept_view(const struct node *n, const struct node *ref, json_object *names)
{
	json_object *o = json_object_new_object(), *runs = json_object_new_array(), *failed = json_object_new_array();
	json_object *gates = schema_accept_gates(n->accept), *d = schema_accept_drive(n->accept), *t = jget_object(n->accept, "target");
	size_t total = 0, passed = 0;
	bool run, efailed;
	double v;

	jset_str(o, "verdict", schema_verdict(n->accept));
	jset_str(o, "finished", schema_finished(n->accept));
	jset_str(o, "device", schema_accept_target_path(n->accept));
	jset_str(o, "model", jget_str(d, "model"));
	if (jnum(t, "working_set_bytes", &v))
		jset_double(o, "working_set_bytes", v);
	for (size_t i = 0; i < json_object_array_length(names); i++) {
		const char *name = json_object_get_string(jarray_at(names, i));
		json_object *r = find_run(n->accept, name), *f, *rf = NULL;

		if (!r)
			continue;
		f = run_figures(r);
		if (ref && find_run(ref->accept, name))
			rf = run_figures(find_run(ref->accept, name));
		ratio(f, "iops_ratio", rf, "iops");
		ratio(f, "mb_s_ratio", rf, "mb_s");
		ratio(f, "p50_ratio", rf, "p50_us");
		ratio(f, "p99_9_ratio", rf, "p99_9_us");
		json_object_put(rf);
		json_object_array_add(runs, f);
	}
	json_object_object_add(o, "runs", runs);
	for (size_t i = 0; gates && i < json_object_array_length(gates); i++) {
		json_object *g = jarray_at(gates, i);
		const char *st = schema_gate_status(g);
		if (!streq(st, "pass") && !streq(st, "fail"))
			continue;
		total++;
		if (streq(st, "pass"))
			passed++;
		else
			json_object_array_add(failed, json_object_new_string(schema_gate_name(g) ?: "?"));
	}
	json_object_object_add(o, "prediction", prediction_view(n->accept));
	schema_accept_engine_gates(n->accept, &run, &efailed);
	{
		json_object *go = json_object_new_object();
		jset_u64(go, "passed", passed);
		jset_u64(go, "total", total);
		json_object_object_add(go, "failed", failed);
		jset_str(go, "engine", run ? (efailed ? "failed" : "passed") : "not run");
		json_object_object_add(o, "gates", go);
	}
	return o;
}

static json_object *drive_view(json_object *cls, const char *model, const char *serial)
{
	json_object *o = json_object_new_object();
	double v;

	jset_str(o, "model", model ?: jget_str(cls, "model"));
	jset_str(o, "serial", serial);
	jset_str(o, "class", jget_str(cls, "name"));
	jset_str(o, "class_verdict", jget_str(cls, "verdict") ?: (cls ? "unknown" : NULL));
	if (jnum(cls, "hmb_mb", &v))
		jset_double(o, "hmb_mb", v);
	else
		json_object_object_add(o, "hmb_mb", NULL);
	return o;
}

/* A node as people read it: its name, and the hosts its records claim when they are others
 * ("gpu-b (claims dgx4)"), from its view's host and claimed_hosts. */
static char *node_name(json_object *view)
{
	json_object *c = jget_array(view, "claimed_hosts");
	char *s = xstrdup(jget_str(view, "host") ?: "?");

	for (size_t i = 0; c && i < json_object_array_length(c); i++) {
		char *x = xasprintf("%s%s%s", s, i ? ", " : " (claims ", json_object_get_string(jarray_at(c, i)));
		free(s);
		s = x;
	}
	if (c && json_object_array_length(c)) {
		char *x = xasprintf("%s)", s);
		free(s);
		s = x;
	}
	return s;
}

/* One node's row, and its check: the worst of its steps as the report judges them. */
static json_object *node_view(struct record *rec, const struct node *n, const struct node *ref, json_object *names)
{
	json_object *o = json_object_new_object(), *pf = n->preflight;
	enum status worst = ST_PASS;
	_cleanup_free_ char *why = NULL;
	double v;

	jset_str(o, "host", n->host);
	{
		json_object *c = json_object_new_array();
		for (size_t i = 0; i < n->claimed.n; i++)
			json_object_array_add(c, json_object_new_string(n->claimed.v[i]));
		json_object_object_add(o, "claimed_hosts", c);
	}
	if (pf) {
		json_object *src = jget_object(pf, "source"), *sid = jget_object(pf, "source_identity"), *tid = jget_object(pf, "target_identity");
		json_object *p = json_object_new_object(), *paths = jget_object(pf, "paths");
		_cleanup_free_ char *pwhy = NULL;
		enum status st = report_judge_step("preflight", pf, &pwhy);

		json_object_object_add(o, "drive", drive_view(node_drive_class(pf, "source"),
							     jget_str(src, "model") ?: jget_str(sid, "model"),
							     jget_str(src, "serial") ?: jget_str(sid, "serial")));
		json_object_object_add(o, "target", drive_view(node_drive_class(pf, "target"), jget_str(tid, "model"),
							      jget_str(tid, "serial")));
		if (jnum(jget_object(pf, "target"), "size_bytes", &v))
			jset_double(jget(o, "target"), "size_bytes", v);
		if (jnum(pf, "delta_bytes", &v))
			jset_double(o, "delta_bytes", v);
		else
			json_object_object_add(o, "delta_bytes", NULL);
		jset_str(o, "recommended_path", jget_str(paths, "recommended"));
		jset_str(p, "verdict", jget_str(pf, "verdict"));
		/* the report's word for the step (report_step_word): a trap with a path is "trap", not "pass" */
		jset_str(p, "status", report_step_word("preflight", pf, st));
		jset_str(p, "why", pwhy);
		json_object_object_add(o, "preflight", p);
		if (st > worst)
			worst = st;
		why = xasprintf("preflight %s: %s", report_step_word("preflight", pf, st), pwhy ?: "");
	} else {
		json_object_object_add(o, "drive", NULL);
		json_object_object_add(o, "target", NULL);
		json_object_object_add(o, "delta_bytes", NULL);
		json_object_object_add(o, "recommended_path", NULL);
		json_object_object_add(o, "preflight", NULL);
	}
	if (n->accept) {
		json_object *a = accept_view(n, ref, names);
		_cleanup_free_ char *awhy = NULL;
		enum status st = report_judge_step("accept", n->accept, &awhy);
		char *x;

		jset_str(a, "status", status_name(st));
		jset_str(a, "why", awhy);
		json_object_object_add(o, "accept", a);
		if (st > worst)
			worst = st;
		x = xasprintf("%s%saccept %s: %s", why ?: "", why ? "; " : "", status_name(st), awhy ?: "");
		free(why);
		why = x;
	} else
		json_object_object_add(o, "accept", NULL);
	if (n->report_verdict) {
		json_object *r = json_object_new_object();
		enum status st = streq(n->report_verdict, "accepted") ? ST_PASS :
				 streq(n->report_verdict, "rejected") ? ST_FAIL : ST_WARN;
		char *x;

		jset_str(r, "verdict", n->report_verdict);
		jset_bool(r, "signed", n->report_signed);
		json_object_object_add(o, "report", r);
		if (st > worst)
			worst = st;
		x = xasprintf("%s%sreport %s", why ?: "", why ? "; " : "", n->report_verdict);
		free(why);
		why = x;
	} else
		json_object_object_add(o, "report", NULL);
	jset_str(o, "status", status_name(worst));
	{
		_cleanup_free_ char *name = node_name(o);
		record_check(rec, "node", worst, "%s: %s", name, why ?: "no preflight, accept or report");
	}
	{
		/* the check names its node for tools; the id stays "node" so the set of ids is fixed */
		json_object *checks = jget(rec->root, "checks");
		jset_str(jarray_at(checks, json_object_array_length(checks) - 1), "host", n->host);
	}
	return o;
}

int step_fleet_run(struct ctx *ctx, int argc, char **argv, struct record *rec)
{
	struct node_set set = { 0 };
	struct node_inputs in = { 0 };
	const char *refname = NULL, *ref_from = NULL;
	const struct node *ref = NULL;
	json_object *names, *nodes, *r_o;
	int c, r = 0;

	/* "-": operands come back as 1 in their place among the --node options, so nodes keep the
	 * command line's order */
	while (!r && (c = getopt_long(argc, argv, "-", step_getopt(fleet_options), NULL)) != -1) {
		if (c == 1)
			nodes_input_record(&in, optarg);
		else if (c == 'N')
			r = nodes_input_option(ctx, &in, optarg);
		else if (c == 'r' && *optarg)
			refname = optarg;
		else
			r = step_bad_option(ctx, argc, argv);
	}
	for (int i = optind; !r && i < argc; i++)
		nodes_input_record(&in, argv[i]);
	if (!r && !in.n)
		r = ctx_error(ctx, EXIT_USAGE, "fleet takes the records or reports of one or more nodes "
					       "(STATE/preflight.json, STATE/accept.json, report.json); see 'swaptool help fleet'");
	if (!r)
		r = nodes_read(ctx, &set, &in);
	nodes_inputs_free(&in);
	if (r) {
		nodes_free(&set);
		return r;
	}
	if (refname) {
		for (size_t i = 0; i < set.nnodes && !ref; i++)
			if (streq(set.nodes[i].host, refname))
				ref = &set.nodes[i];
		if (!ref || !ref->accept) {
			_cleanup_free_ char *hosts = NULL;
			for (size_t i = 0; i < set.nnodes; i++) {
				char *x = xasprintf("%s%s'%s'", hosts ?: "", hosts ? ", " : "", set.nodes[i].host);
				free(hosts);
				hosts = x;
			}
			r = ctx_error(ctx, EXIT_USAGE,
				      "reference '%s' %s (%s); pass --reference HOST of a node with an accept record", refname,
				      ref ? "has no accept record among the inputs" : "is not among the inputs' nodes", hosts ?: "none");
			nodes_free(&set);
			return r;
		}
		ref_from = "option";
	} else {
		for (size_t i = 0; i < set.nnodes && !ref; i++)
			if (streq(jget_str(set.nodes[i].accept, "verdict"), "pass"))
				ref = &set.nodes[i];
		ref_from = ref ? "first node whose accept passed" : NULL;
	}

	names = run_names(&set);
	nodes = json_object_new_array();
	for (size_t i = 0; i < set.nnodes; i++)
		json_object_array_add(nodes, node_view(rec, &set.nodes[i], ref, names));
	r_o = json_object_new_object();
	jset_str(r_o, "host", ref ? ref->host : NULL);
	jset_str(r_o, "from", ref_from);
	json_object_object_add(rec->root, "reference", r_o);
	json_object_object_add(rec->root, "inputs", json_object_get(set.inputs));
	json_object_object_add(rec->root, "runs", names);
	json_object_object_add(rec->root, "nodes", nodes);
	nodes_free(&set);
	record_finish(rec);
	return record_exit_code(rec);
}

/* ---- rendering ---- */

static void cell_bytes_delta(struct table *t, json_object *v)
{
	if (!v)
		table_cellf(t, "-");
	else
		table_cellf(t, "%+.1f GB", json_object_get_double(v) / 1e9);
}

/* "13.1 s fail (rand16)": the worst chunk, its status and the run */
static void cell_prediction(struct table *t, json_object *p)
{
	double v;

	if (!p)
		table_cellf(t, "-");
	else if (jnum(p, "worst_chunk_s", &v))
		table_cellf(t, "%.*f s %s (%s)", v < 10 ? 2 : 1, v, jget_str(p, "status") ?: "?", jget_str(p, "run") ?: "?");
	else
		table_cellf(t, "never %s (%s)", jget_str(p, "status") ?: "?", jget_str(p, "run") ?: "?");
}

void step_fleet_render(const struct ctx *ctx, json_object *record)
{
	json_object *nodes = jget_array(record, "nodes"), *names = jget_array(record, "runs"), *ref = jget_object(record, "reference");
	size_t nruns = names ? json_object_array_length(names) : 0;
	_cleanup_table_ struct table *t = table_new(7), *a = table_new((unsigned)(4 + nruns));

	out_heading(ctx, "Drives");
	table_header(t, "host", "drive", "class", "HMB", "target", "delta", "path");
	table_align(t, 5, ALIGN_RIGHT);
	for (size_t i = 0; nodes && i < json_object_array_length(nodes); i++) {
		json_object *n = jarray_at(nodes, i), *d = jget_object(n, "drive"), *tg = jget_object(n, "target");
		_cleanup_free_ char *cls = NULL, *hmb = NULL, *tcls = NULL;
		double v;

		cls = jget_str(d, "class_verdict") ? xasprintf("%s (%s)", jget_str(d, "class") ?: "unknown", jget_str(d, "class_verdict"))
						   : xstrdup("-");
		hmb = jnum(d, "hmb_mb", &v) ? (v > 0 ? xasprintf("%.0f MB", v) : xstrdup("DRAM")) : xstrdup("-");
		tcls = tg ? xasprintf("%s%s%s%s", jget_str(tg, "model") ?: "-", jget_str(tg, "class_verdict") ? " (" : "",
				      jget_str(tg, "class_verdict") ?: "", jget_str(tg, "class_verdict") ? ")" : "")
			  : xstrdup("-");
		_cleanup_free_ char *name = node_name(n);
		table_cellf(t, "%s", name);
		table_cellf(t, "%s", jget_str(d, "model") ?: jget_str(jget_object(n, "accept"), "model") ?: "-");
		table_cellf(t, "%s", cls);
		table_cellf(t, "%s", hmb);
		table_cellf(t, "%s", tcls);
		cell_bytes_delta(t, jget(n, "delta_bytes"));
		table_cellf(t, "%s", jget_str(n, "recommended_path") ?: "-");
	}
	table_print(ctx, t);

	out_heading(ctx, "Accept against %s (node/reference: above 1 is faster)", jget_str(ref, "host") ?: "no reference");
	{
		const char **hdr = xcalloc(4 + nruns, sizeof(*hdr));
		hdr[0] = "host";
		for (size_t k = 0; k < nruns; k++)
			hdr[1 + k] = json_object_get_string(jarray_at(names, k));
		hdr[1 + nruns] = "predicted chunk";
		hdr[2 + nruns] = "gates";
		hdr[3 + nruns] = "status";
		/* table_header is variadic with a fixed count; the run columns vary, so build the header as a row */
		for (size_t k = 0; k < 4 + nruns; k++)
			table_cellf(a, "%s", hdr[k]);
		free(hdr);
	}
	for (size_t k = 1; k <= nruns; k++)
		table_align(a, (unsigned)k, ALIGN_RIGHT);
	for (size_t i = 0; nodes && i < json_object_array_length(nodes); i++) {
		json_object *n = jarray_at(nodes, i), *acc = jget_object(n, "accept");
		json_object *runs = jget_array(acc, "runs"), *g = jget_object(acc, "gates");

		_cleanup_free_ char *name = node_name(n);
		table_cellf(a, "%s", name);
		for (size_t k = 0; k < nruns; k++) {
			const char *name = json_object_get_string(jarray_at(names, k));
			json_object *r = NULL, *ratio_v;
			double v;
			bool seq;

			for (size_t j = 0; runs && j < json_object_array_length(runs); j++)
				if (streq(jget_str(jarray_at(runs, j), "name"), name))
					r = jarray_at(runs, j);
			seq = streq(jget_str(r, "mode"), "seqread");
			ratio_v = jget(r, seq ? "mb_s_ratio" : "iops_ratio");
			if (!r || !jnum(r, seq ? "mb_s" : "iops", &v)) {
				table_cellf(a, "-");
				continue;
			}
			_cleanup_free_ char *rt = ratio_v && json_object_is_type(ratio_v, json_type_double) ?
				xasprintf(" (%.2fx)", json_object_get_double(ratio_v)) : ratio_v ?
				xasprintf(" (%.2fx)", (double)json_object_get_int64(ratio_v)) : xstrdup("");
			if (seq)
				table_cellf(a, "%.2f GB/s%s", v / 1000, rt);
			else
				table_cellf(a, "%.1f K%s", v / 1000, rt);
		}
		cell_prediction(a, jget_object(acc, "prediction"));
		if (g)
			table_cellf(a, "%" PRIu64 "/%" PRIu64 "%s", jget_u64(g, "passed"), jget_u64(g, "total"),
				    streq(jget_str(g, "engine"), "not run") ? "" : streq(jget_str(g, "engine"), "failed") ? ", engine failed" : ", engine");
		else
			table_cellf(a, "-");
		table_cellf(a, "%s", out_word(ctx, jget_str(n, "status")));
	}
	table_print(ctx, a);
	out_line(ctx, "%s", "");
	out_checks(ctx, record);
	out_verdict(ctx, record, "%s", "");
}
