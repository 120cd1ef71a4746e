/* SPDX-License-Identifier: MIT */
/* preflight: the source drive against the target, to the byte; which migration paths are possible. */
#include "steps.h"
#include "schema.h"
#include "disk.h"
#include "freshfit.h"
#include "layout.h"
#include "report.h"
#include "size.h"
#include "usage.h"
#include "usbnvme.h"

#include <inttypes.h>

static const struct step_operand preflight_operands[] = {
	{ "SOURCE", "NVMe controller (/dev/nvme0), block device or image file" },
	{ 0 },
};

static const struct step_option preflight_options[] = {
	STEP_OPT_TARGET,
	STEP_OPT_TARGET_LBA_SIZE("LBA size of a bare --target count (default 512)"),
	STEP_OPT_LBA_SIZE,
	STEP_OPT_HOME("home of the node's user (default: $SUDO_USER's, else $HOME)"),
	{ { "from-dumps", required_argument, NULL, 'D' }, "DIR",
	  "judge the drive from nvme-cli binary dumps (id-ctrl.bin, smart-log.bin...)" },
	{ { "target-model", required_argument, NULL, 'M' }, "MODEL",
	  "the target's model, looked up in the drive catalogue" },
	STEP_OPTIONS_END,
};

const struct step step_preflight = {
	.name = "preflight",
	.summary = "identity, health and class of the source drive; the clone trap, to the byte",
	.synopsis = "swaptool preflight SOURCE --target SIZE|DEVICE|IMAGE [options]\n",
	.operands = preflight_operands,
	.options = preflight_options,
	.run = step_preflight_run,
	.render = step_preflight_render,
	.flags = STEP_SAVES_RECORD | STEP_READS_ONLY,
};

struct preflight_args {
	const char *source;
	struct step_target_opts t;
	const char *from_dumps;
	const char *target_model;
};

static int parse_args(struct ctx *ctx, int argc, char **argv, struct preflight_args *a)
{
	int c, r;

	*a = (struct preflight_args){ .t = STEP_TARGET_OPTS_INIT };
	while ((c = getopt_long(argc, argv, "", step_getopt(preflight_options), NULL)) != -1) {
		switch (c) {
		case 'D': a->from_dumps = optarg; break;
		case 'M': a->target_model = optarg; break;
		default:
			r = step_target_option(ctx, c, optarg, &a->t);
			if (r < 0)
				return step_bad_option(ctx, argc, argv);
			if (r)
				return r;
		}
	}
	if (optind >= argc)
		return ctx_error(ctx, EXIT_USAGE, "no SOURCE given; usage: swaptool preflight /dev/nvme0 --target 2000398934016");
	if (optind + 1 < argc)
		return ctx_error(ctx, EXIT_USAGE, "one SOURCE only, got '%s' too", argv[optind + 1]);
	a->source = argv[optind];
	return step_target_given(ctx, &a->t);
}

static json_object *ptable_json(const struct layout *l)
{
	const struct ptable *t = &l->table;
	json_object *o = json_object_new_object(), *parts = json_object_new_array();

	jset_str(o, "type", ptable_kind_name(t->kind));
	if (t->kind == PT_GPT) {
		jset_str(o, "disk_guid", t->disk_guid);
		jset_u64(o, "first_usable_lba", t->first_usable_lba);
		jset_u64(o, "last_usable_lba", t->last_usable_lba);
		jset_u64(o, "backup_header_lba", t->backup_header_lba);
		jset_bool(o, "primary_header_ok", t->primary_ok);
		jset_bool(o, "backup_header_ok", t->backup_ok);
	}
	for (size_t i = 0; i < t->nparts; i++) {
		const struct part *p = &t->parts[i];
		const struct part_fs *f = &l->fs[i];
		json_object *pj = json_object_new_object(), *fj = NULL;

		jset_u64(pj, "number", p->number);
		jset_u64(pj, "start_lba", p->start_lba);
		jset_u64(pj, "end_lba", p->end_lba);
		jset_u64(pj, "size_bytes", p->size_bytes);
		jset_str(pj, "type_guid", p->type_guid);
		jset_str(pj, "part_guid", t->kind == PT_GPT ? p->part_guid : NULL);
		jset_str(pj, "name", p->name);
		if (t->kind == PT_GPT)
			jset_u64(pj, "attrs", p->attrs);
		if (f->id.type[0]) {
			fj = json_object_new_object();
			jset_str(fj, "type", f->id.type);
			jset_str(fj, "uuid", f->id.uuid[0] ? f->id.uuid : NULL);
			jset_str(fj, "label", f->id.label[0] ? f->id.label : NULL);
			if (f->is_ext && f->ext_err == 0) {
				jset_u64(fj, "block_size", f->ext.block_size);
				jset_u64(fj, "block_count", f->ext.block_count);
				jset_u64(fj, "free_blocks", f->ext.free_blocks);
				jset_u64(fj, "min_blocks", f->ext.min_blocks);
				jset_bool(fj, "clean", f->ext.clean);
				jset_str(fj, "features", f->ext.features);
			}
		}
		json_object_object_add(pj, "fs", fj);
		json_object_array_add(parts, pj);
	}
	json_object_object_add(o, "partitions", parts);
	return o;
}

/* Bytes under each profile path, live when the source is mounted here, else inside its filesystems. */
static uint64_t tree_bytes(const struct layout *l, bool live, const struct strlist *paths, const char *home,
			   json_object *list)
{
	uint64_t total = 0;

	for (size_t i = 0; i < paths->n; i++) {
		_cleanup_free_ char *p = profile_expand(paths->v[i], home);
		json_object *e = json_object_new_object();
		uint64_t bytes = 0;
		int r = live ? usage_live(p, &bytes) : usage_offline(l, p, &bytes);

		jset_str(e, "path", p);
		if (r == 0) {
			jset_u64(e, "bytes", bytes);
			/* a hostile filesystem's sizes can add up past 2^64: saturate, which never fits */
			if (u64_add(total, bytes, &total) < 0)
				total = UINT64_MAX;
		} else
			jset_str(e, "error", strerror(-r));
		json_object_array_add(list, e);
	}
	return total;
}

/*
 * Path 1 puts three things on the new drive: the OS install (what the source's filesystems hold,
 * less the stores and the irreplaceable files, which are counted apart), the irreplaceable files
 * restored from the backup, and the stores it re-creates by download, in the profile's order. It
 * is possible when the first two fit the target's usable LBAs (src/freshfit.h, which plan shares);
 * a store that does not fit after them is named, so that the operator re-fetches fewer of them
 * (docs/incident.md: the other nodes re-fetch one).
 */
static void fresh_install_fit(struct record *rec, const struct layout *l, uint64_t refetchable, uint64_t keep,
			      json_object *stores, json_object *fresh)
{
	size_t n = jarray_len(stores);
	_cleanup_free_ uint64_t *bytes = xcalloc(n ? n : 1, sizeof(*bytes));
	_cleanup_free_ bool *fits = xcalloc(n ? n : 1, sizeof(*fits));
	_cleanup_free_ char *missing = NULL, *unmeasured = NULL;
	json_object *unm = json_object_new_array();
	bool other = l->raw_clone_possible || l->fs_clone_possible;
	struct fresh_fit f;
	json_object *c;
	char b[4][32];

	for (size_t i = 0; i < n; i++) {
		json_object *e = jarray_at(stores, i);

		/* a measured size is judged, even a hostile one of 2^64 - 1 (it never fits) */
		bytes[i] = !jget(e, "bytes") ? FRESH_FIT_UNKNOWN
			   : jget_u64(e, "bytes") == FRESH_FIT_UNKNOWN ? FRESH_FIT_UNKNOWN - 1
								     : jget_u64(e, "bytes");
	}
	fresh_fit(l, refetchable, keep, bytes, n, fits, &f);
	for (size_t i = 0; i < l->table.nparts; i++) {
		uint64_t pb;
		char *m;

		if (fresh_fit_part(l, i, &pb))
			continue;
		json_object_array_add(unm, json_object_new_int64(l->table.parts[i].number));
		m = xasprintf("%s%sp%u (%s)", unmeasured ? unmeasured : "", unmeasured ? ", " : "", l->table.parts[i].number,
			      l->fs[i].id.type);
		free(unmeasured);
		unmeasured = m;
	}
	json_object_object_add(fresh, "unmeasured_partitions", unm);
	jset_u64(fresh, "source_used_bytes", f.used_bytes);
	jset_u64(fresh, "install_bytes", f.install_bytes);
	jset_u64(fresh, "need_bytes", f.need_bytes);
	jset_u64(fresh, "target_usable_bytes", f.room_bytes);
	jset_u64(fresh, "total_bytes", f.total_bytes);
	jset_bool(fresh, "possible", f.possible);
	for (size_t i = 0; i < n; i++) {
		json_object *e = jarray_at(stores, i);
		char *m;

		if (bytes[i] == FRESH_FIT_UNKNOWN)
			continue; /* its "error" says why it was not measured */
		jset_bool(e, "fits", fits[i]);
		if (fits[i])
			continue;
		m = xasprintf("%s%s%s (%s)", missing ? missing : "", missing ? ", " : "", jget_str(e, "path"),
			      fmt_decimal(bytes[i], b[0]));
		free(missing);
		missing = m;
	}
	if (!f.possible)
		c = record_check(rec, SCHEMA_CHECK_FRESH_INSTALL_FIT, other ? ST_WARN : ST_FAIL,
				 "path 1 cannot fit: the OS install (%s) and the irreplaceable files (%s) need %s, the "
				 "target holds %s; use a larger drive%s",
				 fmt_decimal(f.install_bytes, b[0]), fmt_decimal(keep, b[1]), fmt_decimal(f.need_bytes, b[2]),
				 fmt_decimal(f.room_bytes, b[3]), other ? " or the clone" : "");
	else if (f.stores_missing)
		c = record_check(rec, SCHEMA_CHECK_FRESH_INSTALL_FIT, ST_WARN,
				 "path 1 fits (%s of %s) but not every store it re-creates: %s %s not fit after it; "
				 "re-fetch fewer stores (only those that fit) or point the rest at shared storage",
				 fmt_decimal(f.need_bytes, b[0]), fmt_decimal(f.room_bytes, b[1]), missing,
				 f.stores_missing == 1 ? "does" : "do");
	else if (unmeasured)
		c = record_check(rec, SCHEMA_CHECK_FRESH_INSTALL_FIT, ST_WARN,
				 "path 1 fits what could be measured (%s of %s), but not %s: swaptool cannot read its used "
				 "space; check that it fits the %s left (df on the node)",
				 fmt_decimal(f.total_bytes, b[0]), fmt_decimal(f.room_bytes, b[1]), unmeasured,
				 fmt_decimal(f.room_bytes - f.total_bytes, b[2]));
	else
		c = record_check(rec, SCHEMA_CHECK_FRESH_INSTALL_FIT, ST_PASS,
				 "path 1 fits: the OS install, the irreplaceable files and the re-fetched stores need %s of %s",
				 fmt_decimal(f.total_bytes, b[0]), fmt_decimal(f.room_bytes, b[1]));
	jset_u64(c, "need_bytes", f.need_bytes);
	jset_u64(c, "target_usable_bytes", f.room_bytes);
	jset_u64(c, "stores_missing", f.stores_missing);
}

static void add_paths(struct ctx *ctx, struct record *rec, const struct preflight_args *a, const struct layout *l,
		      bool live)
{
	json_object *root = rec->root;
	uint64_t refetch_bytes, keep_bytes;
	json_object *paths = json_object_new_object(), *raw = json_object_new_object();
	json_object *fsc = json_object_new_object(), *fresh = json_object_new_object();
	json_object *parts = json_object_new_array(), *refetch = json_object_new_array(), *keep = json_object_new_array();
	_cleanup_free_ char *home = NULL;

	jset_bool(raw, "possible", l->raw_clone_possible);
	if (!l->raw_clone_possible)
		jset_str(raw, "reason", l->lba_size_differs   ? "the target's LBA size differs from the source's"
					: l->slot_lba_differs ? "the target's LBA size in the slot differs from what it presents here"
							      : "the target is smaller than the source");
	json_object_object_add(paths, SCHEMA_PATH_RAW_CLONE, raw);

	jset_bool(fsc, "possible", l->fs_clone_possible);
	jset_str(fsc, "reason", l->fs_clone_possible ? NULL : l->fs_clone_why);
	for (size_t i = 0; i < l->table.nparts && l->table.kind == PT_GPT; i++) {
		json_object *p = json_object_new_object();

		jset_u64(p, "number", l->table.parts[i].number);
		jset_u64(p, "new_end_lba", l->fit[i].new_end_lba);
		if (l->fs[i].is_ext && l->fs[i].ext_err == 0) {
			jset_u64(p, "new_block_count", l->fit[i].new_block_count);
			jset_u64(p, "min_blocks", l->fs[i].ext.min_blocks);
			jset_u64(p, "block_count", l->fs[i].ext.block_count);
		} else {
			json_object_object_add(p, "new_block_count", NULL);
			json_object_object_add(p, "min_blocks", NULL);
		}
		json_object_array_add(parts, p);
	}
	json_object_object_add(fsc, "partitions", parts);
	json_object_object_add(paths, SCHEMA_PATH_FS_CLONE, fsc);

	/* A fresh install's cost is the re-fetchable stores, its risk the rest; it must fit too. */
	if (node_home(a->t.home, &home) < 0)
		home = xstrdup("/root");
	jset_str(fresh, "home", home);
	jset_str(fresh, "measured", live ? "live" : "offline");
	refetch_bytes = tree_bytes(l, live, &ctx->profile->refetch_paths, home, refetch);
	keep_bytes = tree_bytes(l, live, &ctx->profile->backup_paths, home, keep);
	jset_u64(fresh, "refetchable_bytes", refetch_bytes);
	jset_u64(fresh, "irreplaceable_bytes", keep_bytes);
	fresh_install_fit(rec, l, refetch_bytes, keep_bytes, refetch, fresh);
	json_object_object_add(fresh, "refetchable", refetch);
	json_object_object_add(fresh, "irreplaceable", keep);
	json_object_object_add(paths, SCHEMA_PATH_FRESH_INSTALL, fresh);

	/* a raw clone copies an invalid table as it is: not a recommendation; none when no path fits */
	jset_str(paths, "recommended",
		 l->raw_clone_possible && !l->table_problems ? SCHEMA_PATH_RAW_CLONE
		 : jget_bool(fresh, "possible")		    ? SCHEMA_PATH_FRESH_INSTALL
		 : l->fs_clone_possible			    ? SCHEMA_PATH_FS_CLONE
							    : NULL);
	json_object_object_add(root, "paths", paths);
}

/* raw-clone: whether the source fits the target sector for sector */
static void check_raw_clone(struct record *rec, const struct layout *l)
{
	const struct lba_geometry *sg = &l->src_geo, *tg = &l->tgt_geo;
	char b1[32], b2[32];
	json_object *c;

	if (l->raw_clone_possible)
		c = record_check(rec, SCHEMA_CHECK_RAW_CLONE, ST_PASS, "a raw clone fits: the target is %s B larger",
				 fmt_thousands((uint64_t)l->delta_bytes, b1));
	else if (l->delta_bytes < 0)
		c = record_check(rec, SCHEMA_CHECK_RAW_CLONE, ST_FAIL,
				 "a raw clone cannot fit: the target is %s B (%s) smaller than the source",
				 fmt_thousands((uint64_t)-l->delta_bytes, b1), fmt_decimal((uint64_t)-l->delta_bytes, b2));
	else if (!l->lba_size_differs)
		c = record_check(rec, SCHEMA_CHECK_RAW_CLONE, ST_FAIL,
				 "a raw clone is invalid: the target presents %u-byte LBAs here and %u-byte ones in the slot; "
				 "the GPT is in LBAs", tg->lba_size, l->tgt_slot_lba);
	else
		c = record_check(rec, SCHEMA_CHECK_RAW_CLONE, ST_FAIL,
				 "a raw clone is invalid: the target has %u-byte LBAs, the source %u-byte; the GPT is in LBAs",
				 tg->lba_size, sg->lba_size);
	jset_i64(c, "delta_bytes", l->delta_bytes);
}

/* partition-table: whether the source's table is consistent */
static void check_table(struct record *rec, const struct layout *l)
{
	const struct ptable *t = &l->table;
	char b1[32], b2[32];
	json_object *c;

	if (t->kind == PT_NONE)
		c = record_check(rec, "partition-table", ST_SKIP, "the source has no partition table");
	else if (l->table_problems)
		c = record_check(rec, "partition-table", ST_FAIL,
				 "the source's %s is invalid: %s; repair it before a clone (sgdisk -v lists the same problems)",
				 t->kind == PT_GPT ? "GPT" : "MBR", l->table_why);
	else
		c = record_check(rec, "partition-table", ST_PASS,
				 "the source's %s is consistent: %zu partitions inside LBAs %s..%s, none overlapping",
				 t->kind == PT_GPT ? "GPT" : "MBR", t->nparts,
				 fmt_thousands(t->kind == PT_GPT ? t->first_usable_lba : 1, b1),
				 fmt_thousands(t->kind == PT_GPT ? t->last_usable_lba : l->src_geo.last_lba, b2));
	jset_u64(c, "problems", l->table_problems);
}

/* gpt-backup-header (and gpt-headers): where the backup header lands on the target */
static void check_gpt_backup(struct record *rec, const struct layout *l)
{
	const struct ptable *t = &l->table;
	const struct lba_geometry *sg = &l->src_geo, *tg = &l->tgt_geo;
	char b1[32], b2[32];
	json_object *c;

	if (t->kind == PT_GPT) {
		uint64_t src_backup_byte, tgt_last_byte = tg->last_lba * tg->lba_size;
		/* the backup header's LBA comes from the disk: one whose byte offset overflows is past any target */
		bool ovf = u64_mul(t->backup_header_lba, sg->lba_size, &src_backup_byte) < 0;
		enum status st = ovf || src_backup_byte > tgt_last_byte ? ST_FAIL
				 : src_backup_byte == tgt_last_byte   ? ST_PASS
								      : ST_WARN;

		c = record_check(rec, SCHEMA_CHECK_GPT_BACKUP_HEADER, st,
				 st == ST_FAIL   ? "the source's backup GPT header at LBA %s lies past the target's last LBA %s"
				 : st == ST_WARN ? "the source's backup GPT header at LBA %s is not at the target's last LBA %s: "
						   "a copied table needs 'sgdisk -e'"
						 : "the backup GPT header at LBA %s is the target's last LBA %s",
				 fmt_thousands(t->backup_header_lba, b1), fmt_thousands(tg->last_lba, b2));
		jset_u64(c, "source_lba", t->backup_header_lba);
		jset_u64(c, "target_last_lba", tg->last_lba);
		if (!t->primary_ok)
			record_check(rec, "gpt-headers", ST_WARN,
				     "the primary GPT header is corrupt; the backup header at LBA %s is good: "
				     "rebuild the primary from it (gdisk: r, b, w) before anything else",
				     fmt_thousands(t->backup_header_lba, b1));
		else if (!t->backup_ok)
			record_check(rec, "gpt-headers", ST_WARN,
				     "the backup GPT header at LBA %s is corrupt; the primary is good: 'sgdisk -e' rewrites it",
				     fmt_thousands(t->backup_header_lba, b1));
	} else
		record_check(rec, SCHEMA_CHECK_GPT_BACKUP_HEADER, ST_SKIP, "the source has %s",
			     t->kind == PT_DOS ? "an MBR table: no backup header" : "no partition table");
}

/* partition-fit: the partitions that end past the target's last usable LBA */
static void check_partition_fit(struct record *rec, const struct layout *l)
{
	const struct ptable *t = &l->table;
	const struct lba_geometry *tg = &l->tgt_geo;
	json_object *crossing = json_object_new_array(), *c;
	_cleanup_free_ char *names = NULL;
	char b1[32], b2[32];

	for (size_t i = 0; i < t->nparts; i++) {
		json_object *p;
		char *n;

		if (!l->fit[i].crosses_end)
			continue;
		p = json_object_new_object();
		jset_u64(p, "number", t->parts[i].number);
		jset_u64(p, "end_lba", t->parts[i].end_lba);
		json_object_array_add(crossing, p);
		n = xasprintf("%s%sp%u ends at LBA %s", names ? names : "", names ? ", " : "", t->parts[i].number,
			      fmt_thousands(t->parts[i].end_lba, b1));
		free(names);
		names = n;
	}
	if (names)
		c = record_check(rec, SCHEMA_CHECK_PARTITION_FIT, ST_FAIL, "%s, past the target's last usable LBA %s", names,
				 fmt_thousands(tg->last_usable_lba, b2));
	else
		c = record_check(rec, SCHEMA_CHECK_PARTITION_FIT, ST_PASS, "every partition ends within the target's last usable LBA %s",
				 fmt_thousands(tg->last_usable_lba, b2));
	json_object_object_add(c, "partitions", crossing);
	jset_u64(c, "target_last_usable_lba", tg->last_usable_lba);
}

/* fs-fit: whether the filesystems fit the target, shrunk where they must be */
static void check_fs_fit(struct record *rec, const struct layout *l)
{
	const struct ptable *t = &l->table;
	char b1[32], b2[32];
	json_object *c;

	if (l->fs_clone_possible) {
		bool shrink = false;

		for (size_t i = 0; i < t->nparts; i++)
			if (l->fit[i].crosses_end && l->fs[i].is_ext) {
				c = record_check(rec, SCHEMA_CHECK_FS_FIT, ST_PASS,
						 "p%u's data fits: minimum %s blocks, the target leaves room for %s blocks of %u B",
						 t->parts[i].number, fmt_thousands(l->fs[i].ext.min_blocks, b1),
						 fmt_thousands(l->fit[i].new_block_count, b2), l->fs[i].ext.block_size);
				jset_u64(c, "min_blocks", l->fs[i].ext.min_blocks);
				jset_u64(c, "new_block_count", l->fit[i].new_block_count);
				shrink = true;
			}
		if (!shrink)
			record_check(rec, SCHEMA_CHECK_FS_FIT, ST_PASS, "every filesystem fits the target as it is");
	} else if (l->raw_clone_possible)
		record_check(rec, SCHEMA_CHECK_FS_FIT, ST_SKIP, "not needed, a raw clone fits (a filesystem-aware clone would not: %s)",
			     l->fs_clone_why);
	else
		record_check(rec, SCHEMA_CHECK_FS_FIT, ST_FAIL, "a filesystem-aware clone is not possible: %s", l->fs_clone_why);
}

/* lba-format: whether the GPT must be rewritten in other LBAs */
static void check_lba_format(struct record *rec, const struct layout *l)
{
	const struct lba_geometry *sg = &l->src_geo, *tg = &l->tgt_geo;

	if (l->lba_size_unsafe)
		record_check(rec, "lba-format", ST_FAIL, "path 2 is refused: %s", l->fs_clone_why);
	else if (l->lba_size_differs)
		record_check(rec, "lba-format", ST_WARN,
			     "the target has %u-byte LBAs, the source %u-byte: the GPT must be rewritten in the target's LBAs",
			     tg->lba_size, sg->lba_size);
	else
		record_check(rec, "lba-format", ST_PASS, "both use %u-byte LBAs", sg->lba_size);
}

/* fs-clean: whether each ext filesystem is clean enough to clone */
static void check_fs_clean(struct record *rec, const struct layout *l)
{
	const struct ptable *t = &l->table;
	bool any_ext = false;

	for (size_t i = 0; i < t->nparts; i++) {
		if (!l->fs[i].is_ext)
			continue;
		any_ext = true;
		if (l->fs[i].ext_err < 0)
			record_check(rec, "fs-clean", ST_WARN, "p%u's %s cannot be read (%s); run 'e2fsck -f' on it",
				     t->parts[i].number, l->fs[i].id.type,
				     l->fs[i].ext_why[0] ? l->fs[i].ext_why : strerror(-l->fs[i].ext_err));
		else if (!l->fs[i].ext.clean)
			record_check(rec, "fs-clean", ST_WARN,
				     "p%u's %s needs e2fsck (not cleanly unmounted or errors recorded): run 'e2fsck -f' "
				     "before a clone",
				     t->parts[i].number, l->fs[i].id.type);
		else
			record_check(rec, "fs-clean", ST_PASS, "p%u's %s is clean", t->parts[i].number, l->fs[i].id.type);
	}
	if (!any_ext)
		record_check(rec, "fs-clean", ST_SKIP, "no ext2/3/4 filesystem on the source");
}

/* The layout's checks, in the order the record lists them. */
static void add_checks(struct record *rec, const struct layout *l)
{
	check_raw_clone(rec, l);
	check_table(rec, l);
	check_gpt_backup(rec, l);
	check_partition_fit(rec, l);
	check_fs_fit(rec, l);
	check_lba_format(rec, l);
	check_fs_clean(rec, l);
}

int step_preflight_run(struct ctx *ctx, int argc, char **argv, struct record *rec)
{
	struct preflight_args a;
	_cleanup_(disk_closep) struct disk src = { .fd = -1 }, tgt = { .fd = -1 };
	_cleanup_(usbnvme_through_freep) struct usbnvme_through src_th = { 0 }, tgt_th = { 0 };
	struct layout l = { 0 };
	_cleanup_free_ char *why = NULL;
	uint64_t tgt_bytes = 0;
	uint32_t tgt_lba;
	bool tgt_is_disk;
	json_object *sj, *tj;
	int r;

	r = parse_args(ctx, argc, argv, &a);
	if (r)
		return r;
	r = step_target(ctx, a.t.spec, a.t.lba_size, &tgt, &tgt_bytes, &tgt_lba);
	if (r)
		return r;
	tgt_is_disk = tgt.fd >= 0;
	r = step_open_source(ctx, a.source, a.t.image_lba_size, &src);
	if (r)
		return r;
	/* a drive on USB read through its bridge first: the target's LBA size in the slot is the layout's */
	if (!a.from_dumps)
		step_read_through(&src, &src_th);
	if (tgt_is_disk)
		step_read_through(&tgt, &tgt_th);
	r = layout_analyze_slot(&src, tgt_bytes, tgt_lba, usbnvme_slot_lba(&tgt_th), &l, &why);
	if (r < 0) {
		layout_free(&l);
		return ctx_error(ctx, EXIT_FAILED, "%s", why);
	}

	sj = json_object_new_object();
	jset_str(sj, "path", src.path);
	jset_str(sj, "device", src.dev);
	/* the kernel's name ("nvme0n1"; null for an image), as target.disk: the device label metrics share
	 * with node_exporter's node_disk_* series */
	jset_str(sj, "disk", src.sysname);
	jset_str(sj, "kind", src.kind == DISK_IMAGE ? "image" : src.kind == DISK_BLOCK ? "block" : "nvme-controller");
	jset_str(sj, "transport", src.kind == DISK_IMAGE ? "file" : disk_transport(src.sysname));
	jset_u64(sj, "size_bytes", src.size_bytes);
	jset_u64(sj, "lba_size", src.lba_size);
	jset_u64(sj, "lba_count", src.lba_count);
	jset_u64(sj, "last_lba", l.src_geo.last_lba);
	jset_str(sj, "model", src.model);
	jset_str(sj, "firmware", src.firmware);
	jset_str(sj, "serial", src.serial);
	json_object_object_add(sj, "partition_table", ptable_json(&l));
	json_object_object_add(rec->root, "source", sj);

	tj = json_object_new_object();
	jset_str(tj, "spec", a.t.spec);
	jset_str(tj, "path", tgt_is_disk ? tgt.path : NULL);
	/* who the target is, so that report can tell whether accept measured this drive */
	jset_str(tj, "disk", tgt_is_disk ? tgt.sysname : NULL);
	jset_str(tj, "transport", !tgt_is_disk ? NULL : tgt.kind == DISK_IMAGE ? "file" : disk_transport(tgt.sysname));
	jset_str(tj, "model", tgt_is_disk ? tgt.model : NULL);
	jset_str(tj, "serial", tgt_is_disk ? tgt.serial : NULL);
	jset_u64(tj, "size_bytes", tgt_bytes);
	jset_u64(tj, "lba_size", tgt_lba);
	jset_u64(tj, "lba_count", l.tgt_geo.lba_count);
	jset_u64(tj, "first_usable_lba", l.tgt_geo.first_usable_lba);
	jset_u64(tj, "last_usable_lba", l.tgt_geo.last_usable_lba);
	jset_u64(tj, "last_lba", l.tgt_geo.last_lba);
	json_object_object_add(rec->root, "target", tj);
	jset_i64(rec->root, "delta_bytes", l.delta_bytes);

	add_checks(rec, &l);
	r = preflight_drive(ctx, rec, sj, &src, a.from_dumps, tgt_is_disk ? &tgt : NULL, a.target_model,
			    l.tgt_geo.lba_count, &src_th, &tgt_th);
	if (r) {
		layout_free(&l);
		return r;
	}
	add_paths(ctx, rec, &a, &l, disk_holds_root(&src));
	layout_free(&l);
	record_finish(rec);
	/* the incident's outcome has its own word and exit code (src/report.h): a fleet script tells
	 * "trap found, a path exists" (4) from "no path" (1) by the exit code alone */
	if (report_preflight_trap(rec->root)) {
		jset_str(rec->root, "verdict", REPORT_VERDICT_TRAP);
		return REPORT_EXIT_TRAP;
	}
	return record_exit_code(rec);
}

/* ---- rendering for people ---- */

static void size_row(struct table *t, const char *what, json_object *o)
{
	char b[5][32];
	uint64_t bytes = jget_u64(o, "size_bytes");

	/* any LBA size the record holds (512 to 65536: a 2048-byte optical-style LBA too) */
	snprintf(b[4], sizeof(b[4]), "%" PRIu64, jget_u64(o, "lba_size"));
	table_row(t, what, fmt_thousands(bytes, b[0]), fmt_thousands(jget_u64(o, "lba_count"), b[1]), b[4],
		  fmt_tb(bytes, b[2]), fmt_tib(bytes, b[3]));
}

void step_preflight_render(const struct ctx *ctx, json_object *rec)
{
	json_object *src = jget(rec, "source"), *tgt = jget(rec, "target"), *pt = jget(src, "partition_table");
	json_object *paths = jget(rec, "paths"), *parts = jget(pt, "partitions");
	json_object *fsc = jget(paths, "fs_clone"), *fresh = jget(paths, "fresh_install");
	_cleanup_table_ struct table *sizes = table_new(6), *pl = table_new(9), *pathtab = table_new(3);
	int64_t delta = jget_i64(rec, "delta_bytes");
	char b[6][32];
	char lba[16];

	out_heading(ctx, "preflight: %s -> %s", jget_str(src, "path"), jget_str(tgt, "spec"));
	preflight_drive_render(ctx, rec);

	table_header(sizes, "", "bytes", "LBAs", "LBA size", "TB", "TiB");
	for (unsigned c = 1; c < 6; c++)
		table_align(sizes, c, ALIGN_RIGHT);
	size_row(sizes, "source", src);
	size_row(sizes, "target", tgt);
	snprintf(lba, sizeof(lba), "%.2f %%",
		 (double)delta * 100.0 / (double)(jget_u64(src, "size_bytes") ? jget_u64(src, "size_bytes") : 1));
	snprintf(b[2], 32, "%s%s", delta < 0 ? "-" : "", fmt_decimal(delta < 0 ? (uint64_t)-delta : (uint64_t)delta, b[1]));
	table_row(sizes, "delta", fmt_thousands_signed(delta, b[0]), "", "", b[2], lba);
	table_print(ctx, sizes);

	out_heading(ctx, "partition table: %s", jget_str(pt, "type"));
	if (streq(jget_str(pt, "type"), "gpt"))
		out_line(ctx, "  usable LBAs %s..%s, backup header at LBA %s (primary %s, backup %s)",
			 fmt_thousands(jget_u64(pt, "first_usable_lba"), b[0]), fmt_thousands(jget_u64(pt, "last_usable_lba"), b[1]),
			 fmt_thousands(jget_u64(pt, "backup_header_lba"), b[2]),
			 jget_bool(pt, "primary_header_ok") ? "ok" : "CORRUPT", jget_bool(pt, "backup_header_ok") ? "ok" : "CORRUPT");
	table_header(pl, "#", "start LBA", "end LBA", "size", "fs", "blocks", "min blocks", "new end LBA", "new blocks");
	for (unsigned c = 1; c < 9; c++)
		if (c != 4)
			table_align(pl, c, ALIGN_RIGHT);
	for (size_t i = 0; parts && i < json_object_array_length(parts); i++) {
		json_object *p = json_object_array_get_idx(parts, i), *fs = jget(p, "fs");
		json_object *fit = NULL, *fparts = jget(fsc, "partitions");
		char c[9][32];

		for (size_t k = 0; fparts && k < json_object_array_length(fparts); k++)
			if (jget_u64(json_object_array_get_idx(fparts, k), "number") == jget_u64(p, "number"))
				fit = json_object_array_get_idx(fparts, k);
		snprintf(c[0], 32, "p%" PRIu64, jget_u64(p, "number"));
		fmt_thousands(jget_u64(p, "start_lba"), c[1]);
		fmt_thousands(jget_u64(p, "end_lba"), c[2]);
		fmt_binary(jget_u64(p, "size_bytes"), c[3]);
		snprintf(c[4], 32, "%s", fs ? jget_str(fs, "type") : "-");
		snprintf(c[5], 32, "-"), snprintf(c[6], 32, "-"), snprintf(c[7], 32, "-"), snprintf(c[8], 32, "-");
		if (jget(fs, "block_count")) {
			fmt_thousands(jget_u64(fs, "block_count"), c[5]);
			fmt_thousands(jget_u64(fs, "min_blocks"), c[6]);
		}
		if (fit && jget_bool(fsc, "possible")) {
			fmt_thousands(jget_u64(fit, "new_end_lba"), c[7]);
			if (jget(fit, "new_block_count") && json_object_get_type(jget(fit, "new_block_count")) != json_type_null)
				fmt_thousands(jget_u64(fit, "new_block_count"), c[8]);
		}
		table_row(pl, c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8]);
	}
	table_print(ctx, pl);

	out_heading(ctx, "checks");
	out_checks(ctx, rec);

	out_heading(ctx, "paths");
	table_header(pathtab, "path", "possible", "figures");
	table_row(pathtab, "raw clone", jget_bool(jget(paths, "raw_clone"), "possible") ? "yes" : "no",
		  jget_str(jget(paths, "raw_clone"), "reason"));
	table_row(pathtab, "2: filesystem-aware clone", jget_bool(fsc, "possible") ? "yes" : "no",
		  jget_bool(fsc, "possible") ? "shrink the last filesystem, new GPT, copy used blocks"
					     : jget_str(fsc, "reason"));
	{
		_cleanup_free_ char *fig = xasprintf("needs %s of %s: install %s, irreplaceable %s; re-fetchable %s (%s)",
						     fmt_decimal(jget_u64(fresh, "need_bytes"), b[0]),
						     fmt_decimal(jget_u64(fresh, "target_usable_bytes"), b[1]),
						     fmt_decimal(jget_u64(fresh, "install_bytes"), b[2]),
						     fmt_decimal(jget_u64(fresh, "irreplaceable_bytes"), b[3]),
						     fmt_decimal(jget_u64(fresh, "refetchable_bytes"), b[4]),
						     jget_str(fresh, "measured"));
		table_row(pathtab, "1: fresh install + restore", jget_bool(fresh, "possible") ? "yes" : "no", fig);
	}
	table_print(ctx, pathtab);

	{
		json_object *checks = jget(rec, "checks");
		bool bad_table = false;

		for (size_t i = 0; checks && i < json_object_array_length(checks); i++) {
			json_object *c = json_object_array_get_idx(checks, i);

			bad_table |= streq(jget_str(c, "id"), "partition-table") && streq(jget_str(c, "status"), "fail");
		}
		if (bad_table) {
			/* a clone of any kind would copy (or trip over) the broken table */
			out_verdict(ctx, rec, "the source's partition table is invalid: repair it first (sgdisk -v, gdisk), "
					      "then run preflight again");
			return;
		}
	}
	if (jget_bool(jget(paths, "raw_clone"), "possible")) {
		out_verdict(ctx, rec, "a raw clone fits; swaptool plan shows the steps");
		return;
	}
	{
		bool one = jget_bool(fresh, "possible"), two = jget_bool(fsc, "possible");
		const char *advice = one && two ? "Recommended: path 1, fresh install + restore (path 2, filesystem-aware "
						  "clone, is possible too)"
				     : one	? "Recommended: path 1, fresh install + restore"
				     : two	? "Recommended: path 2, filesystem-aware clone (path 1 does not fit: "
						  "fresh-install-fit above)"
						: "No path fits this target: use a larger drive (fresh-install-fit above)";

		if (streq(jget_str(rec, "verdict"), REPORT_VERDICT_TRAP))
			out_verdict(ctx, rec, "clone trap found, a path exists: a raw clone cannot fit. %s", advice);
		else
			out_verdict(ctx, rec, "the clone trap: a raw clone cannot fit. %s", advice);
	}
}
