/* SPDX-License-Identifier: MIT */
/* What the report's model (src/report.c) and its renderers (src/report_text.c, src/report_html.c,
 * src/report_svg.c) share: the small readers and number formats of both the txt and the html, the
 * drives table's rows, and the SVG charts the html page draws. Private to those files. */
#pragma once

#include <json-c/json.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "util.h"
#include "report.h"
#include "schema.h"

static inline size_t jlen(json_object *a)
{
	return a && json_object_is_type(a, json_type_array) ? json_object_array_length(a) : 0;
}

static inline bool path_possible(json_object *rec, const char *path)
{
	return schema_preflight_path_possible(rec, path);
}

/* The tarball of a backup, restore or verify record (src/schema.h reads every shape it had). */
static inline void backup_fields(json_object *rec, const char **path, const char **sha, uint64_t *bytes, uint64_t *entries)
{
	struct schema_archive a;

	schema_archive(rec, &a);
	*path = a.path, *sha = a.sha256, *bytes = a.bytes, *entries = a.entries;
}

/* "68.8 K" as docs/incident.md writes IOPS. */
static inline void fmt_iops(double v, char buf[32])
{
	if (v >= 1000)
		snprintf(buf, 32, "%.1f K", v / 1000);
	else
		snprintf(buf, 32, "%.0f", v);
}

static inline void fmt_us(double v, char buf[32])
{
	if (v >= 1000)
		snprintf(buf, 32, "%.2f ms", v / 1000);
	else
		snprintf(buf, 32, "%.0f us", v);
}

static inline char *json_text(json_object *v)
{
	return report_value_text(v);
}

static inline double ratio_of(double b, double a)
{
	return a > 0 ? b / a : NAN;
}

static inline void fmt_ratio(double r, char buf[32])
{
	if (isnan(r))
		snprintf(buf, 32, "-");
	else
		snprintf(buf, 32, "%.2f", r);
}

/* runs[].lat_us.KEY (SCHEMA_LAT_*) in microseconds, 0 when the run lacks it (fmt_us writes "-"). */
static inline double run_lat_us(json_object *run, const char *key)
{
	double us = 0;

	schema_run_lat_us(run, key, &us);
	return us;
}

static inline json_object *find_run(json_object *runs, const char *name)
{
	for (size_t i = 0; i < jlen(runs); i++)
		if (streq(jget_str(jarray_at(runs, i), "name"), name))
			return jarray_at(runs, i);
	return NULL;
}

static inline json_object *find_ws(json_object *sweep, uint64_t ws)
{
	for (size_t i = 0; i < jlen(sweep); i++)
		if (jget_u64(jarray_at(sweep, i), "working_set_bytes") == ws)
			return jarray_at(sweep, i);
	return NULL;
}

static inline void html_esc(FILE *f, const char *s)
{
	for (; s && *s; s++)
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default: fputc(*s, f);
		}
}

/* ---- the drives, side by side (src/report.c): report.json's drives.{old,new}, row by row ---- */

enum dkind { DK_STR, DK_BYTES, DK_TB, DK_MB, DK_NUM, DK_C, DK_B };
struct report_drive_row {
	const char *key, *label;
	enum dkind kind;
};
extern const struct report_drive_row report_drive_rows[];
extern const size_t report_drive_nrows;
/* One cell of the drives table: "unknown" where the steps did not measure it. Caller frees. */
char *report_drive_cell(json_object *side, size_t row);
/* The drives of a report: its `drives`, or (a report made before it) derived from its records;
 * *owned: the caller puts it. */
json_object *report_drives_of(json_object *rep, bool *owned);
/* One row of the comparison with a reference node's run: IOPS, p50 and p99.9 of A (the
 * reference) and B (this node) with the B/A ratios, as text for report.txt and report.html. */
void report_compare_cells(json_object *a, json_object *b, char c[9][32]);

/* ---- the charts of report.html (src/report_svg.c): each a <figure> with an inline <svg> ---- */

/* Each run's latency distribution from its histogram, the run's latency gates as vertical lines. */
void report_chart_hist(FILE *f, json_object *run, json_object *gates, json_object *ref_run);
/* The percentile curve of every run against its gates. */
void report_chart_pctl(FILE *f, json_object *runs, json_object *gates, json_object *ref_runs);
/* IOPS second by second of the timed runs (stability), the IOPS gates as lines. */
void report_chart_persec(FILE *f, json_object *runs, json_object *gates, json_object *ref_runs);
/* The --sweep: IOPS (left axis) and p50 (right axis) against the working set. */
void report_chart_sweep(FILE *f, json_object *sweep, json_object *ref_sweep);
/* Both nodes' IOPS per run as bars, reference (A) and this node (B), with B/A over each pair. */
void report_chart_compare(FILE *f, json_object *runs, json_object *ref_runs);
