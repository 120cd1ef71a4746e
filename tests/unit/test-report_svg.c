/* SPDX-License-Identifier: MIT */
/* The charts of report.html (src/report_svg.c): each chart one figure with one svg, a series per run
 * with as many points as its data has, the gates drawn, names escaped, and nothing without data. */
#include "tap.h"
#include "util.h"
#include "report.h"
#include "report_fmt.h"
#include "report_svg.h"

static json_object *J(const char *text)
{
	json_object *o = json_tokener_parse(text);
	if (!o)
		abort();
	return o;
}

static size_t count(const char *s, const char *what)
{
	size_t n = 0;

	for (const char *p = s; (p = strstr(p, what)); p += strlen(what))
		n++;
	return n;
}

/* A chart drawn into a string: which = 0 pctl, 1 persec, 2 sweep, 3 compare, 4 hist of runs[0],
 * 5 the prediction of report_predictions' list in runs. */
static char *draw(int which, json_object *runs, json_object *gates, json_object *other)
{
	char *s = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&s, &len);

	if (!f)
		abort();
	switch (which) {
	case 0: report_chart_pctl(f, runs, gates, other); break;
	case 1: report_chart_persec(f, runs, gates, other); break;
	case 2: report_chart_sweep(f, runs, other); break;
	case 3: report_chart_compare(f, runs, other); break;
	case 4: report_chart_hist(f, jarray_at(runs, 0), gates, other); break;
	case 5: report_chart_prediction(f, runs); break;
	}
	fclose(f);
	return s;
}

#define RUNS                                                                                                   \
	"[{\"name\":\"rand16\",\"iops\":68800,\"lat_us\":{\"p50\":230,\"p90\":300,\"p99\":700,\"p99_9\":1500},"       \
	"\"per_second_iops\":[68000,69000,69400],"                                                             \
	"\"lat_hist\":{\"unit\":\"ns\",\"bins\":[[100000,110000,5],[200000,220000,90],[1000000,1100000,5]]}},"     \
	"{\"name\":\"a<b>&\",\"iops\":900,\"lat_us\":{\"p50\":1183,\"p99_9\":4600},\"per_second_iops\":[900,910]}]"
#define GATES                                                                                                  \
	"[{\"name\":\"rand16-p50\",\"unit\":\"us\",\"op\":\"<=\",\"threshold\":250,\"measured\":230,\"status\":\"pass\"}," \
	"{\"name\":\"rand16-iops\",\"unit\":\"IOPS\",\"op\":\">=\",\"threshold\":60000,\"measured\":68800,\"status\":\"pass\"}]"

static void test_runs(void)
{
	json_object *runs = J(RUNS), *gates = J(GATES), *none = J("[]");
	char *s = draw(0, runs, gates, NULL);

	/* the percentiles: one figure, a series per run with a point per percentile it has */
	CHECK(count(s, "<figure>") == 1 && count(s, "</figure>") == 1 && count(s, "<svg class=\"chart\"") == 1);
	CHECK(strstr(s, "<svg class=\"chart\" data-chart=\"percentiles\" xmlns=\"http://www.w3.org/2000/svg\"") != NULL);
	CHECK(strstr(s, "data-series=\"rand16\" data-points=\"4\"") != NULL);
	CHECK(strstr(s, "data-series=\"a&lt;b&gt;&amp;\" data-points=\"2\"") != NULL);
	CHECK(!strstr(s, "a<b>"));
	CHECK(strstr(s, "read latency (log scale)") != NULL);
	free(s);
	/* second by second: a point per second */
	s = draw(1, runs, gates, NULL);
	CHECK(strstr(s, "data-chart=\"per-second\"") && strstr(s, "data-series=\"rand16\" data-points=\"3\""));
	CHECK(strstr(s, "data-series=\"a&lt;b&gt;&amp;\" data-points=\"2\"") != NULL);
	free(s);
	/* the histogram of the first run: a point per bucket, its gate as a line */
	s = draw(4, runs, gates, NULL);
	CHECK(strstr(s, "data-chart=\"hist-rand16\"") && strstr(s, "data-series=\"rand16\" data-points=\"3\""));
	CHECK(strstr(s, "100 reads in 3 histogram buckets") != NULL);
	free(s);
	{
		/* a run's name from a record is outside text: escaped in the caption as everywhere else */
		json_object *odd = J("[{\"name\":\"<i>x\",\"lat_us\":{\"p50\":230,\"p99_9\":1500},"
				     "\"lat_hist\":{\"unit\":\"ns\",\"bins\":[[100000,110000,5]]}}]");

		s = draw(4, odd, none, NULL);
		CHECK(strstr(s, "<b>&lt;i&gt;x</b>: 5 reads") != NULL);
		CHECK(strstr(s, "<i>x") == NULL);
		free(s);
		json_object_put(odd);
	}
	{
		/* a sparse histogram (10 reads in 6 buckets, in no order, one of them hostile): bars that
		 * hold every read, not a line */
		json_object *sparse = J("[{\"name\":\"seq\",\"lat_us\":{\"p50\":1200,\"p99_9\":2500},\"lat_hist\":{\"unit\":\"ns\","
					"\"bins\":[[2500000,2509999,1],[1200000,1204095,3],[600000,601023,1],[1210000,1214095,2],"
					"[18446744073709551615,0,1],\"x\",[1100000,1104095,2]]}}]");
		size_t reads = 0;

		s = draw(4, sparse, none, NULL);
		CHECK(strstr(s, "<g class=\"hist-bars\" data-series=\"seq\" data-buckets=\"7\" data-reads=\"10\"") != NULL);
		CHECK(!strstr(s, "<polyline class=\"series\" data-series=\"seq\""));
		for (const char *p = s; (p = strstr(p, "<rect class=\"hbar\" data-reads=\"")); p++)
			reads += strtoul(p + strlen("<rect class=\"hbar\" data-reads=\""), NULL, 10);
		CHECK(reads == 10);
		CHECK(strstr(s, "drawn as bars each") != NULL);
		free(s);
		json_object_put(sparse);
	}
	/* nothing measured, nothing drawn */
	s = draw(0, none, none, NULL);
	CHECK_STR(s, "");
	free(s);
	{
		json_object *bare = J("[{\"name\":\"x\"}]");

		s = draw(4, bare, none, NULL);
		CHECK_STR(s, "");
		free(s);
		json_object_put(bare);
	}
	json_object_put(runs);
	json_object_put(gates);
	json_object_put(none);
}

static void test_sweep_compare(void)
{
	json_object *sw = J("[{\"working_set_bytes\":4194304,\"iops\":69000,\"lat_us\":{\"p50\":220}},"
			    "{\"working_set_bytes\":105226698752,\"iops\":13000,\"lat_us\":{\"p50\":1200}}]");
	json_object *a = J(RUNS), *b = J(RUNS);
	char *s = draw(2, sw, NULL, NULL);

	CHECK(strstr(s, "data-chart=\"sweep\"") && strstr(s, "data-series=\"IOPS\" data-points=\"2\""));
	CHECK(strstr(s, "data-series=\"p50\" data-points=\"2\"") && !strstr(s, "reference IOPS"));
	/* the incident's cliff, labelled as docs/incident.md writes IOPS */
	CHECK(strstr(s, ">69.0 K</text>") && strstr(s, ">13.0 K</text>"));
	free(s);
	s = draw(2, sw, NULL, sw);
	CHECK(strstr(s, "data-series=\"reference IOPS\" data-points=\"2\"") != NULL);
	free(s);
	/* both nodes' runs as bars, B/A over each pair */
	jset_str(jarray_at(b, 0), "name", "rand16");
	json_object_object_add(jarray_at(b, 0), "iops", json_object_new_double(34400));
	s = draw(3, b, NULL, a);
	CHECK(strstr(s, "data-chart=\"compare\"") && strstr(s, "B/A 0.50</text>"));
	CHECK(strstr(s, "A: the reference node") && strstr(s, "B: this node"));
	CHECK(strstr(s, ">a&lt;b&gt;&amp;</text>") && !strstr(s, ">a<b>&</text>"));
	free(s);
	json_object_put(sw);
	json_object_put(a);
	json_object_put(b);
}

/* The predicted chunk per working set: the sweep as a line, runs as points in the legend with
 * their times, the spin limit as a band, a chunk that never completes at the top as "never". */
static void test_prediction(void)
{
	json_object *p = J("[{\"name\":\"rand16\",\"working_set_bytes\":105226698752,\"sweep\":false,\"prediction\":"
			   "{\"worst_chunk_s\":13.126,\"status\":\"fail\",\"spin_limit_s\":{\"low\":8,\"high\":20}}},"
			   "{\"name\":\"a<b>\",\"working_set_bytes\":105226698752,\"sweep\":false,\"prediction\":"
			   "{\"worst_chunk_s\":null,\"status\":\"fail\"}},"
			   "{\"name\":\"sweep16\",\"working_set_bytes\":2147483648,\"sweep\":true,\"prediction\":"
			   "{\"worst_chunk_s\":1.4,\"status\":\"evil\\\"\"}},"
			   "{\"name\":\"sweep16\",\"working_set_bytes\":105226698752,\"sweep\":true,\"prediction\":"
			   "{\"worst_chunk_s\":13.1,\"status\":\"fail\"}}]");
	json_object *none = J("[]");
	char *s = draw(5, p, NULL, NULL);

	CHECK(strstr(s, "data-chart=\"prediction\"") && count(s, "<svg class=\"chart\"") == 1);
	CHECK(strstr(s, "<g class=\"spin-band\" data-low=\"8\" data-high=\"20\">") != NULL);
	CHECK(strstr(s, "data-series=\"sweep\" data-points=\"2\"") != NULL);
	CHECK(count(s, "<circle class=\"prediction\"") == 4);
	CHECK(strstr(s, "data-run=\"rand16\" data-working-set=\"105226698752\" data-worst-chunk-s=\"13.126\" "
			"data-status=\"fail\"") != NULL);
	CHECK(strstr(s, "rand16: 13.1 s fail") && strstr(s, "a&lt;b&gt;: never fail") && !strstr(s, "a<b>"));
	CHECK(strstr(s, "data-worst-chunk-s=\"inf\"") && strstr(s, "data-status=\"?\"") && !strstr(s, "evil"));
	free(s);
	s = draw(5, none, NULL, NULL);
	CHECK(s && !*s);
	free(s);
	json_object_put(p);
	json_object_put(none);
}

int main(void)
{
	test_runs();
	test_sweep_compare();
	test_prediction();
	return tap_done();
}
