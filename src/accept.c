/* SPDX-License-Identifier: MIT */
/* The accept engine: target choice, the harness runs and their record, the gates, the sweep, the engine gates. */
#include "accept.h"
#include "bridge.h"
#include "usbnvme.h"
#include "disk.h"
#include "schema.h"

#include <errno.h>
#include <inttypes.h>
#include <liburing.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "nvme.h"
#include "predict.h"
#include "proc.h"
#include "size.h"
#include "util.h"

/* Stop a run after this many failed reads: enough offsets to show a pattern, and no 20 s of
 * hammering a dying drive. Any error fails the run. */
#define ACCEPT_MAX_ERRORS 64
/* A working set with more than 1 % holes, unwritten extents or zero blocks is not representative. */
#define UNBACKED_PERMILLE_MAX 10
/* Blocks read to look for all-zero data where FIEMAP cannot answer (devices, FUSE). */
#define ZERO_SAMPLES 256
/* Output kept from an engine gate: the end of a bench log says why it failed. */
#define GATE_TAIL_BYTES 4096

static bool stopped(const struct accept *a)
{
	return a->stop && *a->stop;
}

static void hook_end(const struct accept *a)
{
	if (a->hooks.end)
		a->hooks.end(a->hooks.ud);
}

void accept_init(struct accept *a, const struct profile *pf, struct record *rec)
{
	*a = (struct accept){
		.rec = rec,
		.pf = pf,
		.o = { .working_set = pf->working_set, .ramp_s = pf->ramp_s, .seq_bytes = pf->seq_bytes,
		       .sustain_s = pf->sustain_s, .sustain_interval_s = pf->sustain_interval_s },
		.t = { .fd = -1 },
		.complete = true,
		.harness_pass = true,
	};
}

void accept_free(struct accept *a)
{
	io_target_close(&a->t);
	free(a->path);
	free(a->reason);
	free(a->why);
	a->path = a->reason = a->why = NULL;
}

void accept_set_target(struct accept *a, const char *path)
{
	free(a->path);
	free(a->reason);
	a->path = xstrdup(path);
	a->chosen_by = "argument";
	a->reason = xstrdup("given on the command line");
}

/* ---- option values ---- */

int accept_parse_inflight(const char *arg, unsigned *out, size_t max, size_t *n)
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

int accept_parse_sweep(const char *arg, uint64_t *out, size_t max, size_t *n)
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

int accept_add_gate(struct accept_opts *o, const char *arg, uint64_t timeout_s)
{
	const char *eq = strchr(arg, '=');

	if (!eq || eq == arg || !eq[1] || eq - arg >= 64 || o->ngates == ARRAY_SIZE(o->gates))
		return -EINVAL;
	memcpy(o->gate_name[o->ngates], arg, (size_t)(eq - arg));
	o->gate_name[o->ngates][eq - arg] = '\0';
	o->gates[o->ngates] = (struct engine_gate){
		.name = o->gate_name[o->ngates],
		.command = (char *)eq + 1,
		.timeout_s = timeout_s,
	};
	o->ngates++;
	return 0;
}

/* ---- the target ---- */

int accept_choose_target(struct accept *a)
{
	_cleanup_free_ char *home = NULL, *pattern = NULL, *shard = NULL, *disk = NULL, *how = NULL;
	const char *glob_pat = a->pf->target_glob;
	size_t nmatch = 0;

	if (a->path)
		return 0;
	if (glob_pat && glob_pat[0] == '~' && node_home(a->home, &home) < 0)
		home = NULL;
	if (glob_pat && (glob_pat[0] != '~' || home))
		pattern = profile_expand(glob_pat, home);
	if (pattern && io_find_shard(pattern, &shard, &nmatch) == 0) {
		a->path = TAKE_PTR(shard);
		a->chosen_by = "profile-glob";
		a->reason = nmatch > 1 ? xasprintf("the largest of %zu files matching the profile's target_glob '%s'",
						   nmatch, pattern)
				       : xasprintf("the file matching the profile's target_glob '%s'", pattern);
		return 0;
	}
	if (io_mount_disk("/", &disk, &how) == 0) {
		a->path = TAKE_PTR(disk);
		a->chosen_by = "root-disk";
		a->reason = xasprintf("the whole disk that holds '/': no file matches the profile's target_glob '%s'; %s",
				      pattern ? pattern : glob_pat, how);
		return 0;
	}
	return set_why(&a->why, -ENOENT,
		       "no target found: no file matches the profile's target_glob '%s'%s, and '/' is not mounted "
		       "from a block device readable here (/proc/self/mountinfo, /sys/dev/block); give the file or "
		       "block device to measure (swaptool accept FILE|DEVICE) or set target_glob in [accept]",
		       pattern ? pattern : glob_pat ? glob_pat : "(none)",
		       glob_pat && glob_pat[0] == '~' && !home ? " (no home for '~': pass --home)" : "");
}

/* The gates of the i-th random run: a depth the profile gates (16, 64) keeps its gates; another
 * depth takes the gates of the profile's random run at the same position, or none. */
static const struct accept_run *run_gates(const struct accept_opts *o, const struct accept_run *const *rnd,
					  size_t nrnd, size_t i)
{
	if (!o->ninflight)
		return rnd[i];
	for (size_t k = 0; k < nrnd; k++)
		if (rnd[k]->inflight == o->inflight[i])
			return rnd[k];
	return i < nrnd ? rnd[i] : NULL;
}

void accept_plan_runs(struct accept *a)
{
	const struct profile *pf = a->pf;
	const struct accept_opts *o = &a->o;
	const struct accept_run *rnd[16];
	size_t nrnd = 0;

	for (size_t i = 0; i < pf->nruns && nrnd < ARRAY_SIZE(rnd); i++)
		if (!pf->runs[i].sequential)
			rnd[nrnd++] = &pf->runs[i];
	for (size_t i = 0; i < (o->ninflight ? o->ninflight : nrnd) && a->nplan < ARRAY_SIZE(a->plan); i++) {
		struct accept_plan_run *p = &a->plan[a->nplan++];
		const struct accept_run *thr = run_gates(o, rnd, nrnd, i);

		*p = (struct accept_plan_run){ .inflight = o->ninflight ? o->inflight[i] : thr->inflight, .thr = thr,
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
		if (pf->runs[i].sequential && a->nplan < ARRAY_SIZE(a->plan)) {
			struct accept_plan_run *p = &a->plan[a->nplan++];
			*p = (struct accept_plan_run){ .sequential = true,
						       .inflight = pf->runs[i].inflight ? pf->runs[i].inflight : 4,
						       .thr = &pf->runs[i] };
			snprintf(p->name, sizeof(p->name), "%.31s", pf->runs[i].name);
		}
}

int accept_fit_working_set(const struct accept_opts *o, bool found, uint64_t size, uint64_t *ws, bool *clamped)
{
	uint64_t w = o->working_set & ~4095ULL;

	*clamped = false;
	/* a target found on its own (a shard a little smaller than 98 GB) is measured whole rather
	 * than refused; a size the operator asked for is never changed */
	if (w > size && found && !o->have_working_set && size >= ACCEPT_MIN_WS) {
		w = size & ~4095ULL;
		*clamped = true;
	}
	*ws = w;
	/* as io_working_set: the target holds the working set */
	return w > size ? -E2BIG : 0;
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

static int usage_why(struct accept *a, int r, const char *msg)
{
	a->usage = true;
	return set_why(&a->why, r, "%s", msg);
}

/* Open the target and size the working set. */
static int open_target(struct accept *a)
{
	const struct accept_opts *o = &a->o;
	const char *path = a->path;
	_cleanup_free_ char *why = NULL, *msg = NULL;
	char b1[32], b2[32], b3[32];
	bool clamped;
	uint64_t ws;
	int r;

	/* a target accept found on its own: the error says why that one */
	_cleanup_free_ char *via = streq(a->chosen_by, "argument") ? xstrdup("") : xasprintf(" (%s)", a->reason);

	r = io_target_open(path, &a->t, &why);
	if (r == -ENOENT)
		return set_why(&a->why, r, "cannot open '%s'%s: no such file or device; give the path of the "
					   "file (the Engram shard) or block device to measure", path, via);
	if (r == -EOPNOTSUPP)
		return set_why(&a->why, r, "no O_DIRECT on '%s'%s: %s; put the test file on the drive under test",
			       path, via, why);
	if (r < 0)
		return set_why(&a->why, r, "cannot read '%s'%s: %s (%s); give a regular file or a block device",
			       path, via, why ? why : "open failed", strerror(-r));

	r = accept_fit_working_set(o, !streq(a->chosen_by, "argument"), a->t.size, &ws, &clamped);
	if (clamped)
		record_check(a->rec, "working-set", ST_WARN,
			     "the profile's working set (%s) is larger than '%s' (%s bytes): clamped to the whole target",
			     fmt_binary(o->working_set, b1), path, fmt_thousands(a->t.size, b2));
	if (r < 0 || io_working_set(&a->t, ws, &a->offset) < 0) {
		msg = xasprintf("the working set (%s) is larger than '%s' (%s bytes); pass --working-set %s or less",
				fmt_binary(o->working_set, b1), path, fmt_thousands(a->t.size, b2), ws_arg(a->t.size, b3));
		return usage_why(a, -E2BIG, msg);
	}
	for (size_t i = 0; i < o->nsweep; i++)
		if ((o->sweep[i] & ~4095ULL) > a->t.size) {
			msg = xasprintf("the sweep working set %s is larger than '%s' (%s bytes); use sizes up to --sweep %s",
					fmt_binary(o->sweep[i], b1), path, fmt_thousands(a->t.size, b2),
					ws_arg(a->t.size, b3));
			return usage_why(a, -E2BIG, msg);
		}
	if (!o->no_seq && ws < (1u << 20)) {
		msg = xasprintf("the working set (%s) is smaller than one 1 MiB sequential read; "
				"pass a larger --working-set or --no-seq", fmt_binary(ws, b1));
		return usage_why(a, -EINVAL, msg);
	}
	a->ws = ws;
	return 0;
}

/* The device accept measured, under the file or block device it read: the report takes the new
 * drive's identity from here (not from preflight's --target-model) and compares it with the target
 * preflight planned for. Fields unknown are null. */
static void drive_record(struct record *rec, const struct io_target *t, const char *path)
{
	_cleanup_free_ char *model = NULL, *fw = NULL, *serial = NULL, *ctrl = NULL, *dev = NULL;
	json_object *d;
	uint64_t size;

	if (!t->disk[0])
		return;
	io_drive_identity(t, &model, &fw, &serial);
	io_drive_sysfs(t, &ctrl, &size);
	dev = xasprintf("/dev/%s", t->disk);
	d = json_object_new_object();
	jset_str(d, "under", path);
	jset_str(d, "disk", t->disk);
	jset_str(d, "device", dev);
	jset_str(d, "transport", disk_transport(t->disk));
	jset_str(d, "controller", ctrl);
	jset_str(d, "kind", ctrl ? "nvme" : "block");
	jset_str(d, "model", model);
	jset_str(d, "firmware", fw);
	jset_str(d, "serial", serial);
	json_object_object_add(d, "size_bytes", size ? json_object_new_uint64(size) : NULL);
	json_object_object_add(rec->root, "drive", d);
}

/* The target as the record describes it: what, why it was chosen, and the drive under it. */
static void describe_target(struct accept *a)
{
	const struct io_target *t = &a->t;
	json_object *target = json_object_new_object();

	jset_str(target, "path", a->path);
	jset_str(target, "kind", t->block_device ? "block" : "file");
	jset_u64(target, "size_bytes", t->size);
	jset_u64(target, "working_set_bytes", a->ws);
	jset_u64(target, "offset_bytes", a->offset);
	jset_u64(target, "lba_size", t->lba_size);
	jset_str(target, "device", t->dev[0] ? t->dev : NULL);
	jset_str(target, "disk", t->disk[0] ? t->disk : NULL);
	jset_str(target, "fs_type", t->fs_type[0] ? t->fs_type : NULL);
	jset_str(target, "chosen_by", a->chosen_by);
	jset_str(target, "reason", a->reason);
	json_object_object_add(a->rec->root, "target", target);
	jset_u64(a->rec->root, "seed", a->o.seed);
	drive_record(a->rec, t, a->path);
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

/* Reads that never touch flash: holes/unwritten extents (files), zero blocks (devices). */
static void check_representative(struct accept *a)
{
	struct record *rec = a->rec;
	json_object *rep = unbacked_json(&a->t, a->offset, a->ws, a->o.seed);
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

/* The device's own I/O rate over 1 s (a SIGINT cuts it short). */
static uint64_t sample_iops(const struct accept *a, const char *dev, uint64_t before)
{
	struct timespec ts = { 1, 0 };
	uint64_t t0 = mono_ns(), after;

	if (a->hooks.sampling)
		a->hooks.sampling(a->hooks.ud, dev);
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR && !stopped(a))
		;
	hook_end(a);
	if (io_diskstats_ios(dev, &after) < 0)
		after = before;
	return io_rate(after - before, mono_ns() - t0);
}

/* Is the node serving? The device's own I/O rate over 1 s, before we add ours. -EBUSY: refused. */
static int check_busy(struct accept *a)
{
	struct record *rec = a->rec;
	const struct profile *pf = a->pf;
	const char *dev = a->t.dev;
	json_object *busy = json_object_new_object();
	uint64_t before, v;

	jset_str(busy, "device", dev[0] ? dev : NULL);
	jset_u64(busy, "threshold_iops", pf->busy_threshold_iops);
	jset_bool(busy, "forced", a->o.force);
	if (!dev[0] || io_diskstats_ios(dev, &before) < 0) {
		jset_bool(busy, "checked", false);
		json_object_object_add(rec->root, "busy", busy);
		record_check(rec, "busy", ST_SKIP, "no block device under '%s' in /proc/diskstats: busy check not possible",
			     a->path);
		return 0;
	}
	v = sample_iops(a, dev, before);
	jset_bool(busy, "checked", true);
	jset_u64(busy, "iops", v);
	json_object_object_add(rec->root, "busy", busy);
	if (v > pf->busy_threshold_iops && !a->o.force && !stopped(a))
		return set_why(&a->why, -EBUSY,
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
	return 0;
}

/* The drive inside the enclosure, read through its bridge where its family allows it (src/usbnvme.h):
 * its own model, firmware and serial replace the SCSI strings, often the bridge's, so that report
 * matches it with preflight's target and, after the swap, with the drive in the slot. Returns the
 * sentence for the usb-bridge check (allocated). */
static char *read_through(struct accept *a, json_object *d)
{
	_cleanup_(usbnvme_through_freep) struct usbnvme_through th = { 0 };

	usbnvme_through(-1, a->t.disk, &th);
	if (!usbnvme_through_read(&th))
		return th.family == USBNVME_NONE ? xstrdup("")
						 : xasprintf("; reading the drive through it failed: %s", th.why ?: "?");
	if (d) {
		jset_str(d, "model", th.n.mn);
		jset_str(d, "firmware", th.n.fr);
		jset_str(d, "serial", th.n.sn[0] ? th.n.sn : NULL);
		jset_str(d, "read_through", th.n.read_through);
	}
	return xasprintf("; the drive, read through it (%s): '%s', firmware %s, serial %s", usbnvme_family_chips(th.family),
			 th.n.mn, th.n.fr, th.n.sn[0] ? th.n.sn : "unknown");
}

/* A drive in a USB enclosure is measured through the bridge and its link: UAS queues a few dozen
 * reads and Bulk-Only one, and the link caps the rate, so the figures would be the bridge's and the
 * verdict about the wrong thing. -EXDEV: refused (without --force). */
static int check_bridge(struct accept *a)
{
	_cleanup_(bridge_freep) struct disk_bridge b = { 0 };
	_cleanup_free_ char *desc = NULL, *drive = NULL;
	json_object *d = jget_object(a->rec->root, "drive");

	if (!a->t.disk[0] || bridge_of_disk(a->t.disk, &b) < 0)
		return 0;
	desc = bridge_describe(&b);
	if (d) {
		json_object_object_add(d, "bridge", bridge_json(&b));
		jset_bool(d, "bridge_limited", true);
	}
	if (!a->o.force)
		return set_why(&a->why, -EXDEV,
			       "'%s' is on /dev/%s, behind USB bridge %s: accept would measure the bridge and its link, "
			       "not the drive; run accept with the drive in the slot after the swap, or pass --force "
			       "to measure through the bridge (every figure is then labelled bridge-limited)",
			       a->path, a->t.disk, desc);
	drive = read_through(a, d);
	record_check(a->rec, "usb-bridge", ST_WARN,
		     "measured through USB bridge %s (--force): every figure is bridge-limited, not the drive's; "
		     "accept the drive again in the slot after the swap%s", desc, drive);
	return 0;
}

int accept_check_input(struct accept *a)
{
	int r = open_target(a);

	if (r < 0)
		return r;
	describe_target(a);
	r = check_bridge(a);
	if (r < 0)
		return r;
	check_representative(a);
	r = check_busy(a);
	if (r < 0)
		return r;
	a->runs = json_object_new_array();
	a->gates = json_object_new_array();
	json_object_object_add(a->rec->root, "runs", a->runs);
	json_object_object_add(a->rec->root, "gates", a->gates);
	return 0;
}

/* ---- one harness run and its record ---- */

static double us(uint64_t ns)
{
	return (double)ns / 1000.0;
}

static json_object *lat_json(const struct hist *h)
{
	json_object *lat = json_object_new_object();

	jset_double(lat, "min", h->count ? us(h->min_ns) : 0);
	jset_double(lat, SCHEMA_LAT_P50, us(hist_quantile(h, 500000)));
	jset_double(lat, SCHEMA_LAT_P90, us(hist_quantile(h, 900000)));
	jset_double(lat, SCHEMA_LAT_P99, us(hist_quantile(h, 990000)));
	jset_double(lat, SCHEMA_LAT_P99_9, us(hist_quantile(h, 999000)));
	jset_double(lat, SCHEMA_LAT_P99_99, us(hist_quantile(h, 999900)));
	jset_double(lat, SCHEMA_LAT_MAX, us(h->max_ns));
	jset_double(lat, "mean", us(hist_mean(h)));
	return lat;
}

static json_object *stability_json(const struct io_result *res)
{
	json_object *stab = json_object_new_object();
	struct io_stability st;

	io_stability(res->per_second, res->nseconds, &st);
	jset_bool(stab, "evaluated", st.evaluated);
	if (st.evaluated) {
		jset_bool(stab, "steady", st.steady);
		jset_double(stab, "range_pct", round(st.range_pct * 10) / 10);
		jset_double(stab, "slope_pct", round(st.slope_pct * 10) / 10);
	}
	return stab;
}

static json_object *errors_json(const struct io_result *res)
{
	json_object *errs = json_object_new_object(), *offs = json_object_new_array();

	jset_u64(errs, "count", res->errors);
	jset_bool(errs, "limit_reached", res->error_limit);
	for (unsigned i = 0; i < res->nerr_kept; i++) {
		json_object *e = json_object_new_object();
		jset_u64(e, "offset", res->err_offset[i]);
		jset_str(e, "error", strerror(-res->err_code[i]));
		json_object_array_add(offs, e);
	}
	json_object_object_add(errs, "first", offs);
	return errs;
}

static json_object *ring_json(const struct io_result *res)
{
	json_object *h = json_object_new_object();

	jset_bool(h, "single_issuer", res->ring_flags & IORING_SETUP_SINGLE_ISSUER);
	jset_bool(h, "defer_taskrun", res->ring_flags & IORING_SETUP_DEFER_TASKRUN);
	jset_bool(h, "coop_taskrun", res->ring_flags & IORING_SETUP_COOP_TASKRUN);
	jset_bool(h, "fixed_buffers", res->fixed_buffers);
	jset_bool(h, "fixed_files", res->fixed_files);
	return h;
}

/* A finished pass as a run object (docs/design.md, Record contracts). */
static json_object *run_json(const struct accept *a, const struct accept_plan_run *pr, const struct io_spec *s,
			     const struct io_result *res)
{
	json_object *run = json_object_new_object(), *ps = json_object_new_array();

	jset_str(run, "name", pr->name);
	jset_str(run, "mode", pr->sequential ? "seqread" : "randread");
	jset_u64(run, "block_size", s->block_size);
	jset_u64(run, "inflight", pr->inflight);
	jset_u64(run, "threads", res->threads);
	jset_u64(run, "working_set_bytes", s->length);
	if (pr->sequential)
		jset_u64(run, "bytes_planned", a->o.seq_bytes);
	jset_u64(run, "ramp_s", pr->sequential ? 0 : a->o.ramp_s);
	/* duration_s: the measured window, drained reads included (what IOPS is divided by) */
	jset_double(run, "duration_s", round((double)res->elapsed_ns / 1e3) / 1e6);
	jset_u64(run, "planned_duration_s", pr->sequential ? 0 : pr->duration_s);
	jset_u64(run, "ios", res->ios);
	jset_u64(run, "bytes", res->bytes);
	jset_u64(run, "iops", io_rate(res->ios, res->elapsed_ns));
	jset_double(run, "mb_s", round((double)io_rate(res->bytes, res->elapsed_ns) / 1e5) / 10.0);
	json_object_object_add(run, "lat_us", lat_json(&res->hist));
	jset_u64(run, "over_200ms", res->hist.over_200ms);
	jset_u64(run, "over_1s", res->hist.over_1s);
	jset_u64(run, "over_5s", res->hist.over_5s);
	json_object_object_add(run, "lat_hist", hist_json(&res->hist));
	for (size_t i = 0; i < res->nseconds; i++)
		json_object_array_add(ps, json_object_new_int64((int64_t)res->per_second[i]));
	json_object_object_add(run, "per_second_iops", ps);
	jset_double(run, "cpu_us_per_io", res->ios ? round((double)res->cpu_ns / (double)res->ios) / 1000.0 : 0);
	jset_u64(run, "seed", s->seed);
	json_object_object_add(run, "stability", stability_json(res));
	json_object_object_add(run, "errors", errors_json(res));
	json_object_object_add(run, "ring", ring_json(res));
	jset_bool(run, "complete", !res->interrupted);
	if (!pr->sequential && res->ios) {
		/* what the engine would see at this rate (src/predict.h); a run too odd to predict
		 * (no rate) simply has none, which the engine-prediction check says */
		json_object *pred = NULL;
		_cleanup_free_ char *pwhy = NULL;

		if (predict_run_json(&a->pf->workload, run, &pred, &pwhy) == 0)
			json_object_object_add(run, "engine_prediction", pred);
	}
	return run;
}

struct run_prog {
	const struct accept *a;
	struct accept_run_progress p;
};

static void on_io_progress(void *arg, const struct io_progress *io)
{
	struct run_prog *g = arg;

	g->p.io = io;
	g->a->hooks.run(g->a->hooks.ud, &g->p);
}

/* What the harness reads in a pass of `pr` over [offset, offset + ws) (no progress hook). */
static struct io_spec run_spec(const struct accept *a, const struct accept_plan_run *pr, uint64_t ws, uint64_t offset,
			       uint64_t seed)
{
	const struct accept_opts *o = &a->o;

	return (struct io_spec){
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
		.stop = a->stop,
	};
}

/* The random runs of the plan: what --sustain repeats after the hold. */
static size_t random_runs(const struct accept *a)
{
	size_t n = 0;

	for (size_t i = 0; i < a->nplan; i++)
		n += !a->plan[i].sequential;
	return n;
}

/* Every harness run of this accept, for "run k of n": the plan, the sweep, the repeated runs. */
static unsigned total_runs(const struct accept *a)
{
	return (unsigned)(a->nplan + a->o.nsweep + (a->o.sustain_s ? random_runs(a) : 0));
}

/* Run one pass of `pr` over [offset, offset + ws) and describe it; *clean false when interrupted. */
static int do_run(struct accept *a, const struct accept_plan_run *pr, uint64_t ws, uint64_t offset, uint64_t seed,
		  const char *label, unsigned k, json_object **out, bool *clean)
{
	const struct accept_opts *o = &a->o;
	struct run_prog g = { .a = a, .p = { .run = pr->name, .label = label, .k = k, .n = total_runs(a),
					     .start_ns = mono_ns(), .seq_bytes = o->seq_bytes < ws ? o->seq_bytes : ws } };
	struct io_spec s = run_spec(a, pr, ws, offset, seed);
	struct io_result res;
	int r;

	s.progress = a->hooks.run ? on_io_progress : NULL;
	s.progress_arg = &g;
	r = io_run(a->t.fd, &s, &res);
	hook_end(a);
	if (r >= 0) {
		*out = run_json(a, pr, &s, &res);
		*clean = !res.interrupted;
	}
	io_result_free(&res);
	return r;
}

/* A run whose reads failed because the drive left the machine (hot-unplugged, its controller
 * reset away) measured nothing about the drive: that is "could not do the job" (exit 3) naming the
 * drive, not a gate the drive failed, and no later run is tried on a device that is gone.
 * Returns 0 when the drive is still there (or the run had no errors), else -ENODEV. */
static int drive_vanished(struct accept *a, json_object *run, const char *name)
{
	json_object *errs = jget_object(run, "errors");
	json_object *first = jarray_at(jget_array(errs, "first"), 0);
	_cleanup_free_ char *sys = NULL;

	if (!jget_u64(errs, "count") || !a->t.disk[0])
		return 0;
	sys = xasprintf("/sys/block/%s", a->t.disk);
	if (access(sys, F_OK) == 0)
		return 0;
	return set_why(&a->why, -ENODEV,
		       "the drive '%s' under '%s' vanished during %s: %" PRIu64 " reads failed (first: %s) and "
		       "/sys/block/%s is gone; nothing was measured: reseat or reconnect it, then run accept again",
		       a->t.disk, a->path, name, jget_u64(errs, "count"), jget_str(first, "error") ?: "?", a->t.disk);
}

/* The runs, announced with the time they take (the timed ones: the sequential read and the engine
 * gates last as long as the device and the commands make them). */
static void announce_runs(const struct accept *a)
{
	const struct accept_opts *o = &a->o;
	uint64_t secs = 0, sweep_s = o->have_duration ? o->duration_s
				     : a->nplan && !a->plan[0].sequential ? a->plan[0].duration_s : 15;
	bool seq = false;

	if (!a->hooks.planned)
		return;
	for (size_t i = 0; i < a->nplan; i++) {
		if (a->plan[i].sequential)
			seq = true;
		else
			secs += o->ramp_s + a->plan[i].duration_s;
	}
	secs += o->nsweep * (o->ramp_s + sweep_s);
	/* the hold, then the random runs again */
	for (size_t i = 0; i < a->nplan && o->sustain_s; i++)
		secs += a->plan[i].sequential ? 0 : o->ramp_s + a->plan[i].duration_s;
	secs += o->sustain_s;
	a->hooks.planned(a->hooks.ud, total_runs(a), secs, seq, a->pf->nengine || o->ngates);
}

int accept_run_harness(struct accept *a)
{
	announce_runs(a);
	for (size_t i = 0; i < a->nplan && !stopped(a); i++) {
		json_object *run = NULL;
		bool clean = true;
		int r = do_run(a, &a->plan[i], a->ws, a->offset, a->o.seed + i, NULL, (unsigned)i + 1, &run, &clean);

		if (r < 0)
			return set_why(&a->why, r, "cannot run the harness on '%s': %s; check io_uring is enabled "
						   "(sysctl kernel.io_uring_disabled)", a->path, strerror(-r));
		json_object_array_add(a->runs, run);
		r = drive_vanished(a, run, a->plan[i].name);
		if (r < 0)
			return r;
		if (!clean)
			break;
	}
	return 0;
}

/* ---- judging ---- */

static void judge_errors(struct accept *a, const struct accept_plan_run *p, json_object *run, uint64_t errors)
{
	json_object *g = json_object_new_object(), *ck;
	json_object *first = json_object_array_get_idx(jget(jget(run, "errors"), "first"), 0);
	char gname[64];

	snprintf(gname, sizeof(gname), "%.31s-errors", p->name);
	a->harness_pass = false;
	jset_str(g, "name", gname);
	jset_str(g, "kind", SCHEMA_GATE_KIND_HARNESS);
	jset_str(g, "run", p->name);
	jset_str(g, "status", "fail");
	jset_u64(g, "threshold", 0);
	jset_u64(g, "measured", errors);
	jset_str(g, "unit", "errors");
	json_object_array_add(a->gates, g);
	ck = record_check(a->rec, gname, ST_FAIL,
			  "%s: %" PRIu64 " read errors%s, first at offset %" PRIu64 " (%s): the drive fails", p->name,
			  errors, jget_bool(jget(run, "errors"), "limit_reached") ? " (run stopped)" : "",
			  jget_u64(first, "offset"), jget_str(first, "error"));
	jset_u64(ck, "measured", errors);
}

static void judge_gate(struct accept *a, const struct accept_plan_run *p, const struct io_gate *gv)
{
	json_object *g = json_object_new_object(), *ck;
	char b1[32], b2[32];

	a->harness_pass &= gv->pass;
	jset_str(g, "name", gv->name);
	jset_str(g, "kind", SCHEMA_GATE_KIND_HARNESS);
	jset_str(g, "run", p->name);
	jset_str(g, "status", gv->pass ? "pass" : "fail");
	jset_double(g, "threshold", gv->threshold);
	jset_double(g, "measured", gv->measured);
	jset_str(g, "unit", gv->unit);
	jset_str(g, "op", gv->at_least ? ">=" : "<=");
	json_object_array_add(a->gates, g);
	if (streq(gv->unit, "us"))
		ck = record_check(a->rec, gv->name, gv->pass ? ST_PASS : ST_FAIL,
				  "%s (%u in flight): %s %.*f us, gate %s %s us", p->name, p->inflight, gv->what,
				  gv->measured < 1000 ? 1 : 0, gv->measured, gv->at_least ? ">=" : "<=",
				  fmt_thousands((uint64_t)gv->threshold, b2));
	else
		ck = record_check(a->rec, gv->name, gv->pass ? ST_PASS : ST_FAIL,
				  "%s (%u in flight): %s %s, gate %s %s", p->name, p->inflight,
				  fmt_thousands((uint64_t)gv->measured, b1), gv->what, gv->at_least ? ">=" : "<=",
				  fmt_thousands((uint64_t)gv->threshold, b2));
	jset_double(ck, "threshold", gv->threshold);
	jset_double(ck, "measured", gv->measured);
}

bool accept_judge_run(struct accept *a, const struct accept_plan_run *p, json_object *run)
{
	struct record *rec = a->rec;
	struct io_gate gv[IO_MAX_GATES];
	uint64_t errors = jget_u64(jget(run, "errors"), "count");
	json_object *st = jget(run, "stability");
	bool nodata;
	size_t ng;

	if (!jget_bool(run, "complete")) {
		a->complete = false;
		record_check(rec, p->name, ST_FAIL, "%s interrupted after %.1f s: the record is incomplete", p->name,
			     jget_double(run, "duration_s"));
		return false;
	}
	if (errors)
		judge_errors(a, p, run, errors);
	ng = p->thr ? io_gates_eval(p->thr, p->name, run, gv) : 0;
	/* A gate never passes on no data: with no read completed, IOPS is 0 but every latency
	 * reads 0 us too, which any "at most" gate would take for a pass. */
	nodata = jget_u64(run, "ios") == 0;
	if (nodata) {
		char id[64];

		a->harness_pass = false;
		snprintf(id, sizeof(id), "%.31s-reads", p->name);
		record_check(rec, id, ST_FAIL, "%s: no read completed in %.1f s: nothing was measured, its gates fail",
			     p->name, jget_double(run, "duration_s"));
	}
	for (size_t k = 0; k < ng; k++) {
		if (nodata)
			gv[k].pass = false;
		judge_gate(a, p, &gv[k]);
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

/* The engine predicted from the random-read runs (docs/incident.md, "Why the drive kills the
 * engine"): the check takes the run whose worst chunk is slowest, since the engine's reader may
 * run at either depth. Interrupted or empty runs predict nothing. */
static void judge_prediction(struct accept *a, json_object *runs, const char *id, const char *when)
{
	json_object *worst = NULL, *worst_run = NULL;

	for (size_t i = 0; i < json_object_array_length(runs); i++) {
		json_object *run = json_object_array_get_idx(runs, i), *p = jget_object(run, "engine_prediction");

		if (!p || !jget_bool(run, "complete"))
			continue;
		if (!worst || predict_json_worse(p, worst))
			worst = p, worst_run = run;
	}
	if (!worst)
		return;
	enum status st;
	if (status_parse(jget_str(worst, "status"), &st))
		st = ST_FAIL;
	json_object *c = record_check(a->rec, id, st, "%s%s: %s", when, jget_str(worst_run, "name"),
				      jget_str(worst, "summary"));
	jset_str(c, "run", jget_str(worst_run, "name"));
	json_object_object_add(c, "prediction", json_object_get(worst));
}

void accept_judge_harness(struct accept *a)
{
	for (size_t i = 0; i < json_object_array_length(a->runs); i++)
		if (!accept_judge_run(a, &a->plan[i], json_object_array_get_idx(a->runs, i)))
			break;
	judge_prediction(a, a->runs, SCHEMA_CHECK_ENGINE_PREDICTION, "");
}

/* ---- the sweep ---- */

/* What the sweep measured: its IOPS at the smallest and largest working set, and the first
 * unrepresentative working set (its object is owned by the record). */
struct sweep_sum {
	uint64_t first_iops, last_iops;
	json_object *holes;
	uint64_t holes_ws;
};

/* One working set of the sweep into `sweep`. Returns 0 (*clean false when interrupted) or a
 * negative errno. */
static int sweep_one(struct accept *a, const struct accept_plan_run *sp, size_t i, json_object *sweep,
		     struct sweep_sum *sum, bool *clean)
{
	const struct accept_opts *o = &a->o;
	uint64_t sws = o->sweep[i] & ~4095ULL, soff = 0;
	json_object *run = NULL, *rep;
	char label[48], b1[32];
	int r;

	io_working_set(&a->t, sws, &soff);
	snprintf(label, sizeof(label), "working set %s", fmt_binary(sws, b1));
	/* a larger working set may reach into holes the main one missed */
	rep = unbacked_json(&a->t, soff, sws, o->seed + 100 + i);
	if (!jget_bool(rep, "representative") && !sum->holes) {
		sum->holes = rep;
		sum->holes_ws = sws;
	}
	r = do_run(a, sp, sws, soff, o->seed + 100 + i, label, (unsigned)(a->nplan + i) + 1, &run, clean);
	if (r < 0) {
		json_object_put(rep);
		return set_why(&a->why, r, "cannot run the sweep on '%s': %s", a->path, strerror(-r));
	}
	jset_u64(run, "offset_bytes", soff);
	json_object_object_add(run, "working_set", rep);
	json_object_array_add(sweep, run);
	r = drive_vanished(a, run, label);
	if (r < 0)
		return r;
	if (!*clean) {
		a->complete = false;
		record_check(a->rec, "sweep", ST_FAIL, "sweep interrupted at working set %s", b1);
		return 0;
	}
	if (i == 0)
		sum->first_iops = jget_u64(run, "iops");
	sum->last_iops = jget_u64(run, "iops");
	return 0;
}

/* The sweep's checks: holes in a working set, and the collapse. */
static void judge_sweep(struct accept *a, const struct sweep_sum *sum)
{
	char b1[32], b2[32];

	if (sum->holes)
		record_check(a->rec, "sweep-representative", ST_WARN,
			     "%.2f %% of the %s working set is %s: its sweep IOPS is not representative; "
			     "measure a file with real data",
			     jget_double(sum->holes, "unbacked_pct"), fmt_binary(sum->holes_ws, b1),
			     unbacked_what(jget_str(sum->holes, "method")));
	if (a->complete && a->o.nsweep > 1) {
		/* the bad drive kept 19 % of its IOPS from 2 GB to 98 GB, the good one 71 % */
		bool collapse = sum->first_iops && sum->last_iops * 2 < sum->first_iops;
		record_check(a->rec, "sweep", collapse ? ST_WARN : ST_PASS,
			     "IOPS from the smallest to the largest working set: %s -> %s (%.0f %%)%s",
			     fmt_thousands(sum->first_iops, b1), fmt_thousands(sum->last_iops, b2),
			     sum->first_iops ? 100.0 * (double)sum->last_iops / (double)sum->first_iops : 0.0,
			     collapse ? ": throughput collapses as the working set grows (mapping-cache misses)" : "");
	}
}

/* --sweep: the incident's collapse curve (69 K -> 13 K IOPS on the bad drive, flat on a good
 * one), run and judged. */
int accept_run_sweep(struct accept *a)
{
	const struct accept_opts *o = &a->o;
	const struct accept_plan_run *plan = a->plan;
	struct accept_plan_run sp = { .inflight = a->nplan && !plan[0].sequential ? plan[0].inflight : 16,
				      .duration_s = a->nplan && !plan[0].sequential ? plan[0].duration_s : 15 };
	struct sweep_sum sum = { 0 };
	json_object *sweep;

	if (!o->nsweep || stopped(a) || !a->complete)
		return 0;
	if (o->have_duration)
		sp.duration_s = o->duration_s;
	snprintf(sp.name, sizeof(sp.name), "sweep%u", sp.inflight);
	sweep = json_object_new_array();
	json_object_object_add(a->rec->root, "sweep", sweep);
	for (size_t i = 0; i < o->nsweep && !stopped(a); i++) {
		bool clean = true;
		int r = sweep_one(a, &sp, i, sweep, &sum, &clean);

		if (r < 0)
			return r;
		if (!clean)
			break;
	}
	judge_sweep(a, &sum);
	return 0;
}

/* ---- the sustained load ---- */

int accept_parse_duration(const char *arg, uint64_t *secs)
{
	static const struct {
		char suffix;
		uint64_t mult;
	} units[] = { { 's', 1 }, { 'm', 60 }, { 'h', 3600 } };
	_cleanup_free_ char *num = xstrdup(arg);
	size_t n = strlen(num);
	uint64_t mult = 1, v;
	const char *why;

	for (size_t i = 0; n > 1 && i < ARRAY_SIZE(units); i++)
		if (num[n - 1] == units[i].suffix) {
			mult = units[i].mult;
			num[n - 1] = '\0';
			break;
		}
	if (u64_parse(num, &v, &why) < 0 || v == 0 || v > ACCEPT_MAX_SUSTAIN_S / mult)
		return -EINVAL;
	*secs = v * mult;
	return 0;
}

enum status accept_drift_status(double iops_ratio, double p99_9_ratio)
{
	/* a NaN compares false: that figure judges nothing */
	if (isnan(iops_ratio) && isnan(p99_9_ratio))
		return ST_SKIP;
	if (iops_ratio < ACCEPT_DRIFT_IOPS_FAIL || p99_9_ratio > ACCEPT_DRIFT_P99_9_FAIL)
		return ST_FAIL;
	if (iops_ratio < ACCEPT_DRIFT_IOPS_WARN || p99_9_ratio > ACCEPT_DRIFT_P99_9_WARN)
		return ST_WARN;
	return ST_PASS;
}

/* The drive's composite temperature from its SMART log (src/nvme.c: identify and get-log-page,
 * commands that only read) into temp[key] (°C, null when it cannot be read); the first reading
 * that cannot be made says why in temp.reason. */
static void sustain_temperature(const struct accept *a, json_object *temp, const char *key)
{
	_cleanup_free_ char *ctrl = NULL, *why = NULL, *reason = NULL;
	_cleanup_nvme_info_ struct nvme_info n = { 0 };
	uint64_t size = 0;

	json_object_object_add(temp, key, NULL);
	io_drive_sysfs(&a->t, &ctrl, &size);
	if (!ctrl)
		reason = xasprintf("'%s' is not on an NVMe namespace (disk %s): no SMART temperature", a->path,
				   a->t.disk[0] ? a->t.disk : "unknown");
	else if (nvme_read_device(ctrl, NULL, &n, &why) < 0)
		reason = xasprintf("the SMART log of '%s' could not be read: %s", ctrl, why ? why : "read failed");
	else if (!n.have_smart)
		reason = xasprintf("'%s' gave no valid SMART log page", ctrl);
	else
		json_object_object_add(temp, key, json_object_new_int(nvme_temp_c(n.smart.temperature_k)));
	jset_str(temp, "controller", ctrl);
	if (reason && !jget_str(temp, "reason"))
		jset_str(temp, "reason", reason);
}

/* The deepest random run of the plan: the load the incident's lane died under (64 in flight). */
static bool sustain_run(const struct accept *a, struct accept_plan_run *out)
{
	const struct accept_plan_run *best = NULL;

	for (size_t i = 0; i < a->nplan; i++)
		if (!a->plan[i].sequential && (!best || a->plan[i].inflight > best->inflight))
			best = &a->plan[i];
	if (!best)
		return false;
	*out = *best;
	out->duration_s = a->o.sustain_interval_s;
	out->thr = NULL;
	return true;
}

struct sustain_prog {
	const struct accept *a;
	struct accept_sustain_progress p;
};

static void on_sustain_progress(void *arg, const struct io_progress *io)
{
	struct sustain_prog *g = arg;

	g->p.io = io;
	g->a->hooks.sustain(g->a->hooks.ud, &g->p);
}

/* One interval of the hold (`secs` long, no ramp: the drive is under load already) into
 * intervals[]: its reads, rate and tail. Returns 0 (*clean false when interrupted or a read
 * failed) or the harness's negative errno. */
static int sustain_interval(struct accept *a, const struct accept_plan_run *pr, struct sustain_prog *g, uint64_t secs,
			    json_object *intervals, bool *clean)
{
	struct io_spec s = run_spec(a, pr, a->ws, a->offset, a->o.seed + 200 + g->p.k);
	json_object *iv;
	struct io_result res;
	int r;

	s.ramp_ns = 0;
	s.duration_ns = secs * 1000000000ULL;
	s.progress = a->hooks.sustain ? on_sustain_progress : NULL;
	s.progress_arg = g;
	r = io_run(a->t.fd, &s, &res);
	hook_end(a);
	if (r < 0) {
		io_result_free(&res);
		return r;
	}
	iv = json_object_new_object();
	jset_u64(iv, "index", g->p.k);
	jset_u64(iv, "start_s", g->p.k * a->o.sustain_interval_s);
	jset_double(iv, "duration_s", round((double)res.elapsed_ns / 1e3) / 1e6);
	jset_u64(iv, "ios", res.ios);
	jset_u64(iv, "iops", io_rate(res.ios, res.elapsed_ns));
	jset_double(iv, "p50_us", us(hist_quantile(&res.hist, 500000)));
	jset_double(iv, "p99_9_us", us(hist_quantile(&res.hist, 999000)));
	jset_double(iv, "max_us", us(res.hist.max_ns));
	json_object_object_add(iv, "errors", errors_json(&res));
	jset_bool(iv, "complete", !res.interrupted);
	json_object_array_add(intervals, iv);
	*clean = !res.interrupted && !res.errors;
	io_result_free(&res);
	return 0;
}

static double ratio(double b, double a)
{
	return a > 0 ? b / a : NAN;
}

static void jset_ratio(json_object *o, const char *key, double r)
{
	json_object_object_add(o, key, isfinite(r) ? json_object_new_double(round(r * 1e4) / 1e4) : NULL);
}

/* sustain-drift: the first whole interval against the last, into sus.drift and the check. */
static void judge_drift(struct accept *a, json_object *sus, json_object *intervals)
{
	json_object *first = NULL, *last = NULL, *d, *ck;
	char b1[32], b2[32];
	double ir, pr;
	enum status st;

	for (size_t i = 0; i < json_object_array_length(intervals); i++) {
		json_object *iv = json_object_array_get_idx(intervals, i);

		if (!jget_bool(iv, "complete"))
			continue;
		if (!first)
			first = iv;
		last = iv;
	}
	if (!first || first == last) {
		json_object_object_add(sus, "drift", NULL);
		if (stopped(a))
			record_check(a->rec, "sustain-drift", ST_SKIP,
				     "interrupted before two whole intervals: no drift to measure");
		else
			record_check(a->rec, "sustain-drift", ST_SKIP,
				     "one interval: no drift to measure; give --sustain at least two intervals "
				     "([accept] sustain_interval, %" PRIu64 " s)", a->o.sustain_interval_s);
		return;
	}
	/* rounded as recorded, so that the status follows the figures the record shows */
	ir = round(ratio(jget_double(last, "iops"), jget_double(first, "iops")) * 1e4) / 1e4;
	pr = round(ratio(jget_double(last, "p99_9_us"), jget_double(first, "p99_9_us")) * 1e4) / 1e4;
	st = accept_drift_status(ir, pr);
	d = json_object_new_object();
	jset_u64(d, "first", jget_u64(first, "index"));
	jset_u64(d, "last", jget_u64(last, "index"));
	jset_ratio(d, "iops_ratio", ir);
	jset_ratio(d, "p99_9_ratio", pr);
	jset_str(d, "status", status_name(st));
	json_object_object_add(sus, "drift", d);
	ck = record_check(a->rec, "sustain-drift", st,
			  "under %" PRIu64 " s of sustained load, first interval to last: %s -> %s IOPS (%.2fx), p99.9 "
			  "%.0f -> %.0f us (%.2fx)%s",
			  a->o.sustain_s, fmt_thousands(jget_u64(first, "iops"), b1), fmt_thousands(jget_u64(last, "iops"), b2),
			  ir, jget_double(first, "p99_9_us"), jget_double(last, "p99_9_us"), pr,
			  st == ST_FAIL ? ": the drive collapses under sustained load, as the incident's lane died after a "
					  "full bench; do not let it serve"
			  : st == ST_WARN ? ": the drive slows under sustained load; hold it longer (--sustain) to see "
					    "whether it settles before letting it serve"
					  : ": steady");
	json_object_object_add(ck, "drift", json_object_get(d));
}

/* What ended the hold or a repeated run early (`where`, its errors object): the operator (the
 * record is incomplete) or failed reads (the drive fails, as a gated run with read errors does). */
static void judge_sustain_stop(struct accept *a, const char *where, json_object *errs)
{
	json_object *first = jarray_at(jget(errs, "first"), 0);

	if (stopped(a)) {
		a->complete = false;
		record_check(a->rec, "sustain", ST_FAIL, "sustained load interrupted in %s: the record is incomplete",
			     where);
	} else if (jget_u64(errs, "count")) {
		a->harness_pass = false;
		record_check(a->rec, "sustain", ST_FAIL,
			     "sustained load stopped in %s: %" PRIu64 " read errors, first at offset %" PRIu64
			     " (%s): the drive fails",
			     where, jget_u64(errs, "count"), jget_u64(first, "offset"), jget_str(first, "error") ?: "?");
	}
}

/* The random runs again after the hold, into sus.runs, each with its engine prediction (*clean
 * false when one was interrupted or its reads failed). */
static int sustain_repeat(struct accept *a, json_object *sus, bool *clean)
{
	json_object *runs = json_object_new_array();
	unsigned k = (unsigned)(a->nplan + a->o.nsweep);

	json_object_object_add(sus, "runs", runs);
	for (size_t i = 0; i < a->nplan && *clean && !stopped(a); i++) {
		json_object *run = NULL;
		char where[64];
		int r;

		if (a->plan[i].sequential)
			continue;
		r = do_run(a, &a->plan[i], a->ws, a->offset, a->o.seed + 300 + i, "after the sustained load", ++k, &run,
			   clean);
		if (r < 0)
			return set_why(&a->why, r, "cannot run the harness on '%s': %s", a->path, strerror(-r));
		json_object_array_add(runs, run);
		r = drive_vanished(a, run, a->plan[i].name);
		if (r < 0)
			return r;
		snprintf(where, sizeof(where), "the repeated run %s", a->plan[i].name);
		if (!*clean || jget_u64(jget(run, "errors"), "count")) {
			*clean = false;
			judge_sustain_stop(a, where, jget(run, "errors"));
		}
	}
	judge_prediction(a, runs, "sustain-prediction", "after the sustained load, ");
	return 0;
}

int accept_run_sustain(struct accept *a)
{
	const struct accept_opts *o = &a->o;
	size_t n = o->sustain_interval_s ? (size_t)((o->sustain_s + o->sustain_interval_s - 1) / o->sustain_interval_s) : 0;
	struct sustain_prog g = { .a = a };
	struct accept_plan_run pr;
	json_object *sus, *intervals, *temp;
	bool clean = true;
	int r = 0;

	if (!o->sustain_s || !n || !a->complete || stopped(a))
		return 0;
	if (!a->harness_pass || !sustain_run(a, &pr)) {
		record_check(a->rec, "sustain", ST_SKIP,
			     a->harness_pass ? "sustained load not run: the profile has no random-read run to hold"
					     : "sustained load not run: the harness gates failed, the drive is rejected already");
		return 0;
	}
	/* in the record from the start: an interrupted hold keeps the intervals it measured */
	sus = json_object_new_object();
	json_object_object_add(a->rec->root, "sustain", sus);
	jset_u64(sus, "duration_s", o->sustain_s);
	jset_u64(sus, "interval_s", o->sustain_interval_s);
	jset_str(sus, "run", pr.name);
	jset_u64(sus, "inflight", pr.inflight);
	temp = json_object_new_object();
	json_object_object_add(sus, "temperature", temp);
	intervals = json_object_new_array();
	json_object_object_add(sus, "intervals", intervals);
	sustain_temperature(a, temp, "before_c");
	g.p = (struct accept_sustain_progress){ .inflight = pr.inflight, .n = n, .start_ns = mono_ns(),
						.total_s = o->sustain_s };
	for (size_t k = 0; k < n && clean && !stopped(a); k++) {
		uint64_t left = o->sustain_s - k * o->sustain_interval_s;

		g.p.k = k;
		g.p.done_ns = k * o->sustain_interval_s * 1000000000ULL;
		r = sustain_interval(a, &pr, &g, left < o->sustain_interval_s ? left : o->sustain_interval_s, intervals,
				     &clean);
		if (r < 0)
			return set_why(&a->why, r, "cannot run the harness on '%s': %s; check io_uring is enabled "
						   "(sysctl kernel.io_uring_disabled)", a->path, strerror(-r));
		json_object *iv = json_object_array_get_idx(intervals, k);
		r = drive_vanished(a, iv, "the sustained load");
		if (r < 0)
			return r;
		if (!clean) {
			char where[64];

			snprintf(where, sizeof(where), "interval %zu of %zu", k + 1, n);
			judge_sustain_stop(a, where, jget(iv, "errors"));
		}
	}
	if (clean && stopped(a)) { /* stopped between two intervals */
		char where[64];

		snprintf(where, sizeof(where), "interval %zu of %zu", json_object_array_length(intervals) + 1, n);
		judge_sustain_stop(a, where, NULL);
		clean = false;
	}
	sustain_temperature(a, temp, "after_c");
	if (jget(temp, "before_c") && jget(temp, "after_c"))
		jset_i64(temp, "rise_c", jget_i64(temp, "after_c") - jget_i64(temp, "before_c"));
	judge_drift(a, sus, intervals);
	if (clean && !stopped(a))
		r = sustain_repeat(a, sus, &clean);
	jset_bool(sus, "complete", clean && !stopped(a));
	return r;
}

/* ---- engine gates ---- */

struct gate_tick {
	const struct accept *a;
	const char *name;
};

static void on_gate_tick(void *arg, uint64_t elapsed_ns)
{
	const struct gate_tick *g = arg;

	g->a->hooks.gate(g->a->hooks.ud, g->name, true, elapsed_ns);
}

/* What a finished gate command did, into its object; true when it passed. */
static bool gate_outcome(json_object *o, const struct proc_result *res)
{
	bool pass;

	jset_double(o, "duration_s", round((double)res->elapsed_ns / 1e6) / 1e3);
	jset_bool(o, "timed_out", res->timed_out);
	if (WIFEXITED(res->status))
		jset_i64(o, "exit_code", WEXITSTATUS(res->status));
	else {
		json_object_object_add(o, "exit_code", NULL);
		jset_i64(o, "signal", WIFSIGNALED(res->status) ? WTERMSIG(res->status) : 0);
	}
	if (res->exec_errno)
		jset_str(o, "error", strerror(res->exec_errno));
	/* the gate left processes that held its output or escaped its group: they were killed */
	jset_bool(o, "output_cut", res->output_cut);
	jset_u64(o, "escaped_killed", res->escaped);
	json_object_object_add(o, "output_tail", json_object_new_string_len(res->tail, (int)res->tail_len));
	pass = !res->timed_out && !res->stopped && !res->exec_errno && WIFEXITED(res->status) &&
	       WEXITSTATUS(res->status) == 0;
	jset_str(o, "status", pass ? "pass" : "fail");
	return pass;
}

/* Run an engine gate with sh -c in its own process group (src/proc.c): at its timeout the whole
 * group is stopped, and reading its output stops too, so a daemon it leaves behind (setsid) cannot
 * hold accept; what escaped the group is killed when the gate ends. */
static json_object *run_engine_gate(const struct accept *a, const struct engine_gate *g, bool *pass)
{
	json_object *o = json_object_new_object();
	struct gate_tick tick = { .a = a, .name = g->name };
	struct proc_opts po = {
		.shell = g->command,
		.timeout_ns = g->timeout_s * 1000000000ULL,
		.tail_cap = GATE_TAIL_BYTES,
		.stop = a->stop,
		.reap_escaped = true,
		.tick = a->hooks.gate ? on_gate_tick : NULL,
		.tick_arg = &tick,
	};
	struct proc_result res;
	int r;

	*pass = false;
	jset_str(o, "name", g->name);
	jset_str(o, "command", g->command);
	jset_u64(o, "timeout_s", g->timeout_s);
	if (a->hooks.gate)
		a->hooks.gate(a->hooks.ud, g->name, false, 0);
	r = proc_run(&po, &res);
	hook_end(a);
	if (r < 0) {
		jset_str(o, "error", strerror(-r));
		jset_str(o, "status", "fail");
		return o;
	}
	*pass = gate_outcome(o, &res);
	proc_result_free(&res);
	return o;
}

/* One engine gate run and judged; false when interrupted (the gates stop there). */
static bool judge_engine_gate(struct accept *a, const struct engine_gate *eg, json_object *engine)
{
	bool pass;
	json_object *e = run_engine_gate(a, eg, &pass), *g, *ck;
	char id[96];

	json_object_array_add(engine, e);
	a->nengine++;
	snprintf(id, sizeof(id), SCHEMA_GATE_ENGINE_PREFIX "%.80s", eg->name);
	g = json_object_new_object();
	jset_str(g, "name", id);
	jset_str(g, "kind", SCHEMA_GATE_KIND_ENGINE);
	jset_str(g, "status", pass ? "pass" : "fail");
	jset_str(g, "threshold", "exit 0");
	json_object_object_add(g, "measured", json_object_get(jget(e, "exit_code")));
	jset_str(g, "unit", "exit code");
	json_object_array_add(a->gates, g);
	if (stopped(a)) {
		a->complete = false;
		record_check(a->rec, id, ST_FAIL, "engine gate '%s' interrupted", eg->name);
		return false;
	}
	ck = record_check(a->rec, id, pass ? ST_PASS : ST_FAIL, "engine gate '%s': %s after %.1f s", eg->name,
			  jget_bool(e, "timed_out") ? "timed out"
			  : pass		   ? "exit 0"
			  : jget(e, "exit_code")   ? "failed"
						   : "killed by a signal",
			  jget_double(e, "duration_s"));
	json_object_object_add(ck, "exit_code", json_object_get(jget(e, "exit_code")));
	return true;
}

/* Engine gates: the incident's real test; the harness only predicts them. */
void accept_run_engine_gates(struct accept *a)
{
	const struct profile *pf = a->pf;
	json_object *engine = json_object_new_array();
	const struct engine_gate *all[48];
	size_t nall = 0;

	json_object_object_add(a->rec->root, "engine_gates", engine);
	if (!a->complete || stopped(a))
		return;
	for (size_t i = 0; i < pf->nengine && nall < ARRAY_SIZE(all); i++)
		all[nall++] = &pf->engine[i];
	for (size_t i = 0; i < a->o.ngates && nall < ARRAY_SIZE(all); i++)
		all[nall++] = &a->o.gates[i];
	if (nall && !a->harness_pass) {
		record_check(a->rec, "engine-gates", ST_SKIP,
			     "engine gates not run: the harness gates failed, the drive is rejected already");
		return;
	}
	for (size_t i = 0; i < nall && !stopped(a); i++)
		if (!judge_engine_gate(a, all[i], engine))
			break;
}

void accept_finish(struct accept *a)
{
	struct record *rec = a->rec;

	jset_bool(rec->root, "engine_gates_run", a->nengine > 0);
	if (a->complete && !stopped(a) && a->nengine == 0 && a->harness_pass)
		record_check(rec, "engine-gates", ST_WARN,
			     "harness passed; the engine gates were not run (cold-boot 157 K first-touch prompt, full "
			     "97-scenario bench): the harness only predicts them; add them with --gate NAME=COMMAND");
	if (stopped(a))
		a->complete = false;
	jset_bool(rec->root, "complete", a->complete);
	jset_bool(rec->root, "harness_pass", a->harness_pass);
	if (!a->complete && !json_object_array_length(a->runs))
		record_check(rec, "interrupted", ST_FAIL, "interrupted before the first run: the record is incomplete");
	record_finish(rec);
}
