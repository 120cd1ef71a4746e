/* SPDX-License-Identifier: MIT */
/* accept: the embedded io_uring acceptance harness against the incident's gates, plus engine gates. */
#include "steps.h"
#include "schema.h"

#include <fcntl.h>
#include <liburing.h>
#include <math.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <time.h>

#include "io.h"
#include "proc.h"
#include "size.h"

static const struct step_operand accept_operands[] = {
	{ "FILE|DEVICE",
	  "what to read (the Engram shard, or a block device); opened read-only;\n"
	  "none: the profile's target_glob, else the whole disk that holds /" },
	{ 0 },
};

static const struct step_option accept_options[] = {
	STEP_OPT_HOME("the node user's home, for '~' in target_glob"),
	{ { "working-set", required_argument, NULL, 'w' }, "SIZE",
	  "centered working set (default 98G from the profile)" },
	{ { "duration", required_argument, NULL, 'd' }, "S",
	  "measured seconds of each random run, 1-86400 (profile: 15 and 20)" },
	{ { "ramp", required_argument, NULL, 'r' }, "S", "seconds excluded before measuring (default 2)" },
	{ { "inflight", required_argument, NULL, 'i' }, "N[,N...]",
	  "reads in flight of the random runs, 1-4096 (default 16,64)" },
	{ { "threads", required_argument, NULL, 't' }, "N",
	  "rings, one per thread, 1-1024 (default: one per core)" },
	{ { "seq-bytes", required_argument, NULL, 'S' }, "SIZE",
	  "bytes of the 1 MiB sequential run (default 4G); --no-seq skips it" },
	{ { "no-seq", no_argument, NULL, 'N' }, NULL, NULL },
	{ { "sweep", required_argument, NULL, 'W' }, "SIZE,SIZE...",
	  "also run at these working sets: the collapse curve, with a chart" },
	{ { "gate", required_argument, NULL, 'g' }, "NAME=COMMAND",
	  "an engine gate run with sh -c: pass on exit 0 (repeatable)" },
	{ { "force", no_argument, NULL, 'f' }, NULL,
	  "measure even when the device is busy (may be serving)" },
	{ { "seed", required_argument, NULL, 's' }, "N",
	  "PRNG seed of the offsets (default: random, recorded)" },
	STEP_OPTIONS_END,
};

const struct step step_accept = {
	.name = "accept",
	.summary = "the new drive against the incident's gates: io_uring 4 KiB O_DIRECT random reads, sequential, engine",
	.synopsis = "swaptool accept [FILE|DEVICE] [options]\n",
	.operands = accept_operands,
	.options = accept_options,
	.run = step_accept_run,
	.render = step_accept_render,
	.flags = STEP_SAVES_RECORD,
};

/* Stop a run after this many failed reads: enough offsets to show a pattern, and no 20 s of
 * hammering a dying drive. Any error fails the run. */
#define ACCEPT_MAX_ERRORS 64
/* A working set with more than 1 % holes, unwritten extents or zero blocks is not representative. */
#define UNBACKED_PERMILLE_MAX 10
/* Blocks read to look for all-zero data where FIEMAP cannot answer (devices, FUSE). */
#define ZERO_SAMPLES 256
/* Output kept from an engine gate: the end of a bench log says why it failed. */
#define GATE_TAIL_BYTES 4096
/* The smallest working set: one 4 KiB read. */
#define ACCEPT_MIN_WS 4096
/* An engine gate's --gate timeout (a profile section sets its own). */
#define GATE_TIMEOUT_S 3600

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
	(void)sig;
	interrupted = 1;
}

struct plan_run {
	char name[32];
	bool sequential;
	unsigned inflight;
	uint64_t duration_s;
	const struct accept_run *thr; /* gate thresholds; NULL: measured only */
};

struct opts {
	uint64_t working_set, ramp_s, seq_bytes, seed, duration_s;
	bool have_working_set, have_duration, have_ramp, have_seed, no_seq, force;
	unsigned threads;
	unsigned inflight[16];
	size_t ninflight;
	uint64_t sweep[16];
	size_t nsweep;
	struct engine_gate gates[16];
	char gate_name[16][64]; /* --gate names: no heap, so early usage errors leak nothing */
	size_t ngates;
};

/* "16,64" */
static int parse_list_u(const char *arg, unsigned *out, size_t max, size_t *n)
{
	_cleanup_free_ char *copy = xstrdup(arg);
	char *save = NULL;
	const char *why;

	*n = 0;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		uint64_t v;
		if (*n == max || u64_parse(tok, &v, &why) < 0 || v == 0 || v > 4096)
			return -EINVAL;
		out[(*n)++] = (unsigned)v;
	}
	return *n ? 0 : -EINVAL;
}

static int parse_list_size(const char *arg, uint64_t *out, size_t max, size_t *n)
{
	_cleanup_free_ char *copy = xstrdup(arg);
	char *save = NULL;
	const char *why;

	*n = 0;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		if (*n == max || size_parse(tok, 512, &out[*n], &why) < 0 || out[(*n)++] < ACCEPT_MIN_WS)
			return -EINVAL;
	return *n ? 0 : -EINVAL;
}

/* Seconds from 1 (0 too when zero_ok: no ramp) to 86400: a run of 0 s measures nothing. */
static int parse_secs(const char *arg, uint64_t *out, bool zero_ok)
{
	const char *why;
	uint64_t v;

	if (u64_parse(arg, &v, &why) < 0 || v > 86400 || (v == 0 && !zero_ok))
		return -EINVAL;
	*out = v;
	return 0;
}

static double us(uint64_t ns)
{
	return (double)ns / 1000.0;
}

struct prog {
	const struct ctx *ctx;
	const char *run;
	const char *label;  /* "working set 2 GiB" in a sweep */
	unsigned k, n;      /* run k of n, sweep included */
	uint64_t start_ns;  /* the run's start, for its time left */
	uint64_t seq_bytes; /* what a sequential run reads: its progress in bytes */
};

static void on_progress(void *arg, const struct io_progress *p)
{
	const struct prog *g = arg;
	char t[32];

	if (p->total_ns)
		snprintf(t, sizeof(t), "%" PRIu64 "/%" PRIu64 " s", (uint64_t)(p->elapsed_ns / 1000000000u),
			 (uint64_t)(p->total_ns / 1000000000u));
	else
		snprintf(t, sizeof(t), "%" PRIu64 " s", (uint64_t)(p->elapsed_ns / 1000000000u));
	/* a timed run's share is its time; a sequential one's its bytes */
	out_progress_eta(g->ctx, g->start_ns, p->total_ns ? p->elapsed_ns : p->bytes, p->total_ns ?: g->seq_bytes,
			 "accept run %u of %u, %s%s%s: %s%s  %" PRIu64 " IOPS  p50 %" PRIu64 " us  %" PRIu64 " MB read",
			 g->k, g->n, g->run, g->label ? " " : "", g->label ? g->label : "", t,
			 p->ramping ? " (ramp)" : "", p->iops_now, p->p50_ns / 1000, p->bytes / 1000000);
}

/* The device accept measured, under the file or block device it read: the report takes the new
 * drive's identity from here (not from preflight's --target-model). Fields unknown are null. */
static void drive_record(struct record *rec, const struct io_target *t, const char *path)
{
	_cleanup_free_ char *model = NULL, *fw = NULL, *serial = NULL, *ctrl = NULL;
	json_object *d;
	uint64_t size;

	if (!t->disk[0])
		return;
	io_drive_identity(t, &model, &fw, &serial);
	io_drive_sysfs(t, &ctrl, &size);
	d = json_object_new_object();
	jset_str(d, "under", path);
	jset_str(d, "disk", t->disk);
	jset_str(d, "controller", ctrl);
	jset_str(d, "kind", ctrl ? "nvme" : "block");
	jset_str(d, "model", model);
	jset_str(d, "firmware", fw);
	jset_str(d, "serial", serial);
	json_object_object_add(d, "size_bytes", size ? json_object_new_uint64(size) : NULL);
	json_object_object_add(rec->root, "drive", d);
}

/* The latency histogram as fio's json+ gives it (its clat bins): the non-empty buckets only, each
 * [lowest ns, highest ns, count]; their counts add up to the run's ios. */
static json_object *hist_bins_json(const struct hist *h)
{
	json_object *o = json_object_new_object(), *bins = json_object_new_array();

	for (unsigned i = 0; i < HIST_BUCKETS && h->count; i++) {
		json_object *b;

		if (!h->b[i])
			continue;
		b = json_object_new_array();
		json_object_array_add(b, json_object_new_uint64(hist_bucket_low(i)));
		json_object_array_add(b, json_object_new_uint64(hist_bucket_high(i)));
		json_object_array_add(b, json_object_new_uint64(h->b[i]));
		json_object_array_add(bins, b);
	}
	jset_str(o, "unit", "ns");
	jset_u64(o, "count", h->count);
	json_object_object_add(o, "bins", bins);
	return o;
}

/* Run one pass and describe it as a run object (docs/design.md, Record contracts). */
static int do_run(const struct ctx *ctx, const struct io_target *t, const struct opts *o, const struct plan_run *pr,
		  uint64_t ws, uint64_t offset, uint64_t seed, const char *label, unsigned k, unsigned n,
		  json_object **out, bool *clean)
{
	struct prog g = { .ctx = ctx, .run = pr->name, .label = label, .k = k, .n = n, .start_ns = mono_ns(),
			  .seq_bytes = o->seq_bytes < ws ? o->seq_bytes : ws };
	struct io_spec s = {
		.sequential = pr->sequential,
		.block_size = pr->sequential ? 1u << 20 : 4096,
		.inflight = pr->inflight,
		.threads = o->threads,
		.offset = offset,
		.length = ws,
		.ramp_ns = pr->sequential ? 0 : o->ramp_s * 1000000000ULL,
		.duration_ns = pr->duration_s * 1000000000ULL,
		.seq_bytes = o->seq_bytes,
		.seed = seed,
		.max_errors = ACCEPT_MAX_ERRORS,
		.stop = &interrupted,
		.progress = on_progress,
		.progress_arg = &g,
	};
	struct io_result res;
	struct io_stability st;
	json_object *run, *lat, *ps, *errs, *offs, *stab, *h;
	int r;

	r = io_run(t->fd, &s, &res);
	out_progress_end(ctx);
	if (r < 0) {
		io_result_free(&res);
		return r;
	}
	run = json_object_new_object();
	jset_str(run, "name", pr->name);
	jset_str(run, "mode", pr->sequential ? "seqread" : "randread");
	jset_u64(run, "block_size", s.block_size);
	jset_u64(run, "inflight", pr->inflight);
	jset_u64(run, "threads", res.threads);
	jset_u64(run, "working_set_bytes", ws);
	if (pr->sequential)
		jset_u64(run, "bytes_planned", o->seq_bytes);
	jset_u64(run, "ramp_s", pr->sequential ? 0 : o->ramp_s);
	/* duration_s: the measured window, drained reads included (what IOPS is divided by) */
	jset_double(run, "duration_s", round((double)res.elapsed_ns / 1e3) / 1e6);
	jset_u64(run, "planned_duration_s", pr->sequential ? 0 : pr->duration_s);
	jset_u64(run, "ios", res.ios);
	jset_u64(run, "bytes", res.bytes);
	jset_u64(run, "iops", io_rate(res.ios, res.elapsed_ns));
	jset_double(run, "mb_s", round((double)io_rate(res.bytes, res.elapsed_ns) / 1e5) / 10.0);
	lat = json_object_new_object();
	jset_double(lat, "min", res.hist.count ? us(res.hist.min_ns) : 0);
	jset_double(lat, SCHEMA_LAT_P50, us(hist_quantile(&res.hist, 500000)));
	jset_double(lat, SCHEMA_LAT_P90, us(hist_quantile(&res.hist, 900000)));
	jset_double(lat, SCHEMA_LAT_P99, us(hist_quantile(&res.hist, 990000)));
	jset_double(lat, SCHEMA_LAT_P99_9, us(hist_quantile(&res.hist, 999000)));
	jset_double(lat, SCHEMA_LAT_P99_99, us(hist_quantile(&res.hist, 999900)));
	jset_double(lat, SCHEMA_LAT_MAX, us(res.hist.max_ns));
	jset_double(lat, "mean", us(hist_mean(&res.hist)));
	json_object_object_add(run, "lat_us", lat);
	jset_u64(run, "over_200ms", res.hist.over_200ms);
	jset_u64(run, "over_1s", res.hist.over_1s);
	jset_u64(run, "over_5s", res.hist.over_5s);
	json_object_object_add(run, "lat_hist", hist_bins_json(&res.hist));
	ps = json_object_new_array();
	for (size_t i = 0; i < res.nseconds; i++)
		json_object_array_add(ps, json_object_new_int64((int64_t)res.per_second[i]));
	json_object_object_add(run, "per_second_iops", ps);
	jset_double(run, "cpu_us_per_io", res.ios ? round((double)res.cpu_ns / (double)res.ios) / 1000.0 : 0);
	jset_u64(run, "seed", seed);
	io_stability(res.per_second, res.nseconds, &st);
	stab = json_object_new_object();
	jset_bool(stab, "evaluated", st.evaluated);
	if (st.evaluated) {
		jset_bool(stab, "steady", st.steady);
		jset_double(stab, "range_pct", round(st.range_pct * 10) / 10);
		jset_double(stab, "slope_pct", round(st.slope_pct * 10) / 10);
	}
	json_object_object_add(run, "stability", stab);
	errs = json_object_new_object();
	jset_u64(errs, "count", res.errors);
	jset_bool(errs, "limit_reached", res.error_limit);
	offs = json_object_new_array();
	for (unsigned i = 0; i < res.nerr_kept; i++) {
		json_object *e = json_object_new_object();
		jset_u64(e, "offset", res.err_offset[i]);
		jset_str(e, "error", strerror(-res.err_code[i]));
		json_object_array_add(offs, e);
	}
	json_object_object_add(errs, "first", offs);
	json_object_object_add(run, "errors", errs);
	h = json_object_new_object();
	jset_bool(h, "single_issuer", res.ring_flags & IORING_SETUP_SINGLE_ISSUER);
	jset_bool(h, "defer_taskrun", res.ring_flags & IORING_SETUP_DEFER_TASKRUN);
	jset_bool(h, "coop_taskrun", res.ring_flags & IORING_SETUP_COOP_TASKRUN);
	jset_bool(h, "fixed_buffers", res.fixed_buffers);
	jset_bool(h, "fixed_files", res.fixed_files);
	json_object_object_add(run, "ring", h);
	jset_bool(run, "complete", !res.interrupted);
	*clean = !res.interrupted;
	io_result_free(&res);
	*out = run;
	return 0;
}

static void on_gate_tick(void *arg, uint64_t elapsed_ns)
{
	const struct prog *g = arg;

	out_progress(g->ctx, "accept: engine gate '%s' running: %" PRIu64 " s", g->run, elapsed_ns / 1000000000u);
}

/* Run an engine gate with sh -c in its own process group (src/proc.c): at its timeout the whole
 * group is stopped, and reading its output stops too, so a daemon it leaves behind (setsid) cannot
 * hold accept; what escaped the group is killed when the gate ends. */
static json_object *run_engine_gate(const struct ctx *ctx, const struct engine_gate *g, bool *pass)
{
	json_object *o = json_object_new_object();
	struct prog tick = { .ctx = ctx, .run = g->name };
	struct proc_opts po = {
		.shell = g->command,
		.timeout_ns = g->timeout_s * 1000000000ULL,
		.tail_cap = GATE_TAIL_BYTES,
		.stop = &interrupted,
		.reap_escaped = true,
		.tick = on_gate_tick,
		.tick_arg = &tick,
	};
	struct proc_result res;
	int r;

	*pass = false;
	jset_str(o, "name", g->name);
	jset_str(o, "command", g->command);
	jset_u64(o, "timeout_s", g->timeout_s);
	out_progress(ctx, "accept: engine gate '%s' running", g->name);
	r = proc_run(&po, &res);
	out_progress_end(ctx);
	if (r < 0) {
		jset_str(o, "error", strerror(-r));
		jset_str(o, "status", "fail");
		return o;
	}
	jset_double(o, "duration_s", round((double)res.elapsed_ns / 1e6) / 1e3);
	jset_bool(o, "timed_out", res.timed_out);
	if (WIFEXITED(res.status))
		jset_i64(o, "exit_code", WEXITSTATUS(res.status));
	else {
		json_object_object_add(o, "exit_code", NULL);
		jset_i64(o, "signal", WIFSIGNALED(res.status) ? WTERMSIG(res.status) : 0);
	}
	if (res.exec_errno)
		jset_str(o, "error", strerror(res.exec_errno));
	/* the gate left processes that held its output or escaped its group: they were killed */
	jset_bool(o, "output_cut", res.output_cut);
	jset_u64(o, "escaped_killed", res.escaped);
	json_object_object_add(o, "output_tail", json_object_new_string_len(res.tail, (int)res.tail_len));
	*pass = !res.timed_out && !res.stopped && !res.exec_errno && WIFEXITED(res.status) &&
		WEXITSTATUS(res.status) == 0;
	jset_str(o, "status", *pass ? "pass" : "fail");
	proc_result_free(&res);
	return o;
}

static const char *human_bytes(uint64_t v, char buf[32])
{
	return fmt_binary(v, buf);
}

/* The largest working set a target allows, as an argument one can paste: "512M", "1863G". */
static const char *ws_arg(uint64_t size, char buf[32])
{
	uint64_t mib = size >> 20;

	if (!mib)
		snprintf(buf, 32, "%" PRIu64, (uint64_t)(size & ~(uint64_t)4095));
	else if (mib % 1024 == 0)
		snprintf(buf, 32, "%" PRIu64 "G", mib / 1024);
	else
		snprintf(buf, 32, "%" PRIu64 "M", mib);
	return buf;
}

/* How much of [off, off + len) reads never touch flash: holes and unwritten extents by FIEMAP on a
 * file, all-zero blocks among ZERO_SAMPLES sampled ones elsewhere (devices, FUSE). The object
 * says how it was measured (method null: it could not be), the fraction and whether that is
 * within UNBACKED_PERMILLE_MAX. */
static json_object *unbacked_json(const struct io_target *t, uint64_t off, uint64_t len, uint64_t seed)
{
	json_object *rep = json_object_new_object();
	uint64_t unbacked = 0, permille = 0;
	unsigned zero = 0, got = 0;
	const char *method = NULL;
	double pct = 0;

	if (!t->block_device && io_fiemap_unbacked(t->fd, off, len, &unbacked) == 0) {
		method = "fiemap";
		permille = (uint64_t)(((unsigned __int128)unbacked * 1000 + len - 1) / len);
		pct = round((double)unbacked * 10000.0 / (double)len) / 100.0;
		jset_u64(rep, "unbacked_bytes", unbacked);
	} else if (io_zero_sample(t->fd, off, len, ZERO_SAMPLES, seed, &zero, &got) == 0 && got) {
		method = "zero-sample";
		permille = ((uint64_t)zero * 1000 + got - 1) / got;
		pct = round((double)zero * 10000.0 / (double)got) / 100.0;
		jset_u64(rep, "samples", got);
		jset_u64(rep, "zero_blocks", zero);
	}
	jset_str(rep, "method", method);
	jset_double(rep, "unbacked_pct", pct);
	jset_bool(rep, "representative", !method || permille <= UNBACKED_PERMILLE_MAX);
	return rep;
}

static const char *unbacked_what(const char *method)
{
	return method[0] == 'f' ? "holes or unwritten extents" : "all-zero blocks (sampled)";
}

/* What the phases of one accept share: the options, the plan, the target and the record's
 * arrays, filled phase by phase. */
struct accept_job {
	struct ctx *ctx;
	struct record *rec;
	const struct profile *pf;
	struct opts o;
	const char *home;      /* --home: the node user's home for '~' in the profile's glob */
	struct plan_run plan[24];
	size_t nplan;
	/* the target and why it was chosen */
	char *path;
	const char *chosen_by; /* "argument", "profile-glob", "root-disk" */
	char *reason;
	struct io_target t;
	uint64_t ws, offset;
	json_object *runs, *gates;
	bool complete, harness_pass;
	size_t nengine;
};

static void accept_job_free(struct accept_job *j)
{
	io_target_close(&j->t);
	free(j->path);
	free(j->reason);
}

/* Options into j->o. Returns -1 to go on, else the exit code of a usage error. */
static int parse_args(struct accept_job *j, int argc, char **argv)
{
	struct ctx *ctx = j->ctx;
	struct opts *o = &j->o;
	const char *why;
	uint64_t v;
	int c;

	while ((c = getopt_long(argc, argv, "", step_getopt(accept_options), NULL)) != -1) {
		switch (c) {
		case 'w':
			if (size_parse(optarg, 512, &o->working_set, &why) < 0 || o->working_set < ACCEPT_MIN_WS)
				return ctx_error(ctx, EXIT_USAGE, "bad --working-set '%s': %s; at least 4K, e.g. --working-set 98G",
						 optarg, why ? why : "smaller than one 4 KiB read");
			o->have_working_set = true;
			break;
		case 'd':
			if (parse_secs(optarg, &o->duration_s, false) < 0)
				return ctx_error(ctx, EXIT_USAGE, "bad --duration '%s': seconds from 1 to 86400", optarg);
			o->have_duration = true;
			break;
		case 'r':
			if (parse_secs(optarg, &o->ramp_s, true) < 0)
				return ctx_error(ctx, EXIT_USAGE, "bad --ramp '%s': seconds from 0 to 86400", optarg);
			break;
		case 'i':
			if (parse_list_u(optarg, o->inflight, ARRAY_SIZE(o->inflight), &o->ninflight) < 0)
				return ctx_error(ctx, EXIT_USAGE,
						 "bad --inflight '%s': reads in flight from 1 to 4096, comma-separated (16,64)",
						 optarg);
			break;
		case 't':
			if (u64_parse(optarg, &v, &why) < 0 || v == 0 || v > 1024)
				return ctx_error(ctx, EXIT_USAGE, "bad --threads '%s': from 1 to 1024", optarg);
			o->threads = (unsigned)v;
			break;
		case 'S':
			if (size_parse(optarg, 512, &o->seq_bytes, &why) < 0 || o->seq_bytes < (1u << 20))
				return ctx_error(ctx, EXIT_USAGE, "bad --seq-bytes '%s': %s; at least 1M, e.g. --seq-bytes 4G",
						 optarg, why ? why : "too small");
			break;
		case 'N':
			o->no_seq = true;
			break;
		case 'W':
			if (parse_list_size(optarg, o->sweep, ARRAY_SIZE(o->sweep), &o->nsweep) < 0)
				return ctx_error(ctx, EXIT_USAGE,
						 "bad --sweep '%s': working sets of at least 4K separated by commas, e.g. --sweep 2G,20G,98G",
						 optarg);
			break;
		case 'f':
			o->force = true;
			break;
		case 'g': {
			const char *eq = strchr(optarg, '=');
			if (!eq || eq == optarg || !eq[1] || eq - optarg >= 64 || o->ngates == ARRAY_SIZE(o->gates))
				return ctx_error(ctx, EXIT_USAGE,
						 "bad --gate '%s': NAME=COMMAND (name up to 63 characters, 16 gates at most), "
						 "e.g. --gate bench='./bench.sh'", optarg);
			memcpy(o->gate_name[o->ngates], optarg, (size_t)(eq - optarg));
			o->gate_name[o->ngates][eq - optarg] = '\0';
			o->gates[o->ngates] = (struct engine_gate){
				.name = o->gate_name[o->ngates],
				.command = (char *)eq + 1,
				.timeout_s = GATE_TIMEOUT_S,
			};
			o->ngates++;
			break;
		}
		case 's':
			if (u64_parse(optarg, &o->seed, &why) < 0)
				return ctx_error(ctx, EXIT_USAGE, "bad --seed '%s': a positive integer", optarg);
			o->have_seed = true;
			break;
		case 'H':
			if (optarg[0] != '/')
				return ctx_error(ctx, EXIT_USAGE, "bad --home '%s': an absolute path, e.g. --home /home/USER",
						 optarg);
			j->home = optarg;
			break;
		default:
			return step_bad_option(ctx, argc, argv);
		}
	}
	if (optind + 1 < argc)
		return ctx_error(ctx, EXIT_USAGE, "one target only; see 'swaptool help accept'");
	if (optind < argc) {
		j->path = xstrdup(argv[optind]);
		j->chosen_by = "argument";
		j->reason = xstrdup("given on the command line");
	}
	if (!o->have_seed) {
		if (getrandom(&o->seed, sizeof(o->seed), 0) != sizeof(o->seed))
			o->seed = mono_ns();
	}
	return -1;
}

/* No target given: what the gates were written for, the Engram shard found through the
 * profile's glob, else the whole disk that holds '/' (read-only, like every target). Returns -1
 * when found, else the exit code of an error that lists what was looked for. */
static int choose_target(struct accept_job *j)
{
	_cleanup_free_ char *home = NULL, *pattern = NULL, *shard = NULL, *disk = NULL, *how = NULL;
	const char *glob_pat = j->pf->target_glob;
	size_t nmatch = 0;
	int r;

	if (j->path)
		return -1;
	if (glob_pat && glob_pat[0] == '~' && node_home(j->home, &home) < 0)
		home = NULL;
	if (glob_pat && (glob_pat[0] != '~' || home))
		pattern = profile_expand(glob_pat, home);
	if (pattern && io_find_shard(pattern, &shard, &nmatch) == 0) {
		j->path = TAKE_PTR(shard);
		j->chosen_by = "profile-glob";
		j->reason = nmatch > 1 ? xasprintf("the largest of %zu files matching the profile's target_glob '%s'",
						   nmatch, pattern)
				       : xasprintf("the file matching the profile's target_glob '%s'", pattern);
		return -1;
	}
	r = io_mount_disk("/", &disk, &how);
	if (r == 0) {
		j->path = TAKE_PTR(disk);
		j->chosen_by = "root-disk";
		j->reason = xasprintf("the whole disk that holds '/': no file matches the profile's target_glob '%s'; %s",
				      pattern ? pattern : glob_pat, how);
		return -1;
	}
	return ctx_error(j->ctx, EXIT_FAILED,
			 "no target found: no file matches the profile's target_glob '%s'%s, and '/' is not mounted "
			 "from a block device readable here (/proc/self/mountinfo, /sys/dev/block); give the file or "
			 "block device to measure (swaptool accept FILE|DEVICE) or set target_glob in [accept]",
			 pattern ? pattern : glob_pat ? glob_pat : "(none)",
			 glob_pat && glob_pat[0] == '~' && !home ? " (no home for '~': pass --home)" : "");
}

/* The runs: the profile's random runs (or one per --inflight depth), then the sequential one. */
static void plan_runs(struct accept_job *j)
{
	const struct profile *pf = j->pf;
	const struct opts *o = &j->o;
	const struct accept_run *rnd[16];
	size_t nrnd = 0;

	for (size_t i = 0; i < pf->nruns && nrnd < ARRAY_SIZE(rnd); i++)
		if (!pf->runs[i].sequential)
			rnd[nrnd++] = &pf->runs[i];
	for (size_t i = 0; i < (o->ninflight ? o->ninflight : nrnd) && j->nplan < ARRAY_SIZE(j->plan); i++) {
		struct plan_run *p = &j->plan[j->nplan++];
		const struct accept_run *thr = NULL;

		/* a depth the profile gates (16, 64) keeps its gates; another depth takes the gates
		 * of the profile's random run at the same position, or none */
		if (o->ninflight) {
			for (size_t k = 0; k < nrnd && !thr; k++)
				if (rnd[k]->inflight == o->inflight[i])
					thr = rnd[k];
			if (!thr && i < nrnd)
				thr = rnd[i];
		} else
			thr = rnd[i];
		*p = (struct plan_run){ .inflight = o->ninflight ? o->inflight[i] : thr->inflight, .thr = thr,
					.duration_s = thr && thr->duration_s ? thr->duration_s : 15 };
		if (!p->inflight)
			p->inflight = 16;
		if (o->have_duration)
			p->duration_s = o->duration_s;
		if (thr && (!o->ninflight || thr->inflight == p->inflight))
			snprintf(p->name, sizeof(p->name), "%.31s", thr->name);
		else
			snprintf(p->name, sizeof(p->name), "rand%u", p->inflight);
	}
	for (size_t i = 0; i < pf->nruns && !o->no_seq; i++)
		if (pf->runs[i].sequential && j->nplan < ARRAY_SIZE(j->plan)) {
			struct plan_run *p = &j->plan[j->nplan++];
			*p = (struct plan_run){ .sequential = true, .inflight = pf->runs[i].inflight ? pf->runs[i].inflight : 4,
						.thr = &pf->runs[i] };
			snprintf(p->name, sizeof(p->name), "%.31s", pf->runs[i].name);
		}
}

/* Open the target and size the working set. Returns -1 to go on, else an error's exit code. */
static int open_target(struct accept_job *j)
{
	struct ctx *ctx = j->ctx;
	const struct opts *o = &j->o;
	const char *path = j->path;
	_cleanup_free_ char *why = NULL;
	char b1[32], b2[32], b3[32];
	uint64_t ws = o->working_set & ~4095ULL;
	int r;

	/* a target accept found on its own: the error says why that one */
	_cleanup_free_ char *via = streq(j->chosen_by, "argument") ? xstrdup("") : xasprintf(" (%s)", j->reason);

	r = io_target_open(path, &j->t, &why);
	if (r == -ENOENT)
		return ctx_error(ctx, EXIT_FAILED, "cannot open '%s'%s: no such file or device; give the path of the "
						   "file (the Engram shard) or block device to measure", path, via);
	if (r == -EOPNOTSUPP)
		return ctx_error(ctx, EXIT_FAILED, "no O_DIRECT on '%s'%s: %s; put the test file on the drive under test",
				 path, via, why);
	if (r < 0)
		return ctx_error(ctx, EXIT_FAILED, "cannot read '%s'%s: %s (%s); give a regular file or a block device",
				 path, via, why ? why : "open failed", strerror(-r));

	/* a target found on its own (a shard a little smaller than 98 GB) is measured whole rather
	 * than refused; a size the operator asked for is never changed */
	if (ws > j->t.size && !streq(j->chosen_by, "argument") && !o->have_working_set && j->t.size >= ACCEPT_MIN_WS) {
		record_check(j->rec, "working-set", ST_WARN,
			     "the profile's working set (%s) is larger than '%s' (%s bytes): clamped to the whole target",
			     human_bytes(o->working_set, b1), path, fmt_thousands(j->t.size, b2));
		ws = j->t.size & ~4095ULL;
	}
	if (io_working_set(&j->t, ws, &j->offset) < 0)
		return ctx_error(ctx, EXIT_USAGE,
				 "the working set (%s) is larger than '%s' (%s bytes); pass --working-set %s or less",
				 human_bytes(o->working_set, b1), path, fmt_thousands(j->t.size, b2), ws_arg(j->t.size, b3));
	for (size_t i = 0; i < o->nsweep; i++)
		if ((o->sweep[i] & ~4095ULL) > j->t.size)
			return ctx_error(ctx, EXIT_USAGE,
					 "the sweep working set %s is larger than '%s' (%s bytes); use sizes up to --sweep %s",
					 human_bytes(o->sweep[i], b1), path, fmt_thousands(j->t.size, b2),
					 ws_arg(j->t.size, b3));
	if (!o->no_seq && ws < (1u << 20))
		return ctx_error(ctx, EXIT_USAGE, "the working set (%s) is smaller than one 1 MiB sequential read; "
						  "pass a larger --working-set or --no-seq", human_bytes(ws, b1));
	j->ws = ws;
	return -1;
}

/* The target as the record describes it: what, why it was chosen, and the drive under it. */
static void describe_target(struct accept_job *j)
{
	const struct io_target *t = &j->t;
	json_object *target = json_object_new_object();

	jset_str(target, "path", j->path);
	jset_str(target, "kind", t->block_device ? "block" : "file");
	jset_u64(target, "size_bytes", t->size);
	jset_u64(target, "working_set_bytes", j->ws);
	jset_u64(target, "offset_bytes", j->offset);
	jset_u64(target, "lba_size", t->lba_size);
	jset_str(target, "device", t->dev[0] ? t->dev : NULL);
	jset_str(target, "disk", t->disk[0] ? t->disk : NULL);
	jset_str(target, "fs_type", t->fs_type[0] ? t->fs_type : NULL);
	jset_str(target, "chosen_by", j->chosen_by);
	jset_str(target, "reason", j->reason);
	json_object_object_add(j->rec->root, "target", target);
	jset_u64(j->rec->root, "seed", j->o.seed);
	drive_record(j->rec, t, j->path);
}

/* Reads that never touch flash: holes/unwritten extents (files), zero blocks (devices). */
static void check_representative(struct accept_job *j)
{
	struct record *rec = j->rec;
	json_object *rep = unbacked_json(&j->t, j->offset, j->ws, j->o.seed);
	const char *method = jget_str(rep, "method");
	bool representative = jget_bool(rep, "representative");

	json_object_object_add(rec->root, "working_set", rep);
	if (!method)
		record_check(rec, "representative", ST_SKIP, "could not look for holes or zero blocks in the working set");
	else if (!representative)
		record_check(rec, "representative", ST_WARN,
			     "%.2f %% of the working set is %s: those reads never touch flash and the result is not "
			     "representative; measure a file with real data",
			     jget_double(rep, "unbacked_pct"), unbacked_what(method));
	else
		record_check(rec, "representative", ST_PASS, "working set holds real data (%s, %.2f %% unbacked)", method,
			     jget_double(rep, "unbacked_pct"));
	jset_bool(rec->root, "representative", representative);
}

/* Is the node serving? The device's own I/O rate over 1 s, before we add ours. Returns -1 to go
 * on, else the exit code of the refusal. */
static int check_busy(struct accept_job *j)
{
	struct record *rec = j->rec;
	const struct profile *pf = j->pf;
	const char *dev = j->t.dev;
	json_object *busy = json_object_new_object();
	uint64_t a, b, v;

	jset_str(busy, "device", dev[0] ? dev : NULL);
	jset_u64(busy, "threshold_iops", pf->busy_threshold_iops);
	jset_bool(busy, "forced", j->o.force);
	if (!dev[0] || io_diskstats_ios(dev, &a) < 0) {
		jset_bool(busy, "checked", false);
		json_object_object_add(rec->root, "busy", busy);
		record_check(rec, "busy", ST_SKIP, "no block device under '%s' in /proc/diskstats: busy check not possible",
			     j->path);
		return -1;
	}
	{
		struct timespec ts = { 1, 0 };
		uint64_t t0 = mono_ns(), dt;

		out_progress(j->ctx, "accept: sampling the I/O rate of '%s' for 1 s", dev);
		while (nanosleep(&ts, &ts) < 0 && errno == EINTR && !interrupted)
			;
		out_progress_end(j->ctx);
		dt = mono_ns() - t0;
		if (io_diskstats_ios(dev, &b) < 0)
			b = a;
		v = io_rate(b - a, dt);
	}
	jset_bool(busy, "checked", true);
	jset_u64(busy, "iops", v);
	json_object_object_add(rec->root, "busy", busy);
	if (v > pf->busy_threshold_iops && !j->o.force && !interrupted)
		return ctx_error(j->ctx, EXIT_FAILED,
				 "'%s' is busy: %" PRIu64 " IOPS over 1 s (threshold %" PRIu64
				 "): the node may be serving; run the reference arm on an idle, non-serving "
				 "node, or pass --force",
				 dev, v, pf->busy_threshold_iops);
	if (v > pf->busy_threshold_iops)
		record_check(rec, "busy", ST_WARN, "'%s' did %" PRIu64 " IOPS before the run (threshold %" PRIu64
			     "); measured anyway (--force)", dev, v, pf->busy_threshold_iops);
	else
		record_check(rec, "busy", ST_PASS, "'%s' idle before the run: %" PRIu64 " IOPS (threshold %" PRIu64 ")",
			     dev, v, pf->busy_threshold_iops);
	return -1;
}

/* Check the input: open and size the target, describe it, look for holes, refuse a busy node. */
static int check_input(struct accept_job *j)
{
	int r = open_target(j);

	if (r >= 0)
		return r;
	describe_target(j);
	check_representative(j);
	return check_busy(j);
}

/* Run the planned harness runs in order into j->runs; stops at the first interrupted one.
 * Returns -1 to go on, else the exit code of a harness that could not run. */
/* A run whose reads failed because the drive left the machine (hot-unplugged, its controller
 * reset away) measured nothing about the drive: that is "could not do the job" (exit 3) naming the
 * drive, not a gate the drive failed, and no later run is tried on a device that is gone.
 * Returns -1 when the drive is still there (or the run had no errors), else the exit code. */
static int drive_vanished(struct accept_job *j, json_object *run, const char *name)
{
	json_object *errs = jget_object(run, "errors");
	json_object *first = jarray_at(jget_array(errs, "first"), 0);
	_cleanup_free_ char *sys = NULL;

	if (!jget_u64(errs, "count") || !j->t.disk[0])
		return -1;
	sys = xasprintf("/sys/block/%s", j->t.disk);
	if (access(sys, F_OK) == 0)
		return -1;
	return ctx_error(j->ctx, EXIT_FAILED,
			 "the drive '%s' under '%s' vanished during %s: %" PRIu64 " reads failed (first: %s) and "
			 "/sys/block/%s is gone; nothing was measured: reseat or reconnect it, then run accept again",
			 j->t.disk, j->path, name, jget_u64(errs, "count"), jget_str(first, "error") ?: "?", j->t.disk);
}

/* The runs, announced with the time they take (the timed ones: the sequential read and the engine
 * gates last as long as the device and the commands make them). */
static void announce_runs(const struct accept_job *j)
{
	const struct opts *o = &j->o;
	const unsigned nall = (unsigned)(j->nplan + o->nsweep);
	uint64_t secs = 0, sweep_s = o->have_duration ? o->duration_s
				     : j->nplan && !j->plan[0].sequential ? j->plan[0].duration_s : 15;
	bool seq = false;
	char d[16];

	for (size_t i = 0; i < j->nplan; i++) {
		if (j->plan[i].sequential)
			seq = true;
		else
			secs += o->ramp_s + j->plan[i].duration_s;
	}
	secs += o->nsweep * (o->ramp_s + sweep_s);
	out_note(j->ctx, "accept: %u run%s, about %s of timed reads%s%s", nall, nall == 1 ? "" : "s",
		 out_duration(secs, d), seq ? " plus the sequential read" : "",
		 j->pf->nengine || o->ngates ? " and the engine gates" : "");
}

static int run_harness(struct accept_job *j)
{
	const unsigned nall = (unsigned)(j->nplan + j->o.nsweep);

	announce_runs(j);
	for (size_t i = 0; i < j->nplan && !interrupted; i++) {
		json_object *run = NULL;
		bool clean = true;
		int r = do_run(j->ctx, &j->t, &j->o, &j->plan[i], j->ws, j->offset, j->o.seed + i, NULL, (unsigned)i + 1,
			       nall, &run, &clean);

		if (r < 0)
			return ctx_error(j->ctx, EXIT_FAILED, "cannot run the harness on '%s': %s; check io_uring is enabled "
							      "(sysctl kernel.io_uring_disabled)", j->path, strerror(-r));
		json_object_array_add(j->runs, run);
		r = drive_vanished(j, run, j->plan[i].name);
		if (r >= 0)
			return r;
		if (!clean)
			break;
	}
	return -1;
}

/* One run against its gates: read errors, no data, the thresholds, stability. False when the
 * run was interrupted (judging stops there). */
static bool judge_run(struct accept_job *j, const struct plan_run *p, json_object *run)
{
	struct record *rec = j->rec;
	struct io_gate gv[IO_MAX_GATES];
	uint64_t errors = jget_u64(jget(run, "errors"), "count");
	json_object *st = jget(run, "stability");
	char b1[32], b2[32];
	bool nodata;
	size_t ng;

	if (!jget_bool(run, "complete")) {
		j->complete = false;
		record_check(rec, p->name, ST_FAIL, "%s interrupted after %.1f s: the record is incomplete", p->name,
			     jget_double(run, "duration_s"));
		return false;
	}
	if (errors) {
		json_object *g = json_object_new_object(), *ck;
		json_object *first = json_object_array_get_idx(jget(jget(run, "errors"), "first"), 0);
		char gname[64];

		snprintf(gname, sizeof(gname), "%.31s-errors", p->name);
		j->harness_pass = false;
		jset_str(g, "name", gname);
		jset_str(g, "kind", SCHEMA_GATE_KIND_HARNESS);
		jset_str(g, "run", p->name);
		jset_str(g, "status", "fail");
		jset_u64(g, "threshold", 0);
		jset_u64(g, "measured", errors);
		jset_str(g, "unit", "errors");
		json_object_array_add(j->gates, g);
		ck = record_check(rec, gname, ST_FAIL,
				  "%s: %" PRIu64 " read errors%s, first at offset %" PRIu64 " (%s): the drive fails", p->name,
				  errors, jget_bool(jget(run, "errors"), "limit_reached") ? " (run stopped)" : "",
				  jget_u64(first, "offset"), jget_str(first, "error"));
		jset_u64(ck, "measured", errors);
	}
	ng = p->thr ? io_gates_eval(p->thr, p->name, run, gv) : 0;
	/* A gate never passes on no data: with no read completed, IOPS is 0 but every latency
	 * reads 0 us too, which any "at most" gate would take for a pass. */
	nodata = jget_u64(run, "ios") == 0;
	if (nodata) {
		char id[64];

		j->harness_pass = false;
		snprintf(id, sizeof(id), "%.31s-reads", p->name);
		record_check(rec, id, ST_FAIL, "%s: no read completed in %.1f s: nothing was measured, its gates fail",
			     p->name, jget_double(run, "duration_s"));
	}
	for (size_t k = 0; k < ng; k++) {
		json_object *g = json_object_new_object(), *ck;
		bool lat = streq(gv[k].unit, "us");

		if (nodata)
			gv[k].pass = false;
		j->harness_pass &= gv[k].pass;
		jset_str(g, "name", gv[k].name);
		jset_str(g, "kind", SCHEMA_GATE_KIND_HARNESS);
		jset_str(g, "run", p->name);
		jset_str(g, "status", gv[k].pass ? "pass" : "fail");
		jset_double(g, "threshold", gv[k].threshold);
		jset_double(g, "measured", gv[k].measured);
		jset_str(g, "unit", gv[k].unit);
		jset_str(g, "op", gv[k].at_least ? ">=" : "<=");
		json_object_array_add(j->gates, g);
		if (lat)
			ck = record_check(rec, gv[k].name, gv[k].pass ? ST_PASS : ST_FAIL,
					  "%s (%u in flight): %s %.*f us, gate %s %s us", p->name, p->inflight, gv[k].what,
					  gv[k].measured < 1000 ? 1 : 0, gv[k].measured, gv[k].at_least ? ">=" : "<=",
					  fmt_thousands((uint64_t)gv[k].threshold, b2));
		else
			ck = record_check(rec, gv[k].name, gv[k].pass ? ST_PASS : ST_FAIL,
					  "%s (%u in flight): %s %s, gate %s %s", p->name, p->inflight,
					  fmt_thousands((uint64_t)gv[k].measured, b1), gv[k].what, gv[k].at_least ? ">=" : "<=",
					  fmt_thousands((uint64_t)gv[k].threshold, b2));
		jset_double(ck, "threshold", gv[k].threshold);
		jset_double(ck, "measured", gv[k].measured);
	}
	if (jget_bool(st, "evaluated") && !jget_bool(st, "steady")) {
		char id[64];
		snprintf(id, sizeof(id), "%.31s-stability", p->name);
		record_check(rec, id, ST_WARN,
			     "%s: IOPS not steady (range %.1f %% of the mean, slope %.1f %%; steady is "
			     "<= 20 %% and <= 10 %%): lengthen --duration or --ramp",
			     p->name, jget_double(st, "range_pct"), jget_double(st, "slope_pct"));
	}
	return true;
}

/* Judge every run that ran, in order (the checks keep the order of the runs). */
static void judge_harness(struct accept_job *j)
{
	for (size_t i = 0; i < json_object_array_length(j->runs); i++)
		if (!judge_run(j, &j->plan[i], json_object_array_get_idx(j->runs, i)))
			break;
}

/* --sweep: the incident's collapse curve (69 K -> 13 K IOPS on the bad drive, flat on a good
 * one), run and judged. Returns -1 to go on, else an error's exit code. */
static int run_sweep(struct accept_job *j)
{
	const struct opts *o = &j->o;
	const struct plan_run *plan = j->plan;
	struct record *rec = j->rec;
	struct plan_run sp = { .inflight = j->nplan && !plan[0].sequential ? plan[0].inflight : 16,
			       .duration_s = j->nplan && !plan[0].sequential ? plan[0].duration_s : 15 };
	uint64_t first_iops = 0, last_iops = 0;
	json_object *holes = NULL, *sweep; /* the first unrepresentative working set (owned by the record) */
	uint64_t holes_ws = 0;
	char b1[32], b2[32];

	if (!o->nsweep || interrupted || !j->complete)
		return -1;
	if (o->have_duration)
		sp.duration_s = o->duration_s;
	snprintf(sp.name, sizeof(sp.name), "sweep%u", sp.inflight);
	sweep = json_object_new_array();
	json_object_object_add(rec->root, "sweep", sweep);
	for (size_t i = 0; i < o->nsweep && !interrupted; i++) {
		uint64_t sws = o->sweep[i] & ~4095ULL, soff = 0;
		json_object *run = NULL, *rep;
		bool clean = true;
		char label[48];
		int r;

		io_working_set(&j->t, sws, &soff);
		snprintf(label, sizeof(label), "working set %s", human_bytes(sws, b1));
		/* a larger working set may reach into holes the main one missed */
		rep = unbacked_json(&j->t, soff, sws, o->seed + 100 + i);
		if (!jget_bool(rep, "representative") && !holes) {
			holes = rep;
			holes_ws = sws;
		}
		r = do_run(j->ctx, &j->t, o, &sp, sws, soff, o->seed + 100 + i, label, (unsigned)(j->nplan + i) + 1,
			   (unsigned)(j->nplan + o->nsweep), &run, &clean);
		if (r < 0) {
			json_object_put(rep);
			return ctx_error(j->ctx, EXIT_FAILED, "cannot run the sweep on '%s': %s", j->path, strerror(-r));
		}
		jset_u64(run, "offset_bytes", soff);
		json_object_object_add(run, "working_set", rep);
		json_object_array_add(sweep, run);
		r = drive_vanished(j, run, label);
		if (r >= 0)
			return r;
		if (!clean) {
			j->complete = false;
			record_check(rec, "sweep", ST_FAIL, "sweep interrupted at working set %s", b1);
			break;
		}
		if (i == 0)
			first_iops = jget_u64(run, "iops");
		last_iops = jget_u64(run, "iops");
	}
	if (holes)
		record_check(rec, "sweep-representative", ST_WARN,
			     "%.2f %% of the %s working set is %s: its sweep IOPS is not representative; "
			     "measure a file with real data",
			     jget_double(holes, "unbacked_pct"), human_bytes(holes_ws, b1),
			     unbacked_what(jget_str(holes, "method")));
	if (j->complete && o->nsweep > 1) {
		/* the bad drive kept 19 % of its IOPS from 2 GB to 98 GB, the good one 71 % */
		bool collapse = first_iops && last_iops * 2 < first_iops;
		record_check(rec, "sweep", collapse ? ST_WARN : ST_PASS,
			     "IOPS from the smallest to the largest working set: %s -> %s (%.0f %%)%s",
			     fmt_thousands(first_iops, b1), fmt_thousands(last_iops, b2),
			     first_iops ? 100.0 * (double)last_iops / (double)first_iops : 0.0,
			     collapse ? ": throughput collapses as the working set grows (mapping-cache misses)" : "");
	}
	return -1;
}

/* Engine gates: the incident's real test; the harness only predicts them. Run and judged. */
static void run_engine_gates(struct accept_job *j)
{
	struct record *rec = j->rec;
	const struct profile *pf = j->pf;
	json_object *engine = json_object_new_array();
	const struct engine_gate *all[48];
	size_t nall = 0;

	json_object_object_add(rec->root, "engine_gates", engine);
	if (!j->complete || interrupted)
		return;
	for (size_t i = 0; i < pf->nengine && nall < ARRAY_SIZE(all); i++)
		all[nall++] = &pf->engine[i];
	for (size_t i = 0; i < j->o.ngates && nall < ARRAY_SIZE(all); i++)
		all[nall++] = &j->o.gates[i];
	if (nall && !j->harness_pass) {
		record_check(rec, "engine-gates", ST_SKIP,
			     "engine gates not run: the harness gates failed, the drive is rejected already");
		return;
	}
	for (size_t i = 0; i < nall && !interrupted; i++) {
		bool pass;
		json_object *e = run_engine_gate(j->ctx, all[i], &pass), *g, *ck;
		char id[96];

		json_object_array_add(engine, e);
		j->nengine++;
		snprintf(id, sizeof(id), SCHEMA_GATE_ENGINE_PREFIX "%.80s", all[i]->name);
		g = json_object_new_object();
		jset_str(g, "name", id);
		jset_str(g, "kind", SCHEMA_GATE_KIND_ENGINE);
		jset_str(g, "status", pass ? "pass" : "fail");
		jset_str(g, "threshold", "exit 0");
		json_object_object_add(g, "measured", json_object_get(jget(e, "exit_code")));
		jset_str(g, "unit", "exit code");
		json_object_array_add(j->gates, g);
		if (interrupted) {
			j->complete = false;
			record_check(rec, id, ST_FAIL, "engine gate '%s' interrupted", all[i]->name);
			break;
		}
		ck = record_check(rec, id, pass ? ST_PASS : ST_FAIL, "engine gate '%s': %s after %.1f s", all[i]->name,
				  jget_bool(e, "timed_out") ? "timed out"
				  : pass		   ? "exit 0"
				  : jget(e, "exit_code")   ? "failed"
							   : "killed by a signal",
				  jget_double(e, "duration_s"));
		json_object_object_add(ck, "exit_code", json_object_get(jget(e, "exit_code")));
	}
}

/* The record's conclusion (step_accept_render shows it). Returns the exit code. */
static int finish_record(struct accept_job *j)
{
	struct record *rec = j->rec;

	jset_bool(rec->root, "engine_gates_run", j->nengine > 0);
	if (j->complete && !interrupted && j->nengine == 0 && j->harness_pass)
		record_check(rec, "engine-gates", ST_WARN,
			     "harness passed; the engine gates were not run (cold-boot 157 K first-touch prompt, full "
			     "97-scenario bench): the harness only predicts them; add them with --gate NAME=COMMAND");
	if (interrupted)
		j->complete = false;
	jset_bool(rec->root, "complete", j->complete);
	jset_bool(rec->root, "harness_pass", j->harness_pass);
	if (!j->complete && !json_object_array_length(j->runs))
		record_check(rec, "interrupted", ST_FAIL, "interrupted before the first run: the record is incomplete");
	record_finish(rec);
	return interrupted || !j->complete ? EXIT_INTERRUPTED : record_exit_code(rec);
}

/* accept, phase by phase: options, target, plan, input checks, runs, judgement, sweep, engine
 * gates, the record's conclusion (rendered by step_accept_render). */
int step_accept_run(struct ctx *ctx, int argc, char **argv, struct record *rec)
{
	const struct profile *pf = ctx->profile;
	struct accept_job j = {
		.ctx = ctx,
		.rec = rec,
		.pf = pf,
		.o = { .working_set = pf->working_set, .ramp_s = pf->ramp_s, .seq_bytes = pf->seq_bytes },
		.t = { .fd = -1 },
		.complete = true,
		.harness_pass = true,
	};
	struct sigaction sa = { .sa_handler = on_sigint }, old_sa;
	int r;

	r = parse_args(&j, argc, argv);
	if (r < 0)
		r = choose_target(&j);
	if (r >= 0)
		goto out;
	plan_runs(&j);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_sa); /* no SA_RESTART: sleeps and waits return at once */
	interrupted = 0;
	r = check_input(&j);
	if (r < 0) {
		j.runs = json_object_new_array();
		j.gates = json_object_new_array();
		json_object_object_add(rec->root, "runs", j.runs);
		json_object_object_add(rec->root, "gates", j.gates);
		r = run_harness(&j);
	}
	if (r < 0) {
		judge_harness(&j);
		r = run_sweep(&j);
	}
	if (r < 0) {
		run_engine_gates(&j);
		r = finish_record(&j);
	}
	sigaction(SIGINT, &old_sa, NULL);
out:
	accept_job_free(&j);
	return r;
}

/* ---- rendering ---- */

static void render_runs(const struct ctx *ctx, json_object *runs, bool sweep)
{
	_cleanup_table_ struct table *t = table_new(11);

	table_header(t, sweep ? "working set" : "run", "in flight", "IOPS", "MB/s", "p50 us", "p90 us", "p99 us",
		     "p99.9 us", "max us", ">200ms", "CPU us/read");
	for (unsigned c = 1; c < 11; c++)
		table_align(t, c, ALIGN_RIGHT);
	for (size_t i = 0; i < json_object_array_length(runs); i++) {
		json_object *r = json_object_array_get_idx(runs, i), *l = jget(r, "lat_us");
		char b[32];

		if (sweep)
			table_cellf(t, "%s", fmt_binary(jget_u64(r, "working_set_bytes"), b));
		else
			table_cellf(t, "%s", jget_str(r, "name"));
		table_cellf(t, "%" PRIu64, jget_u64(r, "inflight"));
		table_cellf(t, "%s", fmt_thousands(jget_u64(r, "iops"), b));
		table_cellf(t, "%.1f", jget_double(r, "mb_s"));
		table_cellf(t, "%.0f", jget_double(l, "p50"));
		table_cellf(t, "%.0f", jget_double(l, "p90"));
		table_cellf(t, "%.0f", jget_double(l, "p99"));
		table_cellf(t, "%.0f", jget_double(l, "p99_9"));
		table_cellf(t, "%.0f", jget_double(l, "max"));
		table_cellf(t, "%" PRIu64, jget_u64(r, "over_200ms"));
		table_cellf(t, "%.2f", jget_double(r, "cpu_us_per_io"));
	}
	table_print(ctx, t);
}

/* IOPS per working set as bars: the collapse curve at a glance. */
static void render_chart(const struct ctx *ctx, json_object *sweep)
{
	uint64_t max = 0;
	size_t n = json_object_array_length(sweep);

	for (size_t i = 0; i < n; i++) {
		uint64_t v = jget_u64(json_object_array_get_idx(sweep, i), "iops");
		if (v > max)
			max = v;
	}
	if (!max)
		return;
	out_line(ctx, "%s", "");
	for (size_t i = 0; i < n; i++) {
		json_object *r = json_object_array_get_idx(sweep, i);
		uint64_t v = jget_u64(r, "iops");
		unsigned w = (unsigned)((v * 50 + max / 2) / max);
		char bar[64], b1[32], b2[32];

		memset(bar, '#', w);
		bar[w] = '\0';
		out_line(ctx, "  %12s |%-50s %s IOPS, p50 %.0f us", fmt_binary(jget_u64(r, "working_set_bytes"), b1), bar,
			 fmt_thousands(v, b2), jget_double(jget(r, "lat_us"), "p50"));
	}
}

void step_accept_render(const struct ctx *ctx, json_object *rec)
{
	json_object *t = jget(rec, "target"), *runs = jget(rec, "runs"), *sweep = jget(rec, "sweep");
	json_object *d = jget(rec, "drive");
	char b1[32], b2[32], b3[32];
	enum status st = ST_FAIL;
	bool complete = jget_bool(rec, "complete"), engine = jget_bool(rec, "engine_gates_run");
	bool harness = jget_bool(rec, "harness_pass");

	out_heading(ctx, "accept %s", jget_str(t, "path"));
	if (jget_str(t, "chosen_by") && !streq(jget_str(t, "chosen_by"), "argument"))
		out_line(ctx, "target chosen by %s: %s", jget_str(t, "chosen_by"), jget_str(t, "reason"));
	out_line(ctx, "%s of %s bytes; working set %s at offset %s; seed %" PRIu64, jget_str(t, "kind"),
		 fmt_thousands(jget_u64(t, "size_bytes"), b1), fmt_binary(jget_u64(t, "working_set_bytes"), b2),
		 fmt_thousands(jget_u64(t, "offset_bytes"), b3), jget_u64(rec, "seed"));
	if (d && jget_str(d, "model"))
		out_line(ctx, "drive %s: %s, firmware %s", jget_str(d, "disk"), jget_str(d, "model"),
			 jget_str(d, "firmware") ? jget_str(d, "firmware") : "?");
	if (runs && json_object_array_length(runs)) {
		out_line(ctx, "%s", "");
		render_runs(ctx, runs, false);
	}
	if (sweep && json_object_array_length(sweep)) {
		out_line(ctx, "%s", "");
		out_heading(ctx, "sweep: 4 KiB random reads by working set");
		render_runs(ctx, sweep, true);
		render_chart(ctx, sweep);
	}
	out_line(ctx, "%s", "");
	out_checks(ctx, rec);
	status_parse(jget_str(rec, "verdict"), &st);
	if (!complete)
		out_verdict(ctx, rec, "interrupted: the record is incomplete; run it again to the end");
	else if (!harness) {
		json_object *gates = jget(rec, "gates");
		size_t n = gates ? json_object_array_length(gates) : 0, nfail = 0;
		char names[256] = "";

		for (size_t i = 0; i < n; i++) {
			json_object *g = json_object_array_get_idx(gates, i);
			size_t len = strlen(names);
			if (!streq(jget_str(g, "status"), "fail"))
				continue;
			nfail++;
			if (len + 64 < sizeof(names))
				snprintf(names + len, sizeof(names) - len, "%s%s", len ? ", " : "", jget_str(g, "name"));
		}
		out_verdict(ctx, rec, "the drive fails %zu of %zu gates (%s): do not let it serve", nfail, n, names);
	}
	else if (!engine)
		out_verdict(ctx, rec, "harness gates pass; engine gates not run: the harness only predicts them");
	else if (st == ST_FAIL)
		out_verdict(ctx, rec, "harness gates pass but an engine gate failed: do not let it serve");
	else
		out_verdict(ctx, rec, "harness and engine gates pass: the drive may serve");
}
