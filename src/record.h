/* SPDX-License-Identifier: MIT */
/* Step records (docs/design.md): the JSON envelope, checks, verdicts, and the state directory. */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

#include "json.h" /* the accessors, for the users of records */

enum status { ST_PASS, ST_SKIP, ST_WARN, ST_FAIL }; /* ordered by severity for the verdict */

const char *status_name(enum status st);
int status_parse(const char *s, enum status *st);
/* Is `w` a word of the one verdict vocabulary that every step and view uses: pass, warn, trap
 * (preflight's clone trap with a path, src/report.h), fail or skip? A record from elsewhere may
 * carry any string; a view shows an unknown one as unknown, never as one of these. */
bool verdict_word_known(const char *w);

struct record {
	json_object *root;   /* the envelope; steps add their own fields to it */
	json_object *checks; /* owned by root */
	enum status worst;   /* most severe check status so far */
};

/* New record for `step` with schema, version, host and start time. */
int record_init(struct record *r, const char *step);
void record_free(struct record *r);
/* Add a check; returns its object so the caller can attach check-specific fields. */
json_object *record_check(struct record *r, const char *id, enum status st, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Stamp the finish time and the verdict (pass/warn/fail from the worst check). */
void record_finish(struct record *r);
/* The record's verdict as the step's exit code: 1 on fail, else 0. */
int record_exit_code(const struct record *r);

/* The state directory: --state, else /var/lib/swaptool as root, else $XDG_STATE_HOME/swaptool. */
int state_dir_default(char **out);
/* Write DIR/<step>.json atomically (creating DIR 0700). */
int record_save(const struct record *r, const char *state_dir);
/* The schema every record carries; a record with another (a newer swaptool's) is refused. */
#define RECORD_SCHEMA "swaptool/1"
/* The schema of report.json (src/report.c writes it); another version is refused. */
#ifndef REPORT_SCHEMA
#define REPORT_SCHEMA "swaptool-report/1"
#endif
/* The largest record read back (an accept record with a sweep is well under 1 MiB). */
#define RECORD_MAX_BYTES (64u << 20)
/* Load DIR/<step>.json; -ENOENT when the step has not run. */
int record_load(const char *state_dir, const char *step, json_object **out);
/* The same, with *why (when not NULL) saying what is wrong without the path: unreadable (not a
 * regular file, too big: see open_input), not one JSON object (-EBADMSG), another schema
 * version (-EPROTONOSUPPORT), another step's record, an envelope field of the wrong type, or a
 * key another step reads of the wrong type (src/schema.h). */
int record_load_why(const char *state_dir, const char *step, json_object **out, char **why);
/* Parse text as one record (step: NULL for any) and check its envelope as record_load_why does,
 * then the keys other steps read (schema_validate, src/schema.h): -EBADMSG naming the key. */
int record_parse(const char *text, size_t len, const char *step, json_object **out, char **why);
/* The envelope of a parsed record: an object with schema RECORD_SCHEMA, a string step (equal to
 * step when not NULL), a string verdict when present and checks an array of objects when present. */
int record_check_envelope(json_object *o, const char *step, char **why);
