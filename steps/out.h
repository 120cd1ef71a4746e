/* SPDX-License-Identifier: MIT */
/* The CLI's output: rendering for people (aligned tables, verdict line, progress, colour on a TTY) and for --json. */
#pragma once

#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>

#include "ctx.h"
#include "record.h"
#include "table.h"

/* A table (src/table.h) on stdout, header bold on a colour terminal; nothing in --json mode. */
void table_print(const struct ctx *ctx, const struct table *t);

/* A bold section heading. */
void out_heading(const struct ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A plain line on stdout (not in --json mode). What it prints is escaped as the tables' cells are
 * (text_safe, src/util.h), a newline included: two lines are two calls. */
void out_line(const struct ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Text of many lines made elsewhere (report.txt, metrics' exposition) on stdout, even in --json
 * mode's absence of tables; escaped as out_line is, its newlines kept. */
void out_block(const char *text);
/* "swaptool STEP: warning: ..." on stderr, escaped as out_line is: for a step whose stdout is data
 * (metrics' exposition), so that what it warns of cannot be mistaken for that data. */
void out_warning(const struct ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A word of the verdict vocabulary (verdict_word_known, src/record.h) as a person sees it, coloured
 * when allowed: "PASS" (also for status's "done"), "WARN", "TRAP", "FAIL", "skip"; any other
 * string, or none, is "UNKNOWN", never one of those. Every view's status cells and verdict lines
 * use it, so that a word means the same everywhere. */
const char *out_word(const struct ctx *ctx, const char *word);
/* out_word of a check status. */
const char *out_status(const struct ctx *ctx, enum status st);
/* The checks of a record as a table: status, id, summary. */
void out_checks(const struct ctx *ctx, json_object *record);
/* The closing verdict line: "verdict: FAIL  raw clone cannot fit; ..." */
void out_verdict(const struct ctx *ctx, json_object *record, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Exactly one JSON document on stdout. */
void out_json(json_object *o);
/* An error: JSON envelope with `error` in --json mode, else "swaptool STEP: message" on stderr. */
void out_error(const struct ctx *ctx, int code, const char *msg);

/* A live progress line on stderr, overwritten in place; only on a TTY and not --quiet. */
void out_progress(const struct ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void out_progress_end(const struct ctx *ctx);
/* "1:05" or "1:02:03" (at least 16 bytes). */
const char *out_duration(uint64_t seconds, char *buf);
/* The progress line of a phase that knows its total (bytes, seconds, blocks: any unit): the
 * message, then "42%" and, once the phase has moved, "1:23 left" predicted from its pace since
 * start_ns (mono_ns, util.h). Only on a TTY and not --quiet, like out_progress. */
void out_progress_eta(const struct ctx *ctx, uint64_t start_ns, uint64_t done, uint64_t total, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
/* A line on stderr that stays (a phase announced with its expected time); only where progress shows. */
void out_note(const struct ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
