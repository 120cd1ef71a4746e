/* SPDX-License-Identifier: MIT */
/* The migration plan as data: both paths with exact figures, its fingerprint, JSON and bash script. */
#include "plan.h"

#include <inttypes.h>

#include "fscopy.h"
#include "json.h"
#include "usage.h"
#include "util.h"

static const char *const act_names[] = {
	[PA_CHECK] = "check",
	[PA_E2FSCK] = "e2fsck",
	[PA_SHRINK] = "shrink",
	[PA_WRITE_TABLE] = "write-table",
	[PA_COPY_RAW] = "copy-raw",
	[PA_COPY_USED] = "copy-used-blocks",
	[PA_GROW] = "grow",
	[PA_FSCK] = "fsck",
	[PA_VERIFY] = "verify",
	[PA_MANUAL] = "manual",
};

const char *plan_act_name(enum plan_act a)
{
	return a < ARRAY_SIZE(act_names) ? act_names[a] : "?";
}

void plan_fingerprint(const struct layout *l, bool shrunk, char out[65])
{
	/* What the plan's numbers were computed from, in a fixed text form; a change in any of it
	 * (another disk in the slot, a repartitioned source, a resized filesystem, another target
	 * size) makes every executor refuse. Free-block counts are left out: the plan does not
	 * depend on them beyond min_blocks, which layout checks again when it runs. */
	size_t cap = 512 + l->table.nparts * 256, len = 0;
	_cleanup_free_ char *s = xcalloc(1, cap);

	len += snprintf(s + len, cap - len, "swaptool-plan/1\nsource %" PRIu64 " %u\ntable %s %s\n",
			l->src_geo.bytes, l->src_geo.lba_size, ptable_kind_name(l->table.kind), l->table.disk_guid);
	for (size_t i = 0; i < l->table.nparts && len < cap; i++) {
		const struct part *p = &l->table.parts[i];
		const struct part_fs *f = &l->fs[i];
		uint64_t blocks = f->is_ext ? f->ext.block_count : 0;

		if (shrunk && f->is_ext && l->fit[i].new_block_count && l->fit[i].new_block_count < blocks)
			blocks = l->fit[i].new_block_count;
		len += snprintf(s + len, cap - len, "part %u %" PRIu64 " %" PRIu64 " %s %s %s %s %" PRIu64 "\n",
				p->number, p->start_lba, p->end_lba, p->type_guid, p->part_guid, f->id.type, f->id.uuid,
				blocks);
	}
	if (len < cap)
		snprintf(s + len, cap - len, "target %" PRIu64 " %u\n", l->tgt_geo.bytes, l->tgt_geo.lba_size);
	if (sha256_buf(s, strlen(s), out) < 0)
		out[0] = '\0';
}

static struct plan_action *add_act(struct plan *p, enum plan_act kind, unsigned part)
{
	struct plan_action *a;

	p->acts = realloc(p->acts, (p->nacts + 1) * sizeof(*p->acts));
	if (!p->acts)
		abort();
	a = &p->acts[p->nacts++];
	*a = (struct plan_action){ .kind = kind, .part = part };
	a->destructive = kind == PA_SHRINK || kind == PA_WRITE_TABLE || kind == PA_COPY_RAW ||
			 kind == PA_COPY_USED || kind == PA_GROW;
	return a;
}

static void add_step(struct plan *p, char *title, char *command, char *note)
{
	p->fresh = realloc(p->fresh, (p->nfresh + 1) * sizeof(*p->fresh));
	if (!p->fresh)
		abort();
	p->fresh[p->nfresh++] = (struct plan_step){ title, command, note };
}

/*
 * The one way an outside string (a path, a serial, a partition name: anything read from a disk or
 * given by a person) enters the generated script: one bash word in single quotes. Inside them
 * bash expands nothing, so only the quote itself needs care (it closes them and goes as \');
 * control bytes (newline, ESC, ...) leave the quotes as $'\xNN' so that the script stays one
 * line per command and shows nothing to a terminal that cat(1)s it. NUL cannot occur in a C string.
 */
char *shell_quote(const char *s)
{
	char *out = NULL;
	size_t len = 0;
	bool open = false;
	FILE *f;

	if (!*s)
		return xstrdup("''");
	f = open_memstream(&out, &len);
	if (!f)
		abort();
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		if (*c < 0x20 || *c == 0x7f || *c == '\'') {
			if (open)
				fputc('\'', f);
			open = false;
			if (*c == '\'')
				fputs("\\'", f);
			else
				fprintf(f, "$'\\x%02x'", *c);
		} else {
			if (!open)
				fputc('\'', f);
			open = true;
			fputc(*c, f);
		}
	}
	if (open)
		fputc('\'', f);
	if (fclose(f) != 0)
		abort();
	return out;
}

/* A partition name inside sfdisk's name="..." (libfdisk's script reader unhexmangles \xNN there):
 * the quote, the backslash and control bytes as \xNN, so no name can end the field or the line. */
static char *sfdisk_name(const char *name)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	if (!f)
		abort();
	for (const unsigned char *c = (const unsigned char *)name; *c; c++)
		if (*c < 0x20 || *c == 0x7f || *c == '"' || *c == '\\')
			fprintf(f, "\\x%02x", *c);
		else
			fputc(*c, f);
	if (fclose(f) != 0)
		abort();
	return out;
}

/* A line of a comment in the script: control bytes become '?', so no title can start a line. */
static void comment_text(FILE *f, const char *s)
{
	for (const unsigned char *c = (const unsigned char *)s; *c; c++)
		fputc(*c < 0x20 || *c == 0x7f ? '?' : *c, f);
}

/* GPT attribute bits in sfdisk's words (so the script's table is readable). */
static char *attrs_text(uint64_t a)
{
	char buf[512] = "";
	size_t len = 0;

	if (a & 1)
		len += snprintf(buf + len, sizeof(buf) - len, "RequiredPartition ");
	if (a & 2)
		len += snprintf(buf + len, sizeof(buf) - len, "NoBlockIOProtocol ");
	if (a & 4)
		len += snprintf(buf + len, sizeof(buf) - len, "LegacyBIOSBootable ");
	for (unsigned b = 48; b < 64; b++)
		if (a & (1ULL << b))
			len += snprintf(buf + len, sizeof(buf) - len, "GUID:%u ", b);
	if (len)
		buf[len - 1] = '\0';
	return xstrdup(buf);
}

/*
 * The target's table as sfdisk input, fed through printf with every line one shell_quote()d word:
 * no here-document, whose terminator a partition name could carry. One continuation line per
 * table line, so the human rendering shows it as it would be typed.
 */
static char *sfdisk_command(const struct plan *p)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	if (!f)
		abort();
	fprintf(f, "sfdisk --no-reread --no-tell-kernel --wipe never \"$TARGET\" < <(printf '%%s\\n' \\\n");
	{
		_cleanup_free_ char *l1 = xasprintf("label-id: %s", p->disk_guid);
		_cleanup_free_ char *l2 = xasprintf("sector-size: %u", p->tgt_geo.lba_size);
		_cleanup_free_ char *l3 = xasprintf("first-lba: %" PRIu64, p->tgt_geo.first_usable_lba);
		_cleanup_free_ char *l4 = xasprintf("last-lba: %" PRIu64, p->tgt_geo.last_usable_lba);
		const char *head[] = { "label: gpt", l1, "unit: sectors", l2, l3, l4 };

		for (size_t i = 0; i < ARRAY_SIZE(head); i++) {
			_cleanup_free_ char *q = shell_quote(head[i]);

			fprintf(f, "\t%s \\\n", q);
		}
	}
	for (size_t i = 0; i < p->nparts; i++) {
		const struct plan_part *pp = &p->parts[i];
		_cleanup_free_ char *at = attrs_text(pp->attrs), *name = sfdisk_name(pp->name);
		_cleanup_free_ char *line = xasprintf(
			"%u: start=%" PRIu64 ", size=%" PRIu64 ", type=%s, uuid=%s, name=\"%s\"%s%s%s", pp->number,
			pp->tgt_start_lba, pp->tgt_end_lba - pp->tgt_start_lba + 1, pp->type_guid, pp->part_guid, name,
			*at ? ", attrs=\"" : "", at, *at ? "\"" : "");
		_cleanup_free_ char *q = shell_quote(line);

		fprintf(f, "\t%s%s", q, i + 1 < p->nparts ? " \\\n" : ")");
	}
	if (fclose(f) != 0)
		abort();
	return out;
}

static void build_fresh(struct plan *p, const struct profile *prof)
{
	char b[32];

	add_step(p, xstrdup("back up the node's configuration: controller.key, agent identity, ~/.ssh, /etc/netplan, /etc/fstab, /etc/hosts"),
		 xstrdup("swaptool backup"),
		 xstrdup("without controller.key and the agent identity all eight agents must be re-paired"));
	add_step(p, xstrdup("copy the tarball off the drive that is being replaced, and note its sha256"),
		 xstrdup("sha256sum TARBALL && scp TARBALL OTHER_HOST: && ssh OTHER_HOST sha256sum $(basename TARBALL)"),
		 xstrdup("the two sha256 must match; the old drive leaves the node"));
	add_step(p, xstrdup("install the OS on the new drive"), xstrdup(prof->cmd_install_os), NULL);
	add_step(p, xstrdup("restore the configuration, then verify it against the manifest"),
		 xstrdup("swaptool restore TARBALL && swaptool verify TARBALL"), NULL);
	add_step(p, xstrdup("reinstall the agent"), xstrdup(prof->cmd_agent_install), NULL);
	add_step(p, xstrdup("reinstall the runtime: the same build the other ranks run"), xstrdup(prof->cmd_runtime_install),
		 xstrdup("a mixed set of runtime builds fails at rendezvous"));
	add_step(p,
		 p->refetchable_bytes
			 ? xasprintf("re-create the package store by download: %s, ~%" PRIu64 " min",
				     fmt_decimal(p->refetchable_bytes, b), p->refetch_minutes)
			 : xasprintf("re-create the package store by download: ~%" PRIu64 " min", p->refetch_minutes),
		 xstrdup(prof->cmd_refetch),
		 xstrdup("never rsync the store from a node that is serving: its disk is on the serving critical path"));
	add_step(p, xstrdup("accept the new drive: random-read and sequential gates"), xstrdup("swaptool accept"), NULL);
	if (prof->nengine)
		for (size_t i = 0; i < prof->nengine; i++)
			add_step(p, xasprintf("engine gate: %s", prof->engine[i].name), xstrdup(prof->engine[i].command),
				 NULL);
	else
		add_step(p, xstrdup("engine gates: the cold-boot 157 K first-touch prompt and the full bench on the same boot"),
			 NULL, xstrdup("the two engine rows are the real test; the harness only predicts them"));
	add_step(p, xstrdup("sign the report"), xstrdup("swaptool report"), NULL);
}

/* The shrink on the way (after the copy of the blocks below the new end): resize2fs over the
 * composite of target and read-only source moves what lies past the new end into the target. */
static void add_shrink(struct plan *p, const struct plan_part *pp)
{
	struct plan_action *a = add_act(p, PA_SHRINK, pp->number);
	char b[4][32];

	a->src_offset = a->tgt_offset = pp->offset;
	a->block_size = pp->block_size;
	a->blocks_from = pp->block_count;
	a->blocks_to = pp->new_block_count;
	a->destructive = true;
	a->title = xasprintf("shrink the ext4 of partition %u on its way to the target from %s to %s blocks of %u B (%s B): "
			     "what is in use past the new end%s%s%s moves into the target; the source is only read",
			     pp->number, fmt_thousands(pp->block_count, b[0]), fmt_thousands(pp->new_block_count, b[1]),
			     pp->block_size, fmt_thousands(pp->new_block_count * pp->block_size, b[2]),
			     p->with_cost ? " (" : "", p->with_cost ? fmt_thousands(pp->past_cut_bytes, b[3]) : "",
			     p->with_cost ? " B)" : "");
	a->precondition = xasprintf("e2fsck clean; the used blocks below block %" PRIu64 " copied; at least %" PRIu64
				    " blocks (min_blocks) needed",
				    pp->new_block_count, pp->min_blocks);
	a->evidence = xasprintf("block count %" PRIu64 " on the target; the source's bytes unchanged", pp->new_block_count);
	a->command = xstrdup(": done by the swaptool clone of the action before");
}

/* the clone's guard: both drives checked, as planned, before anything is read or written */
static void clone_check(struct plan *p)
{
	char b[4][32];
	struct plan_action *a = add_act(p, PA_CHECK, 0);

	a->title = xasprintf("check the source (%s B, serial %s) and the target (%s B, serial %s, %u-byte LBAs) and the "
			     "fingerprint",
			     fmt_thousands(p->src_geo.bytes, b[0]), p->src_serial ? p->src_serial : "unknown",
			     fmt_thousands(p->tgt_geo.bytes, b[1]), p->tgt_serial ? p->tgt_serial : "unknown",
			     p->tgt_geo.lba_size);
	a->precondition = xstrdup("source and target unmounted and not held by anyone (O_EXCL), distinct and not "
				  "overlapping; the target exactly the planned size");
	a->evidence = xasprintf("fingerprint %s", p->fingerprint);
	a->command = xstrdup("guard");
	a->bytes = p->tgt_geo.bytes;
}

/* each ext filesystem on the source must be clean before it is copied */
static void clone_source_fsck(struct plan *p, const struct plan_part *pp)
{
	struct plan_action *a = add_act(p, PA_E2FSCK, pp->number);

	a->src_offset = pp->offset;
	a->block_size = pp->block_size;
	a->title = xasprintf("e2fsck -fn of partition %u (%s, UUID %s): must be clean", pp->number, pp->fs_type,
			     pp->fs_uuid);
	a->precondition = xstrdup("source unmounted");
	a->evidence = xstrdup("exit status 0");
	a->command = xasprintf("e2fsck -fn \"$SOURCE?offset=%" PRIu64 "\"", pp->offset);
}

/* an ext filesystem's used blocks; one that must shrink on the way is swaptool clone's, with its shrink */
static void clone_copy_used(struct plan *p, const struct plan_part *pp)
{
	char b[4][32];
	struct plan_action *a = add_act(p, PA_COPY_USED, pp->number);

	a->src_offset = a->tgt_offset = pp->offset;
	a->bytes = pp->tgt_bytes;
	a->block_size = pp->block_size;
	a->blocks_to = pp->new_block_count < pp->block_count ? pp->new_block_count : pp->block_count;
	if (pp->new_block_count < pp->block_count) {
		a->title = xasprintf("copy the used blocks of partition %u (%s) at byte %s that lie below its new end "
				     "(block %s); unwritten extents are not copied",
				     pp->number, pp->fs_type, fmt_thousands(pp->offset, b[0]),
				     fmt_thousands(pp->new_block_count, b[1]));
		a->precondition = xstrdup("source read-only: nothing here or after writes it");
		a->evidence = xstrdup("bytes copied, holes, unwritten bytes skipped");
		/* no standard tool copies part of a filesystem and shrinks it on the way
		 * without writing the source: swaptool clone does this partition's two actions */
		a->command = xstrdup("\"$SWAPTOOL\" clone \"$SOURCE\" \"$TARGET\" --yes; exit $?");
		add_shrink(p, pp);
		return;
	}
	a->title = xasprintf("copy the used blocks of partition %u (%s) at byte %s; unwritten extents are not copied",
			     pp->number, pp->fs_type, fmt_thousands(pp->offset, b[0]));
	a->precondition = xstrdup("filesystem no larger than its target partition");
	a->evidence = xstrdup("bytes copied, holes, unwritten bytes skipped");
	a->command = xasprintf("e2image -ra -p -o %" PRIu64 " -O %" PRIu64 " \"$SOURCE\" \"$TARGET\"", pp->offset,
			       pp->offset);
}

/* a partition without an ext filesystem, byte for byte */
static void clone_copy_raw(struct plan *p, const struct plan_part *pp)
{
	char b[4][32];
	uint64_t n = pp->src_bytes < pp->tgt_bytes ? pp->src_bytes : pp->tgt_bytes;
	struct plan_action *a = add_act(p, PA_COPY_RAW, pp->number);

	a->src_offset = a->tgt_offset = pp->offset;
	a->bytes = n;
	a->title = xasprintf("copy partition %u (%s) raw: %s bytes at byte %s", pp->number,
			     pp->fs_type[0] ? pp->fs_type : "no filesystem", fmt_thousands(n, b[0]),
			     fmt_thousands(pp->offset, b[1]));
	a->precondition = xstrdup("partition the same size on the target");
	a->evidence = xstrdup("bytes copied");
	a->command = xasprintf("dd if=\"$SOURCE\" of=\"$TARGET\" bs=4M iflag=skip_bytes,count_bytes "
			       "oflag=seek_bytes skip=%" PRIu64 " seek=%" PRIu64 " count=%" PRIu64
			       " conv=notrunc,fsync status=progress",
			       pp->offset, pp->offset, n);
}

/* an ext filesystem grown to fill its target partition, unless it already does */
static void clone_grow(struct plan *p, const struct plan_part *pp)
{
	char b[4][32];
	uint64_t fill = pp->tgt_bytes / pp->block_size;
	struct plan_action *a;

	if (fill <= pp->new_block_count && pp->new_block_count <= pp->block_count)
		return;
	a = add_act(p, PA_GROW, pp->number);
	a->tgt_offset = pp->offset;
	a->block_size = pp->block_size;
	a->blocks_from = pp->new_block_count < pp->block_count ? pp->new_block_count : pp->block_count;
	a->blocks_to = pp->new_block_count;
	a->title = xasprintf("grow the ext4 of partition %u on the target from %s to %s blocks (fills the partition)",
			     pp->number, fmt_thousands(a->blocks_from, b[0]), fmt_thousands(a->blocks_to, b[1]));
	a->precondition = xstrdup("copy complete");
	a->evidence = xasprintf("block count %" PRIu64, a->blocks_to);
	a->command = xasprintf("e2fsck -fy \"$TARGET?offset=%" PRIu64 "\" && resize2fs \"$TARGET?offset=%" PRIu64
			       "\" %" PRIu64,
			       pp->offset, pp->offset, a->blocks_to);
}

/* each ext filesystem on the target checked once copied and grown */
static void clone_target_fsck(struct plan *p, const struct plan_part *pp)
{
	char b[4][32];
	struct plan_action *a = add_act(p, PA_FSCK, pp->number);

	a->tgt_offset = pp->offset;
	a->block_size = pp->block_size;
	a->blocks_to = pp->new_block_count;
	a->title = xasprintf("e2fsck -fn of partition %u on the target: clean, %s blocks, UUID %s", pp->number,
			     fmt_thousands(pp->new_block_count, b[0]), pp->fs_uuid);
	a->precondition = xstrdup("copy and grow done");
	a->evidence = xstrdup("exit status 0");
	a->command = xasprintf("e2fsck -fn \"$TARGET?offset=%" PRIu64 "\"", pp->offset);
}

/* the table last, then its verification, then what only the operator can do */
static void clone_finish(struct plan *p)
{
	char b[4][32];
	struct plan_action *a;

	a = add_act(p, PA_WRITE_TABLE, 0);
	a->bytes = p->tgt_geo.bytes;
	a->title = xasprintf("write the target's GPT: %zu partitions, same starts, GUIDs, names, attributes; the last ends "
			     "at LBA %s; backup header at LBA %s",
			     p->nparts, fmt_thousands(p->parts[p->nparts - 1].tgt_end_lba, b[0]),
			     fmt_thousands(p->tgt_geo.last_lba, b[1]));
	a->precondition = xstrdup("every copy and check done: until now the target carries no table, so an "
				  "interrupted clone leaves nothing that looks bootable");
	a->evidence = xstrdup("sgdisk -v clean");
	a->command = sfdisk_command(p);
	a = add_act(p, PA_VERIFY, 0);
	a->title = xasprintf("verify the target: sgdisk -v clean, backup header at LBA %s, PARTUUIDs and UUIDs as on "
			     "the source, block counts as planned",
			     fmt_thousands(p->tgt_geo.last_lba, b[0]));
	a->precondition = xstrdup("table written");
	a->evidence = xstrdup("the checks of the record");
	a->command = xstrdup("sgdisk -v \"$TARGET\"");
	a = add_act(p, PA_MANUAL, 0);
	a->title = xstrdup("remove the old drive before booting the new one: both carry the same PARTUUIDs and UUIDs, "
			   "and with both attached the boot loader and fstab may pick either");
	a->precondition = xstrdup("clone verified");
	a->evidence = xstrdup("the node boots from the new drive; swaptool accept");
	a->command = NULL;
}

/* path 2's actions in the order they run: guard, source checks, copies (with any shrink), grows,
 * target checks, then the table */
static void build_clone(struct plan *p)
{
	clone_check(p);
	for (size_t i = 0; i < p->nparts; i++)
		if (p->parts[i].is_ext)
			clone_source_fsck(p, &p->parts[i]);
	for (size_t i = 0; i < p->nparts; i++) {
		if (p->parts[i].is_ext)
			clone_copy_used(p, &p->parts[i]);
		else
			clone_copy_raw(p, &p->parts[i]);
	}
	for (size_t i = 0; i < p->nparts; i++)
		if (p->parts[i].is_ext)
			clone_grow(p, &p->parts[i]);
	for (size_t i = 0; i < p->nparts; i++)
		if (p->parts[i].is_ext)
			clone_target_fsck(p, &p->parts[i]);
	clone_finish(p);
}

/* What a shrink on the way costs: the bytes in use past the new end (resize2fs reads and writes
 * them), of those the file data, and the metadata a rehearsal copies. Unknown (0) when the
 * filesystem cannot be read here. */
static void plan_part_cost(const char *path, struct plan_part *pp)
{
	struct ext_past past;

	if (fscopy_ext_past(path, pp->offset, pp->new_block_count < pp->block_count ? pp->new_block_count : pp->block_count,
			    &past, NULL) < 0)
		return;
	pp->past_cut_bytes = past.used_bytes;
	pp->past_cut_data_bytes = past.data_bytes;
	pp->meta_bytes = past.meta_bytes > past.itable_unused_bytes ? past.meta_bytes - past.itable_unused_bytes : 0;
	pp->data_bytes = past.all_data_bytes;
	ext_past_free(&past);
}

/* Path 1's sizes inside the source's filesystems (offline; preflight measures a mounted source
 * live) and its fit against the target, by the computation preflight uses. */
static void measure_fresh(const struct layout *l, const struct profile *prof, const char *home, struct plan *p)
{
	size_t n = home ? prof->refetch_paths.n : 0;
	_cleanup_free_ uint64_t *stores = xcalloc(n ? n : 1, sizeof(*stores));
	_cleanup_free_ bool *fits = xcalloc(n ? n : 1, sizeof(*fits));
	char b[32];

	for (size_t i = 0; i < n; i++) {
		_cleanup_free_ char *path = profile_expand(prof->refetch_paths.v[i], home);

		if (usage_offline(l, path, &stores[i]) < 0) {
			stores[i] = FRESH_FIT_UNKNOWN;
			continue;
		}
		if (u64_add(p->refetchable_bytes, stores[i], &p->refetchable_bytes) < 0)
			p->refetchable_bytes = UINT64_MAX;
		if (stores[i] == FRESH_FIT_UNKNOWN)
			stores[i]--; /* measured, if hostile: judged, and it never fits */
	}
	for (size_t i = 0; home && i < prof->backup_paths.n; i++) {
		_cleanup_free_ char *path = profile_expand(prof->backup_paths.v[i], home);
		uint64_t bytes;

		if (usage_offline(l, path, &bytes) == 0 && u64_add(p->irreplaceable_bytes, bytes, &p->irreplaceable_bytes) < 0)
			p->irreplaceable_bytes = UINT64_MAX;
	}
	fresh_fit(l, p->refetchable_bytes, p->irreplaceable_bytes, stores, n, fits, &p->fit);
	for (size_t i = 0; i < n; i++) {
		_cleanup_free_ char *path = NULL;
		char *m;

		if (fits[i] || stores[i] == FRESH_FIT_UNKNOWN)
			continue;
		path = profile_expand(prof->refetch_paths.v[i], home);
		m = xasprintf("%s%s%s (%s)", p->stores_missing ? p->stores_missing : "", p->stores_missing ? ", " : "", path,
			      fmt_decimal(stores[i], b));
		free(p->stores_missing);
		p->stores_missing = m;
	}
}

int plan_build(const struct layout *l, const struct profile *prof, const char *tgt_spec, const char *tgt_path,
	       const char *tgt_serial, const char *home, unsigned opts, struct plan *p)
{
	uint32_t sl = l->src_geo.lba_size, tl = l->tgt_geo.lba_size;

	*p = (struct plan){ .with_cost = opts & PLAN_COST };
	p->src_path = xstrdup(l->src->path);
	p->src_serial = l->src->serial ? xstrdup(l->src->serial) : NULL;
	p->src_model = l->src->model ? xstrdup(l->src->model) : NULL;
	p->src_geo = l->src_geo;
	p->tgt_geo = l->tgt_geo;
	p->tgt_spec = xstrdup(tgt_spec ? tgt_spec : "");
	p->tgt_path = tgt_path ? xstrdup(tgt_path) : NULL;
	p->tgt_serial = tgt_serial ? xstrdup(tgt_serial) : NULL;
	p->delta_bytes = l->delta_bytes;
	snprintf(p->table_kind, sizeof(p->table_kind), "%s", ptable_kind_name(l->table.kind));
	memcpy(p->disk_guid, l->table.disk_guid, sizeof(p->disk_guid));
	p->raw_possible = l->raw_clone_possible;
	p->clone_possible = l->fs_clone_possible;
	p->lba_size_unsafe = l->lba_size_unsafe;
	p->slot_lba_differs = l->slot_lba_differs;
	snprintf(p->clone_why, sizeof(p->clone_why), "%s", l->fs_clone_why);
	plan_fingerprint(l, false, p->fingerprint);
	plan_fingerprint(l, true, p->fingerprint_shrunk);
	p->refetch_minutes = prof->refetch_minutes;

	p->parts = xcalloc(l->table.nparts ? l->table.nparts : 1, sizeof(*p->parts));
	p->nparts = l->table.nparts;
	for (size_t i = 0; i < l->table.nparts; i++) {
		const struct part *s = &l->table.parts[i];
		const struct part_fs *f = &l->fs[i];
		const struct part_fit *fit = &l->fit[i];
		struct plan_part *pp = &p->parts[i];

		pp->number = s->number;
		pp->src_start_lba = s->start_lba;
		pp->src_end_lba = s->end_lba;
		pp->offset = s->start_lba * sl;
		pp->src_bytes = s->size_bytes;
		pp->tgt_start_lba = pp->offset / tl;
		pp->tgt_end_lba = fit->new_end_lba;
		pp->tgt_bytes = fit->new_end_lba >= pp->tgt_start_lba ? (fit->new_end_lba - pp->tgt_start_lba + 1) * tl : 0;
		memcpy(pp->type_guid, s->type_guid, sizeof(pp->type_guid));
		memcpy(pp->part_guid, s->part_guid, sizeof(pp->part_guid));
		snprintf(pp->name, sizeof(pp->name), "%s", s->name ? s->name : "");
		pp->attrs = s->attrs;
		snprintf(pp->fs_type, sizeof(pp->fs_type), "%s", f->id.type);
		snprintf(pp->fs_uuid, sizeof(pp->fs_uuid), "%s", f->id.uuid);
		snprintf(pp->fs_label, sizeof(pp->fs_label), "%s", f->id.label);
		pp->is_ext = f->is_ext && f->ext_err == 0;
		pp->crosses_end = fit->crosses_end;
		if (pp->is_ext) {
			pp->block_size = f->ext.block_size;
			pp->block_count = f->ext.block_count;
			pp->free_blocks = f->ext.free_blocks;
			pp->min_blocks = f->ext.min_blocks;
			pp->new_block_count = fit->new_block_count ? fit->new_block_count : f->ext.block_count;
			if (pp->new_block_count < pp->block_count)
				p->needs_shrink = true;
			if (p->with_cost)
				plan_part_cost(l->src->path, pp);
		}
	}
	measure_fresh(l, prof, home, p);
	build_fresh(p, prof);
	if (p->clone_possible && p->nparts)
		build_clone(p);
	return 0;
}

uint64_t plan_past_cut_bytes(const struct plan *p, uint64_t *data)
{
	uint64_t n = 0;

	if (data)
		*data = 0;
	for (size_t i = 0; i < p->nparts; i++)
		if (p->parts[i].is_ext && p->parts[i].new_block_count < p->parts[i].block_count) {
			n += p->parts[i].past_cut_bytes;
			if (data)
				*data += p->parts[i].past_cut_data_bytes;
		}
	return n;
}

/* Two copies of every ext filesystem's metadata (the scratch source and the target), the raw
 * partitions twice (a full ESP at worst), and 256 MiB for the tables, the tools and growth. */
uint64_t plan_rehearse_need(const struct plan *p)
{
	uint64_t need = 256ULL << 20;

	for (size_t i = 0; i < p->nparts; i++)
		need += p->parts[i].is_ext ? p->parts[i].meta_bytes * 2 : p->parts[i].src_bytes * 2;
	return need;
}

double plan_rate(const struct plan *p)
{
	double usb = (double)p->link_mbps * 1e6 / 8 * 0.8;

	return p->link_mbps && usb < PLAN_RATE ? usb : PLAN_RATE;
}

void plan_limit_link(struct plan *p, const char *side, uint64_t link_mbps)
{
	if (link_mbps && (!p->link_mbps || link_mbps < p->link_mbps)) {
		p->link_mbps = link_mbps;
		p->link_side = side;
	}
}

void plan_attach(struct plan *p, const char *side, const char *transport, struct disk_bridge *b)
{
	bool src = streq(side, "source");
	struct disk_bridge *mine = src ? &p->src_bridge : &p->tgt_bridge;

	*(src ? &p->src_transport : &p->tgt_transport) = transport;
	if (!b->vendor_id)
		return;
	plan_limit_link(p, side, b->speed_mbps);
	bridge_free(mine);
	*mine = *b;
	*b = (struct disk_bridge){ 0 };
}

/* Sequential figures at plan_rate: what the copies read and write, the data past the cut read
 * and written once more, and the metadata read four times (e2fsck of source and target, the
 * relocation's inode scan, resize2fs). */
double plan_clone_seconds(const struct plan *p)
{
	double bytes = 0;

	for (size_t i = 0; i < p->nparts; i++) {
		const struct plan_part *pp = &p->parts[i];

		if (pp->is_ext)
			bytes += 2.0 * pp->data_bytes + 4.0 * pp->meta_bytes +
				 (pp->new_block_count < pp->block_count ? 2.0 * pp->past_cut_data_bytes : 0);
		else
			bytes += 2.0 * pp->src_bytes;
	}
	return bytes / plan_rate(p);
}

void plan_free(struct plan *p)
{
	free(p->src_path);
	free(p->src_serial);
	free(p->src_model);
	free(p->tgt_spec);
	free(p->tgt_path);
	free(p->tgt_serial);
	bridge_free(&p->src_bridge);
	bridge_free(&p->tgt_bridge);
	free(p->parts);
	free(p->stores_missing);
	for (size_t i = 0; i < p->nacts; i++) {
		free(p->acts[i].title);
		free(p->acts[i].precondition);
		free(p->acts[i].evidence);
		free(p->acts[i].command);
	}
	free(p->acts);
	for (size_t i = 0; i < p->nfresh; i++) {
		free(p->fresh[i].title);
		free(p->fresh[i].command);
		free(p->fresh[i].note);
	}
	free(p->fresh);
	*p = (struct plan){ 0 };
}

void plan_gpt(const struct plan *p, struct gpt_new *t)
{
	*t = (struct gpt_new){ .lba_size = p->tgt_geo.lba_size, .lba_count = p->tgt_geo.lba_count };
	memcpy(t->disk_guid, p->disk_guid, sizeof(t->disk_guid));
	t->parts = xcalloc(p->nparts ? p->nparts : 1, sizeof(*t->parts));
	t->nparts = p->nparts;
	for (size_t i = 0; i < p->nparts; i++) {
		const struct plan_part *pp = &p->parts[i];
		struct gpt_new_part *n = &t->parts[i];

		n->number = pp->number;
		n->start_lba = pp->tgt_start_lba;
		n->end_lba = pp->tgt_end_lba;
		memcpy(n->type_guid, pp->type_guid, sizeof(n->type_guid));
		memcpy(n->part_guid, pp->part_guid, sizeof(n->part_guid));
		snprintf(n->name, sizeof(n->name), "%s", pp->name);
		n->attrs = pp->attrs;
	}
}

static json_object *geo_json(const struct lba_geometry *g)
{
	json_object *o = json_object_new_object();

	jset_u64(o, "size_bytes", g->bytes);
	jset_u64(o, "lba_size", g->lba_size);
	jset_u64(o, "lba_count", g->lba_count);
	jset_u64(o, "first_usable_lba", g->first_usable_lba);
	jset_u64(o, "last_usable_lba", g->last_usable_lba);
	jset_u64(o, "last_lba", g->last_lba);
	return o;
}

static json_object *fresh_path_json(const struct plan *p)
{
	json_object *fresh = json_object_new_object(), *steps = json_object_new_array();

	jset_bool(fresh, "possible", p->fit.possible);
	/* the recommendation preflight makes: path 1 whenever it fits; none when it does not */
	jset_bool(fresh, "recommended", p->fit.possible);
	jset_u64(fresh, "refetchable_bytes", p->refetchable_bytes);
	jset_u64(fresh, "irreplaceable_bytes", p->irreplaceable_bytes);
	jset_u64(fresh, "source_used_bytes", p->fit.used_bytes);
	jset_u64(fresh, "unmeasured_partitions", p->fit.unmeasured);
	jset_u64(fresh, "install_bytes", p->fit.install_bytes);
	jset_u64(fresh, "need_bytes", p->fit.need_bytes);
	jset_u64(fresh, "target_usable_bytes", p->fit.room_bytes);
	jset_u64(fresh, "total_bytes", p->fit.total_bytes);
	jset_str(fresh, "stores_missing", p->stores_missing);
	jset_u64(fresh, "refetch_minutes", p->refetch_minutes);
	for (size_t i = 0; i < p->nfresh; i++) {
		json_object *s = json_object_new_object();

		jset_u64(s, "n", i + 1);
		jset_str(s, "title", p->fresh[i].title);
		jset_str(s, "command", p->fresh[i].command);
		jset_str(s, "note", p->fresh[i].note);
		json_object_array_add(steps, s);
	}
	json_object_object_add(fresh, "steps", steps);
	return fresh;
}

static json_object *clone_cost_json(const struct plan *p)
{
	json_object *cost = json_object_new_object();
	uint64_t data, past = plan_past_cut_bytes(p, &data);

	jset_u64(cost, "past_cut_bytes", past);
	jset_u64(cost, "past_cut_data_bytes", data);
	jset_u64(cost, "rehearsal_scratch_bytes", plan_rehearse_need(p));
	jset_double(cost, "clone_seconds", plan_clone_seconds(p));
	jset_u64(cost, "rate_bytes_per_s", (uint64_t)plan_rate(p));
	/* what bounds it: the write-up's NVMe figure, or a USB link (the slot's drive is faster) */
	jset_str(cost, "rate_basis", plan_rate(p) < PLAN_RATE ? "usb-link" : "nvme");
	json_object_object_add(cost, "usb_link_mbps", p->link_mbps ? json_object_new_uint64(p->link_mbps) : NULL);
	jset_str(cost, "usb_link_side", p->link_side);
	return cost;
}

static json_object *part_json(const struct plan_part *pp)
{
	json_object *e = json_object_new_object();

	jset_u64(e, "number", pp->number);
	jset_u64(e, "start_lba", pp->src_start_lba);
	jset_u64(e, "end_lba", pp->src_end_lba);
	jset_u64(e, "new_start_lba", pp->tgt_start_lba);
	jset_u64(e, "new_end_lba", pp->tgt_end_lba);
	jset_u64(e, "offset_bytes", pp->offset);
	jset_u64(e, "size_bytes", pp->src_bytes);
	jset_u64(e, "new_size_bytes", pp->tgt_bytes);
	jset_str(e, "type_guid", pp->type_guid);
	jset_str(e, "part_guid", pp->part_guid);
	jset_str(e, "name", pp->name);
	jset_u64(e, "attrs", pp->attrs);
	jset_str(e, "fs_type", pp->fs_type[0] ? pp->fs_type : NULL);
	jset_str(e, "fs_uuid", pp->fs_uuid[0] ? pp->fs_uuid : NULL);
	if (pp->is_ext) {
		jset_u64(e, "block_size", pp->block_size);
		jset_u64(e, "block_count", pp->block_count);
		jset_u64(e, "new_block_count", pp->new_block_count);
		jset_u64(e, "min_blocks", pp->min_blocks);
	}
	return e;
}

static json_object *action_json(const struct plan_action *a, size_t n)
{
	json_object *e = json_object_new_object();

	jset_u64(e, "n", n);
	jset_str(e, "action", plan_act_name(a->kind));
	if (a->part)
		jset_u64(e, "partition", a->part);
	if (a->kind == PA_COPY_RAW || a->kind == PA_COPY_USED) {
		jset_u64(e, "src_offset", a->src_offset);
		jset_u64(e, "tgt_offset", a->tgt_offset);
		jset_u64(e, "bytes", a->bytes);
	}
	if (a->kind == PA_SHRINK || a->kind == PA_GROW || a->kind == PA_FSCK || a->kind == PA_COPY_USED) {
		jset_u64(e, "block_size", a->block_size);
		if (a->blocks_from)
			jset_u64(e, "blocks_from", a->blocks_from);
		jset_u64(e, "blocks_to", a->blocks_to);
	}
	jset_bool(e, "destructive", a->destructive);
	jset_str(e, "title", a->title);
	jset_str(e, "precondition", a->precondition);
	jset_str(e, "evidence", a->evidence);
	jset_str(e, "command", a->command);
	return e;
}

static json_object *clone_path_json(const struct plan *p)
{
	json_object *clone = json_object_new_object();
	json_object *acts = json_object_new_array(), *parts = json_object_new_array();

	jset_bool(clone, "possible", p->clone_possible);
	jset_str(clone, "why_not", p->clone_possible ? NULL : p->clone_why);
	jset_bool(clone, "needs_shrink", p->needs_shrink);
	if (p->clone_possible && p->with_cost)
		json_object_object_add(clone, "cost", clone_cost_json(p));
	for (size_t i = 0; i < p->nparts; i++)
		json_object_array_add(parts, part_json(&p->parts[i]));
	json_object_object_add(clone, "partitions", parts);
	for (size_t i = 0; i < p->nacts; i++)
		json_object_array_add(acts, action_json(&p->acts[i], i + 1));
	json_object_object_add(clone, "actions", acts);
	return clone;
}

/* A drive's "transport" and, behind a USB bridge, its "bridge" (src/bridge.h) */
static void attach_json(json_object *o, const char *transport, const struct disk_bridge *b)
{
	jset_str(o, "transport", transport);
	if (b->vendor_id)
		json_object_object_add(o, "bridge", bridge_json(b));
}

json_object *plan_json(const struct plan *p)
{
	json_object *o = json_object_new_object(), *src = geo_json(&p->src_geo), *tgt = geo_json(&p->tgt_geo);
	json_object *paths = json_object_new_object(), *raw = json_object_new_object();

	jset_str(o, "fingerprint", p->fingerprint);
	jset_str(o, "fingerprint_shrunk", p->fingerprint_shrunk);
	jset_str(src, "path", p->src_path);
	jset_str(src, "serial", p->src_serial);
	jset_str(src, "model", p->src_model);
	jset_str(src, "partition_table", p->table_kind);
	jset_str(src, "disk_guid", p->disk_guid[0] ? p->disk_guid : NULL);
	attach_json(src, p->src_transport, &p->src_bridge);
	json_object_object_add(o, "source", src);
	jset_str(tgt, "spec", p->tgt_spec);
	jset_str(tgt, "path", p->tgt_path);
	jset_str(tgt, "serial", p->tgt_serial);
	attach_json(tgt, p->tgt_transport, &p->tgt_bridge);
	json_object_object_add(o, "target", tgt);
	jset_i64(o, "delta_bytes", p->delta_bytes);

	jset_bool(raw, "possible", p->raw_possible);
	json_object_object_add(paths, "raw_clone", raw);
	json_object_object_add(paths, "fresh_install", fresh_path_json(p));
	json_object_object_add(paths, "fs_clone", clone_path_json(p));
	json_object_object_add(o, "paths", paths);
	return o;
}

char *plan_script(const struct plan *p, const char *swaptool)
{
	/* Every string below that swaptool did not make itself goes through shell_quote(): the source
	 * and target paths, the serials, the partition names (in the sfdisk action). The numbers and
	 * the fingerprints (sha256 hex) are ours. */
	_cleanup_free_ char *src = shell_quote(p->src_path), *sw = shell_quote(swaptool ? swaptool : "swaptool");
	_cleanup_free_ char *tgt = p->tgt_path ? shell_quote(p->tgt_path) : NULL;
	_cleanup_free_ char *ss = shell_quote(p->src_serial ? p->src_serial : "");
	_cleanup_free_ char *ts = shell_quote(p->tgt_serial ? p->tgt_serial : "");
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	if (!f)
		abort();
	fprintf(f, "#!/bin/bash\n"
		   "# SPDX-License-Identifier: MIT\n"
		   "# Path 2 (filesystem-aware clone with shrink), generated by swaptool plan.\n"
		   "# Every destructive command is preceded by 'guard', which checks the devices' sizes and\n"
		   "# serials and the plan's fingerprint, and stops at the first surprise.\n"
		   "# Run it from a live environment with the source unmounted; 'swaptool clone' does the same\n"
		   "# with a faster used-block copy (unwritten extents are not copied).\n"
		   "# Strings read from the disks (paths, serials, partition names) appear only as single-quoted\n"
		   "# words; the comments show them with control characters as '?'.\n"
		   "set -euo pipefail\n\n");
	fprintf(f, "SOURCE=%s\n", src);
	if (tgt)
		fprintf(f, "TARGET=%s\nif [ $# -ge 1 ]; then TARGET=$1; fi\n", tgt);
	else
		fprintf(f, "if [ $# -lt 1 ]; then echo \"usage: $0 TARGET_DEVICE (the new drive, %" PRIu64
			   " bytes)\" >&2; exit 2; fi\nTARGET=$1\n",
			p->tgt_geo.bytes);
	fprintf(f, "if [ -z \"${SWAPTOOL:-}\" ]; then SWAPTOOL=%s; fi\n"
		   "SOURCE_BYTES=%" PRIu64 "\nTARGET_BYTES=%" PRIu64 "\nTARGET_LBA=%u\n"
		   "SOURCE_SERIAL=%s\nTARGET_SERIAL=%s\n"
		   "FINGERPRINT=%s\nFINGERPRINT_SHRUNK=%s\n\n",
		   sw, p->src_geo.bytes, p->tgt_geo.bytes, p->tgt_geo.lba_size, ss, ts, p->fingerprint,
		   p->fingerprint_shrunk);
	fprintf(f,
		"stop() { echo \"stop: $*\" >&2; exit 3; }\n"
		"size_of() { if [ -b \"$1\" ]; then blockdev --getsize64 \"$1\"; else stat -L -c %%s \"$1\"; fi; }\n"
		"serial_of() { if [ -b \"$1\" ]; then lsblk -dno SERIAL \"$1\" 2>/dev/null | tr -d ' '; fi; }\n"
		"in_use() { [ -b \"$1\" ] && lsblk -no MOUNTPOINTS \"$1\" 2>/dev/null | grep -q .; }\n"
		"guard() {\n"
		"\tlocal d\n"
		"\tfor d in \"$SOURCE\" \"$TARGET\"; do\n"
		"\t\tcase \"$d\" in -* | *'?'*) stop \"the disk name '$d' starts with '-' or holds '?', which e2fsck and "
		"resize2fs read as options (DISK?offset=N): name it without them (./NAME, a symlink)\";; esac\n"
		"\tdone\n"
		"\t[ -e \"$SOURCE\" ] || stop \"source '$SOURCE' is gone\"\n"
		"\t[ -e \"$TARGET\" ] || stop \"target '$TARGET' is gone\"\n"
		"\t[ \"$(readlink -f \"$SOURCE\")\" != \"$(readlink -f \"$TARGET\")\" ] || stop \"target is the source\"\n"
		"\t[ \"$(size_of \"$SOURCE\")\" = \"$SOURCE_BYTES\" ] || stop \"source '$SOURCE' is not $SOURCE_BYTES bytes\"\n"
		"\t[ \"$(size_of \"$TARGET\")\" = \"$TARGET_BYTES\" ] || stop \"target '$TARGET' is not $TARGET_BYTES bytes\"\n"
		"\tif [ -n \"$SOURCE_SERIAL\" ] && [ -b \"$SOURCE\" ]; then [ \"$(serial_of \"$SOURCE\")\" = \"$SOURCE_SERIAL\" ] || stop \"source serial changed\"; fi\n"
		"\tif [ -n \"$TARGET_SERIAL\" ] && [ -b \"$TARGET\" ]; then [ \"$(serial_of \"$TARGET\")\" = \"$TARGET_SERIAL\" ] || stop \"target serial changed\"; fi\n"
		"\t! in_use \"$SOURCE\" || stop \"source '$SOURCE' is mounted\"\n"
		"\t! in_use \"$TARGET\" || stop \"target '$TARGET' is mounted\"\n"
		"\tlocal fp\n"
		"\tfp=$(\"$SWAPTOOL\" --json plan \"$SOURCE\" --target \"$TARGET_BYTES\" --target-lba-size \"$TARGET_LBA\" | jq -r .plan.fingerprint)\n"
		"\t[ \"$fp\" = \"$FINGERPRINT\" ] || [ \"$fp\" = \"$FINGERPRINT_SHRUNK\" ] || stop \"fingerprint changed ($fp): re-run swaptool plan\"\n"
		"}\n\n");
	for (size_t i = 0; i < p->nacts; i++) {
		const struct plan_action *a = &p->acts[i];

		fprintf(f, "# %zu. %s: ", i + 1, plan_act_name(a->kind));
		comment_text(f, a->title);
		fputc('\n', f);
		if (a->precondition) {
			fputs("#    precondition: ", f);
			comment_text(f, a->precondition);
			fputc('\n', f);
		}
		if (a->kind == PA_CHECK) {
			fprintf(f, "guard\n\n");
			continue;
		}
		if (!a->command) {
			fprintf(f, "echo %s\n\n", "'manual: remove the old drive before booting the new one'");
			continue;
		}
		if (a->destructive)
			fprintf(f, "guard\n");
		if (a->kind == PA_WRITE_TABLE && p->tgt_geo.lba_size != 512)
			fprintf(f, "# the target has %u-byte LBAs: run this against the device, whose sector size sfdisk reads\n",
				p->tgt_geo.lba_size);
		fprintf(f, "%s\n\n", a->command);
	}
	fprintf(f, "echo 'path 2 done: the target passed e2fsck -fn and sgdisk -v'\n");
	fclose(f);
	return out;
}

int plan_for(struct disk *src, const struct plan_target *t, const struct profile *prof, const char *home,
	     unsigned opts, struct layout *l, struct plan *p, char **why)
{
	_cleanup_free_ char *w = NULL, *h = NULL;
	int r = layout_analyze_slot(src, t->bytes, t->lba_size, t->slot_lba_size, l, &w);

	if (r < 0)
		return set_why(why, r, "%s", w ? w : strerror(-r));
	if (!home && node_home(NULL, &h) == 0)
		home = h;
	return plan_build(l, prof, t->spec, t->path, t->serial, home, opts, p);
}
