/* SPDX-License-Identifier: MIT */
/* wrap (src/wrap.c): display columns without escapes, lines broken at words within a width with
 * a hanging indent and no word lost, a progress line fitted to one line keeping its tail. */
#include "wrap.h"
#include "tap.h"
#include "util.h"

/* Every line of `s` at most `width` columns (a lone word wider than it aside). */
static bool lines_fit(const char *s, size_t width)
{
	for (const char *line = s; *line;) {
		size_t n = strcspn(line, "\n"), cols = text_columns_n(line, n);
		const char *sp = memchr(line, ' ', n);

		if (cols > width && sp && strspn(line, " ") < (size_t)(sp - line))
			return false;
		line += n + (line[n] == '\n');
	}
	return true;
}

/* `s` with its breaks and indents undone: the words and single spaces. */
static char *words(const char *s)
{
	char *o = xcalloc(1, strlen(s) + 1), *w = o;

	for (const char *p = s; *p; p++) {
		char c = *p == '\n' ? ' ' : *p;

		if (c == ' ' && (w == o || w[-1] == ' '))
			continue;
		*w++ = c;
	}
	while (w > o && w[-1] == ' ')
		w--;
	*w = '\0';
	return o;
}

int main(void)
{
	CHECK_U64(text_columns("abc"), 3);
	CHECK_U64(text_columns("42 °C ≈ 1…"), 10);
	CHECK_U64(text_columns("\033[1mverdict:\033[0m \033[32mPASS\033[0m"), 13);
	CHECK_U64(text_columns_n("abcdef", 4), 4);
	CHECK_U64(text_columns(""), 0);

	{
		/* fits, or not a terminal: unchanged */
		_cleanup_free_ char *a = text_wrap("short line", 80, 2), *b = text_wrap("a b c d e f", 0, 2);

		CHECK_STR(a, "short line");
		CHECK_STR(b, "a b c d e f");
	}
	{
		_cleanup_free_ char *w = text_wrap("verdict: WARN  the source's backup GPT header at LBA 131,071 is not at the "
						   "target's last LBA 3,907,029,167", 40, 2);

		CHECK_STR(w, "verdict: WARN  the source's backup GPT\n"
			     "  header at LBA 131,071 is not at the\n"
			     "  target's last LBA 3,907,029,167");
	}
	{
		/* a line's own indent stays; a word wider than the width stands alone, whole */
		const char *in = "    usable LBAs 2048..3,907,029,134 supercalifragilisticexpialidocious-and-more end";
		_cleanup_free_ char *w = text_wrap(in, 20, 6), *back = words(w), *want = words(in);

		CHECK(strncmp(w, "    usable LBAs\n", 16) == 0);
		CHECK(strstr(w, "\n      supercalifragilisticexpialidocious-and-more\n") != NULL);
		CHECK(lines_fit(w, 20));
		CHECK_STR(back, want);
	}
	{
		/* many widths, every word kept, no line over the width; colour escapes take no room */
		const char *in = "\033[1mverdict:\033[0m \033[33mWARN\033[0m  source 'XG7000-2TB 2242' (KingSpec XG7000): "
				 "avoid, DRAM-less with a 40 MB host memory buffer: 4 KiB random reads fall from 69 K "
				 "to 13 K IOPS (p50 1.2 ms) over a 98 GB working set, 42 °C";
		_cleanup_free_ char *want = words(in);

		for (size_t width = 12; width <= 140; width++) {
			_cleanup_free_ char *w = text_wrap(in, width, 2), *back = words(w);

			CHECK(lines_fit(w, width));
			CHECK_STR(back, want);
		}
	}
	{
		_cleanup_free_ char *a = text_fit("accept: rand16 on /dev/sdb", "  42%  1:10 left", 80);
		_cleanup_free_ char *b = text_fit("accept: rand16 4 KiB random reads at 16 in flight over 98 GB of /dev/sdb",
						  "  42%  1:10 left", 40);
		_cleanup_free_ char *c = text_fit("copying", "  42%  1:10 left", 10);
		_cleanup_free_ char *d = text_fit("x", "y", 0);

		CHECK_STR(a, "accept: rand16 on /dev/sdb  42%  1:10 left");
		CHECK_STR(b, "accept: rand16 4 KiB ra…  42%  1:10 left");
		CHECK_U64(text_columns(b), 40);
		CHECK(text_columns(c) <= 10);
		CHECK_STR(d, "xy");
		/* never a partial UTF-8 character */
		for (size_t width = 18; width < 30; width++) {
			_cleanup_free_ char *e = text_fit("température °C ≈ élevée …", "  1%", width);

			CHECK(utf8_valid(e));
			CHECK(text_columns(e) <= width);
		}
	}
	return tap_done();
}
