/* SPDX-License-Identifier: MIT */
/* src/json.c: one JSON document parsed strictly, integers kept exact, lookups that tolerate missing
 * keys and values of another type, and the cleanup attribute of a json-c object. */
#include "util.h"
#include "json.h"
#include "tap.h"

#include <math.h>

static int parse(const char *text, size_t len, json_object **o, char **why)
{
	free(*why);
	*why = NULL;
	*o = NULL;
	return json_parse_doc(text, len, o, why);
}

static void parse_doc(void)
{
	_cleanup_free_ char *why = NULL;
	json_object *o = NULL;
	static const char nul[] = "{\"a\":1}\0";

	CHECK(parse("{\"a\":1}", 7, &o, &why) == 0);
	CHECK(o && jget_i64(o, "a") == 1);
	CHECK(why == NULL);
	json_object_put(o);
	/* white space after the document is allowed, and a top-level value other than an object */
	CHECK(parse("[1,2] \t\r\n", 9, &o, &why) == 0);
	CHECK_U64(jarray_len(o), 2);
	json_object_put(o);
	/* a second document, or anything else after the first: a damaged or concatenated file */
	CHECK(parse("{}{}", 4, &o, &why) == -EBADMSG);
	CHECK_STR(why, "it holds more than one JSON document");
	CHECK(o == NULL);
	CHECK(parse(nul, sizeof(nul) - 1, &o, &why) == -EBADMSG);
	CHECK_STR(why, "it holds more than one JSON document");
	CHECK(parse("null\n", 5, &o, &why) == -EBADMSG); /* "null" alone could still go on */
	CHECK_STR(why, "it is JSON null, not an object");
	/* cut short: json-c's "unexpected end of data", not "continue" */
	CHECK(parse("{\"a\":", 5, &o, &why) == -EBADMSG);
	CHECK(why && startswith(why, "it is not JSON (") && !strstr(why, "continue"));
	CHECK(parse("{\"a\" 1}", 7, &o, &why) == -EBADMSG);
	CHECK(why && startswith(why, "it is not JSON ("));
	CHECK(parse("", 0, &o, &why) == -EBADMSG);
	/* json-c reads NaN, Infinity and 1e999 (infinity); JSON has none of them, and a reader would
	 * take them for 0 or print them as ratios: refused, the first one named by its path */
	CHECK(parse("{\"runs\":[{\"iops\":1.5},{\"iops\":NaN}]}", 36, &o, &why) == -EBADMSG);
	CHECK_STR(why, "its 'runs[1].iops' is NaN, not a finite number (JSON has no NaN or Infinity)");
	CHECK(o == NULL);
	CHECK(parse("{\"a\":{\"b\":-Infinity}}", 21, &o, &why) == -EBADMSG);
	CHECK_STR(why, "its 'a.b' is -Infinity, not a finite number (JSON has no NaN or Infinity)");
	CHECK(parse("[1e999]", 7, &o, &why) == -EBADMSG);
	CHECK_STR(why, "its '[0]' is 1e999, not a finite number (JSON has no NaN or Infinity)");
	CHECK(parse("Infinity\n", 9, &o, &why) == -EBADMSG);
	CHECK_STR(why, "it is Infinity, not a finite number (JSON has no NaN or Infinity)");
	/* large finite numbers and integers stay */
	CHECK(parse("{\"a\":1e300,\"b\":-0.5,\"c\":18446744073709551615}", 45, &o, &why) == 0);
	CHECK(o && jget_double(o, "a") == 1e300);
	json_object_put(o);
	/* a NULL why is allowed */
	CHECK(json_parse_doc("x", 1, &o, NULL) == -EBADMSG);
}

static void setters_and_getters(void)
{
	_cleanup_json_ json_object *o = json_object_new_object();
	json_object *a = json_object_new_array();

	jset_u64(o, "big", UINT64_MAX);
	jset_i64(o, "neg", INT64_MIN);
	jset_str(o, "s", "dgx4");
	jset_str(o, "none", NULL);
	jset_bool(o, "yes", true);
	jset_double(o, "d", 1.5);
	jset_double(o, "nan", NAN);
	jset_double(o, "inf", INFINITY);
	/* exact, not through a double: 2^64-1 and -2^63 survive */
	CHECK_U64(jget_u64(o, "big"), UINT64_MAX);
	CHECK(jget_i64(o, "neg") == INT64_MIN);
	CHECK_STR(jget_str(o, "s"), "dgx4");
	CHECK(jget(o, "none") == NULL && json_object_object_get_ex(o, "none", NULL)); /* present, null */
	CHECK(jget_bool(o, "yes"));
	CHECK(jget_double(o, "d") == 1.5);
	/* not a number: null, which every JSON reader accepts */
	CHECK(json_object_object_get_ex(o, "nan", NULL) && jget(o, "nan") == NULL);
	CHECK(json_object_object_get_ex(o, "inf", NULL) && jget(o, "inf") == NULL);
	/* missing keys and a missing object: 0 / NULL / false */
	CHECK_U64(jget_u64(o, "missing"), 0);
	CHECK(jget_i64(NULL, "neg") == 0);
	CHECK(jget_str(o, "missing") == NULL);
	CHECK(!jget_bool(o, "missing"));
	CHECK(jget_double(o, "missing") == 0.0);
	/* a string lookup of another type is NULL, not json-c's text of it */
	CHECK(jget_str(o, "big") == NULL);
	/* typed lookups: the value only when it has that type */
	json_object_array_add(a, json_object_new_int(7));
	json_object_array_add(a, json_object_new_string("x"));
	json_object_object_add(o, "arr", a);
	json_object_object_add(o, "obj", json_object_new_object());
	CHECK(jget_array(o, "arr") == a);
	CHECK(jget_array(o, "obj") == NULL);
	CHECK(jget_object(o, "obj") != NULL);
	CHECK(jget_object(o, "arr") == NULL);
	CHECK(jget_array(o, "missing") == NULL && jget_object(NULL, "obj") == NULL);
	CHECK_U64(jarray_len(a), 2);
	CHECK(jarray_at(a, 0) && json_object_get_int(jarray_at(a, 0)) == 7);
	CHECK(jarray_at(a, 2) == NULL);
	CHECK_U64(jarray_len(jget(o, "obj")), 0); /* not an array */
	CHECK(jarray_at(jget(o, "s"), 0) == NULL);
	CHECK_U64(jarray_len(NULL), 0);
}

static void invalid_utf8(void)
{
	_cleanup_json_ json_object *o = json_object_new_object();

	/* bytes that are not UTF-8 (a partition name read from disk): U+FFFD, and the raw bytes in hex */
	jset_str(o, "name", "EFI\xff");
	CHECK_STR(jget_str(o, "name"), "EFI\xef\xbf\xbd");
	CHECK_STR(jget_str(o, "name_hex"), "454649ff");
	jset_str(o, "ok", "Ünïcode");
	CHECK_STR(jget_str(o, "ok"), "Ünïcode");
	CHECK(jget(o, "ok_hex") == NULL);
}

static void cleanup(void)
{
	json_object *o = json_object_new_object();

	json_object_get(o); /* two references */
	{
		_cleanup_json_ json_object *held = o;
		_cleanup_json_ json_object *none = NULL; /* NULL is allowed */

		(void)held;
		(void)none;
	}
	/* the block's cleanup dropped one: this put frees it */
	CHECK(json_object_put(o) == 1);
	{
		_cleanup_json_ json_object *t = json_object_new_string("kept");
		json_object *taken = TAKE_PTR(t);

		CHECK(t == NULL);
		CHECK(json_object_put(taken) == 1);
	}
}

int main(void)
{
	parse_doc();
	setters_and_getters();
	invalid_utf8();
	cleanup();
	return tap_done();
}
