/* SPDX-License-Identifier: MIT */
/* accept: the embedded io_uring acceptance harness against the write-up's gates, plus engine gates. */
#include "steps.h"

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
	bool have_duration, have_ramp, have_seed, no_seq, force;
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
	const char *label; /* "working set 2 GiB" in a sweep */
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
	out_progress(g->ctx, "accept %s%s%s: %s%s  %" PRIu64 " IOPS  p50 %" PRIu64 " us  %" PRIu64 " MB read",
		     g->run, g->label ? " " : "", g->label ? g->label : "", t, p->ramping ? " (ramp)" : "",
		     p->iops_now, p->p50_ns / 1000, p->bytes / 1000000);
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

/* Run one pass and describe it as DESIGN.md §6's run object. */
static int do_run(const struct ctx *ctx, const struct io_target *t, const struct opts *o, const struct plan_run *pr,
		  uint64_t ws, uint64_t offset, uint64_t seed, const char *label, json_object **out, bool *clean)
{
	struct prog g = { .ctx = ctx, .run = pr->name, .label = label };
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
	jset_double(lat, "p50", us(hist_quantile(&res.hist, 500000)));
	jset_double(lat, "p90", us(hist_quantile(&res.hist, 900000)));
	jset_double(lat, "p99", us(hist_quantile(&res.hist, 990000)));
	jset_double(lat, "p99_9", us(hist_quantile(&res.hist, 999000)));
	jset_double(lat, "p99_99", us(hist_quantile(&res.hist, 999900)));
	jset_double(lat, "max", us(res.hist.max_ns));
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

int step_accept_run(struct ctx *ctx, int argc, char **argv, struct record *rec)
{
	static const struct option longopts[] = {
		{ "working-set", required_argument, NULL, 'w' },
		{ "duration", required_argument, NULL, 'd' },
		{ "ramp", required_argument, NULL, 'r' },
		{ "inflight", required_argument, NULL, 'i' },
		{ "threads", required_argument, NULL, 't' },
		{ "seq-bytes", required_argument, NULL, 'S' },
		{ "no-seq", no_argument, NULL, 'N' },
		{ "sweep", required_argument, NULL, 'W' },
		{ "force", no_argument, NULL, 'f' },
		{ "gate", required_argument, NULL, 'g' },
		{ "seed", required_argument, NULL, 's' },
		{ 0 },
	};
	const struct profile *pf = ctx->profile;
	struct opts o = { .working_set = pf->working_set, .ramp_s = pf->ramp_s, .seq_bytes = pf->seq_bytes };
	struct io_target t;
	struct plan_run plan[24];
	size_t nplan = 0;
	const char *why, *path;
	uint64_t ws, offset, v;
	char b1[32], b2[32], b3[32];
	json_object *target, *runs, *gates, *engine, *sweep = NULL;
	struct sigaction sa = { .sa_handler = on_sigint }, old_sa;
	bool complete = true, harness_pass = true, representative = true;
	size_t nengine = 0;
	int c, r;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'w':
			if (size_parse(optarg, 512, &o.working_set, &why) < 0 || o.working_set < ACCEPT_MIN_WS)
				return ctx_error(ctx, EXIT_USAGE, "bad --working-set '%s': %s; at least 4K, e.g. --working-set 98G",
						 optarg, why ? why : "smaller than one 4 KiB read");
			break;
		case 'd':
			if (parse_secs(optarg, &o.duration_s, false) < 0)
				return ctx_error(ctx, EXIT_USAGE, "bad --duration '%s': seconds from 1 to 86400", optarg);
			o.have_duration = true;
			break;
		case 'r':
			if (parse_secs(optarg, &o.ramp_s, true) < 0)
				return ctx_error(ctx, EXIT_USAGE, "bad --ramp '%s': seconds from 0 to 86400", optarg);
			break;
		case 'i':
			if (parse_list_u(optarg, o.inflight, ARRAY_SIZE(o.inflight), &o.ninflight) < 0)
				return ctx_error(ctx, EXIT_USAGE,
						 "bad --inflight '%s': reads in flight from 1 to 4096, comma-separated (16,64)",
						 optarg);
			break;
		case 't':
			if (u64_parse(optarg, &v, &why) < 0 || v == 0 || v > 1024)
				return ctx_error(ctx, EXIT_USAGE, "bad --threads '%s': from 1 to 1024", optarg);
			o.threads = (unsigned)v;
			break;
		case 'S':
			if (size_parse(optarg, 512, &o.seq_bytes, &why) < 0 || o.seq_bytes < (1u << 20))
				return ctx_error(ctx, EXIT_USAGE, "bad --seq-bytes '%s': %s; at least 1M, e.g. --seq-bytes 4G",
						 optarg, why ? why : "too small");
			break;
		case 'N':
			o.no_seq = true;
			break;
		case 'W':
			if (parse_list_size(optarg, o.sweep, ARRAY_SIZE(o.sweep), &o.nsweep) < 0)
				return ctx_error(ctx, EXIT_USAGE,
						 "bad --sweep '%s': working sets of at least 4K separated by commas, e.g. --sweep 2G,20G,98G",
						 optarg);
			break;
		case 'f':
			o.force = true;
			break;
		case 'g': {
			const char *eq = strchr(optarg, '=');
			if (!eq || eq == optarg || !eq[1] || eq - optarg >= 64 || o.ngates == ARRAY_SIZE(o.gates))
				return ctx_error(ctx, EXIT_USAGE,
						 "bad --gate '%s': NAME=COMMAND (name up to 63 characters, 16 gates at most), "
						 "e.g. --gate bench='./bench.sh'", optarg);
			memcpy(o.gate_name[o.ngates], optarg, (size_t)(eq - optarg));
			o.gate_name[o.ngates][eq - optarg] = '\0';
			o.gates[o.ngates] = (struct engine_gate){
				.name = o.gate_name[o.ngates],
				.command = (char *)eq + 1,
				.timeout_s = GATE_TIMEOUT_S,
			};
			o.ngates++;
			break;
		}
		case 's':
			if (u64_parse(optarg, &o.seed, &why) < 0)
				return ctx_error(ctx, EXIT_USAGE, "bad --seed '%s': a positive integer", optarg);
			o.have_seed = true;
			break;
		default:
			r = step_bad_option(ctx, argc, argv);
			goto free_gates;
		}
	}
	if (optind + 1 != argc) {
		r = ctx_error(ctx, EXIT_USAGE, optind >= argc ? "no target: give the file or block device to measure "
								"(swaptool accept FILE|DEVICE)"
							      : "one target only; see 'swaptool help accept'");
		goto free_gates;
	}
	path = argv[optind];
	if (!o.have_seed) {
		if (getrandom(&o.seed, sizeof(o.seed), 0) != sizeof(o.seed))
			o.seed = io_mono_ns();
	}

	/* the runs: the profile's random runs (or one per --inflight depth), then the sequential one */
	{
		const struct accept_run *rnd[16];
		size_t nrnd = 0;

		for (size_t i = 0; i < pf->nruns && nrnd < ARRAY_SIZE(rnd); i++)
			if (!pf->runs[i].sequential)
				rnd[nrnd++] = &pf->runs[i];
		for (size_t i = 0; i < (o.ninflight ? o.ninflight : nrnd) && nplan < ARRAY_SIZE(plan); i++) {
			struct plan_run *p = &plan[nplan++];
			const struct accept_run *thr = NULL;

			/* a depth the profile gates (16, 64) keeps its gates; another depth takes the gates
			 * of the profile's random run at the same position, or none */
			if (o.ninflight) {
				for (size_t k = 0; k < nrnd && !thr; k++)
					if (rnd[k]->inflight == o.inflight[i])
						thr = rnd[k];
				if (!thr && i < nrnd)
					thr = rnd[i];
			} else
				thr = rnd[i];
			*p = (struct plan_run){ .inflight = o.ninflight ? o.inflight[i] : thr->inflight, .thr = thr,
						.duration_s = thr && thr->duration_s ? thr->duration_s : 15 };
			if (!p->inflight)
				p->inflight = 16;
			if (o.have_duration)
				p->duration_s = o.duration_s;
			if (thr && (!o.ninflight || thr->inflight == p->inflight))
				snprintf(p->name, sizeof(p->name), "%.31s", thr->name);
			else
				snprintf(p->name, sizeof(p->name), "rand%u", p->inflight);
		}
		for (size_t i = 0; i < pf->nruns && !o.no_seq; i++)
			if (pf->runs[i].sequential && nplan < ARRAY_SIZE(plan)) {
				struct plan_run *p = &plan[nplan++];
				*p = (struct plan_run){ .sequential = true, .inflight = pf->runs[i].inflight ? pf->runs[i].inflight : 4,
							.thr = &pf->runs[i] };
				snprintf(p->name, sizeof(p->name), "%.31s", pf->runs[i].name);
			}
	}

	r = io_target_open(path, &t, &why);
	if (r == -ENOENT) {
		r = ctx_error(ctx, EXIT_FAILED, "cannot open '%s': no such file or device; give the path of the "
						"file (the Engram shard) or block device to measure", path);
		goto free_gates;
	}
	if (r == -EOPNOTSUPP) {
		r = ctx_error(ctx, EXIT_FAILED, "no O_DIRECT on '%s': %s; put the test file on the drive under test",
			      path, why);
		goto free_gates;
	}
	if (r < 0) {
		r = ctx_error(ctx, EXIT_FAILED, "cannot read '%s': %s (%s); give a regular file or a block device",
			      path, why ? why : "open failed", strerror(-r));
		goto free_gates;
	}

	ws = o.working_set & ~4095ULL;
	if (io_working_set(&t, ws, &offset) < 0) {
		r = ctx_error(ctx, EXIT_USAGE,
			      "the working set (%s) is larger than '%s' (%s bytes); pass --working-set %s or less",
			      human_bytes(o.working_set, b1), path, fmt_thousands(t.size, b2),
			      ws_arg(t.size, b3));
		io_target_close(&t);
		goto free_gates;
	}
	for (size_t i = 0; i < o.nsweep; i++)
		if ((o.sweep[i] & ~4095ULL) > t.size) {
			r = ctx_error(ctx, EXIT_USAGE,
				      "the sweep working set %s is larger than '%s' (%s bytes); use sizes up to --sweep %s",
				      human_bytes(o.sweep[i], b1), path, fmt_thousands(t.size, b2),
				      ws_arg(t.size, b3));
			io_target_close(&t);
			goto free_gates;
		}
	if (!o.no_seq && ws < (1u << 20)) {
		r = ctx_error(ctx, EXIT_USAGE, "the working set (%s) is smaller than one 1 MiB sequential read; "
					       "pass a larger --working-set or --no-seq", human_bytes(ws, b1));
		io_target_close(&t);
		goto free_gates;
	}

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_sa); /* no SA_RESTART: sleeps and waits return at once */
	interrupted = 0;

	target = json_object_new_object();
	jset_str(target, "path", path);
	jset_str(target, "kind", t.block_device ? "block" : "file");
	jset_u64(target, "size_bytes", t.size);
	jset_u64(target, "working_set_bytes", ws);
	jset_u64(target, "offset_bytes", offset);
	jset_u64(target, "lba_size", t.lba_size);
	jset_str(target, "device", t.dev[0] ? t.dev : NULL);
	jset_str(target, "disk", t.disk[0] ? t.disk : NULL);
	jset_str(target, "fs_type", t.fs_type[0] ? t.fs_type : NULL);
	json_object_object_add(rec->root, "target", target);
	jset_u64(rec->root, "seed", o.seed);
	drive_record(rec, &t, path);

	/* reads that never touch flash: holes/unwritten extents (files), zero blocks (devices) */
	{
		json_object *rep = unbacked_json(&t, offset, ws, o.seed);
		const char *method = jget_str(rep, "method");

		representative = jget_bool(rep, "representative");
		json_object_object_add(rec->root, "working_set", rep);
		if (!method)
			record_check(rec, "representative", ST_SKIP,
				     "could not look for holes or zero blocks in the working set");
		else if (!representative)
			record_check(rec, "representative", ST_WARN,
				     "%.2f %% of the working set is %s: those reads never touch flash and the result is not "
				     "representative; measure a file with real data",
				     jget_double(rep, "unbacked_pct"), unbacked_what(method));
		else
			record_check(rec, "representative", ST_PASS, "working set holds real data (%s, %.2f %% unbacked)",
				     method, jget_double(rep, "unbacked_pct"));
		jset_bool(rec->root, "representative", representative);
	}

	/* is the node serving? the device's own I/O rate over 1 s, before we add ours */
	{
		json_object *busy = json_object_new_object();
		uint64_t a, b;

		jset_str(busy, "device", t.dev[0] ? t.dev : NULL);
		jset_u64(busy, "threshold_iops", pf->busy_threshold_iops);
		jset_bool(busy, "forced", o.force);
		if (t.dev[0] && io_diskstats_ios(t.dev, &a) == 0) {
			struct timespec ts = { 1, 0 };
			uint64_t t0 = io_mono_ns(), dt;

			out_progress(ctx, "accept: sampling the I/O rate of '%s' for 1 s", t.dev);
			while (nanosleep(&ts, &ts) < 0 && errno == EINTR && !interrupted)
				;
			out_progress_end(ctx);
			dt = io_mono_ns() - t0;
			if (io_diskstats_ios(t.dev, &b) < 0)
				b = a;
			v = io_rate(b - a, dt);
			jset_bool(busy, "checked", true);
			jset_u64(busy, "iops", v);
			json_object_object_add(rec->root, "busy", busy);
			if (v > pf->busy_threshold_iops && !o.force && !interrupted) {
				r = ctx_error(ctx, EXIT_FAILED,
					      "'%s' is busy: %" PRIu64 " IOPS over 1 s (threshold %" PRIu64
					      "): the node may be serving; run the reference arm on an idle, non-serving "
					      "node, or pass --force",
					      t.dev, v, pf->busy_threshold_iops);
				goto out;
			}
			if (v > pf->busy_threshold_iops)
				record_check(rec, "busy", ST_WARN, "'%s' did %" PRIu64 " IOPS before the run (threshold %" PRIu64
					     "); measured anyway (--force)", t.dev, v, pf->busy_threshold_iops);
			else
				record_check(rec, "busy", ST_PASS, "'%s' idle before the run: %" PRIu64 " IOPS (threshold %" PRIu64 ")",
					     t.dev, v, pf->busy_threshold_iops);
		} else {
			jset_bool(busy, "checked", false);
			json_object_object_add(rec->root, "busy", busy);
			record_check(rec, "busy", ST_SKIP, "no block device under '%s' in /proc/diskstats: busy check not possible",
				     path);
		}
	}

	/* the runs */
	runs = json_object_new_array();
	gates = json_object_new_array();
	json_object_object_add(rec->root, "runs", runs);
	json_object_object_add(rec->root, "gates", gates);
	for (size_t i = 0; i < nplan && !interrupted; i++) {
		struct plan_run *p = &plan[i];
		json_object *run = NULL;
		struct io_gate gv[IO_MAX_GATES];
		bool clean = true, nodata;
		size_t ng;
		uint64_t errors;

		r = do_run(ctx, &t, &o, p, ws, offset, o.seed + i, NULL, &run, &clean);
		if (r < 0) {
			r = ctx_error(ctx, EXIT_FAILED, "cannot run the harness on '%s': %s; check io_uring is enabled "
							"(sysctl kernel.io_uring_disabled)", path, strerror(-r));
			goto out;
		}
		json_object_array_add(runs, run);
		errors = jget_u64(jget(run, "errors"), "count");
		if (!clean) {
			complete = false;
			record_check(rec, p->name, ST_FAIL, "%s interrupted after %.1f s: the record is incomplete", p->name,
				     jget_double(run, "duration_s"));
			break;
		}
		if (errors) {
			json_object *g = json_object_new_object(), *ck;
			json_object *first = json_object_array_get_idx(jget(jget(run, "errors"), "first"), 0);
			char gname[64];

			snprintf(gname, sizeof(gname), "%.31s-errors", p->name);
			harness_pass = false;
			jset_str(g, "name", gname);
			jset_str(g, "kind", "harness");
			jset_str(g, "run", p->name);
			jset_str(g, "status", "fail");
			jset_u64(g, "threshold", 0);
			jset_u64(g, "measured", errors);
			jset_str(g, "unit", "errors");
			json_object_array_add(gates, g);
			ck = record_check(rec, gname, ST_FAIL,
					  "%s: %" PRIu64 " read errors%s, first at offset %" PRIu64 " (%s): the drive fails",
					  p->name, errors, jget_bool(jget(run, "errors"), "limit_reached") ? " (run stopped)" : "",
					  jget_u64(first, "offset"), jget_str(first, "error"));
			jset_u64(ck, "measured", errors);
		}
		ng = p->thr ? io_gates_eval(p->thr, p->name, run, gv) : 0;
		/* A gate never passes on no data: with no read completed, IOPS is 0 but every latency
		 * reads 0 us too, which any "at most" gate would take for a pass. */
		nodata = jget_u64(run, "ios") == 0;
		if (nodata) {
			char id[64];

			harness_pass = false;
			snprintf(id, sizeof(id), "%.31s-reads", p->name);
			record_check(rec, id, ST_FAIL, "%s: no read completed in %.1f s: nothing was measured, its gates fail",
				     p->name, jget_double(run, "duration_s"));
		}
		for (size_t k = 0; k < ng; k++) {
			json_object *g = json_object_new_object(), *ck;
			bool lat = streq(gv[k].unit, "us");

			if (nodata)
				gv[k].pass = false;
			harness_pass &= gv[k].pass;
			jset_str(g, "name", gv[k].name);
			jset_str(g, "kind", "harness");
			jset_str(g, "run", p->name);
			jset_str(g, "status", gv[k].pass ? "pass" : "fail");
			jset_double(g, "threshold", gv[k].threshold);
			jset_double(g, "measured", gv[k].measured);
			jset_str(g, "unit", gv[k].unit);
			jset_str(g, "op", gv[k].at_least ? ">=" : "<=");
			json_object_array_add(gates, g);
			if (lat)
				ck = record_check(rec, gv[k].name, gv[k].pass ? ST_PASS : ST_FAIL,
						  "%s (%u in flight): %s %.*f us, gate %s %s us", p->name, p->inflight,
						  gv[k].what, gv[k].measured < 1000 ? 1 : 0, gv[k].measured,
						  gv[k].at_least ? ">=" : "<=", fmt_thousands((uint64_t)gv[k].threshold, b2));
			else
				ck = record_check(rec, gv[k].name, gv[k].pass ? ST_PASS : ST_FAIL,
						  "%s (%u in flight): %s %s, gate %s %s", p->name, p->inflight,
						  fmt_thousands((uint64_t)gv[k].measured, b1), gv[k].what,
						  gv[k].at_least ? ">=" : "<=", fmt_thousands((uint64_t)gv[k].threshold, b2));
			jset_double(ck, "threshold", gv[k].threshold);
			jset_double(ck, "measured", gv[k].measured);
		}
		{
			json_object *st = jget(run, "stability");
			if (jget_bool(st, "evaluated") && !jget_bool(st, "steady")) {
				char id[64];
				snprintf(id, sizeof(id), "%.31s-stability", p->name);
				record_check(rec, id, ST_WARN,
					     "%s: IOPS not steady (range %.1f %% of the mean, slope %.1f %%; steady is "
					     "<= 20 %% and <= 10 %%): lengthen --duration or --ramp",
					     p->name, jget_double(st, "range_pct"), jget_double(st, "slope_pct"));
			}
		}
	}

	/* --sweep: the write-up's collapse curve (69 K -> 13 K IOPS on the bad drive, flat on a good one) */
	if (o.nsweep && !interrupted && complete) {
		struct plan_run sp = { .inflight = nplan && !plan[0].sequential ? plan[0].inflight : 16,
				       .duration_s = nplan && !plan[0].sequential ? plan[0].duration_s : 15 };
		uint64_t first_iops = 0, last_iops = 0;
		json_object *holes = NULL; /* the first unrepresentative working set (owned by the record) */
		uint64_t holes_ws = 0;

		if (o.have_duration)
			sp.duration_s = o.duration_s;
		snprintf(sp.name, sizeof(sp.name), "sweep%u", sp.inflight);
		sweep = json_object_new_array();
		json_object_object_add(rec->root, "sweep", sweep);
		for (size_t i = 0; i < o.nsweep && !interrupted; i++) {
			uint64_t sws = o.sweep[i] & ~4095ULL, soff = 0;
			json_object *run = NULL, *rep;
			bool clean = true;
			char label[48];

			io_working_set(&t, sws, &soff);
			snprintf(label, sizeof(label), "working set %s", human_bytes(sws, b1));
			/* a larger working set may reach into holes the main one missed */
			rep = unbacked_json(&t, soff, sws, o.seed + 100 + i);
			if (!jget_bool(rep, "representative") && !holes) {
				holes = rep;
				holes_ws = sws;
			}
			r = do_run(ctx, &t, &o, &sp, sws, soff, o.seed + 100 + i, label, &run, &clean);
			if (r < 0) {
				json_object_put(rep);
				r = ctx_error(ctx, EXIT_FAILED, "cannot run the sweep on '%s': %s", path, strerror(-r));
				goto out;
			}
			jset_u64(run, "offset_bytes", soff);
			json_object_object_add(run, "working_set", rep);
			json_object_array_add(sweep, run);
			if (!clean) {
				complete = false;
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
		if (complete && o.nsweep > 1) {
			/* the bad drive kept 19 % of its IOPS from 2 GB to 98 GB, the good one 71 % */
			bool collapse = first_iops && last_iops * 2 < first_iops;
			record_check(rec, "sweep", collapse ? ST_WARN : ST_PASS,
				     "IOPS from the smallest to the largest working set: %s -> %s (%.0f %%)%s",
				     fmt_thousands(first_iops, b1), fmt_thousands(last_iops, b2),
				     first_iops ? 100.0 * (double)last_iops / (double)first_iops : 0.0,
				     collapse ? ": throughput collapses as the working set grows (mapping-cache misses)" : "");
		}
	}

	/* engine gates: the write-up's real test; the harness only predicts them */
	engine = json_object_new_array();
	json_object_object_add(rec->root, "engine_gates", engine);
	if (complete && !interrupted) {
		const struct engine_gate *all[48];
		size_t nall = 0;

		for (size_t i = 0; i < pf->nengine && nall < ARRAY_SIZE(all); i++)
			all[nall++] = &pf->engine[i];
		for (size_t i = 0; i < o.ngates && nall < ARRAY_SIZE(all); i++)
			all[nall++] = &o.gates[i];
		if (nall && !harness_pass)
			record_check(rec, "engine-gates", ST_SKIP,
				     "engine gates not run: the harness gates failed, the drive is rejected already");
		else
			for (size_t i = 0; i < nall && !interrupted; i++) {
				bool pass;
				json_object *e = run_engine_gate(ctx, all[i], &pass), *g, *ck;
				char id[96];

				json_object_array_add(engine, e);
				nengine++;
				snprintf(id, sizeof(id), "engine-%.80s", all[i]->name);
				g = json_object_new_object();
				jset_str(g, "name", id);
				jset_str(g, "kind", "engine");
				jset_str(g, "status", pass ? "pass" : "fail");
				jset_str(g, "threshold", "exit 0");
				json_object_object_add(g, "measured", json_object_get(jget(e, "exit_code")));
				jset_str(g, "unit", "exit code");
				json_object_array_add(gates, g);
				if (interrupted) {
					complete = false;
					record_check(rec, id, ST_FAIL, "engine gate '%s' interrupted", all[i]->name);
					break;
				}
				ck = record_check(rec, id, pass ? ST_PASS : ST_FAIL, "engine gate '%s': %s after %.1f s",
						  all[i]->name,
						  jget_bool(e, "timed_out") ? "timed out"
						  : pass		   ? "exit 0"
						  : jget(e, "exit_code")   ? "failed"
									   : "killed by a signal",
						  jget_double(e, "duration_s"));
				json_object_object_add(ck, "exit_code", json_object_get(jget(e, "exit_code")));
			}
	}
	jset_bool(rec->root, "engine_gates_run", nengine > 0);
	if (complete && !interrupted && nengine == 0 && harness_pass)
		record_check(rec, "engine-gates", ST_WARN,
			     "harness passed; the engine gates were not run (cold-boot 157 K first-touch prompt, full "
			     "97-scenario bench): the harness only predicts them; add them with --gate NAME=COMMAND");
	if (interrupted)
		complete = false;
	jset_bool(rec->root, "complete", complete);
	jset_bool(rec->root, "harness_pass", harness_pass);
	if (!complete && !json_object_array_length(runs))
		record_check(rec, "interrupted", ST_FAIL, "interrupted before the first run: the record is incomplete");
	record_finish(rec);
	r = interrupted || !complete ? EXIT_INTERRUPTED : record_exit_code(rec);
out:
	sigaction(SIGINT, &old_sa, NULL);
	io_target_close(&t);
free_gates:
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
