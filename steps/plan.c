/* SPDX-License-Identifier: MIT */
/* plan: both migration paths with exact figures; --script writes path 2 as bash; --rehearse proves it on copies. */
#include "steps.h"

#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <sys/stat.h>

#include "bridge.h"
#include "disk.h"
#include "ident.h"
#include "layout.h"
#include "planrun.h"
#include "schema.h"
#include "size.h"
#include "usbnvme.h"

static const struct step_option plan_options[] = {
	STEP_OPT_TARGET,
	STEP_OPT_TARGET_LBA_SIZE("LBA size of a bare --target count (default 512; 4096 rewrites the GPT in 4 KiB LBAs)"),
	STEP_OPT_LBA_SIZE,
	{ { "path", required_argument, NULL, 'p' }, "fresh|clone",
	  "show only path 1 (fresh install + restore) or path 2 (clone with shrink)" },
	{ { "script", required_argument, NULL, 's' }, "FILE",
	  "write path 2 as a bash script that checks sizes, serials and the fingerprint\n"
	  "before each destructive command" },
	{ { "rehearse", no_argument, NULL, 'r' }, NULL,
	  "run path 2 on metadata-only sparse copies; the source is never written" },
	{ { "scratch", required_argument, NULL, 'S' }, "DIR",
	  "where the rehearsal's sparse copies go (default $TMPDIR, else /var/tmp)" },
	STEP_OPT_HOME("home of the node's user inside the source (for the re-fetchable sizes)"),
	STEP_OPTIONS_END,
};

const struct step step_plan = {
	.name = "plan",
	.summary = "both migration paths with exact figures and commands; --rehearse proves path 2 on throwaway copies",
	.synopsis = "swaptool plan SOURCE --target SIZE|DEVICE|IMAGE [--path fresh|clone] [--script FILE] [--rehearse [--scratch DIR]]\n",
	.options = plan_options,
	.run = step_plan_run,
	.render = step_plan_render,
	.flags = STEP_SAVES_RECORD | STEP_READS_ONLY,
};

static volatile sig_atomic_t rehearse_stop;
static void on_stop(int sig)
{
	(void)sig;
	rehearse_stop = 1;
}

struct plan_args {
	const char *source, *script, *scratch, *path;
	struct step_target_opts t;
	bool rehearse;
};

static int parse_args(struct ctx *ctx, int argc, char **argv, struct plan_args *a)
{
	int c, r;

	*a = (struct plan_args){ .t = STEP_TARGET_OPTS_INIT };
	while ((c = getopt_long(argc, argv, "", step_getopt(plan_options), NULL)) != -1) {
		switch (c) {
		case 'p':
			if (!streq(optarg, "fresh") && !streq(optarg, "clone"))
				return ctx_error(ctx, EXIT_USAGE, "bad --path '%s': fresh or clone", optarg);
			a->path = optarg;
			break;
		case 's': a->script = optarg; break;
		case 'r': a->rehearse = true; break;
		case 'S': a->scratch = optarg; break;
		default:
			r = step_target_option(ctx, c, optarg, &a->t);
			if (r < 0)
				return step_bad_option(ctx, argc, argv);
			if (r)
				return r;
		}
	}
	if (optind >= argc)
		return ctx_error(ctx, EXIT_USAGE,
				 "no SOURCE given; usage: swaptool plan /dev/nvme0n1 --target 2000398934016 [--rehearse]");
	a->source = argv[optind++];
	if (optind < argc)
		return ctx_error(ctx, EXIT_USAGE, "unexpected argument '%s'; see 'swaptool help plan'", argv[optind]);
	r = step_target_given(ctx, &a->t);
	if (r)
		return r;
	if (a->rehearse && a->path && streq(a->path, "fresh"))
		return ctx_error(ctx, EXIT_USAGE, "--rehearse proves path 2 (clone); it cannot go with --path fresh");
	return 0;
}

/* The serials preflight established (NVMe identify, or nvme-cli dumps of the source) where this
 * plan's disks leave them unknown (an image, a target given as a size), so path 2 names the drives
 * as the earlier step did. Only a record of the same sizes lends them: one of other drives does not. */
static void serials_from_preflight(const struct ctx *ctx, struct disk *src, struct plan_target *t, char **lent)
{
	_cleanup_json_ json_object *pre = NULL;
	struct schema_drive td;

	if (record_load(ctx->state_dir, "preflight", &pre) < 0)
		return;
	if (!src->serial && schema_preflight_source_bytes(pre) == src->size_bytes &&
	    jget_str(jget(pre, "source"), "serial"))
		src->serial = xstrdup(jget_str(jget(pre, "source"), "serial"));
	if (!t->serial && schema_preflight_target_drive(pre, &td) && td.size_bytes == t->bytes && td.serial) {
		t->serial = *lent = xstrdup(td.serial);
	}
}

/* How an opened drive is attached (a target given as a size is not): its transport and USB bridge */
static void attach(struct plan *p, const char *side, const struct disk *d)
{
	_cleanup_(bridge_freep) struct disk_bridge b = { 0 };

	if (d->fd < 0)
		return;
	if (d->sysname && bridge_of_disk(d->sysname, &b) < 0)
		bridge_free(&b);
	plan_attach(p, side, d->kind == DISK_IMAGE ? "file" : disk_transport(d->sysname), &b);
}

int step_plan_for(struct ctx *ctx, const char *source, uint32_t image_lba, const char *tgt_spec, uint32_t tgt_lba_size,
		  const char *home, unsigned opts, struct disk *src, struct layout *l, struct plan *p)
{
	_cleanup_(disk_closep) struct disk tgt = { .fd = -1 };
	_cleanup_(usbnvme_through_freep) struct usbnvme_through tgt_th = { 0 };
	_cleanup_free_ char *why = NULL, *lent = NULL;
	struct plan_target t = { .spec = tgt_spec, .lba_size = tgt_lba_size };
	int r;

	r = step_target(ctx, tgt_spec, tgt_lba_size, &tgt, &t.bytes, &t.lba_size);
	if (r)
		return r;
	if (tgt.fd >= 0) {
		t.path = tgt_spec;
		t.serial = tgt.serial;
		/* a target on USB read through its bridge: its LBA size in the slot (src/layout.h) */
		step_read_through(&tgt, &tgt_th);
		t.slot_lba_size = usbnvme_slot_lba(&tgt_th);
	}
	r = step_open_source(ctx, source, image_lba, src);
	if (r)
		return r;
	serials_from_preflight(ctx, src, &t, &lent);
	r = plan_for(src, &t, ctx->profile, home, opts, l, p, &why);
	if (r < 0)
		return ctx_error(ctx, EXIT_FAILED, "%s", why ? why : strerror(-r));
	/* a drive in a USB enclosure: the link, not the drive, sets the clone's pace */
	attach(p, "source", src);
	attach(p, "target", &tgt);
	return 0;
}

/* The rehearsal on a terminal: what it does now, how far, how fast, the percentage and the time
 * left (as clone shows its actions). */
struct rehearse_ui {
	struct ctx *ctx;
	const char *what;
	uint64_t start_ns;
};

static void plan_phase(void *ud, const char *what)
{
	struct rehearse_ui *u = ud;

	u->what = what;
	u->start_ns = mono_ns();
}

static void plan_progress(void *ud, uint64_t done, uint64_t total)
{
	const struct rehearse_ui *u = ud;
	double secs = (double)(mono_ns() - u->start_ns) / 1e9;
	char b[3][32];

	out_progress_eta(u->ctx, u->start_ns, done, total, "rehearsal, %s: %s of %s, %s/s", u->what ?: "copy",
			 fmt_decimal(done, b[0]), fmt_decimal(total, b[1]),
			 fmt_decimal(secs > 0 ? (uint64_t)((double)done / secs) : 0, b[2]));
}

/* The plan into the record, with who the source is and the path as shown. */
static void record_plan(struct record *rec, const struct plan_args *a, const struct disk *src, const struct plan *p)
{
	json_object *pj = plan_json(p);

	{
		/* who the source is, so that clone matches this plan by identity, not by path text */
		_cleanup_free_ char *key = NULL;

		if (src->fd >= 0 && ident_key_fd(src->fd, &key) == 0)
			jset_str(jget(pj, "source"), "identity", key);
	}
	if (a->path)
		jset_str(pj, "path_shown", a->path);
	jset_str(rec->root, "fingerprint", p->fingerprint);
	json_object_object_add(rec->root, "plan", pj);
}

/* path 2's figures: where the last partition ends, and what a clone moves and costs */
static void record_clone_path(struct record *rec, const struct plan *p)
{
	const struct plan_part *last = &p->parts[p->nparts - 1];
	char b[4][32];
	json_object *c = record_check(
		rec, "fs-clone", ST_PASS, "path 2 (clone%s): %zu actions; p%u ends at LBA %s, %s%s blocks",
		p->needs_shrink ? " with shrink" : "", p->nacts, last->number, fmt_thousands(last->tgt_end_lba, b[0]),
		last->is_ext ? "its ext4 " : "", last->is_ext ? fmt_thousands(last->new_block_count, b[1]) : "-");
	uint64_t data, past = plan_past_cut_bytes(p, &data);
	double secs = plan_clone_seconds(p);
	_cleanup_free_ char *rate = plan_rate(p) < PLAN_RATE
					    ? xasprintf("%.0f MB/s (the %s's USB link, %" PRIu64 " Mb/s, sets the pace)",
							plan_rate(p) / 1e6, p->link_side, p->link_mbps)
					    : xasprintf("%.1f GB/s", plan_rate(p) / 1e9);

	jset_u64(c, "new_end_lba", last->tgt_end_lba);
	jset_u64(c, "new_block_count", last->new_block_count);
	jset_u64(c, "backup_header_lba", p->tgt_geo.last_lba);
	record_check(rec, "clone-cost", ST_PASS,
		     "path 2 moves %s B that lie past the new end (%s B of it file data); a rehearsal needs %s "
		     "of scratch space; the clone takes about %.0f min at %s",
		     fmt_thousands(past, b[0]), fmt_thousands(data, b[1]),
		     fmt_decimal(plan_rehearse_need(p), b[2]), secs / 60 < 1 ? 1 : secs / 60, rate);
}

/* which paths there are: a raw clone, path 1 (fresh install), path 2 (filesystem-aware clone) */
static void record_paths(struct record *rec, const struct plan *p)
{
	char b[4][32];

	if (p->raw_possible)
		record_check(rec, "raw-clone", ST_PASS, "a raw sector clone fits the target");
	else if (p->slot_lba_differs && p->delta_bytes >= 0 && p->src_geo.lba_size == p->tgt_geo.lba_size)
		record_check(rec, "raw-clone", ST_SKIP,
			     "a raw sector clone would be in the target's LBAs here, not in the ones it has in the slot "
			     "(lba-format); not a path here: path 1 instead");
	else
		/* The clone trap, kept in view but not a warning: preflight found it (its verdict trap)
		 * and this plan is the way round it, so a plan whose paths hold has nothing left to warn
		 * of. "skip": the raw clone is not a path of this plan (docs/design.md's vocabulary). */
		record_check(rec, "raw-clone", ST_SKIP,
			     "the clone trap: a raw sector clone cannot work (the target is %s B %s); not a path "
			     "here: %s instead",
			     fmt_thousands_signed(p->delta_bytes, b[0]),
			     p->src_geo.lba_size != p->tgt_geo.lba_size ? "with another LBA size" : "against the source",
			     p->clone_possible ? "path 1 or 2" : "path 1");
	if (p->lba_size_unsafe)
		/* a fail, not a warning: the probe of issue 29 was told "pass" and got a disk that does not boot */
		record_check(rec, "lba-format", ST_FAIL, "path 2 is refused: %s", p->clone_why);
	/* path 1 judged as preflight judges it (src/freshfit.h): not fitting fails only when no clone fits either */
	if (!p->fit.possible)
		record_check(rec, "fresh-install", p->clone_possible || p->raw_possible ? ST_WARN : ST_FAIL,
			     "path 1 cannot fit: the OS install (%s) and the irreplaceable files (%s) need %s, the target "
			     "holds %s; use a larger drive%s",
			     fmt_decimal(p->fit.install_bytes, b[0]), fmt_decimal(p->irreplaceable_bytes, b[1]),
			     fmt_decimal(p->fit.need_bytes, b[2]), fmt_decimal(p->fit.room_bytes, b[3]),
			     p->clone_possible ? " or path 2" : "");
	else if (p->stores_missing)
		record_check(rec, "fresh-install", ST_WARN,
			     "path 1 (fresh install + restore): %zu steps; it fits (%s of %s) but not every store it "
			     "re-creates: %s %s not fit after it; re-fetch fewer stores (only those that fit) or point the "
			     "rest at shared storage",
			     p->nfresh, fmt_decimal(p->fit.need_bytes, b[0]), fmt_decimal(p->fit.room_bytes, b[1]),
			     p->stores_missing, p->fit.stores_missing == 1 ? "does" : "do");
	else if (p->fit.unmeasured)
		record_check(rec, "fresh-install", ST_WARN,
			     "path 1 (fresh install + restore): %zu steps; it fits what could be measured (%s of %s), but "
			     "%zu partition%s hold%s a filesystem swaptool cannot measure (preflight names it): check it fits",
			     p->nfresh, fmt_decimal(p->fit.total_bytes, b[0]), fmt_decimal(p->fit.room_bytes, b[1]),
			     p->fit.unmeasured, p->fit.unmeasured == 1 ? "" : "s", p->fit.unmeasured == 1 ? "s" : "");
	else
		record_check(rec, "fresh-install", ST_PASS, "path 1 (fresh install + restore): %zu steps, %s of %s, recommended",
			     p->nfresh, fmt_decimal(p->fit.total_bytes, b[0]), fmt_decimal(p->fit.room_bytes, b[1]));
	if (p->clone_possible)
		record_clone_path(rec, p);
	else
		record_check(rec, "fs-clone", p->fit.possible || p->raw_possible ? ST_WARN : ST_FAIL, "path 2 is not possible: %s; %s",
			     p->clone_why, p->fit.possible ? "only path 1 is offered" : "and path 1 does not fit either");
}

/* --script: path 2 as bash; 0 or the exit code */
static int plan_write_script(struct ctx *ctx, struct record *rec, const struct plan_args *a, const struct plan *p)
{
	_cleanup_free_ char *s = NULL;
	int r;

	if (!p->clone_possible) {
		record_check(rec, "script", ST_FAIL, "no script written: path 2 is not possible (%s)", p->clone_why);
		return 0;
	}
	s = plan_script(p, "swaptool");
	r = write_file_atomic(a->script, s, strlen(s), 0700);
	if (r < 0)
		return ctx_error(ctx, EXIT_FAILED, "cannot write the script '%s': %s; pick a writable path", a->script,
				 strerror(-r));
	record_check(rec, "script", ST_PASS, "path 2 as bash written to %s (%zu actions, guarded)", a->script, p->nacts);
	jset_str(rec->root, "script", a->script);
	return 0;
}

/* plan_rehearse with SIGINT and SIGTERM caught: they stop the rehearsal at the next step and let
 * it remove its scratch files and unmount the shrink's composite file, instead of leaving them */
static int rehearse_caught(struct ctx *ctx, struct plan *p, const char *scratch, struct rehearse_result *res, char **why)
{
	struct rehearse_ui ui = { ctx, NULL, mono_ns() };
	struct copy_opts copy = { .progress = plan_progress, .phase = plan_phase, .ud = &ui, .stop = &rehearse_stop };
	struct sigaction sa = { .sa_handler = on_stop }, oi, ot;
	int r;

	rehearse_stop = 0;
	sigaction(SIGINT, &sa, &oi);
	sigaction(SIGTERM, &sa, &ot);
	r = plan_rehearse(p, scratch, &copy, res, why);
	sigaction(SIGINT, &oi, NULL);
	sigaction(SIGTERM, &ot, NULL);
	out_progress_end(ctx);
	return r;
}

/* the rehearsal's checks and verdict into the record, under its own object */
static void record_rehearsal(struct record *rec, int r, const char *why, struct rehearse_result *res, const char *scratch)
{
	json_object *rj = json_object_new_object();
	char b[4][32];

	if (r == -ENOSPC)
		record_check(rec, "rehearse", ST_FAIL, "%s", why);
	else {
		size_t n = json_object_array_length(res->checks);

		for (size_t i = 0; i < n; i++) {
			json_object *c = json_object_array_get_idx(res->checks, i);
			enum status st = ST_FAIL;
			_cleanup_free_ char *id = xasprintf("rehearse-%s", jget_str(c, "id"));

			status_parse(jget_str(c, "status"), &st);
			record_check(rec, id, st, "%s", jget_str(c, "summary"));
		}
		if (res->not_run)
			record_check(rec, "rehearse", ST_WARN, "path 2 was not rehearsed: %s",
				     n ? jget_str(json_object_array_get_idx(res->checks, n - 1), "summary") : "?");
		else
			record_check(rec, "rehearse", res->ok ? ST_PASS : ST_FAIL,
				     "path 2 %s on throwaway copies in %.1f s; scratch disk used at most %s of %s free",
				     res->ok ? "succeeded" : "FAILED", res->seconds, fmt_decimal(res->scratch_peak_bytes, b[0]),
				     fmt_decimal(res->scratch_free_bytes, b[1]));
	}
	jset_bool(rj, "ok", res->ok);
	jset_double(rj, "seconds", res->seconds);
	jset_u64(rj, "scratch_peak_bytes", res->scratch_peak_bytes);
	jset_u64(rj, "scratch_free_bytes", res->scratch_free_bytes);
	jset_str(rj, "scratch", scratch);
	json_object_object_add(rj, "actions", res->actions);
	json_object_object_add(rj, "checks", res->checks);
	json_object_object_add(rec->root, "rehearsal", rj);
}

/* --rehearse: path 2 on throwaway copies; 0 or the exit code */
static int plan_rehearsal(struct ctx *ctx, struct record *rec, const struct plan_args *a, struct plan *p)
{
	struct rehearse_result res;
	_cleanup_free_ char *why = NULL;
	const char *scratch = a->scratch ? a->scratch : getenv("TMPDIR") ? getenv("TMPDIR") : "/var/tmp";
	int r = rehearse_caught(ctx, p, scratch, &res, &why);

	if (rehearse_stop) {
		json_object_put(res.actions);
		json_object_put(res.checks);
		return ctx_error(ctx, EXIT_INTERRUPTED, "the rehearsal was interrupted; its scratch files were removed and "
				 "nothing else was written");
	}
	/* path 2 impossible is a finding (exit 1); a scratch directory without the room
	 * the rehearsal needs means it could not run (exit 3), like an unusable one */
	if (r < 0 && (r != -ENOSPC || p->clone_possible)) {
		json_object_put(res.actions);
		json_object_put(res.checks);
		return ctx_error(ctx, EXIT_FAILED, "%s", why ? why : strerror(-r));
	}
	record_rehearsal(rec, r, why, &res, scratch);
	return 0;
}

int step_plan_run(struct ctx *ctx, int argc, char **argv, struct record *rec)
{
	struct plan_args a;
	_cleanup_(disk_closep) struct disk src = { .fd = -1 };
	struct layout l = { 0 };
	struct plan p = { 0 };
	int r;

	r = parse_args(ctx, argc, argv, &a);
	if (r)
		return r;
	r = step_plan_for(ctx, a.source, a.t.image_lba_size, a.t.spec, a.t.lba_size, a.t.home, PLAN_COST, &src, &l, &p);
	if (r == 0) {
		record_plan(rec, &a, &src, &p);
		record_paths(rec, &p);
		if (a.script)
			r = plan_write_script(ctx, rec, &a, &p);
		if (r == 0 && a.rehearse)
			r = plan_rehearsal(ctx, rec, &a, &p);
	}
	layout_free(&l);
	plan_free(&p);
	if (r)
		return r;
	record_finish(rec);
	return record_exit_code(rec);
}

static void print_steps(const struct ctx *ctx, json_object *steps, bool actions)
{
	size_t n = steps ? json_object_array_length(steps) : 0;

	for (size_t i = 0; i < n; i++) {
		json_object *s = json_object_array_get_idx(steps, i);
		const char *cmd = jget_str(s, "command");

		if (actions)
			out_line(ctx, "%3zu. [%s] %s", i + 1, jget_str(s, "action"), jget_str(s, "title"));
		else
			out_line(ctx, "%3zu. %s", i + 1, jget_str(s, "title"));
		if (cmd && !streq(cmd, "guard")) {
			/* indent every line of a multi-line command (the sfdisk table, one quoted line each) */
			_cleanup_free_ char *c = xstrdup(cmd);
			char *save = NULL;

			for (char *line = strtok_r(c, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
				out_line(ctx, "       $ %s", line);
		}
		if (jget_str(s, "note"))
			out_line(ctx, "       note: %s", jget_str(s, "note"));
	}
}

void step_plan_render(const struct ctx *ctx, json_object *rec)
{
	json_object *p = jget(rec, "plan"), *src = jget(p, "source"), *tgt = jget(p, "target");
	json_object *paths = jget(p, "paths"), *fresh = jget(paths, "fresh_install"), *clone = jget(paths, "fs_clone");
	json_object *rh = jget(rec, "rehearsal");
	const char *shown = jget_str(p, "path_shown");
	bool cp = jget_bool(clone, "possible"), fp = jget_bool(fresh, "possible"), frec = jget_bool(fresh, "recommended");
	char b[6][32];
	_cleanup_table_ struct table *t = table_new(3);

	out_heading(ctx, "plan: %s -> target %s", jget_str(src, "path"), jget_str(tgt, "spec"));
	out_line(ctx, "source %s B (%s LBAs of %" PRIu64 " B), target %s B (%s LBAs of %" PRIu64 " B): delta %s B",
		 fmt_thousands(jget_u64(src, "size_bytes"), b[0]), fmt_thousands(jget_u64(src, "lba_count"), b[1]),
		 jget_u64(src, "lba_size"), fmt_thousands(jget_u64(tgt, "size_bytes"), b[2]),
		 fmt_thousands(jget_u64(tgt, "lba_count"), b[3]), jget_u64(tgt, "lba_size"),
		 fmt_thousands_signed(jget_i64(p, "delta_bytes"), b[4]));
	step_attached_line(ctx, src, tgt);
	out_line(ctx, "fingerprint %s", jget_str(p, "fingerprint"));
	out_line(ctx, "%s", "");

	table_header(t, "", "path 1: fresh install + restore", "path 2: clone with shrink");
	table_row(t, "possible", fp && frec ? "yes (recommended)" : fp ? "yes" : "no",
		  cp && !frec ? "yes (recommended)" : cp ? "yes" : "no");
	table_cellf(t, "takes");
	table_cellf(t, "%s of %s (install %s, irreplaceable %s)", fmt_decimal(jget_u64(fresh, "need_bytes"), b[0]),
		    fmt_decimal(jget_u64(fresh, "target_usable_bytes"), b[1]), fmt_decimal(jget_u64(fresh, "install_bytes"), b[2]),
		    fmt_decimal(jget_u64(fresh, "irreplaceable_bytes"), b[3]));
	table_cellf(t, "%s", cp ? "the shrunk filesystems" : "-");
	table_row(t, "keeps", "config from the backup tarball", "everything: OS, keys, stores, PARTUUIDs, UUIDs");
	table_cellf(t, "needs");
	if (jget_u64(fresh, "refetchable_bytes"))
		table_cellf(t, "download %s (~%" PRIu64 " min)", fmt_decimal(jget_u64(fresh, "refetchable_bytes"), b[0]),
			    jget_u64(fresh, "refetch_minutes"));
	else
		table_cellf(t, "the package download (~%" PRIu64 " min)", jget_u64(fresh, "refetch_minutes"));
	table_cellf(t, "%s", cp ? "a live environment, the source unmounted" : jget_str(clone, "why_not"));
	{
		json_object *parts = jget(clone, "partitions");
		size_t n = parts ? json_object_array_length(parts) : 0;

		for (size_t i = 0; cp && i < n; i++) {
			json_object *q = json_object_array_get_idx(parts, i);

			table_cellf(t, "p%" PRIu64, jget_u64(q, "number"));
			table_cellf(t, "%s", "");
			if (jget(q, "block_count") && jget_u64(q, "block_count") != jget_u64(q, "new_block_count"))
				table_cellf(t, "LBA %s-%s, ext4 %s -> %s blocks", fmt_thousands(jget_u64(q, "new_start_lba"), b[0]),
					    fmt_thousands(jget_u64(q, "new_end_lba"), b[1]),
					    fmt_thousands(jget_u64(q, "block_count"), b[2]),
					    fmt_thousands(jget_u64(q, "new_block_count"), b[3]));
			else
				table_cellf(t, "LBA %s-%s, as on the source", fmt_thousands(jget_u64(q, "new_start_lba"), b[0]),
					    fmt_thousands(jget_u64(q, "new_end_lba"), b[1]));
		}
	}
	table_print(ctx, t);
	if (cp)
		out_line(ctx, "(path 2's backup GPT header goes to LBA %s, the target's last)",
			 fmt_thousands(jget_u64(tgt, "last_lba"), b[0]));
	out_line(ctx, "%s", "");
	if (!shown || streq(shown, "fresh")) {
		out_heading(ctx, "path 1: fresh install + restore%s", !fp ? " (does not fit this target)" : frec ? " (recommended)" : "");
		print_steps(ctx, jget(fresh, "steps"), false);
		out_line(ctx, "%s", "");
	}
	if (!shown || streq(shown, "clone")) {
		out_heading(ctx, "path 2: filesystem-aware clone with shrink");
		if (cp)
			print_steps(ctx, jget(clone, "actions"), true);
		else
			out_line(ctx, "not possible: %s", jget_str(clone, "why_not"));
		out_line(ctx, "%s", "");
	}
	if (rh) {
		_cleanup_table_ struct table *r = table_new(5);
		json_object *acts = jget(rh, "actions");
		size_t n = acts ? json_object_array_length(acts) : 0;

		out_heading(ctx, "rehearsal on throwaway copies (%.1f s, scratch peak %s)", jget_double(rh, "seconds"),
			    fmt_decimal(jget_u64(rh, "scratch_peak_bytes"), b[0]));
		table_header(r, "#", "action", "seconds", "status", "detail");
		table_align(r, 2, ALIGN_RIGHT);
		for (size_t i = 0; i < n; i++) {
			json_object *x = json_object_array_get_idx(acts, i);

			table_cellf(r, "%" PRIu64, jget_u64(x, "n"));
			if (jget(x, "partition"))
				table_cellf(r, "%s p%" PRIu64, jget_str(x, "action"), jget_u64(x, "partition"));
			else
				table_cellf(r, "%s", jget_str(x, "action"));
			table_cellf(r, "%.2f", jget_double(x, "seconds"));
			table_cellf(r, "%s", jget_str(x, "status"));
			table_cellf(r, "%s", jget_str(x, "detail") ? jget_str(x, "detail") : "");
		}
		table_print(ctx, r);
		out_line(ctx, "%s", "");
	}
	out_checks(ctx, rec);
	out_verdict(ctx, rec, "%s",
		    cp && fp ? "both paths possible; path 1 recommended"
		    : fp     ? "only path 1 is possible"
		    : cp     ? "only path 2 is possible: path 1 does not fit this target"
			     : "no path fits this target: use a larger drive");
}
