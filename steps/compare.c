/* SPDX-License-Identifier: MIT */
/* compare: two accept results (records or reports) side by side with B/A ratios and their gates,
 * like the incident's dgx4-vs-dgx5 table: how a candidate drive is judged against a reference node. */
#include "steps.h"
#include "report.h"
#include "schema.h"

#include <inttypes.h>
#include <math.h>

static const struct step_operand compare_operands[] = {
	{ "A.json, B.json", "accept records (STATE/accept.json) or signed reports (report.json)" },
	{ 0 },
};

static const struct step_option compare_options[] = {
	STEP_OPTIONS_END,
};

const struct step step_compare = {
	.name = "compare",
	.summary = "two accept results side by side (candidate vs reference node), with B/A ratios and gates",
	.synopsis = "swaptool compare A.json B.json\n",
	.operands = compare_operands,
	.options = compare_options,
	.run = step_compare_run,
	.render = step_compare_render,
	.flags = 0,
};

/* The largest compare input: a report embeds every record (a few MiB at most). */
#define COMPARE_MAX_BYTES (256u << 20)

/* A compare input: an accept record, or a report embedding one. The record is checked as a loaded
 * record is (its envelope, then the keys src/schema.h declares), so a field of the wrong type is
 * refused with its name; what is read later still goes through typed lookups. */
static int load_doc(struct ctx *ctx, const char *path, json_object **doc, json_object **acc)
{
	_cleanup_free_ char *text = NULL, *why = NULL;
	const char *schema;
	size_t len = 0;
	int r = read_input(path, COMPARE_MAX_BYTES, 0, &text, &len, &why);

	*doc = *acc = NULL;
	if (r < 0)
		return ctx_error(ctx, EXIT_FAILED, "cannot read '%s': %s; pass STATE/accept.json or report.json", path, why);
	r = json_parse_doc(text, len, doc, &why);
	if (r < 0)
		return ctx_error(ctx, EXIT_FAILED, "cannot read '%s': %s; pass STATE/accept.json or report.json", path, why);
	schema = jget_str(*doc, "schema");
	if (schema && startswith(schema, "swaptool-report/")) {
		if (!streq(schema, REPORT_SCHEMA))
			r = set_why(&why, -EPROTONOSUPPORT, "its schema is '%s' but this swaptool reads only '%s'; "
					  "compare it with the swaptool that made it", schema, REPORT_SCHEMA);
		else if (!jget_object(jget_object(*doc, "steps"), "accept"))
			r = set_why(&why, -EBADMSG, "the report holds no accept record");
		else
			*acc = jget(jget(*doc, "steps"), "accept");
	} else
		*acc = *doc;
	if (r == 0)
		r = record_check_envelope(*acc, "accept", &why);
	if (r == 0)
		r = schema_validate("accept", *acc, &why);
	if (r < 0) {
		json_object_put(*doc);
		*doc = *acc = NULL;
		return ctx_error(ctx, EXIT_FAILED, "'%s' is neither an accept record nor a report holding one: %s; pass "
				 "STATE/accept.json or report.json", path, why);
	}
	return 0;
}

/* A list's elements (runs, gates) by name, sorted by name and then position: a lookup is a binary
 * search that finds the first element of that name, as a walk from the start would. Each lookup was
 * such a walk, and the union of the names another: 40,000 gates a side took 103 s. */
struct named {
	const char *name;
	size_t pos;
};

struct by_name {
	json_object *list;
	struct named *v;
	size_t n;
};

static int cmp_named(const void *x, const void *y)
{
	const struct named *a = x, *b = y;
	int c = strcmp(a->name, b->name);

	return c ? c : (a->pos > b->pos) - (a->pos < b->pos);
}

static void by_name_init(struct by_name *x, json_object *list)
{
	*x = (struct by_name){ .list = list, .v = xcalloc(jarray_len(list) + 1, sizeof(*x->v)) };
	for (size_t i = 0; i < jarray_len(list); i++) {
		const char *n = jget_str(jarray_at(list, i), "name");

		if (n)
			x->v[x->n++] = (struct named){ n, i };
	}
	qsort(x->v, x->n, sizeof(*x->v), cmp_named);
}

static void by_name_free(struct by_name *x)
{
	free(x->v);
	*x = (struct by_name){ 0 };
}

/* The position of the first element named `name`, or SIZE_MAX. */
static size_t by_name_pos(const struct by_name *x, const char *name)
{
	size_t lo = 0, hi = x->n;

	while (name && lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(x->v[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return name && lo < x->n && streq(x->v[lo].name, name) ? x->v[lo].pos : SIZE_MAX;
}

static json_object *by_name_find(const struct by_name *x, const char *name)
{
	size_t pos = by_name_pos(x, name);

	return pos == SIZE_MAX ? NULL : jarray_at(x->list, pos);
}

/* The engine predicted from a run (src/predict.h), when it has one: its worst chunk (null: the
 * chunk never completes) and status. */
static void side_prediction(json_object *o, json_object *pred)
{
	if (!pred)
		return;
	jset_double(o, "predicted_chunk_s", schema_prediction_s(pred, "worst_chunk_s"));
	jset_str(o, "predicted_status", schema_prediction_status(pred));
}

static json_object *side(json_object *run)
{
	json_object *o = json_object_new_object();
	double p50 = 0, p99_9 = 0;

	schema_run_lat_us(run, SCHEMA_LAT_P50, &p50);
	schema_run_lat_us(run, SCHEMA_LAT_P99_9, &p99_9);
	jset_double(o, "iops", jget_double(run, "iops"));
	jset_double(o, "mb_s", jget_double(run, "mb_s"));
	jset_double(o, "p50_us", p50);
	jset_double(o, "p99_9_us", p99_9);
	side_prediction(o, schema_run_prediction(run));
	return o;
}

static void ratio(json_object *o, const char *key, json_object *a, json_object *b, const char *field)
{
	double x = jget_double(a, field), y = jget_double(b, field);

	if (x > 0 && b)
		jset_double(o, key, round(y / x * 1000) / 1000);
	else
		json_object_object_add(o, key, NULL);
}

/* Union of the run (or gate) names, A's order first: an element is the first of its name in its
 * list, and one of B's is not in A. */
static json_object *names_of(const struct by_name *a, const struct by_name *b)
{
	json_object *names = json_object_new_array();
	const struct by_name *both[2] = { a, b };

	for (int k = 0; k < 2; k++)
		for (size_t i = 0; i < jarray_len(both[k]->list); i++) {
			const char *n = jget_str(jarray_at(both[k]->list, i), "name");

			if (n && by_name_pos(both[k], n) == i && (k == 0 || by_name_pos(a, n) == SIZE_MAX))
				json_object_array_add(names, json_object_new_string(n));
		}
	return names;
}

static void gate_check(struct record *rec, const char *id, const char *label, json_object *acc)
{
	json_object *gates = schema_accept_gates(acc);
	size_t n = jarray_len(gates), pass = 0, nfailed = 0, flen = 0;
	char *failed = NULL;
	FILE *f = open_memstream(&failed, &flen); /* a string grown by copies was quadratic in the gates */
	bool run, efailed;

	if (!f)
		abort();
	for (size_t i = 0; i < n; i++) {
		json_object *g = jarray_at(gates, i);
		if (streq(schema_gate_status(g), "pass"))
			pass++;
		else if (streq(schema_gate_status(g), "fail"))
			fprintf(f, "%s%s", nfailed++ ? ", " : "", schema_gate_name(g) ?: "?");
	}
	fclose(f);
	schema_accept_engine_gates(acc, &run, &efailed);
	record_check(rec, id, nfailed ? ST_FAIL : ST_PASS, "%s (%s): %zu of %zu gates passed%s%s; engine gates %s", label,
		     schema_host(acc) ?: "?", pass, n, nfailed ? ", failed: " : "", nfailed ? failed : "",
		     run ? (efailed ? "failed" : "passed") : "not run");
	free(failed);
}

/* The runs side by side, matched by name (A's order first), into the record's runs. */
static void compare_runs(struct record *rec, json_object *a, json_object *b)
{
	json_object *runs = json_object_new_array(), *names;
	struct by_name ia, ib;

	by_name_init(&ia, schema_accept_runs(a));
	by_name_init(&ib, schema_accept_runs(b));
	names = names_of(&ia, &ib);
	for (size_t i = 0; i < jarray_len(names); i++) {
		const char *n = json_object_get_string(jarray_at(names, i));
		json_object *ra = by_name_find(&ia, n), *rb = by_name_find(&ib, n), *o = json_object_new_object();
		json_object *sa = ra ? side(ra) : NULL, *sb = rb ? side(rb) : NULL;

		jset_str(o, "name", n);
		jset_str(o, "mode", jget_str(ra ?: rb, "mode"));
		jset_u64(o, "inflight", jget_u64(ra ?: rb, "inflight"));
		ratio(o, "iops_ratio", sa, sb, "iops");
		ratio(o, "mb_s_ratio", sa, sb, "mb_s");
		ratio(o, "p50_ratio", sa, sb, "p50_us");
		ratio(o, "p99_9_ratio", sa, sb, "p99_9_us");
		json_object_object_add(o, "a", sa);
		json_object_object_add(o, "b", sb);
		json_object_array_add(runs, o);
	}
	json_object_put(names);
	by_name_free(&ia);
	by_name_free(&ib);
	json_object_object_add(rec->root, "runs", runs);
}

/* The gates side by side, matched by name (A's order first), into the record's gates. */
static void compare_gates(struct record *rec, json_object *a, json_object *b)
{
	json_object *gates = json_object_new_array(), *names;
	struct by_name ia, ib;

	by_name_init(&ia, schema_accept_gates(a));
	by_name_init(&ib, schema_accept_gates(b));
	names = names_of(&ia, &ib);
	for (size_t i = 0; i < jarray_len(names); i++) {
		const char *n = json_object_get_string(jarray_at(names, i));
		json_object *ga = by_name_find(&ia, n), *gb = by_name_find(&ib, n), *o = json_object_new_object();
		_cleanup_free_ char *t = report_gate_threshold(ga ?: gb);

		jset_str(o, "name", n);
		json_object_object_add(o, "threshold", json_object_get(jget(ga ?: gb, "threshold")));
		jset_str(o, "threshold_text", t);
		json_object_object_add(o, "a_measured", json_object_get(jget(ga, "measured")));
		jset_str(o, "a_status", ga ? jget_str(ga, "status") : "absent");
		json_object_object_add(o, "b_measured", json_object_get(jget(gb, "measured")));
		jset_str(o, "b_status", gb ? jget_str(gb, "status") : "absent");
		json_object_array_add(gates, o);
	}
	json_object_put(names);
	by_name_free(&ia);
	by_name_free(&ib);
	json_object_object_add(rec->root, "gates", gates);
}

int step_compare_run(struct ctx *ctx, int argc, char **argv, struct record *rec)
{
	json_object *da = NULL, *db = NULL, *a, *b;
	int c, r;

	while ((c = getopt_long(argc, argv, "", step_getopt(compare_options), NULL)) != -1)
		return step_bad_option(ctx, argc, argv);
	if (optind + 2 != argc)
		return ctx_error(ctx, EXIT_USAGE, "compare takes two files: A.json B.json (accept records or reports); "
						  "see 'swaptool help compare'");
	r = load_doc(ctx, argv[optind], &da, &a);
	if (r)
		return r;
	r = load_doc(ctx, argv[optind + 1], &db, &b);
	if (r) {
		json_object_put(da);
		return r;
	}

	for (int k = 0; k < 2; k++) {
		json_object *acc = k ? b : a, *o = json_object_new_object();
		jset_str(o, "file", argv[optind + k]);
		jset_str(o, "host", jget_str(acc, "host"));
		jset_str(o, "finished", jget_str(acc, "finished"));
		jset_str(o, "target", jget_str(jget_object(acc, "target"), "path"));
		jset_str(o, "verdict", jget_str(acc, "verdict"));
		{
			/* the run the side's engine-prediction check judged: its slowest worst chunk */
			const char *run = NULL;
			json_object *pred = schema_accept_prediction(acc, &run);

			jset_str(o, "predicted_run", run);
			side_prediction(o, pred);
		}
		json_object_object_add(rec->root, k ? "b" : "a", o);
	}
	compare_runs(rec, a, b);
	compare_gates(rec, a, b);
	gate_check(rec, "gates-a", "A", a);
	gate_check(rec, "gates-b", "B", b);
	json_object_put(da);
	json_object_put(db);
	record_finish(rec);
	return record_exit_code(rec);
}

static void cell_rate(struct table *t, json_object *s, bool seq)
{
	if (!s)
		table_cellf(t, "-");
	else if (seq)
		table_cellf(t, "%.2f GB/s", jget_double(s, "mb_s") / 1000);
	else if (jget_double(s, "iops") >= 1000)
		table_cellf(t, "%.1f K", jget_double(s, "iops") / 1000);
	else
		table_cellf(t, "%.0f", jget_double(s, "iops"));
}

static void cell_us(struct table *t, json_object *s, const char *key)
{
	double v = jget_double(s, key);

	if (!s || !(v > 0))
		table_cellf(t, "-");
	else if (v >= 1000)
		table_cellf(t, "%.2f ms", v / 1000);
	else
		table_cellf(t, "%.0f us", v);
}

static void cell_ratio(struct table *t, json_object *o, const char *key)
{
	json_object *v = jget(o, key);

	if (!v)
		table_cellf(t, "-");
	else
		table_cellf(t, "%.2fx", json_object_get_double(v));
}

static char *json_cell(json_object *v)
{
	return report_value_text(v);
}

/* "13.1 s fail": a side's predicted worst chunk and its status; "-" without a prediction */
static void cell_prediction(struct table *t, json_object *s)
{
	json_object *v = jget(s, "predicted_chunk_s");
	double secs = v ? json_object_get_double(v) : 0;

	if (!jget_str(s, "predicted_status") && !v)
		table_cellf(t, "-");
	else if (!v)
		table_cellf(t, "never %s", jget_str(s, "predicted_status") ?: "?");
	else
		table_cellf(t, "%.*f s %s", secs < 10 ? 2 : 1, secs, jget_str(s, "predicted_status") ?: "?");
}

/* The engine predicted from each side's random runs, and the run each side's check judged. */
static void render_prediction(const struct ctx *ctx, json_object *record, const char *ha, const char *hb)
{
	json_object *runs = jget(record, "runs");
	_cleanup_table_ struct table *t = table_new(3);
	bool any = false;

	out_heading(ctx, "Predicted engine (worst chunk against the spin limit)");
	table_header(t, "run", ha, hb);
	for (size_t i = 0; i < jarray_len(runs); i++) {
		json_object *r = jarray_at(runs, i), *sa = jget_object(r, "a"), *sb = jget_object(r, "b");

		if (!jget_str(sa, "predicted_status") && !jget_str(sb, "predicted_status"))
			continue;
		any = true;
		table_cellf(t, "%s", jget_str(r, "name") ?: "?");
		cell_prediction(t, sa);
		cell_prediction(t, sb);
	}
	/* the run each side's engine-prediction check took, its slowest */
	table_row(t, "judged", jget_str(jget_object(record, "a"), "predicted_run") ?: "-",
		  jget_str(jget_object(record, "b"), "predicted_run") ?: "-");
	if (any)
		table_print(ctx, t);
	else
		out_line(ctx, "  neither side's accept record holds a prediction");
}

void step_compare_render(const struct ctx *ctx, json_object *record)
{
	json_object *a = jget(record, "a"), *b = jget(record, "b"), *runs = jget(record, "runs"), *gates = jget(record, "gates");
	_cleanup_table_ struct table *t = table_new(10), *g = table_new(6);
	_cleanup_free_ char *ha = xasprintf("A %s", jget_str(a, "host") ?: "?"), *hb = xasprintf("B %s", jget_str(b, "host") ?: "?");

	out_line(ctx, "A: %s (%s, %s)", jget_str(a, "file"), jget_str(a, "host") ?: "?", jget_str(a, "target") ?: "?");
	out_line(ctx, "B: %s (%s, %s)", jget_str(b, "file"), jget_str(b, "host") ?: "?", jget_str(b, "target") ?: "?");
	out_heading(ctx, "Runs (B/A: above 1 is faster for rate, slower for latency)");
	table_header(t, "run", ha, "p50", "p99.9", hb, "p50", "p99.9", "rate B/A", "p50 B/A", "p99.9 B/A");
	for (unsigned c = 1; c < 10; c++)
		table_align(t, c, ALIGN_RIGHT);
	for (size_t i = 0; i < jarray_len(runs); i++) {
		json_object *r = jarray_at(runs, i), *sa = jget_object(r, "a"), *sb = jget_object(r, "b");
		bool seq = streq(jget_str(r, "mode"), "seqread");

		table_cellf(t, "%s", jget_str(r, "name") ?: "?");
		cell_rate(t, sa, seq);
		cell_us(t, sa, "p50_us");
		cell_us(t, sa, "p99_9_us");
		cell_rate(t, sb, seq);
		cell_us(t, sb, "p50_us");
		cell_us(t, sb, "p99_9_us");
		cell_ratio(t, r, seq ? "mb_s_ratio" : "iops_ratio");
		cell_ratio(t, r, "p50_ratio");
		cell_ratio(t, r, "p99_9_ratio");
	}
	table_print(ctx, t);
	render_prediction(ctx, record, ha, hb);
	out_heading(ctx, "Gates");
	table_header(g, "gate", "threshold", ha, "", hb, "");
	for (size_t i = 0; i < jarray_len(gates); i++) {
		json_object *x = jarray_at(gates, i);
		_cleanup_free_ char *th = xstrdup(jget_str(x, "threshold_text") ?: "-"), *ma = json_cell(jget(x, "a_measured")),
				    *mb = json_cell(jget(x, "b_measured"));
		enum status sa = ST_SKIP, sb = ST_SKIP;

		status_parse(jget_str(x, "a_status"), &sa);
		status_parse(jget_str(x, "b_status"), &sb);
		table_row(g, jget_str(x, "name"), th, ma, out_status(ctx, sa), mb, out_status(ctx, sb));
	}
	table_print(ctx, g);
	out_line(ctx, "%s", "");
	out_checks(ctx, record);
}
