/* SPDX-License-Identifier: MIT */
/* table (src/table.c): cells, "-" for NULL, alignment and headers as written into a file (not a
 * terminal: nothing wraps, every column as wide as its widest cell, two spaces between). */
#include "table.h"
#include "tap.h"
#include "util.h"

/* What the table prints into a file. */
static char *print(const struct table *t, bool bold)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		abort();
	table_fprint(f, t, bold);
	fclose(f);
	return buf;
}

/* Each line of `s` with the spaces that end it cut (libsmartcols may pad the last column). */
static char *rstrip_lines(const char *s)
{
	char *o = xcalloc(1, strlen(s) + 1), *w = o;

	for (const char *p = s; *p; p++) {
		if (*p == '\n')
			while (w > o && w[-1] == ' ')
				w--;
		*w++ = *p;
	}
	*w = '\0';
	return o;
}

int main(void)
{
	{
		_cleanup_table_ struct table *t = table_new(3);
		_cleanup_free_ char *out = NULL, *got = NULL;

		table_header(t, "NAME", "SIZE", "NOTE");
		table_align(t, 1, ALIGN_RIGHT);
		table_align(t, 7, ALIGN_RIGHT); /* past the last column: ignored */
		table_row(t, "nvme0n1", "1.0T", "source");
		table_row(t, "loop12", "2G", NULL);
		table_cellf(t, "p%d", 2);
		table_cellf(t, "%.1fM", 512.0);
		table_cellf(t, "%s", "the root, 48 GB allocated past the new end");
		out = print(t, false);
		got = rstrip_lines(out);
		/* the leading two spaces: the empty first column and its separator */
		CHECK_STR(got, "  NAME       SIZE  NOTE\n"
			       "  nvme0n1    1.0T  source\n"
			       "  loop12       2G  -\n"
			       "  p2       512.0M  the root, 48 GB allocated past the new end\n");
		/* into a file nothing is wrapped: the long cell stays on its line */
		CHECK(strstr(out, "the root, 48 GB allocated past the new end\n") != NULL);
		CHECK(strchr(out, '\033') == NULL); /* no colour when not asked */
	}
	{
		/* no header: rows only; a coloured cell is measured by its text, not its escapes */
		_cleanup_table_ struct table *t = table_new(2);
		_cleanup_free_ char *out = NULL, *got = NULL;

		table_row(t, "\033[32mPASS\033[0m", "a");
		table_row(t, "WARN", "bb");
		out = print(t, false);
		got = rstrip_lines(out);
		CHECK_STR(got, "  PASS  a\n  WARN  bb\n");
	}
	{
		/* bold headers: the header row carries the escape, the data rows their text */
		_cleanup_table_ struct table *t = table_new(1);
		_cleanup_free_ char *out = NULL;

		table_header(t, "CHECK");
		table_row(t, "fstab");
		out = print(t, true);
		CHECK(strstr(out, "\033[1m") != NULL);
		CHECK(strstr(out, "fstab") != NULL);
		CHECK(strstr(out, "CHECK") != NULL);
	}
	table_free(NULL); /* NULL is left alone */
	return tap_done();
}
