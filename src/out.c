/* SPDX-License-Identifier: MIT */
/* Human tables and lines, JSON documents, errors and the progress line. */
#include "util.h"
#include "out.h"

#include <time.h>

#define ANSI_BOLD "\033[1m"
#define ANSI_RED "\033[31m"
#define ANSI_GREEN "\033[32m"
#define ANSI_YELLOW "\033[33m"
#define ANSI_DIM "\033[2m"
#define ANSI_RESET "\033[0m"

struct table {
	unsigned ncols;
	size_t nrows, cap;     /* rows including the header row at index 0 */
	char **cells;          /* nrows * ncols */
	enum align *align;
	bool has_header;
	unsigned next_col;     /* for table_cellf */
};

struct table *table_new(unsigned ncols)
{
	struct table *t = xcalloc(1, sizeof(*t));

	t->ncols = ncols;
	t->align = xcalloc(ncols, sizeof(*t->align));
	return t;
}

void table_free(struct table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nrows * t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
	free(t->align);
	free(t);
}

void table_align(struct table *t, unsigned col, enum align a)
{
	if (col < t->ncols)
		t->align[col] = a;
}

static char **table_grow(struct table *t)
{
	if (t->nrows == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 16;
		t->cells = realloc(t->cells, t->cap * t->ncols * sizeof(char *));
		if (!t->cells)
			abort();
	}
	char **row = &t->cells[t->nrows * t->ncols];
	for (unsigned c = 0; c < t->ncols; c++)
		row[c] = NULL;
	t->nrows++;
	return row;
}

static void table_vrow(struct table *t, va_list ap)
{
	char **row = table_grow(t);

	for (unsigned c = 0; c < t->ncols; c++) {
		const char *s = va_arg(ap, const char *);
		row[c] = xstrdup(s ? s : "-");
	}
}

void table_header(struct table *t, ...)
{
	va_list ap;

	va_start(ap, t);
	table_vrow(t, ap);
	va_end(ap);
	t->has_header = true;
}

void table_row(struct table *t, ...)
{
	va_list ap;

	va_start(ap, t);
	table_vrow(t, ap);
	va_end(ap);
	t->next_col = 0;
}

void table_cellf(struct table *t, const char *fmt, ...)
{
	va_list ap;
	char *s;

	if (t->next_col == 0)
		table_grow(t);
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		abort();
	va_end(ap);
	t->cells[(t->nrows - 1) * t->ncols + t->next_col] = s;
	t->next_col = (t->next_col + 1) % t->ncols;
}

/* Display width: count UTF-8 lead bytes, skip ANSI escape sequences. */
static size_t display_width(const char *s)
{
	size_t w = 0;

	while (*s) {
		if (*s == '\033') {
			while (*s && *s != 'm')
				s++;
			if (*s)
				s++;
			continue;
		}
		if (((unsigned char)*s & 0xC0) != 0x80)
			w++;
		s++;
	}
	return w;
}

void table_fprint(FILE *f, const struct table *t, bool bold_header)
{
	_cleanup_free_ size_t *width = xcalloc(t->ncols, sizeof(size_t));

	for (size_t r = 0; r < t->nrows; r++)
		for (unsigned c = 0; c < t->ncols; c++) {
			const char *cell = t->cells[r * t->ncols + c];
			size_t w = cell ? display_width(cell) : 1;
			if (w > width[c])
				width[c] = w;
		}
	for (size_t r = 0; r < t->nrows; r++) {
		bool header = t->has_header && r == 0;

		fputs("  ", f);
		if (header && bold_header)
			fputs(ANSI_BOLD, f);
		for (unsigned c = 0; c < t->ncols; c++) {
			const char *cell = t->cells[r * t->ncols + c];
			size_t pad = width[c] - (cell ? display_width(cell) : 1);
			bool last = c + 1 == t->ncols;

			if (t->align[c] == ALIGN_RIGHT)
				fprintf(f, "%*s", (int)pad, "");
			fputs(cell ? cell : "-", f);
			if (t->align[c] == ALIGN_LEFT && !last)
				fprintf(f, "%*s", (int)pad, "");
			if (!last)
				fputs("  ", f);
		}
		if (header && bold_header)
			fputs(ANSI_RESET, f);
		fputc('\n', f);
	}
}

void table_print(const struct ctx *ctx, const struct table *t)
{
	if (!ctx->json)
		table_fprint(stdout, t, ctx->color);
}

void out_heading(const struct ctx *ctx, const char *fmt, ...)
{
	va_list ap;

	if (ctx->json)
		return;
	fputs(ctx->color ? "\n" ANSI_BOLD : "\n", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fputs(ctx->color ? ANSI_RESET "\n" : "\n", stdout);
}

void out_line(const struct ctx *ctx, const char *fmt, ...)
{
	va_list ap;

	if (ctx->json)
		return;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
}

const char *out_status(const struct ctx *ctx, enum status st)
{
	static const char *plain[] = { [ST_PASS] = "PASS", [ST_SKIP] = "skip", [ST_WARN] = "WARN", [ST_FAIL] = "FAIL" };
	static const char *colored[] = {
		[ST_PASS] = ANSI_GREEN "PASS" ANSI_RESET, [ST_SKIP] = ANSI_DIM "skip" ANSI_RESET,
		[ST_WARN] = ANSI_YELLOW "WARN" ANSI_RESET, [ST_FAIL] = ANSI_RED "FAIL" ANSI_RESET,
	};
	if (st > ST_FAIL)
		st = ST_FAIL;
	return ctx->color ? colored[st] : plain[st];
}

void out_checks(const struct ctx *ctx, json_object *record)
{
	json_object *checks = jget(record, "checks");
	_cleanup_table_ struct table *t = table_new(3);

	if (ctx->json || !checks)
		return;
	table_header(t, "status", "check", "finding");
	for (size_t i = 0; i < jarray_len(checks); i++) {
		json_object *c = jarray_at(checks, i);
		enum status st = ST_FAIL;

		status_parse(jget_str(c, "status"), &st);
		table_row(t, out_status(ctx, st), jget_str(c, "id"), jget_str(c, "summary"));
	}
	table_print(ctx, t);
}

void out_verdict(const struct ctx *ctx, json_object *record, const char *fmt, ...)
{
	enum status st = ST_FAIL;
	_cleanup_free_ char *text = NULL;
	va_list ap;

	if (ctx->json)
		return;
	status_parse(jget_str(record, "verdict"), &st);
	printf("\n%sverdict:%s %s  ", ctx->color ? ANSI_BOLD : "", ctx->color ? ANSI_RESET : "",
	       out_status(ctx, st));
	va_start(ap, fmt);
	if (vasprintf(&text, fmt, ap) < 0)
		abort();
	va_end(ap);
	/* No words of the step's own: the most severe check says why (the first of them). */
	if (!*text) {
		json_object *checks = jget(record, "checks");
		enum status worst = ST_PASS;

		for (size_t i = 0; i < jarray_len(checks); i++) {
			json_object *c = jarray_at(checks, i);
			enum status cs = ST_PASS;

			status_parse(jget_str(c, "status"), &cs);
			if (cs > worst && cs != ST_SKIP) {
				worst = cs;
				free(text);
				text = xstrdup(jget_str(c, "summary"));
			}
		}
		if (!*text) {
			free(text);
			text = xstrdup("every check passed");
		}
	}
	puts(text);
}

void out_json(json_object *o)
{
	const char *text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
	/* JSON is UTF-8: json-c copies a string's bytes as they are, so any that jset_str did not
	 * clean (a string added directly) are replaced by U+FFFD here. */
	_cleanup_free_ char *clean = utf8_valid(text) ? NULL : utf8_sanitize(text);

	puts(clean ?: text);
}

void out_error(const struct ctx *ctx, int code, const char *msg)
{
	if (ctx->json) {
		json_object *o = json_object_new_object(), *e = json_object_new_object();
		char now[32];

		iso8601_utc(time(NULL), now);
		jset_str(o, "schema", "swaptool/1");
		jset_str(o, "step", ctx->step);
		jset_str(o, "version", SWAPTOOL_VERSION);
		jset_str(o, "host", host_name());
		jset_str(o, "finished", now);
		jset_str(o, "verdict", "error");
		jset_i64(e, "exit_code", code);
		jset_str(e, "message", msg);
		json_object_object_add(o, "error", e);
		out_json(o);
		json_object_put(o);
		return;
	}
	fprintf(stderr, "swaptool%s%s: %s\n", ctx->step ? " " : "", ctx->step ? ctx->step : "", msg);
}

void out_progress(const struct ctx *ctx, const char *fmt, ...)
{
	va_list ap;

	if (!ctx->progress)
		return;
	fputs("\r\033[K", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fflush(stderr);
}

void out_progress_end(const struct ctx *ctx)
{
	if (ctx->progress)
		fputs("\r\033[K", stderr);
}
