/* SPDX-License-Identifier: MIT */
/* Text for a terminal of a given width: its display width, wrapped at words, fitted to one line. */
#pragma once

#include <stddef.h>

/* Columns `s` takes on a terminal: one per UTF-8 character, none for an ANSI CSI escape
 * ("\033[1m") and none for a control byte (the text is escaped before it is shown; the tool's
 * text holds no wide characters). At most the first `n` bytes. */
size_t text_columns_n(const char *s, size_t n);
size_t text_columns(const char *s);

/* The width of the terminal `fd` is ($COLUMNS, as libsmartcols takes it, else the tty's); 0 when `fd`
 * is a pipe or a file, where nothing is wrapped or cut. */
size_t term_columns(int fd);

/* `s` (one line) broken at spaces into lines of at most `width` columns, every line after the first
 * indented by `indent` spaces; a word wider than the width stands alone on its line. Width 0 (not a
 * terminal) or a line that fits: a copy. The caller frees it. */
char *text_wrap(const char *s, size_t width, size_t indent);

/* `s` cut to at most `width` columns ("…" where it was cut) followed by `tail` whole: a progress line
 * keeps its percentage and time left. Width 0: both as they are. The caller frees it. */
char *text_fit(const char *s, const char *tail, size_t width);
