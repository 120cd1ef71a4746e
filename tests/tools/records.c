/* SPDX-License-Identifier: MIT */
/* Test fixtures: the incident's records (docs/incident.md numbers), built like the steps build them. */
#include "util.h"
#include "records.h"
#include "hist.h"
#include "predict.h"
#include "report.h"
#include "schema.h"

#include <math.h>

const char *const fixture_names[] = { "preflight", "backup", "plan",	    "clone",	   "restore",
				      "verify",	   "accept", "report", "dgx4-accept", "dgx5-accept",
				      "accept-long", "dgx5-accept-long" };
const size_t fixture_names_n = ARRAY_SIZE(fixture_names);

#define TARBALL "/home/nv/dgx4-swap-backup-20261104/dgx4-config.tar.gz"
#define TARBALL_SHA "9f2c1e0b5a7d3c4e8f6a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f67"

/* A number as a person writes it: integral values as integers, others as fractions. */
static void setn(json_object *o, const char *key, double v)
{
	if (v == floor(v) && fabs(v) < 9e15)
		jset_i64(o, key, (int64_t)v);
	else
		jset_double(o, key, v);
}

static json_object *obj(json_object *parent, const char *key)
{
	json_object *o = json_object_new_object();

	json_object_object_add(parent, key, o);
	return o;
}

static json_object *arr(json_object *parent, const char *key)
{
	json_object *a = json_object_new_array();

	json_object_object_add(parent, key, a);
	return a;
}

static void begin(struct record *r, const char *step, const char *host, const char *started)
{
	if (record_init(r, step) < 0)
		abort();
	jset_str(r->root, "host", host);
	jset_str(r->root, "started", started);
}

/* The verdict from the checks (record_finish), at a fixed time; the root is the caller's. */
static json_object *end(struct record *r, const char *finished)
{
	record_finish(r);
	jset_str(r->root, "finished", finished);
	return r->root;
}

static json_object *preflight(void)
{
	struct record r;
	json_object *src, *pt, *tgt, *paths, *p, *c;

	begin(&r, "preflight", "dgx4", "2026-11-04T10:00:00Z");
	record_check(&r, SCHEMA_CHECK_RAW_CLONE, ST_FAIL, "target is 48,009,314,304 bytes smaller: a raw clone cannot fit");
	c = record_check(&r, SCHEMA_CHECK_GPT_BACKUP_HEADER, ST_FAIL,
			 "backup GPT header at LBA 4,000,797,359 is past the target's last LBA 3,907,029,167");
	jset_u64(c, "source_lba", 4000797359);
	jset_u64(c, "target_last_lba", 3907029167);
	record_check(&r, SCHEMA_CHECK_PARTITION_FIT, ST_FAIL, "partition 2 ends past the target's last usable LBA");
	record_check(&r, SCHEMA_CHECK_FS_FIT, ST_PASS, "ext4 shrinks to fit: 1.33 TiB used");
	record_check(&r, "lba-format", ST_PASS, "512-byte LBAs on both");
	record_check(&r, SCHEMA_CHECK_DRIVE_CLASS, ST_WARN, "KingSpec XG7000: DRAM-less, 40 MB HMB");
	record_check(&r, "health", ST_PASS, "media_errors 0");
	src = obj(r.root, "source");
	jset_str(src, "path", "/dev/nvme0");
	/* given the controller, preflight reads (and names) the namespace that holds the partitions */
	jset_str(src, "device", "/dev/nvme0n1");
	jset_str(src, "disk", "nvme0n1");
	jset_u64(src, "size_bytes", 2048408248320);
	jset_u64(src, "lba_size", 512);
	jset_u64(src, "lba_count", 4000797360);
	jset_str(src, "model", "XG7000-2TB 2242");
	jset_str(src, "firmware", "GT0d9d63");
	jset_str(src, "serial", NULL);
	pt = obj(src, "partition_table");
	jset_str(pt, "type", "gpt");
	jset_u64(pt, "first_usable_lba", 34);
	jset_u64(pt, "last_usable_lba", 4000797326);
	jset_u64(pt, "backup_header_lba", 4000797359);
	arr(pt, "partitions");
	tgt = obj(r.root, "target");
	jset_str(tgt, "spec", "2000398934016");
	jset_u64(tgt, "size_bytes", 2000398934016);
	jset_u64(tgt, "lba_size", 512);
	jset_u64(tgt, "lba_count", 3907029168);
	jset_u64(tgt, "last_usable_lba", 3907029134);
	/* the new drive not attached yet: named by --target-model, which accept's drive matches with
	 * the size (report_target_match) */
	c = obj(r.root, "target_identity");
	jset_bool(c, "nvme", false);
	jset_str(c, "from", "model");
	jset_str(c, "model", "Corsair MP600 MINI");
	jset_i64(r.root, "delta_bytes", -48009314304);
	paths = obj(r.root, "paths");
	jset_bool(obj(paths, SCHEMA_PATH_RAW_CLONE), "possible", false);
	p = obj(paths, SCHEMA_PATH_FS_CLONE);
	jset_bool(p, "possible", true);
	arr(p, "partitions");
	p = obj(paths, SCHEMA_PATH_FRESH_INSTALL);
	jset_bool(p, "possible", true);
	jset_u64(p, "refetchable_bytes", 1215000000000);
	jset_u64(p, "irreplaceable_bytes", 9600);
	end(&r, "2026-11-04T10:00:02Z");
	/* the clone trap with a path: what preflight itself writes (steps/preflight.c) */
	jset_str(r.root, "verdict", REPORT_VERDICT_TRAP);
	return r.root;
}

static void archive(json_object *root, bool entries_inside)
{
	json_object *a = obj(root, "archive");

	jset_str(a, "path", TARBALL);
	jset_u64(a, "bytes", 9830);
	jset_str(a, "sha256", TARBALL_SHA);
	if (entries_inside)
		jset_u64(a, "entries", 42);
	else
		jset_str(a, "format", "gzip pax");
}

static json_object *backup(void)
{
	struct record r;

	begin(&r, "backup", "dgx4", "2026-11-04T10:05:00Z");
	record_check(&r, "required", ST_PASS, "controller.key is in the backup");
	record_check(&r, "read-back", ST_PASS, "42 entries read back, hashes match");
	/* as steps/backup.c writes it: the entry count beside the archive */
	jset_u64(r.root, "entries", 42);
	archive(r.root, false);
	return end(&r, "2026-11-04T10:05:01Z");
}

static json_object *plan(void)
{
	struct record r;
	json_object *p, *s;

	begin(&r, "plan", "dgx4", "2026-11-04T10:10:00Z");
	record_check(&r, "plan", ST_PASS, "path 1 and path 2 planned");
	p = obj(r.root, "plan");
	jset_str(p, "fingerprint", "5a1c0ffee0ddba11");
	jset_str(p, "fingerprint_shrunk", "5a1c0ffee0ddba12");
	s = obj(p, "source");
	jset_str(s, "path", "/dev/nvme0n1");
	jset_u64(s, "size_bytes", 2048408248320);
	jset_u64(obj(p, "target"), "size_bytes", 2000398934016);
	return end(&r, "2026-11-04T10:10:01Z");
}

static json_object *clone(void)
{
	struct record r;

	begin(&r, "clone", "dgx4", "2026-11-05T08:00:00Z");
	record_check(&r, "fsck", ST_PASS, "e2fsck -fn: clean");
	return end(&r, "2026-11-05T08:40:00Z");
}

static json_object *restore(void)
{
	struct record r;

	begin(&r, "restore", "dgx4", "2026-11-05T09:00:00Z");
	record_check(&r, "extract", ST_PASS, "42 entries restored under /");
	return end(&r, "2026-11-05T09:00:01Z");
}

static json_object *verify(void)
{
	struct record r;

	begin(&r, "verify", "dgx4", "2026-11-05T09:01:00Z");
	record_check(&r, "manifest", ST_PASS, "42 of 42 entries match");
	record_check(&r, "fstab", ST_PASS, "every UUID in /etc/fstab resolves");
	archive(r.root, true);
	return end(&r, "2026-11-05T09:01:01Z");
}

/* One run as steps/accept.c writes it (the figures a reader uses). */
struct run {
	const char *name;
	bool seq;
	unsigned inflight;
	double iops, mb_s, p50, p99_9;
	/* the full accept record's figures; 0: left out */
	double block_size, duration_s, ios, min, p90, p99, max, mean;
	bool overs;
};

/* The engine predicted from a random run or a sweep point, as accept writes it (the profile's
 * default workload: docs/incident.md's figures); the fixtures have no per-second counts, so the
 * worst chunk is the chunk at the mean. */
static void add_prediction(json_object *run)
{
	struct predict_workload w;
	json_object *p = NULL;

	predict_workload_defaults(&w);
	if (predict_run_json(&w, run, &p, NULL) < 0)
		abort();
	json_object_object_add(run, "engine_prediction", p);
}

/* accept's engine-prediction check: the run whose worst chunk is slowest (src/accept.c). */
static void prediction_check(struct record *r, json_object *runs)
{
	json_object *worst = NULL, *worst_run = NULL, *c;
	enum status st = ST_FAIL;

	for (size_t i = 0; i < json_object_array_length(runs); i++) {
		json_object *run = json_object_array_get_idx(runs, i), *p = jget_object(run, "engine_prediction");

		if (p && (!worst || predict_json_worse(p, worst)))
			worst = p, worst_run = run;
	}
	status_parse(jget_str(worst, "status"), &st);
	c = record_check(r, SCHEMA_CHECK_ENGINE_PREDICTION, st, "%s: %s", jget_str(worst_run, "name"),
			 jget_str(worst, "summary"));
	jset_str(c, "run", jget_str(worst_run, "name"));
	json_object_object_add(c, "prediction", json_object_get(worst));
}

static void add_run(json_object *runs, const struct run *x)
{
	json_object *o = json_object_new_object(), *lat;

	jset_str(o, "name", x->name);
	jset_str(o, "mode", x->seq ? "seqread" : "randread");
	if (x->block_size)
		setn(o, "block_size", x->block_size);
	jset_u64(o, "inflight", x->inflight);
	if (x->duration_s)
		setn(o, "duration_s", x->duration_s);
	if (x->ios)
		setn(o, "ios", x->ios);
	setn(o, "iops", x->iops);
	setn(o, "mb_s", x->mb_s);
	lat = obj(o, "lat_us");
	if (x->min)
		setn(lat, "min", x->min);
	setn(lat, SCHEMA_LAT_P50, x->p50);
	if (x->p90)
		setn(lat, SCHEMA_LAT_P90, x->p90);
	if (x->p99)
		setn(lat, SCHEMA_LAT_P99, x->p99);
	setn(lat, SCHEMA_LAT_P99_9, x->p99_9);
	if (x->max)
		setn(lat, SCHEMA_LAT_MAX, x->max);
	if (x->mean)
		setn(lat, "mean", x->mean);
	if (x->overs) {
		jset_u64(o, "over_200ms", 0);
		jset_u64(o, "over_1s", 0);
		jset_u64(o, "over_5s", 0);
	}
	if (!x->seq)
		add_prediction(o);
	json_object_array_add(runs, o);
}

/* A harness gate: RUN-SUFFIX (src/io.c names them so). full: with run, unit and op as accept
 * writes them now; else only what older records held. */
static void add_gate(json_object *gates, const char *run, const char *suffix, bool pass, double threshold,
		     double measured, bool full)
{
	json_object *g = json_object_new_object();
	_cleanup_free_ char *name = xasprintf("%s-%s", run, suffix);
	bool at_least = streq(suffix, SCHEMA_GATE_IOPS) || streq(suffix, SCHEMA_GATE_MB_S);

	jset_str(g, "name", name);
	if (full)
		jset_str(g, "run", run);
	jset_str(g, "status", pass ? "pass" : "fail");
	setn(g, "threshold", threshold);
	setn(g, "measured", measured);
	if (full) {
		jset_str(g, "unit", streq(suffix, SCHEMA_GATE_IOPS) ? "IOPS" : streq(suffix, SCHEMA_GATE_MB_S) ? "MB/s" : "us");
		jset_str(g, "op", at_least ? ">=" : "<=");
	}
	json_object_array_add(gates, g);
}

static void add_engine_gate(json_object *gates, const char *name)
{
	json_object *g = json_object_new_object();
	_cleanup_free_ char *full = xasprintf(SCHEMA_GATE_ENGINE_PREFIX "%s", name);

	jset_str(g, "name", full);
	jset_str(g, "status", "pass");
	jset_str(g, "threshold", "exit 0");
	jset_i64(g, "measured", 0);
	jset_str(g, "unit", "exit code");
	json_object_array_add(gates, g);
}

static void accept_target(json_object *root, uint64_t size, uint64_t offset)
{
	json_object *t = obj(root, "target");

	jset_str(t, "path", "/dev/nvme0n1");
	jset_u64(t, "size_bytes", size);
	jset_u64(t, "working_set_bytes", 105226698752);
	jset_u64(t, "offset_bytes", offset);
}

/* dgx4 after the swap: every harness gate and both engine gates pass. */
static json_object *accept_pass(void)
{
	static const struct run runs[] = {
		{ "rand16", false, 16, 118200.5, 484.1, 121, 610, 4096, 15, 1773000, 41, 180, 320, 2100, 135.2, true },
		{ "rand64", false, 64, 205000, 839.7, 290, 1500, 4096, 20, 4100000, 55, 480, 900, 5200, 310.5, true },
		{ "seq", true, 4, 2860, 3000.2, 1350, 2100, 1048576, 1.4, 4096, 900, 1500, 1800, 2400, 1390, false },
	};
	static const uint64_t ws[] = { 2147483648, 21474836480, 105226698752 };
	static const double ws_iops[] = { 121000, 119000, 118200 };
	struct record r;
	json_object *a, *g;

	begin(&r, "accept", "dgx4", "2026-11-05T10:00:00Z");
	record_check(&r, "rand16-iops", ST_PASS, "rand16: 118.2 K IOPS >= 60 K");
	accept_target(r.root, 2000398934016, 947586117632);
	/* the drive accept measured after the swap: preflight's target by size and model */
	a = obj(r.root, "drive");
	jset_str(a, "under", "/dev/nvme0n1");
	jset_str(a, "disk", "nvme0n1");
	jset_str(a, "device", "/dev/nvme0n1");
	jset_str(a, "transport", "nvme");
	jset_str(a, "controller", "nvme0");
	jset_str(a, "kind", "nvme");
	jset_str(a, "model", "Corsair MP600 MINI");
	jset_str(a, "serial", "A5KQB4390K3KGP");
	jset_u64(a, "size_bytes", 2000398934016);
	a = arr(r.root, "runs");
	for (size_t i = 0; i < ARRAY_SIZE(runs); i++)
		add_run(a, &runs[i]);
	prediction_check(&r, a);
	a = arr(r.root, "sweep");
	for (size_t i = 0; i < ARRAY_SIZE(ws); i++) {
		json_object *s = json_object_new_object();
		jset_str(s, "name", "sweep16");
		jset_u64(s, "working_set_bytes", ws[i]);
		setn(s, "iops", ws_iops[i]);
		add_prediction(s);
		json_object_array_add(a, s);
	}
	g = arr(r.root, "gates");
	add_gate(g, "rand16", SCHEMA_GATE_IOPS, true, 60000, 118200.5, true);
	add_gate(g, "rand16", SCHEMA_GATE_P50, true, 250, 121, true);
	add_gate(g, "rand64", SCHEMA_GATE_IOPS, true, 120000, 205000, true);
	add_gate(g, "rand64", SCHEMA_GATE_P99_9, true, 2000, 1500, true);
	add_gate(g, "seq", SCHEMA_GATE_MB_S, true, 2500, 3000.2, true);
	add_engine_gate(g, "cold-boot-157k");
	add_engine_gate(g, "full-bench");
	jset_bool(r.root, "engine_gates_run", true);
	return end(&r, "2026-11-05T11:30:00Z");
}

/* dgx4's XG7000 at 98 GB (the failing candidate) or dgx5's reference drive, no engine gates. */
static json_object *accept_node(bool dgx4)
{
	static const struct run r4[] = {
		{ .name = "rand16", .seq = false, .inflight = 16, .iops = 12900, .mb_s = 52.8, .p50 = 1183, .p99_9 = 4600 },
		{ .name = "rand64", .seq = false, .inflight = 64, .iops = 24800, .mb_s = 101.6, .p50 = 2450, .p99_9 = 10500 },
		{ .name = "seq", .seq = true, .inflight = 4, .iops = 1810, .mb_s = 1900, .p50 = 2100, .p99_9 = 4000 },
	};
	static const struct run r5[] = {
		{ .name = "rand16", .seq = false, .inflight = 16, .iops = 80000, .mb_s = 327.7, .p50 = 200, .p99_9 = 900 },
		{ .name = "rand64", .seq = false, .inflight = 64, .iops = 204000, .mb_s = 835.6, .p50 = 283, .p99_9 = 1600 },
		{ .name = "seq", .seq = true, .inflight = 4, .iops = 2860, .mb_s = 3000, .p50 = 1300, .p99_9 = 2000 },
	};
	const struct run *runs = dgx4 ? r4 : r5;
	struct record r;
	json_object *a, *g;

	begin(&r, "accept", dgx4 ? "dgx4" : "dgx5", "2026-11-04T09:00:00Z");
	if (dgx4)
		record_check(&r, "rand16-iops", ST_FAIL, "rand16: 12.9 K IOPS < 60 K");
	accept_target(r.root, dgx4 ? 2048408248320 : 1000204886016, 0);
	a = arr(r.root, "runs");
	for (size_t i = 0; i < 3; i++)
		add_run(a, &runs[i]);
	prediction_check(&r, a);
	g = arr(r.root, "gates");
	add_gate(g, "rand16", SCHEMA_GATE_IOPS, !dgx4, 60000, runs[0].iops, false);
	add_gate(g, "rand16", SCHEMA_GATE_P50, !dgx4, 250, runs[0].p50, false);
	add_gate(g, "rand64", SCHEMA_GATE_IOPS, !dgx4, 120000, runs[1].iops, false);
	add_gate(g, "rand64", SCHEMA_GATE_P99_9, !dgx4, 2000, runs[1].p99_9, false);
	add_gate(g, "seq", SCHEMA_GATE_MB_S, !dgx4, 2500, runs[2].mb_s, false);
	jset_bool(r.root, "engine_gates_run", false);
	return end(&r, "2026-11-04T09:01:00Z");
}

/* ---- a long accept record: what a real run with --sweep and --sustain holds, for the report's
 * geometry (tests/cli/96-report-geometry.sh): a page and charts full of labels ---- */

/* A fixed sequence of draws in (0, 1): the same fixture on every machine. */
static double draw(uint64_t *state)
{
	*state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
	return ((double)(*state >> 11) + 0.5) / 9007199254740992.0;
}

/* N read latencies drawn around P50 us (log-normal, spread SIGMA, one read in 2000 four times
 * slower), as accept's histogram holds them: [lowest ns, highest ns, count] of the non-empty
 * buckets (src/hist.h), and the percentiles of the same reads. */
static void add_hist(json_object *run, uint64_t n, double p50, double sigma, uint64_t seed)
{
	struct hist *h = xcalloc(1, sizeof(*h));
	json_object *lat = obj(run, "lat_us");
	uint64_t st = seed;

	hist_init(h);
	for (uint64_t i = 0; i < n; i++) {
		double z = sqrt(-2 * log(draw(&st))) * cos(2 * M_PI * draw(&st));
		double v = p50 * exp(sigma * z) * (draw(&st) < 0.0005 ? 4 : 1);

		hist_add(h, (uint64_t)(v * 1000));
	}
	json_object_object_add(run, "lat_hist", hist_json(h));
	setn(lat, "min", round((double)h->min_ns / 100) / 10);
	setn(lat, SCHEMA_LAT_P50, round((double)hist_quantile(h, 500000) / 100) / 10);
	setn(lat, SCHEMA_LAT_P90, round((double)hist_quantile(h, 900000) / 100) / 10);
	setn(lat, SCHEMA_LAT_P99, round((double)hist_quantile(h, 990000) / 100) / 10);
	setn(lat, SCHEMA_LAT_P99_9, round((double)hist_quantile(h, 999000) / 100) / 10);
	setn(lat, SCHEMA_LAT_MAX, round((double)h->max_ns / 100) / 10);
	setn(lat, "mean", round((double)hist_mean(h) / 100) / 10);
	jset_u64(run, "ios", n);
	free(h);
}

/* IOPS second by second: SECONDS values within 3 % of IOPS. */
static void add_per_second(json_object *run, double iops, unsigned seconds, uint64_t seed)
{
	json_object *a = arr(run, "per_second_iops");

	for (unsigned i = 0; i < seconds; i++)
		json_object_array_add(a, json_object_new_int64((int64_t)(iops * (0.97 + 0.06 * draw(&seed)))));
}

/* A sweep of 4 KiB random reads from 1 GiB, each working set 1.3x the one before (24 of them reach
 * 418 GiB): the drive's cache holds the mapping of some 160 GiB, past it IOPS fall to SLOW and p50
 * rises (the runs' 98 GiB is still fast). */
static void add_long_sweep(json_object *root, double fast, double slow, unsigned points)
{
	json_object *a = arr(root, "sweep");
	double ws = 1073741824;

	for (unsigned i = 0; i < points; i++, ws *= 1.3) {
		json_object *s = json_object_new_object();
		double cliff = 1 / (1 + pow(ws / 171798691840.0, 4)), iops = round(slow + (fast - slow) * cliff);

		jset_str(s, "name", "sweep16");
		jset_u64(s, "working_set_bytes", (uint64_t)ws & ~4095ULL);
		setn(s, "iops", iops);
		setn(obj(s, "lat_us"), SCHEMA_LAT_P50, round(16e7 / iops) / 10);
		add_prediction(s);
		json_object_array_add(a, s);
	}
}

/* accept --sustain 10m in intervals of 30 s: IOPS falling by 6 %, the tail rising. */
static void add_sustain(json_object *root)
{
	json_object *sus = obj(root, "sustain"), *iv = arr(sus, "intervals"), *d, *t;

	jset_str(sus, "run", "rand64");
	jset_u64(sus, "inflight", 64);
	jset_u64(sus, "duration_s", 600);
	jset_u64(sus, "interval_s", 30);
	for (unsigned i = 0; i < 20; i++) {
		json_object *v = json_object_new_object();

		jset_u64(v, "index", i);
		jset_u64(v, "start_s", i * 30);
		setn(v, "duration_s", 30);
		setn(v, "iops", 205000 - 650 * i);
		setn(v, "p50_us", 290 + i);
		setn(v, "p99_9_us", 1500 + 20 * i);
		jset_bool(v, "complete", true);
		json_object_array_add(iv, v);
	}
	d = obj(sus, "drift");
	setn(d, "iops_ratio", 0.94);
	setn(d, "p99_9_ratio", 1.253);
	jset_str(d, "status", "pass");
	t = obj(sus, "temperature");
	jset_i64(t, "before_c", 41);
	jset_i64(t, "after_c", 58);
	jset_str(t, "controller", "nvme0");
	jset_bool(sus, "complete", true);
}

/* accept with every figure a real run records (histograms, IOPS per second), a sweep of 24 working
 * sets and a sustained load: dgx4 after the swap (accept's record, passing), or the reference
 * node dgx5 with 12 working sets and no sustained load. The seq run has 64 reads in its
 * histogram: a sparse one, as a short sequential run has. */
static json_object *accept_long(bool ref)
{
	json_object *rec = ref ? accept_node(false) : accept_pass(), *runs = schema_accept_runs(rec);
	json_object *gates = schema_accept_gates(rec);

	for (size_t i = 0; i < json_object_array_length(runs); i++) {
		json_object *r = json_object_array_get_idx(runs, i);
		double iops = jget_double(r, "iops"), p50 = jget_double(jget_object(r, "lat_us"), SCHEMA_LAT_P50);
		bool seq = streq(jget_str(r, "mode"), "seqread");

		add_hist(r, seq ? 64 : (uint64_t)(iops * 15), p50, seq ? 0.25 : 0.45, 7 + i + ref * 100);
		if (!seq)
			add_per_second(r, iops, 15, 11 + i + ref * 100);
		json_object_object_add(r, "engine_prediction", NULL);
		if (!seq)
			add_prediction(r);
		/* the latency gates judged these reads */
		for (size_t k = 0; k < json_object_array_length(gates); k++) {
			json_object *g = json_object_array_get_idx(gates, k);
			const char *gn = schema_gate_name(g) ?: "", *suffix = strrchr(gn, '-'), *key = NULL;
			double v;

			if (suffix && report_gate_of_run(gn, jget_str(r, "name")))
				key = streq(suffix + 1, SCHEMA_GATE_P50) ? SCHEMA_LAT_P50 :
				      streq(suffix + 1, SCHEMA_GATE_P99_9) ? SCHEMA_LAT_P99_9 : NULL;
			if (key && schema_run_lat_us(r, key, &v))
				setn(g, "measured", v);
		}
	}
	add_long_sweep(rec, ref ? 80000 : 121000, ref ? 61000 : 13000, ref ? 12 : 24);
	if (!ref)
		add_sustain(rec);
	return rec;
}

/* report's own record, as status and nodes read it. */
static json_object *report(void)
{
	struct record r;

	begin(&r, "report", "dgx4", "2026-11-05T12:00:00Z");
	record_check(&r, "signature", ST_SKIP, "not signed (--no-sign)");
	jset_str(r.root, "report_verdict", "accepted");
	jset_str(r.root, "why", "preflight, backup, verify and accept (with the engine gates) of the target drive passed");
	json_object_object_add(r.root, "signer", NULL);
	return end(&r, "2026-11-05T12:00:01Z");
}

json_object *fixture_record(const char *name)
{
	if (streq(name, "preflight"))
		return preflight();
	if (streq(name, "backup"))
		return backup();
	if (streq(name, "plan"))
		return plan();
	if (streq(name, "clone"))
		return clone();
	if (streq(name, "restore"))
		return restore();
	if (streq(name, "verify"))
		return verify();
	if (streq(name, "accept"))
		return accept_pass();
	if (streq(name, "report"))
		return report();
	if (streq(name, "dgx4-accept"))
		return accept_node(true);
	if (streq(name, "dgx5-accept"))
		return accept_node(false);
	if (streq(name, "accept-long"))
		return accept_long(false);
	if (streq(name, "dgx5-accept-long"))
		return accept_long(true);
	return NULL;
}
