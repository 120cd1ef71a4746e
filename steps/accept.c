/* SPDX-License-Identifier: MIT */
/* accept: the options, the progress lines and the rendering of the io_uring acceptance harness against the
 * incident's gates, plus engine gates (src/accept.c runs them). */
#include "steps.h"

#include <signal.h>
#include <sys/random.h>

#include "accept.h"
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
	{ { "sustain", required_argument, NULL, 'u' }, "DURATION",
	  "then hold the deepest random run this long (90s, 10m, 1h; profile: off), run the random runs again" },
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

/* An engine gate's --gate timeout (a profile section sets its own). */
#define GATE_TIMEOUT_S 3600

static volatile sig_atomic_t interrupted;

/* SIGINT (^C), SIGTERM (systemctl stop, an Ansible timeout, kill) and SIGHUP (a dropped ssh
 * session) all stop the run the same way: in-flight reads are waited for, the record is saved with
 * what was measured, the state directory's lock released, exit 130. Uncaught, SIGTERM and SIGHUP
 * killed accept and lost the record, as plan and clone catch SIGTERM (steps/plan.c, steps/clone.c). */
static const int stop_signals[] = { SIGINT, SIGTERM, SIGHUP };

static void on_stop(int sig)
{
	(void)sig;
	interrupted = 1;
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

/* ---- progress, from src/accept.c's hooks ---- */

static void on_planned(void *ud, unsigned nall, uint64_t secs, bool seq, bool engine)
{
	char d[16];

	out_note(ud, "accept: %u run%s, about %s of timed reads%s%s", nall, nall == 1 ? "" : "s",
		 out_duration(secs, d), seq ? " plus the sequential read" : "", engine ? " and the engine gates" : "");
}

static void on_sampling(void *ud, const char *dev)
{
	out_progress(ud, "accept: sampling the I/O rate of '%s' for 1 s", dev);
}

static void on_run(void *ud, const struct accept_run_progress *g)
{
	const struct io_progress *p = g->io;
	char t[32];

	if (p->total_ns)
		snprintf(t, sizeof(t), "%" PRIu64 "/%" PRIu64 " s", (uint64_t)(p->elapsed_ns / 1000000000u),
			 (uint64_t)(p->total_ns / 1000000000u));
	else
		snprintf(t, sizeof(t), "%" PRIu64 " s", (uint64_t)(p->elapsed_ns / 1000000000u));
	/* a timed run's share is its time; a sequential one's its bytes */
	out_progress_eta(ud, g->start_ns, p->total_ns ? p->elapsed_ns : p->bytes, p->total_ns ?: g->seq_bytes,
			 "accept run %u of %u, %s%s%s: %s%s  %" PRIu64 " IOPS  p50 %" PRIu64 " us  %" PRIu64 " MB read",
			 g->k, g->n, g->run, g->label ? " " : "", g->label ? g->label : "", t,
			 p->ramping ? " (ramp)" : "", p->iops_now, p->p50_ns / 1000, p->bytes / 1000000);
}

static void on_sustain(void *ud, const struct accept_sustain_progress *g)
{
	const struct io_progress *p = g->io;
	uint64_t done = g->done_ns + p->elapsed_ns;

	out_progress_eta(ud, g->start_ns, done / 1000000u, g->total_s * 1000u,
			 "accept sustained load, %u in flight: interval %zu of %zu, %" PRIu64 "/%" PRIu64 " s  %" PRIu64
			 " IOPS  p50 %" PRIu64 " us",
			 g->inflight, g->k + 1, g->n, done / 1000000000u, g->total_s, p->iops_now, p->p50_ns / 1000);
}

static void on_gate(void *ud, const char *name, bool ticking, uint64_t elapsed_ns)
{
	if (ticking)
		out_progress(ud, "accept: engine gate '%s' running: %" PRIu64 " s", name, elapsed_ns / 1000000000u);
	else
		out_progress(ud, "accept: engine gate '%s' running", name);
}

static void on_end(void *ud)
{
	out_progress_end(ud);
}

/* Options into a->o. Returns -1 to go on, else the exit code of a usage error. */
/* A --gate whose NAME an earlier --gate or the profile's [engine NAME] holds: exit 2 naming both.
 * Two gates of one name are two records of one name (engine-NAME), and metrics' two series of one
 * name, of which Prometheus keeps the first: a failing gate behind a passing one would vanish. */
static int gate_taken(struct ctx *ctx, const struct accept *a, const char *arg)
{
	size_t n = strcspn(arg, "=");

	for (size_t i = 0; i < a->o.ngates; i++)
		if (strlen(a->o.gates[i].name) == n && !strncmp(a->o.gates[i].name, arg, n))
			return ctx_error(ctx, EXIT_USAGE, "--gate '%.*s' given twice: a gate's name is its own; "
					 "rename one of them", (int)n, arg);
	for (size_t i = 0; a->pf && i < a->pf->nengine; i++)
		if (strlen(a->pf->engine[i].name) == n && !strncmp(a->pf->engine[i].name, arg, n))
			return ctx_error(ctx, EXIT_USAGE, "--gate '%.*s': the profile ('%s') declares [engine %.*s] "
					 "already; rename the --gate, or drop one of the two", (int)n, arg,
					 ctx->profile_path ?: "built-in", (int)n, arg);
	return 0;
}

static int parse_args(struct ctx *ctx, struct accept *a, int argc, char **argv)
{
	struct accept_opts *o = &a->o;
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
			if (accept_parse_inflight(optarg, o->inflight, ARRAY_SIZE(o->inflight), &o->ninflight) < 0)
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
			if (accept_parse_sweep(optarg, o->sweep, ARRAY_SIZE(o->sweep), &o->nsweep) < 0)
				return ctx_error(ctx, EXIT_USAGE,
						 "bad --sweep '%s': working sets of at least 4K separated by commas, e.g. --sweep 2G,20G,98G",
						 optarg);
			break;
		case 'u':
			if (accept_parse_duration(optarg, &o->sustain_s) < 0)
				return ctx_error(ctx, EXIT_USAGE, "bad --sustain '%s': a duration from 1 s to 24 h, e.g. "
						 "--sustain 600, --sustain 10m, --sustain 1h", optarg);
			o->have_sustain = true;
			break;
		case 'f':
			o->force = true;
			break;
		case 'g':
			if (strchr(optarg, '=') && gate_taken(ctx, a, optarg))
				return EXIT_USAGE;
			if (accept_add_gate(o, optarg, GATE_TIMEOUT_S) < 0)
				return ctx_error(ctx, EXIT_USAGE,
						 "bad --gate '%s': NAME=COMMAND (name up to 63 characters, 16 gates at most), "
						 "e.g. --gate bench='./bench.sh'", optarg);
			break;
		case 's':
			if (u64_parse(optarg, &o->seed, &why) < 0)
				return ctx_error(ctx, EXIT_USAGE, "bad --seed '%s': a positive integer", optarg);
			o->have_seed = true;
			break;
		case 'H':
			if (step_home_option(ctx, optarg))
				return EXIT_USAGE;
			a->home = optarg;
			break;
		default:
			return step_bad_option(ctx, argc, argv);
		}
	}
	if (optind + 1 < argc)
		return ctx_error(ctx, EXIT_USAGE, "one target only; see 'swaptool help accept'");
	/* the figures come per interval: a hold shorter than one has no interval to report */
	if (o->sustain_s && o->sustain_s < o->sustain_interval_s)
		return ctx_error(ctx, EXIT_USAGE, "%s %" PRIu64 " s is shorter than one interval of %" PRIu64
				 " s ([accept] sustain_interval in '%s'): hold it at least that long, or set a shorter "
				 "sustain_interval", o->have_sustain ? "--sustain" : "the profile's [accept] sustain",
				 o->sustain_s, o->sustain_interval_s, ctx->profile_path ?: "built-in");
	if (optind < argc)
		accept_set_target(a, argv[optind]);
	if (!o->have_seed) {
		if (getrandom(&o->seed, sizeof(o->seed), 0) != sizeof(o->seed))
			o->seed = mono_ns();
	}
	return -1;
}

/* A phase of src/accept.c that failed: its reason, exit 2 for the operator's arguments, else 3. */
static int accept_error(struct ctx *ctx, const struct accept *a)
{
	return ctx_error(ctx, a->usage ? EXIT_USAGE : EXIT_FAILED, "%s", a->why ? a->why : "accept failed");
}

/* accept, phase by phase (src/accept.c): options, target, plan, input checks, runs, judgement,
 * sweep, engine gates, the record's conclusion (rendered by step_accept_render). */
int step_accept_run(struct ctx *ctx, int argc, char **argv, struct record *rec)
{
	struct accept a;
	struct sigaction sa = { .sa_handler = on_stop }, old_sa[ARRAY_SIZE(stop_signals)];
	int r;

	accept_init(&a, ctx->profile, rec);
	a.stop = &interrupted;
	a.hooks = (struct accept_hooks){ .planned = on_planned, .sampling = on_sampling, .run = on_run,
					 .sustain = on_sustain, .gate = on_gate, .end = on_end, .ud = ctx };
	r = parse_args(ctx, &a, argc, argv);
	if (r >= 0)
		goto out;
	if (accept_choose_target(&a) < 0) {
		r = accept_error(ctx, &a);
		goto out;
	}
	accept_plan_runs(&a);
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < ARRAY_SIZE(stop_signals); i++)
		sigaction(stop_signals[i], &sa, &old_sa[i]); /* no SA_RESTART: sleeps and waits return at once */
	interrupted = 0;
	if (accept_check_input(&a) < 0 || accept_run_harness(&a) < 0)
		r = accept_error(ctx, &a);
	else {
		accept_judge_harness(&a);
		if (accept_run_sweep(&a) < 0)
			r = accept_error(ctx, &a);
		else if (accept_run_sustain(&a) < 0)
			r = accept_error(ctx, &a);
		else {
			accept_run_engine_gates(&a);
			accept_finish(&a);
			r = !a.complete ? EXIT_INTERRUPTED : record_exit_code(rec);
		}
	}
	for (size_t i = 0; i < ARRAY_SIZE(stop_signals); i++)
		sigaction(stop_signals[i], &old_sa[i], NULL);
out:
	accept_free(&a);
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

/* A temperature of the record: "42 °C", or "?" when it could not be read. */
static const char *temp_text(json_object *temp, const char *key, char buf[32])
{
	if (jget(temp, key))
		snprintf(buf, 32, "%" PRIi64 " °C", jget_i64(temp, key));
	else
		snprintf(buf, 32, "?");
	return buf;
}

/* --sustain: the figures per interval, the drift, the temperature, the random runs again. */
static void render_sustain(const struct ctx *ctx, json_object *sus)
{
	_cleanup_table_ struct table *t = table_new(5);
	json_object *iv = jget_array(sus, "intervals"), *runs = jget_array(sus, "runs");
	json_object *d = jget_object(sus, "drift"), *temp = jget_object(sus, "temperature");
	size_t n = iv ? json_object_array_length(iv) : 0;
	char b[32], t1[32], t2[32];

	out_line(ctx, "%s", "");
	out_heading(ctx, "sustained load: %s, %" PRIu64 " in flight, for %" PRIu64 " s in intervals of %" PRIu64 " s",
		     jget_str(sus, "run"), jget_u64(sus, "inflight"), jget_u64(sus, "duration_s"),
		     jget_u64(sus, "interval_s"));
	table_header(t, "interval", "start s", "IOPS", "p50 us", "p99.9 us");
	for (unsigned c = 0; c < 5; c++)
		table_align(t, c, ALIGN_RIGHT);
	for (size_t i = 0; i < n; i++) {
		json_object *v = json_object_array_get_idx(iv, i);

		table_cellf(t, "%" PRIu64 "%s", jget_u64(v, "index") + 1, jget_bool(v, "complete") ? "" : " (cut)");
		table_cellf(t, "%" PRIu64, jget_u64(v, "start_s"));
		table_cellf(t, "%s", fmt_thousands(jget_u64(v, "iops"), b));
		table_cellf(t, "%.0f", jget_double(v, "p50_us"));
		table_cellf(t, "%.0f", jget_double(v, "p99_9_us"));
	}
	table_print(ctx, t);
	if (d)
		out_line(ctx, "drift, first interval to last: IOPS %.2fx, p99.9 %.2fx (%s)", jget_double(d, "iops_ratio"),
			 jget_double(d, "p99_9_ratio"), jget_str(d, "status"));
	if (jget_str(temp, "reason"))
		out_line(ctx, "temperature: %s before, %s after (%s)", temp_text(temp, "before_c", t1),
			 temp_text(temp, "after_c", t2), jget_str(temp, "reason"));
	else
		out_line(ctx, "temperature (SMART, %s): %s before, %s after", jget_str(temp, "controller"),
			 temp_text(temp, "before_c", t1), temp_text(temp, "after_c", t2));
	if (runs && json_object_array_length(runs)) {
		out_line(ctx, "%s", "");
		out_heading(ctx, "after the sustained load");
		render_runs(ctx, runs, false);
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
	if (jget_object(rec, "sustain"))
		render_sustain(ctx, jget(rec, "sustain"));
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
