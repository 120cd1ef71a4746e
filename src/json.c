/* SPDX-License-Identifier: MIT */
/* json-c helpers: one document parsed strictly, accessors that keep integers exact and tolerate
 * missing keys or values of another type. */
#include "util.h"
#include "json.h"

#include <limits.h>
#include <math.h>

/* The path ("runs[1].iops") of the first number in o that is not finite, or NULL; *text is json-c's
 * text of it. json-c reads the words NaN, Infinity and -Infinity, and 1e999 as infinity: JSON has
 * none of them, jset_double never writes them, and readers would take them for 0 (jget_double) or
 * print them as ratios. The depth is json-c's (32), so the recursion is too. */
static char *nonfinite_at(json_object *o, const char *at, const char **text)
{
	char *found = NULL;

	if (json_object_is_type(o, json_type_double)) {
		*text = json_object_get_string(o);
		return isfinite(json_object_get_double(o)) ? NULL : xstrdup(at);
	}
	if (json_object_is_type(o, json_type_array))
		for (size_t i = 0; !found && i < json_object_array_length(o); i++) {
			_cleanup_free_ char *sub = xasprintf("%s[%zu]", at, i);
			found = nonfinite_at(json_object_array_get_idx(o, i), sub, text);
		}
	if (json_object_is_type(o, json_type_object)) {
		json_object_object_foreach(o, key, v) {
			_cleanup_free_ char *sub = xasprintf("%s%s%s", at, *at ? "." : "", key);

			found = nonfinite_at(v, sub, text);
			if (found)
				break;
		}
	}
	return found;
}

/* 0, or -EBADMSG with *why naming the first number of o that is not finite, and its text. */
static int check_finite(json_object *o, char **why)
{
	const char *text = NULL;
	_cleanup_free_ char *at = nonfinite_at(o, "", &text), *shown = NULL, *tshown = NULL;

	if (!at)
		return 0;
	tshown = text_safe(text ?: "?", false);
	if (!*at)
		return set_why(why, -EBADMSG, "it is %s, not a finite number (JSON has no NaN or Infinity)", tshown);
	shown = text_safe(at, false);
	return set_why(why, -EBADMSG, "its '%s' is %s, not a finite number (JSON has no NaN or Infinity)", shown, tshown);
}

int json_parse_doc(const char *text, size_t len, json_object **out, char **why)
{
	json_tokener *tok;
	enum json_tokener_error err;
	json_object *o;
	size_t end;

	if (len > INT_MAX)
		return set_why(why, -EFBIG, "it is too big to parse");
	tok = json_tokener_new();
	if (!tok)
		return set_why(why, -ENOMEM, "%s", strerror(ENOMEM));
	o = json_tokener_parse_ex(tok, text, (int)len);
	err = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	if (!o && err == json_tokener_success)
		return set_why(why, -EBADMSG, "it is JSON null, not an object");
	if (!o || err != json_tokener_success) {
		json_object_put(o);
		return set_why(why, -EBADMSG, "it is not JSON (%s)",
			       json_tokener_error_desc(err == json_tokener_continue ? json_tokener_error_parse_eof : err));
	}
	/* one document: trailing bytes other than white space mean a damaged or concatenated file */
	for (size_t i = end; i < len; i++)
		if (!text[i] || !strchr(" \t\r\n", text[i])) {
			json_object_put(o);
			return set_why(why, -EBADMSG, "it holds more than one JSON document");
		}
	if (check_finite(o, why) < 0) {
		json_object_put(o);
		return -EBADMSG;
	}
	*out = o;
	return 0;
}

void jset_u64(json_object *o, const char *key, uint64_t v)
{
	json_object_object_add(o, key, json_object_new_uint64(v));
}

void jset_i64(json_object *o, const char *key, int64_t v)
{
	json_object_object_add(o, key, json_object_new_int64(v));
}

void jset_str(json_object *o, const char *key, const char *s)
{
	/* Names read from disks and files (partition names, labels, models, paths) may be any bytes;
	 * JSON must be UTF-8. Invalid bytes become U+FFFD, and the raw bytes stay beside it in hex
	 * (KEY_hex) so nothing is lost. */
	if (s && !utf8_valid(s)) {
		_cleanup_free_ char *clean = utf8_sanitize(s), *hex = xcalloc(strlen(s) * 2 + 1, 1);
		_cleanup_free_ char *hkey = xasprintf("%s_hex", key);

		for (size_t i = 0; s[i]; i++)
			sprintf(hex + 2 * i, "%02x", (unsigned char)s[i]);
		json_object_object_add(o, key, json_object_new_string(clean));
		json_object_object_add(o, hkey, json_object_new_string(hex));
		return;
	}
	json_object_object_add(o, key, s ? json_object_new_string(s) : NULL);
}

void jset_bool(json_object *o, const char *key, bool v)
{
	json_object_object_add(o, key, json_object_new_boolean(v));
}

/* The text of a finite double: the shortest of %.15g, %.16g, %.17g that strtod reads back as
 * the same double (json-c writes 17 digits, 0.633 as 0.63300000000000001, which jq 1.7 prints
 * as written). A whole number below 2^53 is plain digits, 100000000 and not json-c's
 * 100000000.0 nor %g's 1e+08: every integer there is exact as a double, so any reader gets the
 * same number back (json-c reads it as an int, which jget_double, the schema's SJ_NUM and the
 * report's canonical JSON take as the same number). Larger ones keep %g's exponent, 1e+20, as
 * JSON allows. */
static void double_text(double v, char buf[32])
{
	if (v == floor(v) && fabs(v) < 9007199254740992.0) {
		snprintf(buf, 32, "%.0f", v == 0 ? 0.0 : v); /* -0 is 0 for every reader but C */
		return;
	}
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(buf, 32, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			return;
	}
}

void jset_double(json_object *o, const char *key, double v)
{
	char text[32];

	/* json-c writes NaN and Infinity as bare words, which no JSON reader (jq, status) accepts:
	 * a value that is not a number is null */
	if (!isfinite(v)) {
		json_object_object_add(o, key, NULL);
		return;
	}
	double_text(v, text);
	/* the object stays a double in memory; json-c writes `text` for it */
	json_object_object_add(o, key, json_object_new_double_s(v, text));
}

json_object *jget(json_object *o, const char *key)
{
	json_object *v = NULL;

	if (!o || !json_object_object_get_ex(o, key, &v))
		return NULL;
	return v;
}

uint64_t jget_u64(json_object *o, const char *key)
{
	json_object *v = jget(o, key);
	return v ? json_object_get_uint64(v) : 0;
}

int64_t jget_i64(json_object *o, const char *key)
{
	json_object *v = jget(o, key);
	return v ? json_object_get_int64(v) : 0;
}

const char *jget_str(json_object *o, const char *key)
{
	json_object *v = jget(o, key);
	return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

bool jget_bool(json_object *o, const char *key)
{
	json_object *v = jget(o, key);
	return v ? json_object_get_boolean(v) : false;
}

double jget_double(json_object *o, const char *key)
{
	json_object *v = jget(o, key);
	return v ? json_object_get_double(v) : 0.0;
}

json_object *jget_array(json_object *o, const char *key)
{
	json_object *v = jget(o, key);
	return v && json_object_is_type(v, json_type_array) ? v : NULL;
}

json_object *jget_object(json_object *o, const char *key)
{
	json_object *v = jget(o, key);
	return v && json_object_is_type(v, json_type_object) ? v : NULL;
}

size_t jarray_len(json_object *a)
{
	return a && json_object_is_type(a, json_type_array) ? json_object_array_length(a) : 0;
}

json_object *jarray_at(json_object *a, size_t i)
{
	return i < jarray_len(a) ? json_object_array_get_idx(a, i) : NULL;
}
