/* SPDX-License-Identifier: MIT */
/* report: step judgements (the preflight clone-trap rule), verdicts, engine gates, record hashes. */
#include "tap.h"
#include "util.h"
#include "report.h"

static json_object *J(const char *text)
{
	json_object *o = json_tokener_parse(text);
	if (!o)
		abort();
	return o;
}

#define TRAP_CHECKS                                                                                   \
	"{\"id\":\"raw-clone\",\"status\":\"fail\",\"summary\":\"a raw clone cannot fit\"},"           \
	"{\"id\":\"gpt-backup-header\",\"status\":\"fail\",\"summary\":\"LBA 4,000,797,359\"},"        \
	"{\"id\":\"partition-fit\",\"status\":\"fail\",\"summary\":\"p2 ends past 3,907,029,134\"}"
#define PATHS "\"paths\":{\"raw_clone\":{\"possible\":false},\"fs_clone\":{\"possible\":true},\"fresh_install\":{\"possible\":true}}"

static enum status judge(const char *step, const char *text, char **why)
{
	json_object *o = text ? J(text) : NULL;
	enum status st = report_judge_step(step, o, why);
	json_object_put(o);
	return st;
}

static void test_judge(void)
{
	char *why = NULL;

	CHECK(judge("verify", NULL, &why) == ST_SKIP);
	CHECK_STR(why, "not run");
	free(why);
	/* the incident's preflight: fails only on the clone trap, with paths: done */
	CHECK(judge("preflight", "{\"verdict\":\"fail\",\"checks\":[" TRAP_CHECKS "]," PATHS "}", &why) == ST_PASS);
	CHECK(why && startswith(why, "clone trap found"));
	free(why);
	/* preflight's own word for it, "trap": the same judgement, and the same word back */
	CHECK(judge("preflight", "{\"verdict\":\"trap\",\"checks\":[" TRAP_CHECKS "]," PATHS "}", &why) == ST_PASS);
	CHECK(why && startswith(why, "clone trap found, a path exists"));
	free(why);
	{
		json_object *t = J("{\"verdict\":\"trap\",\"checks\":[" TRAP_CHECKS "]," PATHS "}");
		json_object *n = J("{\"verdict\":\"trap\",\"checks\":[" TRAP_CHECKS "],\"paths\":{\"fs_clone\":{\"possible\":false}}}");

		CHECK(report_preflight_trap(t));
		CHECK_STR(report_step_word("preflight", t, ST_PASS), "trap");
		CHECK_STR(report_step_word("clone", t, ST_PASS), "pass");
		/* "trap" without a possible path is no trap: a record claiming it fails */
		CHECK(!report_preflight_trap(n));
		CHECK(judge("preflight", "{\"verdict\":\"trap\",\"checks\":[" TRAP_CHECKS "],\"paths\":{\"fs_clone\":{\"possible\":false}}}",
			    &why) == ST_FAIL);
		free(why);
		json_object_put(t);
		json_object_put(n);
	}
	/* ... plus a warning elsewhere: still done */
	CHECK(judge("preflight", "{\"verdict\":\"fail\",\"checks\":[" TRAP_CHECKS ",{\"id\":\"drive-class\",\"status\":\"warn\"}]," PATHS "}",
		    &why) == ST_PASS);
	free(why);
	/* ... plus a failing health check: failed */
	CHECK(judge("preflight", "{\"verdict\":\"fail\",\"checks\":[" TRAP_CHECKS ",{\"id\":\"health\",\"status\":\"fail\",\"summary\":\"media errors\"}]," PATHS "}",
		    &why) == ST_FAIL);
	free(why);
	/* ... no possible path: failed */
	CHECK(judge("preflight", "{\"verdict\":\"fail\",\"checks\":[" TRAP_CHECKS "],\"paths\":{\"fs_clone\":{\"possible\":false}}}",
		    &why) == ST_FAIL);
	free(why);
	/* the same failing checks on another step are a failure */
	CHECK(judge("clone", "{\"verdict\":\"fail\",\"checks\":[" TRAP_CHECKS "]," PATHS "}", &why) == ST_FAIL);
	CHECK_STR(why, "raw-clone: a raw clone cannot fit");
	free(why);
	CHECK(judge("verify", "{\"verdict\":\"warn\",\"checks\":[{\"id\":\"fstab\",\"status\":\"warn\",\"summary\":\"x\"}]}", &why) == ST_WARN);
	CHECK_STR(why, "fstab: x");
	free(why);
	/* an accept record that says pass while an engine gate failed */
	CHECK(judge("accept", "{\"verdict\":\"pass\",\"gates\":[{\"name\":\"engine-bench\",\"status\":\"fail\"}]}", &why) == ST_FAIL);
	free(why);
	CHECK(judge("backup", "{\"verdict\":\"pass\",\"entries\":42,\"archive\":{\"path\":\"/b.tar.gz\",\"bytes\":9830,\"sha256\":\"abcdef0123456789ff\"}}",
		    &why) == ST_PASS);
	CHECK_STR(why, "'/b.tar.gz': 42 entries, 9,830 bytes, sha256 abcdef0123456789...");
	free(why);
}

static void test_engine(void)
{
	bool run, failed;
	json_object *o;

	o = J("{\"engine_gates_run\":false,\"gates\":[{\"name\":\"engine-x\",\"status\":\"pass\"}]}");
	schema_accept_engine_gates(o, &run, &failed);
	CHECK(!run && !failed);
	json_object_put(o);
	/* without the flag: inferred from engine-* gates */
	o = J("{\"gates\":[{\"name\":\"rand16-iops\",\"status\":\"pass\"},{\"name\":\"engine-cold\",\"status\":\"fail\"}]}");
	schema_accept_engine_gates(o, &run, &failed);
	CHECK(run && failed);
	json_object_put(o);
	o = J("{\"gates\":[{\"name\":\"rand16-iops\",\"status\":\"pass\"}]}");
	schema_accept_engine_gates(o, &run, &failed);
	CHECK(!run && !failed);
	json_object_put(o);
	CHECK(report_gate_of_run("rand16-p50", "rand16"));
	CHECK(!report_gate_of_run("rand160-p50", "rand16"));
	CHECK(report_gate_of_run("seq", "seq"));
}

static enum report_verdict verdict_of(const char *steps, char **why, json_object **missing)
{
	json_object *o = J(steps);
	enum report_verdict v;

	*missing = json_object_new_array();
	v = report_verdict(o, *missing, why);
	json_object_put(o);
	return v;
}

/* An accept record's evidence: a run and a harness gate judged on it. */
#define RUNS "\"runs\":[{\"name\":\"rand16\"}]"
#define HARNESS "{\"name\":\"rand16-iops\",\"status\":\"pass\",\"run\":\"rand16\"}"
/* preflight's target and the drive accept measured: the same serial */
#define TARGET "\"target\":{\"path\":\"/dev/nvme1n1\",\"serial\":\"S1\",\"size_bytes\":2000398934016}"
#define DRIVE "\"drive\":{\"disk\":\"nvme0n1\",\"serial\":\"S1\",\"size_bytes\":2000398934016}"

static void test_verdict(void)
{
	json_object *missing = NULL;
	char *why = NULL;
	const char *pass = "{\"verdict\":\"pass\",\"checks\":[]}";
	_cleanup_free_ char *all = xasprintf(
		"{\"preflight\":{\"verdict\":\"fail\",\"checks\":[" TRAP_CHECKS "]," PATHS "," TARGET "},\"backup\":%s,\"verify\":%s,"
		"\"accept\":{\"verdict\":\"pass\",\"engine_gates_run\":true," RUNS "," DRIVE ",\"gates\":[" HARNESS ",{\"name\":\"engine-a\",\"status\":\"pass\"}]}}",
		pass, pass);
	_cleanup_free_ char *noengine = xasprintf(
		"{\"preflight\":{\"verdict\":\"pass\",\"checks\":[]," TARGET "},\"backup\":%s,\"verify\":%s,\"accept\":{\"verdict\":\"pass\",\"engine_gates_run\":false," RUNS "," DRIVE ",\"gates\":[" HARNESS "]}}",
		pass, pass);
	_cleanup_free_ char *failed = xasprintf(
		"{\"preflight\":%s,\"verify\":%s,\"accept\":{\"verdict\":\"fail\",\"checks\":[{\"id\":\"rand16-iops\",\"status\":\"fail\",\"summary\":\"12.9 K\"}]}}",
		pass, pass);
	_cleanup_free_ char *planfail = xasprintf(
		"{\"preflight\":{\"verdict\":\"pass\",\"checks\":[]," TARGET "},\"backup\":%s,\"verify\":%s,\"plan\":{\"verdict\":\"fail\"},"
		"\"accept\":{\"verdict\":\"pass\"," RUNS "," DRIVE ",\"gates\":[" HARNESS ",{\"name\":\"engine-a\",\"status\":\"pass\"}]}}",
		pass, pass);
	/* issue 27: "pass" with nothing under it, and two gates of one name */
	_cleanup_free_ char *empty = xasprintf(
		"{\"preflight\":%s,\"backup\":%s,\"verify\":%s,\"accept\":{\"verdict\":\"pass\",\"engine_gates_run\":true,"
		"\"runs\":[],\"gates\":[],\"checks\":[]}}",
		pass, pass, pass);
	_cleanup_free_ char *twice = xasprintf(
		"{\"preflight\":%s,\"backup\":%s,\"verify\":%s,\"accept\":{\"verdict\":\"pass\"," RUNS ",\"gates\":["
		"{\"name\":\"rand16-iops\",\"status\":\"pass\",\"run\":\"rand16\"},{\"name\":\"rand16-iops\",\"status\":\"fail\"},"
		"{\"name\":\"engine-a\",\"status\":\"pass\"}]}}",
		pass, pass, pass);

	CHECK(verdict_of(all, &why, &missing) == RV_ACCEPTED);
	CHECK(json_object_array_length(missing) == 0);
	free(why);
	json_object_put(missing);

	CHECK(verdict_of(noengine, &why, &missing) == RV_INCOMPLETE);
	CHECK_STR(why, "missing: accept engine gates (cold-boot 157 K prompt, full bench)");
	free(why);
	json_object_put(missing);

	/* rejected wins over incomplete (backup is also missing here) */
	CHECK(verdict_of(failed, &why, &missing) == RV_REJECTED);
	CHECK_STR(why, "accept failed: rand16-iops: 12.9 K");
	CHECK(json_object_array_length(missing) == 1);
	free(why);
	json_object_put(missing);

	CHECK(verdict_of(planfail, &why, &missing) == RV_ACCEPTED);
	free(why);
	json_object_put(missing);

	/* issue 31: a pass of another drive than preflight's target is no acceptance of the target */
	{
		_cleanup_free_ char *other = xstrdup(all);
		char *sn = strstr(strstr(other, "\"drive\""), "\"S1\"");

		sn[2] = '2';
		CHECK(verdict_of(other, &why, &missing) == RV_INCOMPLETE);
		CHECK(strstr(why, "missing: accept of the target drive; accept measured 'nvme0n1'") == why);
		CHECK(strstr(why, "preflight planned for '/dev/nvme1n1'") && strstr(why, "their serials differ") &&
		      strstr(why, "swaptool accept /dev/nvme1n1"));
		free(why);
		json_object_put(missing);
	}

	CHECK(verdict_of(empty, &why, &missing) == RV_REJECTED);
	CHECK_STR(why, "accept failed: no evidence: no runs: a verdict without measurements; run accept again with "
		       "the profile's runs and gates");
	free(why);
	json_object_put(missing);

	CHECK(verdict_of(twice, &why, &missing) == RV_REJECTED);
	CHECK_STR(why, "accept failed: no evidence: two gates are named 'rand16-iops': one hides the other; run "
		       "accept again with the profile's runs and gates");
	free(why);
	json_object_put(missing);

	CHECK(verdict_of("{}", &why, &missing) == RV_INCOMPLETE);
	CHECK_STR(why, "missing: preflight, backup, verify, accept");
	free(why);
	json_object_put(missing);
	CHECK_STR(report_verdict_name(RV_REJECTED), "rejected");
}

static void test_hashes(void)
{
	/* doubles, escapes and key order survive a pretty print and a re-parse */
	json_object *rec = J("{\"step\":\"accept\",\"iops\":68.799999999999997,\"x\":1.50,\"s\":\"a/b\\u00e9\\u0001\",\"z\":1e3}");
	json_object *report = json_object_new_object(), *steps = json_object_new_object(), *records = json_object_new_array();
	json_object *e = json_object_new_object(), *back;
	char h1[65], h2[65];
	char *why = NULL;

	CHECK(report_record_sha256(rec, h1) == 0);
	back = J(json_object_to_json_string_ext(rec, JSON_C_TO_STRING_PRETTY));
	CHECK(report_record_sha256(back, h2) == 0);
	CHECK_STR(h2, h1);
	json_object_put(back);

	jset_str(e, "step", "accept");
	jset_str(e, "sha256", h1);
	json_object_array_add(records, e);
	json_object_object_add(steps, "accept", rec);
	json_object_object_add(report, "steps", steps);
	json_object_object_add(report, "records", records);
	jset_str(report, "record_hash", REPORT_RECORD_HASH);
	CHECK(report_check_hashes(report, &why) == 0);
	CHECK_STR(why, "1 record hashes match");
	free(why);
	jset_double(rec, "iops", 999);
	CHECK(report_check_hashes(report, &why) == -EBADMSG);
	free(why);
	jset_str(report, "record_hash", "md5-of-something");
	CHECK(report_check_hashes(report, &why) == -EBADMSG);
	CHECK(why && strstr(why, "unknown record hash"));
	free(why);
	json_object_put(report);
}

/* The canonical text does not depend on how the JSON was written: jq's, Python's and json-c's
 * serialisations of one record hash the same. */
static void test_canonical(void)
{
	static const struct {
		const char *a, *b;
	} same[] = {
		/* key order, whitespace, escapes */
		{ "{\"b\":1,\"a\":[true,false,null]}", "{ \"a\" : [ true , false , null ] ,\n \"b\" : 1 }" },
		{ "{\"s\":\"a/b\\u00e9\\u0001\\t\"}", "{\"s\":\"a\\/b\xc3\xa9\\u0001\\u0009\"}" },
		/* the same double written differently: json-c keeps 17 digits, jq prints the shortest */
		{ "{\"x\":68.799999999999997}", "{\"x\":68.8}" },
		{ "{\"x\":1e3}", "{\"x\":1000}" },
		{ "{\"x\":1.50}", "{\"x\":1.5}" },
		{ "{\"x\":15.0}", "{\"x\":15}" },
		/* a 64-bit integer against jq 1.6's double of it */
		{ "{\"seed\":18446744073709551615}", "{\"seed\":1.8446744073709552e+19}" },
		{ "{\"x\":-0.0}", "{\"x\":0}" },
	};
	static const struct {
		const char *in, *want;
	} text[] = {
		{ "{\"z\":1e21,\"y\":1e-7,\"x\":0.000001,\"w\":1.2345678901234568e20,\"v\":-2.5}",
		  "{\"v\":-2.5,\"w\":123456789012345680000,\"x\":0.000001,\"y\":1e-7,\"z\":1e+21}" },
		{ "{\"k\":\"q\\\"b\\\\s\\n\\u001f\\u007f\"}", "{\"k\":\"q\\\"b\\\\s\\n\\u001f\x7f\"}" },
		{ "[2048408248320,4000797359,-48009314304,0.1]", "[2048408248320,4000797359,-48009314304,0.1]" },
	};
	char h1[65], h2[65];

	for (size_t i = 0; i < sizeof(same) / sizeof(same[0]); i++) {
		json_object *a = J(same[i].a), *b = J(same[i].b);
		_cleanup_free_ char *ta = report_canonical_json(a), *tb = report_canonical_json(b);

		CHECK_STR(ta, tb);
		CHECK(report_record_sha256(a, h1) == 0 && report_record_sha256(b, h2) == 0);
		CHECK_STR(h1, h2);
		json_object_put(a);
		json_object_put(b);
	}
	for (size_t i = 0; i < sizeof(text) / sizeof(text[0]); i++) {
		json_object *a = J(text[i].in);
		_cleanup_free_ char *t = report_canonical_json(a);

		CHECK_STR(t, text[i].want);
		json_object_put(a);
	}
	/* a record written now (jset_double's shortest text), the same read back, and the one json-c
	 * wrote before (17 digits, whole numbers with .0) hash the same: verify-report recomputes the
	 * hashes of old and new records alike from their parsed values */
	{
		json_object *now = json_object_new_object(), *back, *old;

		jset_double(now, "ratio", 0.633);
		jset_double(now, "bytes", 1e8);
		jset_double(now, "mb_s", 376.319);
		back = J(json_object_to_json_string_ext(now, JSON_C_TO_STRING_PLAIN));
		old = J("{\"ratio\":0.63300000000000001,\"bytes\":100000000.0,\"mb_s\":376.31900000000002}");
		CHECK_STR(json_object_to_json_string_ext(now, JSON_C_TO_STRING_PLAIN),
			  "{\"ratio\":0.633,\"bytes\":100000000,\"mb_s\":376.319}");
		CHECK(report_record_sha256(now, h1) == 0 && report_record_sha256(back, h2) == 0);
		CHECK_STR(h1, h2);
		CHECK(report_record_sha256(old, h2) == 0);
		CHECK_STR(h1, h2);
		json_object_put(now);
		json_object_put(back);
		json_object_put(old);
	}
	/* a changed value is a changed hash */
	{
		json_object *a = J("{\"iops\":118200.5}"), *b = J("{\"iops\":118200.6}");
		CHECK(report_record_sha256(a, h1) == 0 && report_record_sha256(b, h2) == 0);
		CHECK(strcmp(h1, h2) != 0);
		json_object_put(a);
		json_object_put(b);
	}
}

/* The new drive: accept's device, never preflight's --target-model; preflight's target health only
 * when preflight read that same drive (same serial). */
static void test_drives(void)
{
	static const char *pre_named = "{\"step\":\"preflight\",\"source\":{\"path\":\"/dev/nvme0\",\"model\":\"XG7000-2TB 2242\","
		"\"serial\":\"KS1\",\"firmware\":\"GT0d9d63\",\"size_bytes\":2048408248320,\"lba_size\":512},"
		"\"source_identity\":{\"nvme\":true,\"from\":\"dumps\",\"hmb_mb\":40,\"smart\":{\"power_on_hours\":96,\"media_errors\":0},"
		"\"class\":{\"verdict\":\"avoid\",\"reason\":\"DRAM-less\"},\"error_log\":{\"entries\":3},"
		"\"namespaces\":[{\"nsid\":1,\"size_bytes\":2048408248320,\"lba_size\":512,\"lba_format\":0,\"judged\":true}]},"
		"\"target_identity\":{\"nvme\":false,\"model\":\"Corsair MP600 Mini 2TB\",\"class\":{\"verdict\":\"avoid\"}}}";
	static const char *pre_read = "{\"step\":\"preflight\",\"target_identity\":{\"nvme\":true,\"serial\":\"NEW1\",\"model\":\"Samsung 990 PRO 2TB\","
		"\"hmb_mb\":0,\"smart\":{\"power_on_hours\":5},\"class\":{\"verdict\":\"good\",\"reason\":\"DRAM\"}}}";
	static const char *acc = "{\"step\":\"accept\",\"target\":{\"kind\":\"file\",\"lba_size\":4096},\"drive\":{\"disk\":\"nvme1n1\","
		"\"controller\":\"nvme1\",\"model\":\"Samsung 990 PRO 2TB\",\"serial\":\"NEW1\",\"firmware\":\"4B2QJXD7\","
		"\"size_bytes\":2000398934016}}";
	char buf[1024];
	json_object *rep, *d;

	/* --target-model only: the new drive is what accept read, its health unknown */
	snprintf(buf, sizeof(buf), "{\"steps\":{\"preflight\":%s,\"accept\":%s}}", pre_named, acc);
	rep = J(buf);
	report_add_drives(rep, NULL);
	d = jget(jget(rep, "drives"), "new");
	CHECK_STR(jget_str(d, "model"), "Samsung 990 PRO 2TB");
	CHECK_STR(jget_str(d, "serial"), "NEW1");
	CHECK_STR(jget_str(d, "controller"), "nvme1");
	CHECK(jget_u64(d, "namespace_bytes") == 2000398934016ULL);
	CHECK(jget(d, "power_on_hours") == NULL && jget(d, "hmb_mb") == NULL && jget(d, "class") == NULL);
	CHECK(jget(d, "lba_size") == NULL); /* a file's 4096 is not the device's LBA size */
	d = jget(jget(rep, "drives"), "old");
	CHECK_STR(jget_str(d, "model"), "XG7000-2TB 2242");
	/* a temperature reads as preflight writes it: "42 °C" */
	jset_i64(d, "temperature_c", 42);
	for (size_t row = 0; row < report_drive_nrows; row++)
		if (streq(report_drive_rows[row].key, "temperature_c")) {
			char *cell = report_drive_cell(d, row);
			CHECK_STR(cell, "42 °C");
			free(cell);
		}
	CHECK(jget_u64(d, "hmb_mb") == 40 && jget_u64(d, "power_on_hours") == 96 && jget_u64(d, "error_log_entries") == 3);
	CHECK_STR(jget_str(d, "class"), "avoid");
	CHECK(jget(d, "lba_format") && jget_u64(d, "lba_format") == 0);
	json_object_put(rep);

	/* preflight read the same drive (serial NEW1): its health counts */
	snprintf(buf, sizeof(buf), "{\"steps\":{\"preflight\":%s,\"accept\":%s}}", pre_read, acc);
	rep = J(buf);
	report_add_drives(rep, NULL);
	d = jget(jget(rep, "drives"), "new");
	CHECK(jget_u64(d, "power_on_hours") == 5);
	CHECK_STR(jget_str(d, "class"), "good");
	CHECK(jget(d, "hmb_mb") && jget_u64(d, "hmb_mb") == 0);
	json_object_put(rep);

	/* ... another drive (serial differs): not this one's health */
	snprintf(buf, sizeof(buf), "{\"steps\":{\"preflight\":%s,\"accept\":%s}}", pre_read, acc);
	*strstr(buf, "NEW1") = 'X';
	rep = J(buf);
	report_add_drives(rep, NULL);
	d = jget(jget(rep, "drives"), "new");
	CHECK(jget(d, "power_on_hours") == NULL && jget(d, "class") == NULL);
	CHECK_STR(jget_str(d, "serial"), "NEW1");
	json_object_put(rep);

	/* no accept: nothing measured the new drive */
	snprintf(buf, sizeof(buf), "{\"steps\":{\"preflight\":%s}}", pre_named);
	rep = J(buf);
	report_add_drives(rep, NULL);
	d = jget(jget(rep, "drives"), "new");
	CHECK(jget(d, "model") == NULL && jget(d, "from") == NULL);
	json_object_put(rep);
}

int main(void)
{
	test_drives();
	test_judge();
	test_engine();
	test_verdict();
	test_hashes();
	test_canonical();
	return tap_done();
}
