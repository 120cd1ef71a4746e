/* SPDX-License-Identifier: MIT */
/* Where a chart's words go (src/report_svg.c): text boxes estimated from the font's widths, and
 * labels put at the first of their candidate spots where they stay inside the plot and cover no
 * other word, mark, bar or data line; a label with no such spot is left out, for the caption. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* A rectangle in the SVG's user units, y downwards. */
struct place_box {
	double x0, y0, x1, y1;
};

enum place_anchor { PLACE_START, PLACE_MIDDLE, PLACE_END };

/* Where a text may stand: its anchor point on the baseline, as SVG's x, y and text-anchor. */
struct place_spot {
	double x, y;
	enum place_anchor anchor;
};

/* A label asked for: placed by place_all at the first spot that fits, else not placed. */
struct place_label {
	char *text;         /* as written, not escaped */
	double size;        /* font size */
	bool must;          /* the caption names it when it finds no place (a gate); else it is dropped */
	const char *color;  /* borrowed */
	struct place_spot *spots;
	size_t nspots;
	bool placed;
	struct place_spot at;
};

struct place {
	struct place_box area;     /* where asked labels may go: the plot */
	struct place_box *boxes;   /* words and marks placed: nothing may cover them */
	size_t nboxes;
	double *segs;              /* data lines, four numbers a segment: no label may cross them */
	size_t nsegs;
	struct place_label *labels;
	size_t nlabels;
	double prev_x, prev_y;     /* the last point of the line being drawn, for place_point */
	bool have_prev;
};

/* The width of S in DejaVu Sans (Debian's sans-serif, among the widest) at SIZE, a little more;
 * bold adds a tenth. Every byte past ASCII starts a character as wide as the widest. */
double place_text_width(const char *s, double size, bool bold);
/* The box S covers with its anchor at SPOT (ascent and descent of the same font). */
struct place_box place_text_box(const char *s, double size, bool bold, struct place_spot spot);

void place_init(struct place *p, struct place_box area);
void place_free(struct place *p);
/* Something no label may cover: a word placed already (a tick's value, a title), a mark, a bar. */
void place_block(struct place *p, struct place_box b);
/* A data line, point by point: place_line_start, then place_point for each point. */
void place_line_start(struct place *p);
void place_point(struct place *p, double x, double y);
void place_segment(struct place *p, double x0, double y0, double x1, double y1);
/* Does B lie inside the area (when in_area) and clear of every box and segment? */
bool place_fits(const struct place *p, struct place_box b, bool in_area);
/* Ask for a label with its candidate spots, best first (copied). */
void place_ask(struct place *p, const char *text, double size, bool must, const char *color,
	       const struct place_spot *spots, size_t n);
/* Place every label asked, in the order asked: each at its first spot that fits, blocked then. */
void place_all(struct place *p);

/* Candidate spots, best first, into SPOTS (room for PLACE_MAX_SPOTS); their number. */
#define PLACE_MAX_SPOTS 64
/* Beside a point at X, Y (a mark R wide): right, left, above and below it, then a row farther. */
size_t place_spots_point(double x, double y, double r, double size, struct place_spot *spots);
/* Along a horizontal line from X0 to X1 at Y: above and below it, at its ends and middle, then a
 * row or two farther; then at its height anywhere from XMIN to XMAX. */
size_t place_spots_hline(double x0, double x1, double y, double size, double xmin, double xmax, struct place_spot *spots);
/* Beside a vertical line at X from TOP to BOTTOM: right of it, then left, from the top down. */
size_t place_spots_vline(double x, double top, double bottom, double size, struct place_spot *spots);
