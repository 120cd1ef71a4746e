/* SPDX-License-Identifier: MIT */
/* json-c helpers (src/json.c): one strict document, exact integers, tolerant lookups. */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

/* The cleanup helper of a json-c object (accepts NULL), beside those of src/util.h, which does not
 * depend on json-c: `_cleanup_json_ json_object *o = NULL;`, handed on with TAKE_PTR. */
static inline void json_object_putp(json_object **o) { if (*o) json_object_put(*o); }
#define _cleanup_json_ _cleanup_(json_object_putp)

/* Parse text as exactly one JSON document (trailing white space allowed): -EBADMSG and *why else. */
int json_parse_doc(const char *text, size_t len, json_object **out, char **why);

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
/* Typed lookups for values read from outside (records, reports): the value when it has that type,
 * else NULL, because json-c asserts when an array or object call meets another type. */
json_object *jget_array(json_object *o, const char *key);
json_object *jget_object(json_object *o, const char *key);
/* An array's length and its i-th element: 0 / NULL unless a is an array (and i is in range). */
size_t jarray_len(json_object *a);
json_object *jarray_at(json_object *a, size_t i);
