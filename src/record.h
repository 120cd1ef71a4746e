/* SPDX-License-Identifier: MIT */
/* Step records (DESIGN.md §5): the JSON envelope, checks, verdicts, and the state directory. */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

enum status { ST_PASS, ST_SKIP, ST_WARN, ST_FAIL }; /* ordered by severity for the verdict */

const char *status_name(enum status st);
int status_parse(const char *s, enum status *st);

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
/* Load DIR/<step>.json; -ENOENT when the step has not run. */
int record_load(const char *state_dir, const char *step, json_object **out);

/* json-c helpers that keep integers exact and NULL strings as null. */
void jset_u64(json_object *o, const char *key, uint64_t v);
void jset_i64(json_object *o, const char *key, int64_t v);
void jset_str(json_object *o, const char *key, const char *s);
void jset_bool(json_object *o, const char *key, bool v);
void jset_double(json_object *o, const char *key, double v);
/* Lookups that tolerate missing keys: 0 / NULL / false. */
uint64_t jget_u64(json_object *o, const char *key);
int64_t jget_i64(json_object *o, const char *key);
const char *jget_str(json_object *o, const char *key);
bool jget_bool(json_object *o, const char *key);
double jget_double(json_object *o, const char *key);
json_object *jget(json_object *o, const char *key);
