/* SPDX-License-Identifier: MIT */
/* Aligned text tables through libsmartcols, into any stream: the steps' output (steps/out.c's
 * table_print) and the report's text (src/report.c) share one layout. */
#include "util.h"
#include "table.h"
#include "wrap.h"

#include <libsmartcols/libsmartcols.h>

#define ANSI_BOLD "\033[1m"
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

/* Long cells wrap at spaces, not in the middle of a word: the narrowest a column may become is its
 * longest word, and each line ends at the last space that fits the width libsmartcols settled on.
 * libsmartcols up to 2.39 asks chunksize for the narrowest width; 2.40 and later ask nextchunk for
 * every chunk while the column's width is still 0 and take the widest, so at width 0 a chunk is one
 * word. */
static size_t wrap_chunksize(const struct libscols_column *cl __attribute__((unused)), const char *data,
			     void *u __attribute__((unused)))
{
	size_t best = 0;

	while (data && *data) {
		size_t n = strcspn(data, " "), w = text_columns_n(data, n);

		if (w > best)
			best = w;
		data += n;
		data += strspn(data, " ");
	}
	return best;
}

static char *wrap_nextchunk(const struct libscols_column *cl, char *data, void *u __attribute__((unused)))
{
	size_t width = scols_column_get_width(cl), w = 0;
	char *cut = NULL;

	if (!data)
		return NULL;
	if (!width) {
		char *space = strchr(data, ' ');

		if (!space)
			return NULL;
		*space = '\0';
		return space + 1 + strspn(space + 1, " ");
	}
	for (char *p = data; *p; p++) {
		if (((unsigned char)*p & 0xC0) != 0x80)
			w++;
		if (*p == ' ' && w <= width + 1)
			cut = p;
		if (w > width) {
			if (!cut)
				return NULL; /* one word wider than the column: let it stand out */
			*cut = '\0';
			return cut + 1 + strspn(cut + 1, " ");
		}
	}
	return NULL;
}

/* A cell coloured by out_status ("\033[32mPASS\033[0m") becomes its text and a colour of its own, so
 * that libsmartcols measures the text and not the escape sequence. */
static void set_cell(struct libscols_line *ln, size_t col, const char *text, bool colors)
{
	if (text[0] == '\033' && text[1] == '[') {
		size_t seq = strcspn(text, "m") + 1;
		const char *end = strstr(text + seq, ANSI_RESET);
		_cleanup_free_ char *color = xasprintf("%.*s", (int)seq, text);
		_cleanup_free_ char *plain = xasprintf("%.*s", end ? (int)(end - text - seq) : (int)strlen(text + seq),
						       text + seq);

		if (text[seq - 1] == 'm') {
			scols_line_set_data(ln, col, plain);
			if (colors)
				scols_cell_set_color(scols_line_get_cell(ln, col), color);
			return;
		}
	}
	scols_line_set_data(ln, col, text);
}

static inline void scols_unref_tablep(struct libscols_table **t)
{
	scols_unref_table(*t);
}

/* Only the last column wraps, where it is left-aligned: it holds the sentences (a finding, a
 * summary); the others are names and figures, read best on one line. */
static bool column_wraps(const struct table *t, unsigned c)
{
	return c + 1 == t->ncols && t->align[c] != ALIGN_RIGHT;
}

/* The narrowest column `c` can be: its widest cell, or its longest word where it wraps. */
static size_t column_min_width(const struct table *t, unsigned c, bool wraps)
{
	size_t w = 0;

	for (size_t r = 0; r < t->nrows; r++) {
		const char *cell = t->cells[r * t->ncols + c] ?: "-";
		size_t cw = wraps ? wrap_chunksize(NULL, cell, NULL) : text_columns(cell);

		if (cw > w)
			w = cw;
	}
	return w;
}

/* Columns [from, to) of `t` after its first column (the name a row is known by, repeated so each
 * part reads alone). */
static struct table *table_part(const struct table *t, unsigned from, unsigned to)
{
	struct table *p = table_new(1 + to - from);

	p->has_header = t->has_header;
	p->nrows = p->cap = t->nrows;
	p->cells = xcalloc(t->nrows * p->ncols, sizeof(char *));
	for (unsigned c = 0; c < p->ncols; c++)
		p->align[c] = t->align[c ? from + c - 1 : 0];
	for (size_t r = 0; r < t->nrows; r++)
		for (unsigned c = 0; c < p->ncols; c++) {
			const char *cell = t->cells[r * t->ncols + (c ? from + c - 1 : 0)];

			p->cells[r * p->ncols + c] = cell ? xstrdup(cell) : NULL;
		}
	return p;
}

/* A table no narrower than the terminal even with its last column wrapped (preflight's partitions,
 * fleet's drives) is printed in parts that fit, each with the first column again; the terminal
 * would otherwise cut its lines mid-number. True when it was. */
static bool table_fprint_parts(FILE *f, const struct table *t, bool bold_header, size_t width)
{
	size_t used = 2 + column_min_width(t, 0, false);
	unsigned from = 1;

	if (t->ncols < 3)
		return false;
	for (unsigned c = 1; c < t->ncols; c++)
		used += 2 + column_min_width(t, c, column_wraps(t, c));
	if (used <= width)
		return false;
	while (from < t->ncols) {
		size_t w = 2 + column_min_width(t, 0, false);
		unsigned to = from;

		/* at least one column a part, however wide */
		do {
			w += 2 + column_min_width(t, to, column_wraps(t, to));
			to++;
		} while (to < t->ncols && w + 2 + column_min_width(t, to, false) <= width);
		_cleanup_table_ struct table *p = table_part(t, from, to);

		if (from > 1)
			fputc('\n', f);
		table_fprint(f, p, bold_header);
		from = to;
	}
	return true;
}

/* Through libsmartcols, as lsblk and findmnt: on a terminal the table fits its width ($COLUMNS, else
 * the tty's) with long left-aligned cells wrapped; into a pipe or a file nothing is cut or wrapped. */
void table_fprint(FILE *f, const struct table *t, bool bold_header)
{
	_cleanup_(scols_unref_tablep) struct libscols_table *tb = NULL;
	struct libscols_column *cl;
	size_t width = term_columns(fileno(f));
	bool tty = isatty(fileno(f));

	if (width && table_fprint_parts(f, t, bold_header, width))
		return;
	tb = scols_new_table();

	if (!tb)
		abort();
	scols_table_set_stream(tb, f);
	scols_table_set_column_separator(tb, "  ");
	scols_table_enable_colors(tb, bold_header);
	scols_table_enable_noheadings(tb, !t->has_header);
	/* an empty first column: the two-space indent the steps' output has always had */
	cl = scols_table_new_column(tb, "", 0, SCOLS_FL_STRICTWIDTH);
	if (!cl)
		abort();
	for (unsigned c = 0; c < t->ncols; c++) {
		const char *name = t->has_header ? t->cells[c] : "";
		bool right = t->align[c] == ALIGN_RIGHT, wrap = tty && column_wraps(t, c);

		/* off a terminal nothing wraps: the column's width would be its longest word */
		cl = scols_table_new_column(tb, name ? name : "-", 0, right ? SCOLS_FL_RIGHT : wrap ? SCOLS_FL_WRAP : 0);
		if (!cl)
			abort();
		if (wrap)
			scols_column_set_wrapfunc(cl, wrap_chunksize, wrap_nextchunk, NULL);
		if (bold_header)
			scols_cell_set_color(scols_column_get_header(cl), ANSI_BOLD);
	}
	for (size_t r = t->has_header ? 1 : 0; r < t->nrows; r++) {
		struct libscols_line *ln = scols_table_new_line(tb, NULL);

		if (!ln)
			abort();
		scols_line_set_data(ln, 0, "");
		for (unsigned c = 0; c < t->ncols; c++) {
			const char *cell = t->cells[r * t->ncols + c];
			set_cell(ln, c + 1, cell ? cell : "-", bold_header);
		}
	}
	scols_print_table(tb);
}
