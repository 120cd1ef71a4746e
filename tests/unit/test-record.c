/* SPDX-License-Identifier: MIT */
/* record.c's readers and writers: the checked record parse (schema version, envelope types, one
 * document), typed lookups that never reach json-c's asserts, and JSON kept valid (UTF-8, finite). */
#include "util.h"
#include "record.h"
#include "tap.h"

#include <math.h>

static int parse(const char *text, const char *step, char **why)
{
	json_object *o = NULL;
	int r;

	free(*why);
	*why = NULL;
	r = record_parse(text, strlen(text), step, &o, why);
	json_object_put(o);
	return r;
}

static void parsing(void)
{
	_cleanup_free_ char *why = NULL;

	CHECK(parse("{\"schema\":\"swaptool/1\",\"step\":\"accept\",\"verdict\":\"pass\",\"checks\":[]}\n", "accept", &why) == 0);
	CHECK(parse("{\"schema\":\"swaptool/1\",\"step\":\"accept\"}", NULL, &why) == 0);
	/* a newer schema is refused, naming it */
	CHECK(parse("{\"schema\":\"swaptool/9\",\"step\":\"accept\"}", "accept", &why) == -EPROTONOSUPPORT);
	CHECK(why && strstr(why, "'swaptool/9'") && strstr(why, "'swaptool/1'"));
	CHECK(parse("{\"schema\":\"swaptool/10\",\"step\":\"accept\"}", "accept", &why) == -EPROTONOSUPPORT);
	CHECK(parse("{\"schema\":\"other/1\",\"step\":\"accept\"}", "accept", &why) == -EBADMSG);
	CHECK(parse("{\"schema\":1,\"step\":\"accept\"}", "accept", &why) == -EBADMSG);
	CHECK(parse("{\"step\":\"accept\"}", "accept", &why) == -EBADMSG);
	/* the envelope's types */
	CHECK(parse("{\"schema\":\"swaptool/1\",\"step\":7}", NULL, &why) == -EBADMSG);
	CHECK(parse("{\"schema\":\"swaptool/1\",\"step\":\"backup\"}", "accept", &why) == -EBADMSG);
	CHECK(why && strstr(why, "record of 'backup', not of 'accept'"));
	CHECK(parse("{\"schema\":\"swaptool/1\",\"step\":\"accept\",\"verdict\":[1]}", NULL, &why) == -EBADMSG);
	CHECK(parse("{\"schema\":\"swaptool/1\",\"step\":\"accept\",\"checks\":\"x\"}", NULL, &why) == -EBADMSG);
	CHECK(parse("{\"schema\":\"swaptool/1\",\"step\":\"accept\",\"checks\":[{},3]}", NULL, &why) == -EBADMSG);
	CHECK(why && strstr(why, "check 2"));
	/* not one JSON object */
	CHECK(parse("[1,2]", NULL, &why) == -EBADMSG);
	CHECK(parse("null", NULL, &why) == -EBADMSG);
	CHECK(parse("", NULL, &why) == -EBADMSG);
	CHECK(parse("{\"schema\":\"swaptool/1\",", NULL, &why) == -EBADMSG);
	CHECK(parse("{\"schema\":\"swaptool/1\",\"step\":\"a\"}{}", NULL, &why) == -EBADMSG);
	CHECK(why && strstr(why, "more than one"));
	CHECK(parse("{\"schema\":\"swaptool/1\",\"step\":\"a\"} x", NULL, &why) == -EBADMSG);
}

static void lookups(void)
{
	json_object *o = json_tokener_parse("{\"a\":[1,2],\"o\":{\"k\":1},\"s\":\"x\",\"n\":3,\"z\":null}");

	CHECK(jget_array(o, "a") != NULL);
	CHECK(jget_array(o, "o") == NULL);
	CHECK(jget_array(o, "s") == NULL);
	CHECK(jget_array(o, "z") == NULL);
	CHECK(jget_array(o, "missing") == NULL);
	CHECK(jget_object(o, "o") != NULL);
	CHECK(jget_object(o, "a") == NULL);
	CHECK_U64(jarray_len(jget(o, "a")), 2);
	CHECK_U64(jarray_len(jget(o, "s")), 0); /* json_object_array_length would assert */
	CHECK_U64(jarray_len(jget(o, "o")), 0);
	CHECK_U64(jarray_len(NULL), 0);
	CHECK(jarray_at(jget(o, "a"), 1) != NULL);
	CHECK(jarray_at(jget(o, "a"), 2) == NULL);
	CHECK(jarray_at(jget(o, "n"), 0) == NULL);
	CHECK(jget_array(jget(o, "s"), "x") == NULL); /* a lookup in a non-object */
	json_object_put(o);
}

static void writing(void)
{
	json_object *o = json_object_new_object();
	const char *text;

	jset_str(o, "name", "ok\xff");
	jset_str(o, "good", "caf\xc3\xa9");
	jset_double(o, "inf", INFINITY);
	jset_double(o, "nan", NAN);
	jset_double(o, "half", 0.5);
	CHECK_STR(jget_str(o, "name"), "ok\xef\xbf\xbd");
	CHECK_STR(jget_str(o, "name_hex"), "6f6bff");
	CHECK_STR(jget_str(o, "good"), "caf\xc3\xa9");
	CHECK(jget(o, "good_hex") == NULL);
	CHECK(jget(o, "inf") == NULL && json_object_object_get_ex(o, "inf", NULL));
	CHECK(jget(o, "nan") == NULL);
	text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	CHECK(utf8_valid(text));
	CHECK(!strstr(text, "Infinity") && !strstr(text, "NaN"));
	json_object_put(o);
}

/* Doubles are written as the shortest text that reads back as the same double (json-c wrote 17
 * digits, jq 1.7 shows them as written), whole numbers as plain digits. */
static void doubles(void)
{
	static const struct {
		double v;
		const char *text;
	} cases[] = {
		{ 0.633, "0.633" },
		{ 1e8, "100000000" },
		{ 376.319, "376.319" },
		{ 0.1 + 0.2, "0.30000000000000004" },
		{ 1.0 / 3, "0.3333333333333333" },
		{ -2.5, "-2.5" },
		{ -0.0, "0" },
		{ 1e-7, "1e-07" },
		{ 9007199254740992.0, "9007199254740992" },
		{ 1e20, "1e+20" },
		{ 1.7976931348623157e308, "1.7976931348623157e+308" },
		{ 5e-324, "4.94065645841247e-324" }, /* the least denormal: 15 digits read back as it */
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		json_object *o = json_object_new_object(), *back;
		double got;

		jset_double(o, "x", cases[i].v);
		CHECK_STR(json_object_get_string(jget(o, "x")), cases[i].text);
		CHECK(json_object_is_type(jget(o, "x"), json_type_double));
		/* json-c reads it back as the same double (an int for plain digits) */
		back = json_tokener_parse(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
		CHECK(back != NULL);
		got = jget_double(back, "x");
		CHECK(memcmp(&got, &cases[i].v, sizeof(got)) == 0 || (got == 0 && cases[i].v == 0));
		json_object_put(back);
		json_object_put(o);
	}
}

int main(void)
{
	parsing();
	lookups();
	writing();
	doubles();
	return tap_done();
}
