/* SPDX-License-Identifier: MIT */
/* The small readers and number formats the report's model (src/report.c) and its renderings
 * (src/report_text.c, src/report_html.c, src/report_svg.c) share: header-only, and below them all,
 * so that the model and the renderings import it and not each other. */
#pragma once

#include <json-c/json.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "json.h"
#include "schema.h"
#include "util.h"

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

/* A predicted time as src/predict.c words it: "6.83 s", "13.1 s", "503 s"; "never" for a chunk
 * that never completes (no read did: schema_prediction_s's +inf). */
static inline void fmt_secs(double s, char buf[32])
{
	if (!isfinite(s))
		snprintf(buf, 32, "never");
	else
		snprintf(buf, 32, s < 10 ? "%.2f s" : s < 100 ? "%.1f s" : "%.0f s", s);
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
