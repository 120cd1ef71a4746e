/* SPDX-License-Identifier: MIT */
/* The accept engine's pure parts: runs judged against gates, the working set's clamp, option lists, the plan. */
#include <errno.h>
#include <math.h>

#include "accept.h"
#include "record.h"
#include "size.h"
#include "tap.h"
#include "util.h"

#define GiB (1024ULL * 1024 * 1024)

/* The incident's random gates at 16 in flight (docs/incident.md): >= 60 K IOPS, p50 <= 250 us. */
static struct accept_run rand16 = { .name = "rand16", .inflight = 16, .duration_s = 15, .min_iops = 60000,
				    .max_p50_us = 250 };

/* The status of check `id` in the record, NULL when it has none. */
static const char *check_status(const struct record *rec, const char *id)
{
	for (size_t i = 0; i < jarray_len(rec->checks); i++) {
		json_object *c = jarray_at(rec->checks, i);
		if (streq(jget_str(c, "id"), id))
			return jget_str(c, "status");
	}
	return NULL;
}

/* The status of gate `name` in the gates array, NULL when absent. */
static const char *gate_status(json_object *gates, const char *name)
{
	for (size_t i = 0; i < jarray_len(gates); i++) {
		json_object *g = jarray_at(gates, i);
		if (streq(jget_str(g, "name"), name))
			return jget_str(g, "status");
	}
	return NULL;
}

/* A run object as the harness records it, with the figures judging reads. */
static json_object *run_of(bool complete, uint64_t ios, uint64_t iops, double p50, uint64_t errors, bool steady)
{
	char text[512];

	snprintf(text, sizeof(text),
		 "{\"name\": \"rand16\", \"complete\": %s, \"ios\": %" PRIu64 ", \"iops\": %" PRIu64 ", \"duration_s\": 15.0,"
		 " \"lat_us\": {\"p50\": %.1f}, \"errors\": {\"count\": %" PRIu64 ", \"limit_reached\": false,"
		 " \"first\": [{\"offset\": 8192, \"error\": \"Input/output error\"}]},"
		 " \"stability\": {\"evaluated\": true, \"steady\": %s, \"range_pct\": 35.0, \"slope_pct\": 2.0}}",
		 complete ? "true" : "false", ios, iops, p50, errors, steady ? "true" : "false");
	return json_tokener_parse(text);
}

struct judged {
	struct profile pf;
	struct record rec;
	struct accept a;
	bool more;
};

/* Judge one run with rand16's gates into a fresh record. */
static void judge(struct judged *j, json_object *run)
{
	struct accept_plan_run p = { .name = "rand16", .inflight = 16, .duration_s = 15, .thr = &rand16 };

	memset(j, 0, sizeof(*j));
	CHECK(record_init(&j->rec, "accept") == 0);
	accept_init(&j->a, &j->pf, &j->rec);
	j->a.gates = json_object_new_array();
	json_object_object_add(j->rec.root, "gates", j->a.gates);
	j->more = accept_judge_run(&j->a, &p, run);
	json_object_put(run);
}

static void judged_free(struct judged *j)
{
	accept_free(&j->a);
	record_free(&j->rec);
}

static void judging(void)
{
	struct judged j;

	/* dgx5's figures at 16 in flight: 71 K IOPS, p50 210 us: both gates pass */
	judge(&j, run_of(true, 1065000, 71000, 210.0, 0, true));
	CHECK(j.more && j.a.complete && j.a.harness_pass);
	CHECK_U64(jarray_len(j.a.gates), 2);
	CHECK_STR(gate_status(j.a.gates, "rand16-iops"), "pass");
	CHECK_STR(gate_status(j.a.gates, "rand16-p50"), "pass");
	CHECK_STR(check_status(&j.rec, "rand16-p50"), "pass");
	CHECK(j.rec.worst == ST_PASS);
	judged_free(&j);

	/* dgx4's at 98 GB: 12.9 K IOPS, p50 1,183 us: both fail, the harness fails */
	judge(&j, run_of(true, 193500, 12900, 1183.0, 0, true));
	CHECK(j.more && !j.a.harness_pass);
	CHECK_STR(check_status(&j.rec, "rand16-iops"), "fail");
	CHECK_STR(check_status(&j.rec, "rand16-p50"), "fail");
	CHECK(j.rec.worst == ST_FAIL);
	judged_free(&j);

	/* gates passed but IOPS not steady: a warning, the harness still passes */
	judge(&j, run_of(true, 1065000, 71000, 210.0, 0, false));
	CHECK(j.a.harness_pass);
	CHECK_STR(check_status(&j.rec, "rand16-stability"), "warn");
	CHECK(j.rec.worst == ST_WARN);
	judged_free(&j);

	/* no read completed: the p50 of 0 us would pass an "at most" gate; it must not */
	judge(&j, run_of(true, 0, 0, 0.0, 0, true));
	CHECK(!j.a.harness_pass);
	CHECK_STR(check_status(&j.rec, "rand16-reads"), "fail");
	CHECK_STR(gate_status(j.a.gates, "rand16-p50"), "fail");
	judged_free(&j);

	/* read errors fail the run as a gate of their own, whatever the speed */
	judge(&j, run_of(true, 1065000, 71000, 210.0, 3, true));
	CHECK(!j.a.harness_pass);
	CHECK_STR(gate_status(j.a.gates, "rand16-errors"), "fail");
	CHECK_STR(check_status(&j.rec, "rand16-errors"), "fail");
	CHECK_STR(gate_status(j.a.gates, "rand16-iops"), "pass");
	judged_free(&j);

	/* interrupted: the record is incomplete and judging stops there, no gate judged */
	judge(&j, run_of(false, 1000, 71000, 210.0, 0, true));
	CHECK(!j.more && !j.a.complete);
	CHECK_STR(check_status(&j.rec, "rand16"), "fail");
	CHECK_U64(jarray_len(j.a.gates), 0);
	judged_free(&j);
}

static void working_set(void)
{
	struct accept_opts o = { .working_set = 98 * GiB };
	uint64_t ws;
	bool clamped;

	/* a shard accept found on its own, a little smaller than the profile's 98 GiB: measured whole,
	 * 4 KiB-aligned */
	CHECK(accept_fit_working_set(&o, true, 90 * GiB + 123, &ws, &clamped) == 0);
	CHECK(clamped);
	CHECK_U64(ws, 90 * GiB);
	/* the same target given on the command line: refused, never clamped */
	CHECK(accept_fit_working_set(&o, false, 90 * GiB, &ws, &clamped) == -E2BIG);
	CHECK(!clamped);
	/* a size the operator asked for is never changed either */
	o.have_working_set = true;
	CHECK(accept_fit_working_set(&o, true, 90 * GiB, &ws, &clamped) == -E2BIG);
	CHECK(!clamped);
	o.have_working_set = false;
	/* a target smaller than one 4 KiB read cannot be clamped to */
	CHECK(accept_fit_working_set(&o, true, 3000, &ws, &clamped) == -E2BIG);
	CHECK(!clamped);
	/* a working set that fits is kept as it is, aligned down */
	o.working_set = 2 * GiB + 100;
	CHECK(accept_fit_working_set(&o, true, 90 * GiB, &ws, &clamped) == 0);
	CHECK(!clamped);
	CHECK_U64(ws, 2 * GiB);
}

static void option_lists(void)
{
	uint64_t sizes[ACCEPT_MAX_LIST];
	unsigned depth[ACCEPT_MAX_LIST];
	struct accept_opts o = { 0 };
	size_t n = 99;

	CHECK(accept_parse_sweep("2G,20G,98G", sizes, ARRAY_SIZE(sizes), &n) == 0);
	CHECK_U64(n, 3);
	CHECK_U64(sizes[0], 2 * GiB);
	CHECK_U64(sizes[2], 98 * GiB);
	CHECK(accept_parse_sweep("4K", sizes, ARRAY_SIZE(sizes), &n) == 0);
	CHECK_U64(sizes[0], 4096);
	/* smaller than one read, not a size, nothing, more than fits */
	CHECK(accept_parse_sweep("2G,1K", sizes, ARRAY_SIZE(sizes), &n) == -EINVAL);
	CHECK(accept_parse_sweep("2Q", sizes, ARRAY_SIZE(sizes), &n) == -EINVAL);
	CHECK(accept_parse_sweep("", sizes, ARRAY_SIZE(sizes), &n) == -EINVAL);
	CHECK(accept_parse_sweep("1G,2G,3G", sizes, 2, &n) == -EINVAL);

	CHECK(accept_parse_inflight("16,64", depth, ARRAY_SIZE(depth), &n) == 0);
	CHECK_U64(n, 2);
	CHECK_U64(depth[1], 64);
	CHECK(accept_parse_inflight("0", depth, ARRAY_SIZE(depth), &n) == -EINVAL);
	CHECK(accept_parse_inflight("4097", depth, ARRAY_SIZE(depth), &n) == -EINVAL);

	CHECK(accept_add_gate(&o, "bench=./bench.sh --full", 3600) == 0);
	CHECK_U64(o.ngates, 1);
	CHECK_STR(o.gates[0].name, "bench");
	CHECK_STR(o.gates[0].command, "./bench.sh --full");
	CHECK(accept_add_gate(&o, "=./bench.sh", 3600) == -EINVAL);
	CHECK(accept_add_gate(&o, "bench=", 3600) == -EINVAL);
	CHECK(accept_add_gate(&o, "no-command", 3600) == -EINVAL);
	CHECK(accept_add_gate(&o, "0123456789012345678901234567890123456789012345678901234567890123=x", 3600) ==
	      -EINVAL);
	CHECK_U64(o.ngates, 1);
}

/* --sustain's durations, and sustain-drift's thresholds (src/accept.h: why these numbers) */
static void sustain(void)
{
	uint64_t v = 0;

	CHECK(accept_parse_duration("600", &v) == 0);
	CHECK_U64(v, 600);
	CHECK(accept_parse_duration("90s", &v) == 0);
	CHECK_U64(v, 90);
	CHECK(accept_parse_duration("10m", &v) == 0);
	CHECK_U64(v, 600);
	CHECK(accept_parse_duration("24h", &v) == 0);
	CHECK_U64(v, 86400);
	/* nothing, zero, past a day, no number, an unknown unit, a unit alone, a sign */
	CHECK(accept_parse_duration("", &v) == -EINVAL);
	CHECK(accept_parse_duration("0", &v) == -EINVAL);
	CHECK(accept_parse_duration("0m", &v) == -EINVAL);
	CHECK(accept_parse_duration("86401", &v) == -EINVAL);
	CHECK(accept_parse_duration("1441m", &v) == -EINVAL);
	CHECK(accept_parse_duration("25h", &v) == -EINVAL);
	CHECK(accept_parse_duration("garbage", &v) == -EINVAL);
	CHECK(accept_parse_duration("10x", &v) == -EINVAL);
	CHECK(accept_parse_duration("m", &v) == -EINVAL);
	CHECK(accept_parse_duration("10mm", &v) == -EINVAL);
	CHECK(accept_parse_duration("-5", &v) == -EINVAL);
	CHECK_U64(v, 86400);

	CHECK(accept_drift_status(1.0, 1.0) == ST_PASS);
	CHECK(accept_drift_status(0.8, 2.0) == ST_PASS);
	CHECK(accept_drift_status(0.79, 1.0) == ST_WARN);
	CHECK(accept_drift_status(1.0, 2.01) == ST_WARN);
	CHECK(accept_drift_status(0.5, 4.0) == ST_WARN);
	CHECK(accept_drift_status(0.49, 1.0) == ST_FAIL);
	CHECK(accept_drift_status(1.0, 4.01) == ST_FAIL);
	/* a figure missing judges nothing; both missing: skipped */
	CHECK(accept_drift_status(NAN, 1.0) == ST_PASS);
	CHECK(accept_drift_status(0.3, NAN) == ST_FAIL);
	CHECK(accept_drift_status(NAN, NAN) == ST_SKIP);
}

static void plan(void)
{
	struct accept_run runs[] = {
		rand16,
		{ .name = "rand64", .inflight = 64, .duration_s = 20, .min_iops = 150000 },
		{ .name = "seq", .sequential = true, .min_mb_s = 2500 },
	};
	struct profile pf = { .runs = runs, .nruns = 3 };
	struct record rec;
	struct accept a;

	CHECK(record_init(&rec, "accept") == 0);
	/* the profile's runs, the sequential one last (4 in flight by default) */
	accept_init(&a, &pf, &rec);
	accept_plan_runs(&a);
	CHECK_U64(a.nplan, 3);
	CHECK_STR(a.plan[0].name, "rand16");
	CHECK_U64(a.plan[1].duration_s, 20);
	CHECK(a.plan[2].sequential && a.plan[2].inflight == 4);
	accept_free(&a);
	/* --inflight 64,32 --no-seq: 64 keeps rand64's gates, 32 takes those at its position (rand64's) */
	accept_init(&a, &pf, &rec);
	a.o.no_seq = true;
	CHECK(accept_parse_inflight("64,32", a.o.inflight, ARRAY_SIZE(a.o.inflight), &a.o.ninflight) == 0);
	accept_plan_runs(&a);
	CHECK_U64(a.nplan, 2);
	CHECK_STR(a.plan[0].name, "rand64");
	CHECK(a.plan[0].thr == &runs[1]);
	CHECK_STR(a.plan[1].name, "rand32");
	CHECK(a.plan[1].thr == &runs[1] && a.plan[1].inflight == 32);
	accept_free(&a);
	record_free(&rec);
}

int main(void)
{
	judging();
	working_set();
	option_lists();
	sustain();
	plan();
	return tap_done();
}
