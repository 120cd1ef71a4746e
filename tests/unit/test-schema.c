/* SPDX-License-Identifier: MIT */
/* src/schema.h: every fixture (built as the steps build records) passes; each declared key of the
 * wrong type is refused with a why naming it; an older swaptool's record without the optional keys,
 * or with the shapes it wrote then, passes; the accessors read what the writers wrote. */
#include "util.h"
#include "record.h"
#include "schema.h"
#include "records.h"
#include "tap.h"

#include <math.h>

/* Set the value at a declared path ("runs[].lat_us.p99_9": element 0), making what is missing. */
static void set_at(json_object *o, const char *path, json_object *v)
{
	size_t n = strcspn(path, ".");
	const char *rest = path[n] ? path + n + 1 : NULL;
	bool each = n > 2 && path[n - 2] == '[' && path[n - 1] == ']';
	_cleanup_free_ char *key = xasprintf("%.*s", (int)(each ? n - 2 : n), path);
	json_object *c;

	if (each) {
		c = jget_array(o, key);
		if (!c) {
			c = json_object_new_array();
			json_object_object_add(o, key, c);
		}
		if (rest && !json_object_is_type(jarray_at(c, 0), json_type_object))
			json_object_array_put_idx(c, 0, json_object_new_object());
		if (rest)
			set_at(jarray_at(c, 0), rest, v);
		else
			json_object_array_put_idx(c, 0, v);
		return;
	}
	if (!rest) {
		json_object_object_add(o, key, v);
		return;
	}
	c = jget_object(o, key);
	if (!c) {
		c = json_object_new_object();
		json_object_object_add(o, key, c);
	}
	set_at(c, rest, v);
}

/* A value of a type the key does not allow. */
static json_object *wrong_value(unsigned types)
{
	if (!(types & SJ_STR))
		return json_object_new_string("wrong");
	if (!(types & SJ_BOOL))
		return json_object_new_boolean(true);
	if (!(types & SJ_INT))
		return json_object_new_int(7);
	if (!(types & SJ_OBJ))
		return json_object_new_object();
	return json_object_new_array();
}

/* "runs[].lat_us.p99_9" as the why names the mutated key: "runs[0].lat_us.p99_9". */
static char *shown(const char *path)
{
	char *s = xcalloc(strlen(path) * 2 + 1, 1), *p = s;

	for (const char *q = path; *q; q++) {
		if (q[0] == '[' && q[1] == ']') {
			p += sprintf(p, "[0]");
			q++;
		} else
			*p++ = *q;
	}
	return s;
}

static void fixtures_pass(void)
{
	for (size_t i = 0; i < fixture_names_n; i++) {
		json_object *o = fixture_record(fixture_names[i]), *back = NULL;
		_cleanup_free_ char *why = NULL, *why2 = NULL;
		const char *text = json_object_to_json_string(o);

		CHECK(schema_validate(NULL, o, &why) == 0);
		if (why)
			fprintf(stderr, "fixture %s: %s\n", fixture_names[i], why);
		/* and through the parser every reader uses */
		CHECK(record_parse(text, strlen(text), NULL, &back, &why2) == 0);
		json_object_put(back);
		json_object_put(o);
	}
	/* a fixture of every step whose record others read */
	for (size_t i = 0; i < SS_N; i++) {
		json_object *o = fixture_record(schema_steps[i]);
		CHECK(o && streq(jget_str(o, "step"), schema_steps[i]));
		json_object_put(o);
	}
	CHECK(schema_step_index("accept") == SS_ACCEPT);
	CHECK(schema_step_index("status") == -1);
}

static void wrong_types(void)
{
	for (size_t i = 0; i < schema_keys_n; i++) {
		const struct schema_key *k = &schema_keys[i];
		json_object *o = fixture_record(k->step ?: "preflight");
		_cleanup_free_ char *why = NULL, *name = shown(k->path), *quoted = xasprintf("'%s'", name);
		char words[96];
		int r;

		set_at(o, k->path, wrong_value(k->types));
		r = schema_validate(NULL, o, &why);
		CHECK(r == -EBADMSG);
		CHECK(why && strstr(why, quoted) && strstr(why, schema_type_words(k->types, words)));
		if (r != -EBADMSG || !why || !strstr(why, quoted))
			fprintf(stderr, "%s %s: %d, %s\n", k->step ?: "*", k->path, r, why ?: "(no why)");
		json_object_put(o);
	}
	/* through record_parse: -EBADMSG, the key and the type named, no crash */
	{
		const char *t = "{\"schema\":\"swaptool/1\",\"step\":\"accept\",\"runs\":[{\"name\":\"rand16\",\"lat_us\":{\"p99_9\":\"610\"}}]}";
		_cleanup_free_ char *why = NULL;
		json_object *o = NULL;

		CHECK(record_parse(t, strlen(t), "accept", &o, &why) == -EBADMSG);
		CHECK(o == NULL);
		CHECK_STR(why, "its 'runs[0].lat_us.p99_9' is a string, not a number");
	}
}

static json_object *J(const char *s)
{
	return json_tokener_parse(s);
}

static void older_records(void)
{
	struct schema_archive a;
	bool run, failed;
	json_object *o;

	/* the envelope alone, of every step: every declared key is optional */
	for (size_t i = 0; i < SS_N; i++) {
		_cleanup_free_ char *t = xasprintf("{\"schema\":\"swaptool/1\",\"step\":\"%s\",\"verdict\":\"pass\"}", schema_steps[i]);
		_cleanup_free_ char *why = NULL;

		o = NULL;
		CHECK(record_parse(t, strlen(t), schema_steps[i], &o, &why) == 0);
		json_object_put(o);
	}
	/* null is absent: jset_str writes null for what is unknown */
	o = J("{\"schema\":\"swaptool/1\",\"step\":\"preflight\",\"source\":{\"serial\":null,\"size_bytes\":null}}");
	CHECK(schema_validate(NULL, o, NULL) == 0);
	json_object_put(o);
	/* a backup of an older swaptool: archive as the path, its hash and size beside it, entries listed */
	o = J("{\"schema\":\"swaptool/1\",\"step\":\"backup\",\"archive\":\"/b.tar.gz\",\"sha256\":\"ab\",\"bytes\":10,"
	      "\"entries\":[{},{},{}]}");
	CHECK(schema_validate(NULL, o, NULL) == 0);
	schema_archive(o, &a);
	CHECK_STR(a.path, "/b.tar.gz");
	CHECK_STR(a.sha256, "ab");
	CHECK_U64(a.bytes, 10);
	CHECK_U64(a.entries, 3);
	json_object_put(o);
	/* accept gates before `kind` and `engine_gates_run`: engine gates known by their name */
	o = J("{\"schema\":\"swaptool/1\",\"step\":\"accept\",\"gates\":[{\"name\":\"engine-cold\",\"status\":\"fail\"}]}");
	CHECK(schema_validate(NULL, o, NULL) == 0);
	schema_accept_engine_gates(o, &run, &failed);
	CHECK(run && failed);
	json_object_put(o);
}

static void accessors(void)
{
	json_object *pre = fixture_record("preflight"), *bk = fixture_record("backup"), *pl = fixture_record("plan");
	json_object *acc = fixture_record("accept"), *a4 = fixture_record("dgx4-accept");
	struct schema_archive a;
	size_t pass, total;
	bool run, failed;
	double us = 0;

	CHECK_STR(schema_preflight_source_path(pre), "/dev/nvme0");
	CHECK_STR(schema_preflight_source_device(pre), "/dev/nvme0n1");
	CHECK_STR(schema_preflight_target_spec(pre), "2000398934016");
	CHECK_U64(schema_preflight_source_bytes(pre), 2048408248320);
	CHECK_U64(schema_preflight_target_bytes(pre), 2000398934016);
	CHECK(!schema_preflight_path_possible(pre, SCHEMA_PATH_RAW_CLONE));
	CHECK(schema_preflight_path_possible(pre, SCHEMA_PATH_FS_CLONE));
	CHECK(schema_preflight_path_known(pre, SCHEMA_PATH_FRESH_INSTALL));
	schema_archive(bk, &a);
	CHECK_STR(a.path, "/home/nv/dgx4-swap-backup-20261104/dgx4-config.tar.gz");
	CHECK_U64(a.entries, 42);
	CHECK_U64(a.bytes, 9830);
	CHECK_U64(schema_plan_target_bytes(pl), 2000398934016);
	CHECK_STR(schema_plan_fingerprint(pl), "5a1c0ffee0ddba11");
	CHECK_STR(schema_plan_source_path(pl), "/dev/nvme0n1");
	CHECK(schema_plan_source_identity(pl) == NULL);
	CHECK(schema_run_lat_us(schema_accept_run(acc, "rand64"), SCHEMA_LAT_P99_9, &us) && us == 1500);
	CHECK(!schema_run_lat_us(schema_accept_run(acc, "rand64"), "p99.9", &us));
	CHECK(schema_accept_run(acc, "nope") == NULL);
	schema_accept_engine_gates(acc, &run, &failed);
	CHECK(run && !failed);
	schema_accept_gate_counts(acc, &pass, &total);
	CHECK(pass == 7 && total == 7);
	schema_accept_engine_gates(a4, &run, &failed);
	CHECK(!run && !failed);
	schema_accept_gate_counts(a4, &pass, &total);
	CHECK(pass == 0 && total == 5);
	/* the gate names readers look for are the ones the writer (src/io.c) makes */
	CHECK_STR(schema_gate_name(jarray_at(schema_accept_gates(acc), 3)), "rand64-" SCHEMA_GATE_P99_9);
	CHECK(schema_clone_trap_check(SCHEMA_CHECK_GPT_BACKUP_HEADER) && !schema_clone_trap_check(SCHEMA_CHECK_DRIVE_CLASS));
	/* the prediction the engine-prediction check judged: dgx4's rand16, 169,319 reads at 12.9 K */
	{
		const char *prun = NULL;
		json_object *p = schema_accept_prediction(a4, &prun);

		CHECK_STR(prun, "rand16");
		CHECK(p && p == schema_run_prediction(schema_accept_run(a4, "rand16")));
		CHECK(fabs(schema_prediction_s(p, "worst_chunk_s") - 13.126) < 1e-9);
		CHECK(fabs(schema_prediction_s(p, "cold_prompt_s") - 503.101) < 1e-9);
		CHECK_STR(schema_prediction_status(p), "fail");
		CHECK(schema_run_prediction(schema_accept_run(a4, "seq")) == NULL);
		/* hostile: a null time is a chunk that never completes, a negative one too; an unknown word
		 * is no status */
		json_object_object_add(p, "worst_chunk_s", NULL);
		CHECK(isinf(schema_prediction_s(p, "worst_chunk_s")));
		json_object_object_add(p, "worst_chunk_s", json_object_new_double(-1));
		CHECK(isinf(schema_prediction_s(p, "worst_chunk_s")));
		jset_str(p, "status", "pass\x1b[2J");
		CHECK(schema_prediction_status(p) == NULL);
		CHECK(schema_accept_prediction(pre, NULL) == NULL);
	}
	json_object_put(pre), json_object_put(bk), json_object_put(pl), json_object_put(acc), json_object_put(a4);
}

int main(void)
{
	fixtures_pass();
	wrong_types();
	older_records();
	accessors();
	return tap_done();
}
