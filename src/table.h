/* SPDX-License-Identifier: MIT */
/* Aligned text tables: built cell by cell, written to a stream through libsmartcols. */
#pragma once

#include <stdbool.h>
#include <stdio.h>

#include "util.h"

enum align { ALIGN_LEFT, ALIGN_RIGHT };

struct table;
/* A table of `ncols` columns; headers given to table_header. Cells are copied. */
struct table *table_new(unsigned ncols);
void table_free(struct table *t);
static inline void table_freep(struct table **t) { table_free(*t); }
#define _cleanup_table_ _cleanup_(table_freep)
void table_align(struct table *t, unsigned col, enum align a);
/* Exactly ncols cells; NULL prints as "-". */
void table_header(struct table *t, ...);
void table_row(struct table *t, ...);
/* A row built cell by cell (cells formatted with printf). */
void table_cellf(struct table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Into a stream: on a terminal the table fits its width, long cells of the last column wrapped;
 * into a pipe or a file (a report's text) columns are as wide as their widest cell. */
void table_fprint(FILE *f, const struct table *t, bool bold_header);
