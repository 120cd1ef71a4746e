/* SPDX-License-Identifier: MIT */
/* Helpers the steps share: the option tables for getopt_long and the usage, option parsing (LBA
 * sizes, --target and its companions, --map-user, --root) and opening the source. */
#include "steps.h"
#include "bridge.h"
#include "disk.h"
#include "size.h"
#include "extract.h"
#include "usbnvme.h"

#include <inttypes.h>
#include <sys/stat.h>

const struct option *step_getopt(const struct step_option *t)
{
	static struct option buf[STEP_OPTIONS_MAX + 1];
	size_t n = 0;

	for (; t[n].opt.name; n++) {
		if (n == STEP_OPTIONS_MAX)
			abort(); /* a step with more options than the buffer: raise STEP_OPTIONS_MAX */
		buf[n] = t[n].opt;
	}
	buf[n] = (struct option){ 0 };
	return buf;
}

/* "--name ARG": how wide an option's name is in the block, after the indent */
static int entry_width(const struct step_option *o)
{
	return 2 + (int)strlen(o->opt.name) + (o->arg ? 1 + (int)strlen(o->arg) : 0);
}

/* One line of the block, the help text in column `col`, each of its continuation lines too. */
static void entry_print(FILE *f, int col, int left, const char *help)
{
	const char *p = help;

	fprintf(f, "%*s", col - left, "");
	do {
		size_t n = strcspn(p, "\n");

		fprintf(f, "%.*s\n", (int)n, p);
		p += n;
		if (*p == '\n' && *++p)
			fprintf(f, "%*s", col + 2, "");
	} while (*p);
}

void step_options_print(FILE *f, const struct step_operand *operands, const struct step_option *t)
{
	int col = 0;

	for (const struct step_operand *a = operands; a && a->name; a++)
		if ((int)strlen(a->name) > col)
			col = (int)strlen(a->name);
	for (const struct step_option *o = t; o->opt.name; o++)
		if (o->help && entry_width(o) > col)
			col = entry_width(o);
	col += 2;
	for (const struct step_operand *a = operands; a && a->name; a++) {
		fprintf(f, "  %s", a->name);
		entry_print(f, col, (int)strlen(a->name), a->help);
	}
	for (const struct step_option *o = t; o->opt.name; o++) {
		if (!o->help)
			continue;
		fprintf(f, "  --%s%s%s", o->opt.name, o->arg ? " " : "", o->arg ? o->arg : "");
		entry_print(f, col, entry_width(o), o->help);
	}
}

void step_usage_print(FILE *f, const struct step *s)
{
	fputs(s->synopsis, f);
	step_options_print(f, s->operands, s->options);
	if (s->notes)
		fputs(s->notes, f);
}

int step_bad_option(struct ctx *ctx, int argc, char **argv)
{
	const char *opt = optind > 0 && optind <= argc ? argv[optind - 1] : "?";

	if (optopt && optopt < 0x100 && !startswith(opt, "--"))
		return ctx_error(ctx, EXIT_USAGE, "bad or incomplete option '-%c'; see 'swaptool help %s'", optopt,
				 ctx->step);
	/* getopt_long leaves optopt 0 for a long option it does not know (else the option's value) */
	if (!optopt && startswith(opt, "--"))
		return ctx_error(ctx, EXIT_USAGE, "unknown option '%.*s'; see 'swaptool help %s'",
				 (int)strcspn(opt, "="), opt, ctx->step);
	return ctx_error(ctx, EXIT_USAGE, "bad or incomplete option '%s'; see 'swaptool help %s'", opt, ctx->step);
}

int step_parse_lba_size(struct ctx *ctx, const char *opt, const char *v, uint32_t *out)
{
	uint64_t n;
	const char *why;

	if (u64_parse(v, &n, &why) < 0 || !lba_size_valid(n))
		return ctx_error(ctx, EXIT_USAGE, "bad %s '%s': an LBA size is a power of two from 512 to 65536", opt, v);
	*out = (uint32_t)n;
	return 0;
}

int step_parse_map_user(struct ctx *ctx, const char *v, struct name_map *map)
{
	if (name_map_add(map, v) < 0)
		return ctx_error(ctx, EXIT_USAGE, "bad --map-user '%s'; write it as OLD=NEW", v);
	return 0;
}

int step_check_root(struct ctx *ctx, const char *root)
{
	struct stat st;

	if (stat(root, &st) < 0 || !S_ISDIR(st.st_mode))
		return ctx_error(ctx, EXIT_USAGE, "the root '%s' is not a directory; pass --root DIR", root);
	return 0;
}

int step_home_option(struct ctx *ctx, const char *home)
{
	_cleanup_free_ char *shown = NULL;

	if (home[0] == '/')
		return 0;
	shown = text_safe(home, false);
	return ctx_error(ctx, EXIT_USAGE, "--home must be an absolute path, not '%s': the home as the node sees it, e.g. "
			 "--home /home/USER", shown);
}

int step_target_option(struct ctx *ctx, int c, const char *v, struct step_target_opts *t)
{
	switch (c) {
	case 't':
		t->spec = v;
		return 0;
	case 'T':
		return step_parse_lba_size(ctx, "--target-lba-size", v, &t->lba_size) ? EXIT_USAGE : 0;
	case 'I':
		return step_parse_lba_size(ctx, "--lba-size", v, &t->image_lba_size) ? EXIT_USAGE : 0;
	case 'H':
		t->home = v;
		return step_home_option(ctx, v) ? EXIT_USAGE : 0;
	}
	return -1;
}

int step_target_given(struct ctx *ctx, const struct step_target_opts *t)
{
	if (!t->spec)
		return ctx_error(ctx, EXIT_USAGE,
				 "no --target given: a size (2000398934016, 3907029168s, 2TB) or a device or image");
	return 0;
}

/* A path when it has a '/', or when it cannot be a size (it does not start like a number) and
 * names an existing file: "2TB" or "0" stay sizes even if such a file sits in the current directory. */
static bool spec_is_path(const char *spec)
{
	if (strchr(spec, '/'))
		return true;
	return !strchr("0123456789+-.", spec[0]) && access(spec, F_OK) == 0;
}

int step_target(struct ctx *ctx, const char *spec, uint32_t lba_size, struct disk *tgt, uint64_t *bytes,
		uint32_t *lba)
{
	_cleanup_free_ char *why = NULL;
	struct lba_geometry g;
	char b[32];
	int r;

	*lba = lba_size;
	if (spec_is_path(spec)) {
		r = disk_open(spec, lba_size, tgt, &why);
		if (r < 0)
			/* a directory, a FIFO or a socket is as wrong a --target as a missing path: usage */
			return ctx_error(ctx, r == -ENOENT || r == -EISDIR || r == -ENOTBLK || r == -ENOTDIR ? EXIT_USAGE
											      : EXIT_FAILED,
					 "bad --target: %s", why);
		*bytes = tgt->size_bytes;
		*lba = tgt->lba_size;
	} else {
		const char *reason;

		if (size_parse(spec, lba_size, bytes, &reason) < 0)
			return ctx_error(ctx, EXIT_USAGE, "bad --target '%s': %s", spec, reason);
		/* the layout works in signed 64-bit byte offsets (as the kernel's loff_t does) */
		if (*bytes > INT64_MAX)
			return ctx_error(ctx, EXIT_USAGE, "bad --target '%s': sizes above 8 EiB (%" PRId64 " bytes) are not supported",
					 spec, INT64_MAX);
	}
	if (lba_geometry(*bytes, *lba, &g) < 0)
		return ctx_error(ctx, EXIT_USAGE, "bad --target '%s': %s bytes is too small to hold a GPT", spec,
				 fmt_thousands(*bytes, b));
	return 0;
}

int step_open_source(struct ctx *ctx, const char *path, uint32_t image_lba_size, struct disk *src)
{
	_cleanup_free_ char *why = NULL;
	int r = disk_open(path, image_lba_size, src, &why);

	if (r < 0)
		/* a directory or a partition is the wrong kind of argument (usage); a SOURCE that is not
		 * there is a drive swaptool could not read (README's exit codes: 3) */
		return ctx_error(ctx, r == -EISDIR || r == -ENOTBLK ? EXIT_USAGE : EXIT_FAILED, "%s", why);
	return 0;
}

void step_read_through(const struct disk *d, struct usbnvme_through *t)
{
	*t = (struct usbnvme_through){ 0 };
	if (d->fd >= 0 && d->kind == DISK_BLOCK && !d->ctrl && d->sysname)
		usbnvme_through(d->fd, d->sysname, t);
}

/* One drive's part of step_attached_line; NULL when the record does not say. Caller frees. */
static char *attach_text(json_object *drive)
{
	json_object *br = jget(drive, "bridge");
	const char *tr = jget_str(drive, "transport");
	_cleanup_(bridge_freep) struct disk_bridge b = { 0 };
	_cleanup_free_ char *d = NULL;

	if (!tr)
		return NULL;
	if (!jget_str(br, "vendor_id") || !jget_str(br, "product_id"))
		return xstrdup(tr);
	/* the record's strings, as bridge_describe words a bridge read from sysfs */
	b.vendor_id = xstrdup(jget_str(br, "vendor_id"));
	b.product_id = xstrdup(jget_str(br, "product_id"));
	b.manufacturer = jget_str(br, "manufacturer") ? xstrdup(jget_str(br, "manufacturer")) : NULL;
	b.product = jget_str(br, "product") ? xstrdup(jget_str(br, "product")) : NULL;
	b.driver = jget_str(br, "driver") ? xstrdup(jget_str(br, "driver")) : NULL;
	b.speed_mbps = jget_u64(br, "speed_mbps");
	d = bridge_describe(&b);
	return xasprintf("%s behind USB bridge %s", tr, d);
}

void step_attached_line(const struct ctx *ctx, json_object *src, json_object *tgt)
{
	_cleanup_free_ char *s = attach_text(src), *t = attach_text(tgt);

	if (s || t)
		out_line(ctx, "attached: source %s; target %s", s ?: "unknown",
			 t ?: (jget_str(tgt, "path") ? "unknown" : "given as a size"));
}
