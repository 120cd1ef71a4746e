/* SPDX-License-Identifier: MIT */
/* The engine prediction against docs/incident.md's arithmetic: reads per chunk, chunk times, the worst window, status. */
#include "util.h"
#include "predict.h"
#include "profile.h"
#include "record.h"
#include "tap.h"

#include <math.h>

static bool near(double got, double want, double tol)
{
	if (fabs(got - want) <= tol)
		return true;
	fprintf(stderr, "  got %.6f, want %.6f +- %g\n", got, want, tol);
	return false;
}

/* The write-up's own figures: 6.49 M reads for 157 K tokens, 4096-token chunks of 4 KiB reads. */
static void incident_table(void)
{
	struct predict_workload w;
	uint64_t reads, bytes, cold;
	double s;

	predict_workload_defaults(&w);
	CHECK(predict_workload_check(&w, NULL) == 0);
	CHECK_U64(w.measured_reads, 6490000);
	CHECK_U64(w.measured_tokens, 157000);
	CHECK_U64(w.chunk_tokens, 4096);
	CHECK_U64(w.read_bytes, 4096);
	CHECK_U64(w.spin_low_s, 8);
	CHECK_U64(w.spin_high_s, 20);
	CHECK_U64(w.cold_prompt_tokens, 157000);
	/* "about 41 Engram reads per token" */
	CHECK(near(predict_reads_per_token(&w), 41.34, 0.01));
	/* "about 170 K random 4 KiB reads": ceil(4096 * 6,490,000 / 157,000) */
	CHECK(predict_reads_per_chunk(&w, &reads) == 0);
	CHECK_U64(reads, 169319);
	CHECK(reads > 165000 && reads < 175000);
	/* "about 680 MB": 170 K reads of 4 KB; exactly 169,319 * 4096 */
	CHECK(predict_chunk_bytes(&w, &bytes) == 0);
	CHECK_U64(bytes, 169319ULL * 4096);
	CHECK(bytes > 660000000 && bytes < 700000000);
	CHECK(predict_cold_prompt_reads(&w, &cold) == 0);
	CHECK_U64(cold, 6490000);

	/* 12.9 K IOPS (XG7000, 98 GB, 16 in flight): about 13 s */
	CHECK(predict_chunk_s(&w, 12900, &s) == 0);
	CHECK(near(s, 13.0, 0.5));
	CHECK(predict_status_of(&w, s) == PREDICT_FAIL);
	/* 24.8 K (64 in flight): about 7 s, inside 8 s by less than 2x */
	CHECK(predict_chunk_s(&w, 24800, &s) == 0);
	CHECK(near(s, 7.0, 0.5));
	CHECK(predict_status_of(&w, s) == PREDICT_WARN);
	/* 80 K (the healthy reference): about 2 s */
	CHECK(predict_chunk_s(&w, 80000, &s) == 0);
	CHECK(near(s, 2.0, 0.2));
	CHECK(predict_status_of(&w, s) == PREDICT_PASS);
	/* 204 K: under 1 s */
	CHECK(predict_chunk_s(&w, 204000, &s) == 0);
	CHECK(s < 1.0 && s > 0.8);
	CHECK(predict_status_of(&w, s) == PREDICT_PASS);
	/* the cold prompt at 12.9 K: 6.49 M / 12.9 K = 503 s */
	CHECK(predict_cold_prompt_s(&w, 12900, &s) == 0);
	CHECK(near(s, 503.1, 0.1));
}

static void worst_window(void)
{
	struct predict_workload w;
	_cleanup_free_ char *why = NULL;
	double worst, at;

	predict_workload_defaults(&w);
	/* steady 80 K: every stretch of one chunk is 169,319 / 80,000 s */
	{
		uint64_t ps[10];

		for (size_t i = 0; i < ARRAY_SIZE(ps); i++)
			ps[i] = 80000;
		CHECK(predict_worst_chunk_s(&w, ps, ARRAY_SIZE(ps), &worst, &at, &why) == 0);
		CHECK(near(worst, 169319.0 / 80000, 1e-9));
	}
	/* 80 K with a dip: seconds 4-6 at 10 K. The slowest stretch holding 169,319 reads covers the
	 * dip (30,000) and 139,319 reads at 80 K around it: 3 + 139,319 / 80,000 = 4.74 s, where the
	 * mean (59 K over the 10 s) says 2.9 s. */
	{
		uint64_t ps[10] = { 80000, 80000, 80000, 80000, 10000, 10000, 10000, 80000, 80000, 80000 };
		double mean_s;

		CHECK(predict_worst_chunk_s(&w, ps, ARRAY_SIZE(ps), &worst, &at, &why) == 0);
		CHECK(near(worst, 3 + 139319.0 / 80000, 1e-9));
		/* a start on a boundary before the dip or an end on one after it: both give 4.74 s */
		CHECK(at >= 4 - 139319.0 / 80000 - 1e-9 && at <= 4 + 1e-9);
		CHECK(predict_chunk_s(&w, 590000.0 / 10, &mean_s) == 0);
		CHECK(worst > mean_s + 1.5);
	}
	/* a stall: the seconds without reads lie wholly inside the worst stretch */
	{
		uint64_t ps[7] = { 100000, 100000, 0, 0, 0, 100000, 100000 };

		CHECK(predict_worst_chunk_s(&w, ps, ARRAY_SIZE(ps), &worst, &at, &why) == 0);
		CHECK(near(worst, 3 + 169319.0 / 100000, 1e-9));
		CHECK(predict_status_of(&w, worst) == PREDICT_WARN);
	}
	/* the slowest stretch starts mid-second and ends on a boundary: a slow second 1 (50,000) is
	 * best padded with the 119,319 other reads from the slower side, second 0 at 200 K (0.597 s),
	 * not second 2 at 1 M (0.119 s). No start on a boundary finds it (from 0: 0.85 s, from 1:
	 * 1.12 s); the end on boundary 2 does. */
	{
		uint64_t ps[4] = { 200000, 50000, 1000000, 1000000 };

		CHECK(predict_worst_chunk_s(&w, ps, ARRAY_SIZE(ps), &worst, &at, &why) == 0);
		CHECK(near(worst, 1 + 119319.0 / 200000, 1e-9));
		CHECK(near(at, 1 - 119319.0 / 200000, 1e-9));
	}
	/* its mirror: starts on boundary 1, ends mid-second */
	{
		uint64_t ps[4] = { 1000000, 50000, 200000, 200000 };

		CHECK(predict_worst_chunk_s(&w, ps, ARRAY_SIZE(ps), &worst, &at, &why) == 0);
		CHECK(near(worst, 1 + 119319.0 / 200000, 1e-9));
		CHECK(near(at, 1, 1e-9));
	}
	/* exactly one chunk in the whole series: the whole series */
	{
		uint64_t ps[3] = { 69319, 50000, 50000 };

		CHECK(predict_worst_chunk_s(&w, ps, ARRAY_SIZE(ps), &worst, &at, &why) == 0);
		CHECK(near(worst, 3, 1e-9));
		CHECK(near(at, 0, 1e-9));
	}
	/* shorter than one chunk: said so, not guessed */
	{
		uint64_t ps[15];

		for (size_t i = 0; i < ARRAY_SIZE(ps); i++)
			ps[i] = 5000;
		CHECK(predict_worst_chunk_s(&w, ps, ARRAY_SIZE(ps), &worst, &at, &why) == -ENODATA);
		CHECK(why && strstr(why, "75000 reads") && strstr(why, "169319"));
	}
	CHECK(predict_worst_chunk_s(&w, NULL, 0, &worst, &at, &why) == -ENODATA);
	CHECK(why && strstr(why, "no per-second counts"));
	/* counts whose sum passes 64 bits */
	{
		uint64_t ps[2] = { UINT64_MAX, 2 };

		CHECK(predict_worst_chunk_s(&w, ps, ARRAY_SIZE(ps), &worst, &at, &why) == -EOVERFLOW);
	}
}

static void status_boundaries(void)
{
	struct predict_workload w;

	predict_workload_defaults(&w);
	/* fail past the low end (8 s), warn under 2x margin (past 4 s), else pass */
	CHECK(predict_status_of(&w, 8.0) == PREDICT_WARN);
	CHECK(predict_status_of(&w, 8.001) == PREDICT_FAIL);
	CHECK(predict_status_of(&w, 4.0) == PREDICT_PASS);
	CHECK(predict_status_of(&w, 4.001) == PREDICT_WARN);
	CHECK(predict_status_of(&w, 0.5) == PREDICT_PASS);
	CHECK(predict_status_of(&w, INFINITY) == PREDICT_FAIL);
	CHECK(predict_status_of(&w, NAN) == PREDICT_FAIL);
	CHECK_STR(predict_status_name(PREDICT_PASS), "pass");
	CHECK_STR(predict_status_name(PREDICT_WARN), "warn");
	CHECK_STR(predict_status_name(PREDICT_FAIL), "fail");
	/* a spin limit moved by the profile moves the boundaries */
	w.spin_low_s = 20;
	CHECK(predict_status_of(&w, 13.1) == PREDICT_WARN);
	CHECK(predict_status_of(&w, 9.9) == PREDICT_PASS);
}

static void bad_inputs(void)
{
	struct predict_workload w;
	uint64_t n;
	double s;
	_cleanup_free_ char *why = NULL;

	predict_workload_defaults(&w);
	/* IOPS 0: the chunk never completes; NaN, negative, infinite: refused */
	CHECK(predict_chunk_s(&w, 0, &s) == 0);
	CHECK(isinf(s));
	CHECK(predict_status_of(&w, s) == PREDICT_FAIL);
	CHECK(predict_chunk_s(&w, NAN, &s) == -EINVAL);
	CHECK(predict_chunk_s(&w, -1, &s) == -EINVAL);
	CHECK(predict_chunk_s(&w, INFINITY, &s) == -EINVAL);
	CHECK(predict_cold_prompt_s(&w, NAN, &s) == -EINVAL);
	/* a workload with a zero or the spin limit's ends swapped */
	w.measured_tokens = 0;
	CHECK(predict_workload_check(&w, &why) == -EINVAL);
	CHECK(predict_reads_per_chunk(&w, &n) == -EINVAL);
	CHECK(isnan(predict_reads_per_token(&w)));
	predict_workload_defaults(&w);
	w.spin_low_s = 30;
	CHECK(predict_workload_check(&w, &why) == -EINVAL);
	CHECK(why && strstr(why, "30-20"));
	CHECK(predict_workload_check(NULL, NULL) == -EINVAL);
	/* products past 64 bits */
	predict_workload_defaults(&w);
	w.chunk_tokens = UINT64_MAX / 2;
	CHECK(predict_reads_per_chunk(&w, &n) == -EOVERFLOW);
	predict_workload_defaults(&w);
	w.read_bytes = UINT64_MAX / 1000;
	CHECK(predict_chunk_bytes(&w, &n) == -EOVERFLOW);
}

static void engine_and_json(void)
{
	struct predict_workload w;
	struct prediction p;
	_cleanup_free_ char *why = NULL;
	uint64_t ps[15];
	json_object *o, *run;

	predict_workload_defaults(&w);
	/* the XG7000's 16-in-flight run: 12.9 K each second */
	for (size_t i = 0; i < ARRAY_SIZE(ps); i++)
		ps[i] = 12900;
	CHECK(predict_engine(&w, 12900, ps, ARRAY_SIZE(ps), &p, &why) == 0);
	CHECK(p.worst_from_series);
	CHECK(near(p.worst_chunk_s, 169319.0 / 12900, 1e-9));
	CHECK(p.status == PREDICT_FAIL);
	CHECK(near(p.margin, 8 / (169319.0 / 12900), 1e-9));
	CHECK(p.summary && strstr(p.summary, "collective timeout"));
	o = prediction_to_json(&w, &p);
	CHECK_U64(jget_u64(o, "reads_per_chunk"), 169319);
	CHECK_U64(jget_u64(o, "chunk_bytes"), 693530624);
	CHECK_U64(jget_u64(o, "chunk_tokens"), 4096);
	CHECK_U64(jget_u64(o, "cold_prompt_tokens"), 157000);
	CHECK_U64(jget_u64(o, "cold_prompt_reads"), 6490000);
	CHECK(near(jget_double(o, "chunk_s"), 13.126, 0.001));
	CHECK(near(jget_double(o, "worst_chunk_s"), 13.126, 0.001));
	CHECK(near(jget_double(o, "cold_prompt_s"), 503.101, 0.001));
	CHECK(near(jget_double(o, "reads_per_token"), 41.34, 1e-9));
	CHECK_U64(jget_u64(jget(o, "spin_limit_s"), "low"), 8);
	CHECK_U64(jget_u64(jget(o, "spin_limit_s"), "high"), 20);
	CHECK(near(jget_double(o, "margin"), 0.60, 1e-9));
	CHECK_STR(jget_str(o, "status"), "fail");
	CHECK_STR(jget_str(o, "worst_chunk_basis"), "per_second_iops");
	CHECK(jget_str(o, "summary") != NULL);
	json_object_put(o);
	prediction_clear(&p);

	/* a series shorter than one chunk: the mean's chunk, and the summary says why */
	CHECK(predict_engine(&w, 80000, ps, 2, &p, &why) == 0);
	CHECK(!p.worst_from_series);
	CHECK(near(p.worst_chunk_s, 169319.0 / 80000, 1e-9));
	CHECK(p.status == PREDICT_PASS);
	CHECK(p.summary && strstr(p.summary, "fewer than one chunk"));
	o = prediction_to_json(&w, &p);
	CHECK_STR(jget_str(o, "worst_chunk_basis"), "mean_iops");
	json_object_put(o);
	prediction_clear(&p);

	/* IOPS 0 and no series: fail, the times null in JSON (never "Infinity") */
	CHECK(predict_engine(&w, 0, NULL, 0, &p, &why) == 0);
	CHECK(p.status == PREDICT_FAIL);
	CHECK(p.margin == 0);
	o = prediction_to_json(&w, &p);
	CHECK(jget(o, "chunk_s") == NULL && jget(o, "worst_chunk_s") == NULL && jget(o, "cold_prompt_s") == NULL);
	CHECK(!strstr(json_object_to_json_string(o), "nfinity"));
	CHECK_STR(jget_str(o, "status"), "fail");
	json_object_put(o);
	prediction_clear(&p);
	CHECK(predict_engine(&w, NAN, NULL, 0, &p, &why) == -EINVAL);

	/* from a run's record object, as accept writes it */
	run = json_tokener_parse("{\"iops\": 24800, \"per_second_iops\": [24800, 24800, 24800, 24800, 24800, "
				 "24800, 24800, 24800, 24800, 24800]}");
	CHECK(predict_run_json(&w, run, &o, &why) == 0);
	CHECK_STR(jget_str(o, "status"), "warn");
	CHECK(near(jget_double(o, "worst_chunk_s"), 6.827, 0.001));
	json_object_put(o);
	json_object_put(run);
	run = json_tokener_parse("{\"iops\": 24800, \"per_second_iops\": [24800, -1]}");
	CHECK(predict_run_json(&w, run, &o, &why) == -EBADMSG);
	CHECK(why && strstr(why, "per_second_iops[1]"));
	json_object_put(run);
	run = json_tokener_parse("{\"iops\": \"fast\"}");
	CHECK(predict_run_json(&w, run, &o, &why) == -EBADMSG);
	json_object_put(run);
}

static char *write_tmp(const char *text)
{
	char *path = xstrdup("/tmp/swaptool-predict-XXXXXX");
	int fd = mkstemp(path);

	CHECK(fd >= 0);
	CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	close(fd);
	return path;
}

static void bad_profile(const char *text, const char *want_in_err)
{
	_cleanup_free_ char *path = write_tmp(text);
	struct profile *p = NULL;
	_cleanup_free_ char *err = NULL;

	CHECK(profile_load(path, &p, &err) == -EINVAL);
	CHECK(err && strstr(err, path) && strstr(err, want_in_err));
	if (err && !strstr(err, want_in_err))
		fprintf(stderr, "  error was: %s\n", err);
	unlink(path);
}

static void profile_section(void)
{
	_cleanup_free_ char *path = NULL;
	struct profile *p = NULL;
	_cleanup_free_ char *err = NULL;
	const char *text = "[workload]\nmeasured_reads = 1000000\nmeasured_tokens = 100000\nchunk_tokens = 8192\n"
			   "read_bytes = 8KiB\nspin_limit_low = 10\nspin_limit_high = 30\ncold_prompt_tokens = 200000\n";

	CHECK(profile_load(NULL, &p, &err) == 0);
	CHECK_U64(p->workload.measured_reads, 6490000);
	CHECK_U64(p->workload.spin_low_s, 8);
	profile_free(p);
	path = write_tmp(text);
	CHECK(profile_load(path, &p, &err) == 0);
	if (p) {
		uint64_t n;

		CHECK_U64(p->workload.chunk_tokens, 8192);
		CHECK_U64(p->workload.read_bytes, 8192);
		CHECK_U64(p->workload.spin_high_s, 30);
		CHECK(predict_reads_per_chunk(&p->workload, &n) == 0);
		CHECK_U64(n, 81920);
		profile_free(p);
	}
	unlink(path);

	bad_profile("[workload]\nreads = 5\n", ":2: unknown key 'reads' in [workload]");
	bad_profile("[workload]\nchunk_tokens = 0\n", "'chunk_tokens' in [workload] must be a whole number from 1 to 1048576");
	bad_profile("[workload]\nmeasured_tokens = 10000001\n", "from 1 to 10000000, not '10000001'");
	bad_profile("[workload]\nspin_limit_low = 8s\n", "'spin_limit_low' in [workload] must be a whole number");
	bad_profile("[workload]\nread_bytes = 256\n", "bad size (from 512 bytes to 16MiB, e.g. 4KiB) for 'read_bytes'");
	bad_profile("[workload]\nspin_limit_low = 30\n", "[workload] spin_limit_low (30 s) is above spin_limit_high (20 s)");
	bad_profile("[workload]\nmeasured_reads = 1000000000000\nmeasured_tokens = 1\nchunk_tokens = 1048576\n"
		    "read_bytes = 16MiB\n", "do not fit in 64 bits");
}

int main(void)
{
	incident_table();
	worst_window();
	status_boundaries();
	bad_inputs();
	engine_and_json();
	profile_section();
	return tap_done();
}
