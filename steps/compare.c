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

static json_object *find_named(json_object *acc, const char *list, const char *name)
{
	json_object *a = jget_array(acc, list);

	for (size_t i = 0; i < jarray_len(a); i++)
		if (streq(jget_str(jarray_at(a, i), "name"), name))
			return jarray_at(a, i);
	return NULL;
}

static json_object *find_run(json_object *acc, const char *name)
{
	return schema_accept_run(acc, name);
}

static json_object *find_gate(json_object *acc, const char *name)
{
	return find_named(acc, "gates", name);
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

/* Union of the run (or gate) names, A's order first. */
static json_object *names_of(json_object *a, json_object *b, const char *list)
{
	json_object *names = json_object_new_array();
	json_object *both[2] = { jget_array(a, list), jget_array(b, list) };

	for (int k = 0; k < 2; k++)
		for (size_t i = 0; i < jarray_len(both[k]); i++) {
			const char *n = jget_str(jarray_at(both[k], i), "name");
			bool seen = false;

			for (size_t j = 0; n && j < jarray_len(names); j++)
				seen = seen || streq(json_object_get_string(jarray_at(names, j)), n);
			if (n && !seen)
				json_object_array_add(names, json_object_new_string(n));
		}
	return names;
}

static void gate_check(struct record *rec, const char *id, const char *label, json_object *acc)
{
	json_object *gates = schema_accept_gates(acc);
	size_t n = jarray_len(gates), pass = 0;
	_cleanup_free_ char *failed = NULL;
	bool run, efailed;

	for (size_t i = 0; i < n; i++) {
		json_object *g = jarray_at(gates, i);
		if (streq(schema_gate_status(g), "pass"))
			pass++;
		else if (streq(schema_gate_status(g), "fail")) {
			char *x = xasprintf("%s%s%s", failed ?: "", failed ? ", " : "", schema_gate_name(g) ?: "?");
			free(failed);
			failed = x;
		}
	}
	schema_accept_engine_gates(acc, &run, &efailed);
	record_check(rec, id, failed ? ST_FAIL : ST_PASS, "%s (%s): %zu of %zu gates passed%s%s; engine gates %s", label,
		     schema_host(acc) ?: "?", pass, n, failed ? ", failed: " : "", failed ?: "",
		     run ? (efailed ? "failed" : "passed") : "not run");
}

int step_compare_run(struct ctx *ctx, int argc, char **argv, struct record *rec)
{
	json_object *da = NULL, *db = NULL, *a, *b, *runs, *gates, *names;
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
		json_object_object_add(rec->root, k ? "b" : "a", o);
	}

	runs = json_object_new_array();
	names = names_of(a, b, "runs");
	for (size_t i = 0; i < jarray_len(names); i++) {
		const char *n = json_object_get_string(jarray_at(names, i));
		json_object *ra = find_run(a, n), *rb = find_run(b, n), *o = json_object_new_object();
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
	json_object_object_add(rec->root, "runs", runs);

	gates = json_object_new_array();
	names = names_of(a, b, "gates");
	for (size_t i = 0; i < jarray_len(names); i++) {
		const char *n = json_object_get_string(jarray_at(names, i));
		json_object *ga = find_gate(a, n), *gb = find_gate(b, n), *o = json_object_new_object();

		jset_str(o, "name", n);
		json_object_object_add(o, "threshold", json_object_get(jget(ga ?: gb, "threshold")));
		{
			_cleanup_free_ char *t = report_gate_threshold(ga ?: gb);
			jset_str(o, "threshold_text", t);
		}
		json_object_object_add(o, "a_measured", json_object_get(jget(ga, "measured")));
		jset_str(o, "a_status", ga ? jget_str(ga, "status") : "absent");
		json_object_object_add(o, "b_measured", json_object_get(jget(gb, "measured")));
		jset_str(o, "b_status", gb ? jget_str(gb, "status") : "absent");
		json_object_array_add(gates, o);
	}
	json_object_put(names);
	json_object_object_add(rec->root, "gates", gates);

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
