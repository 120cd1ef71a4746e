/* SPDX-License-Identifier: MIT */
/* The charts of report.html (src/report_svg.c): each a <figure> with an inline <svg>, drawn into
 * any stream (the page is built in memory). */
#pragma once

#include <json-c/json.h>
#include <stdio.h>

/* Each run's latency distribution from its histogram, the run's latency gates as vertical lines. */
void report_chart_hist(FILE *f, json_object *run, json_object *gates, json_object *ref_run);
/* The percentile curve of every run against its gates. */
void report_chart_pctl(FILE *f, json_object *runs, json_object *gates, json_object *ref_runs);
/* IOPS second by second of the timed runs (stability), the IOPS gates as lines. */
void report_chart_persec(FILE *f, json_object *runs, json_object *gates, json_object *ref_runs);
/* The --sweep: IOPS (left axis) and p50 (right axis) against the working set. */
void report_chart_sweep(FILE *f, json_object *sweep, json_object *ref_sweep);
/* The predicted chunk time per working set (report_predictions' list: the sweep's points as a
 * line, each run at its working set as a point) with the spin limit drawn as a band. */
void report_chart_prediction(FILE *f, json_object *preds);
/* accept --sustain: IOPS (left axis) and p99.9 (right axis) per interval of the hold. */
void report_chart_sustain(FILE *f, json_object *sustain);
/* Both nodes' IOPS per run as bars, reference (A) and this node (B), with B/A over each pair. */
void report_chart_compare(FILE *f, json_object *runs, json_object *ref_runs);
