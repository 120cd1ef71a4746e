/* SPDX-License-Identifier: MIT */
/* Wrapping and fitting text for the terminal (src/wrap.h): the lines beside the tables (verdicts,
 * hints, errors) break at words instead of where the terminal cuts them, mid-number, and the
 * progress line stays one line so that it is redrawn in place. */
#include "wrap.h"
#include "size.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

size_t term_columns(int fd)
{
	const char *env = getenv("COLUMNS"), *why;
	struct winsize ws;
	uint64_t cols;

	if (!isatty(fd))
		return 0;
	if (env && u64_parse(env, &cols, &why) == 0 && cols > 0 && cols < 10000)
		return (size_t)cols;
	if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	return 0;
}

/* The bytes of an ANSI CSI sequence at `s` ("\033[" parameters, one final byte 0x40-0x7e), else 0. */
static size_t csi_len(const char *s, size_t n)
{
	size_t i = 2;

	if (n < 2 || s[0] != '\033' || s[1] != '[')
		return 0;
	while (i < n && s[i] && ((unsigned char)s[i] < 0x40 || (unsigned char)s[i] > 0x7e))
		i++;
	return i < n && s[i] ? i + 1 : i;
}

size_t text_columns_n(const char *s, size_t n)
{
	size_t w = 0;

	for (size_t i = 0; i < n && s[i];) {
		size_t esc = csi_len(s + i, n - i);
		unsigned char c = (unsigned char)s[i];

		if (esc) {
			i += esc;
			continue;
		}
		if (c >= 0x20 && c != 0x7f && (c & 0xC0) != 0x80)
			w++;
		i++;
	}
	return w;
}

size_t text_columns(const char *s)
{
	return text_columns_n(s, strlen(s));
}

char *text_wrap(const char *s, size_t width, size_t indent)
{
	size_t len = strlen(s), col = 0, cap;
	char *out, *o;

	if (!width || text_columns(s) <= width)
		return xstrdup(s);
	if (indent >= width)
		indent = 0;
	/* at most one break (a newline and the indent) for every space */
	cap = len + 1;
	for (const char *p = s; *p; p++)
		if (*p == ' ')
			cap += 1 + indent;
	o = out = xcalloc(1, cap);
	while (*s) {
		size_t spaces = strspn(s, " "), word = strcspn(s + spaces, " ");
		size_t wcols = text_columns_n(s + spaces, word);

		/* the first word of a line keeps the spaces before it (a line's own indent) */
		if (col && col + spaces + wcols > width) {
			*o++ = '\n';
			memset(o, ' ', indent);
			o += indent;
			col = indent;
			s += spaces;
			spaces = 0;
		}
		memcpy(o, s, spaces + word);
		o += spaces + word;
		col += spaces + wcols;
		s += spaces + word;
	}
	*o = '\0';
	return out;
}

char *text_fit(const char *s, const char *tail, size_t width)
{
	size_t tcols = text_columns(tail), cut = 0, cols = 0;
	char *out;

	if (!width || text_columns(s) + tcols <= width)
		return xasprintf("%s%s", s, tail);
	/* room for the head and "…"; a tail wider than the line is itself cut */
	if (tcols + 1 >= width)
		return text_fit(tail, "", width);
	while (s[cut]) {
		size_t esc = csi_len(s + cut, strlen(s + cut)), step = esc ? esc : utf8_seq_len(s + cut);

		if (!esc && cols + 1 + tcols + 1 > width)
			break;
		if (!esc)
			cols++;
		cut += step ? step : 1;
	}
	out = xasprintf("%.*s…%s", (int)cut, s, tail);
	return out;
}
