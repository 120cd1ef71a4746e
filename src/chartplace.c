/* SPDX-License-Identifier: MIT */
/* Where a chart's words go: estimated text boxes and first-fit placement among candidate spots
 * (src/chartplace.h). */
#include "util.h"
#include "chartplace.h"

#include <math.h>

/* Advance widths of DejaVu Sans, in thousandths of an em, for ASCII 32 (space) to 126 (~). */
static const unsigned short glyph_w[95] = {
	318, 401, 460, 838, 636, 950, 780, 275, 390, 390, 500, 838, 318, 361, 318, 337, /* space .. / */
	636, 636, 636, 636, 636, 636, 636, 636, 636, 636,				/* 0 .. 9 */
	337, 337, 838, 838, 838, 531, 1000,						/* : .. @ */
	684, 686, 698, 770, 632, 575, 775, 752, 295, 295, 656, 557, 863,		/* A .. M */
	748, 787, 603, 787, 695, 635, 611, 732, 684, 989, 685, 611, 685,		/* N .. Z */
	390, 337, 390, 838, 500, 500,							/* [ .. ` */
	613, 635, 550, 635, 615, 352, 635, 634, 278, 278, 579, 278, 974,		/* a .. m */
	634, 612, 635, 635, 411, 521, 392, 634, 592, 818, 592, 592, 525,		/* n .. z */
	636, 337, 636, 838,								/* { .. ~ */
};

/* The font's ascent and descent (0.928 and 0.236 em), rounded up. */
#define ASCENT 0.96
#define DESCENT 0.26
/* the room kept between a label and what it must not cover */
#define GAP 1.0

double place_text_width(const char *s, double size, bool bold)
{
	double w = 0;

	for (const unsigned char *c = (const unsigned char *)(s ?: ""); *c; c++) {
		if (*c >= 32 && *c < 127)
			w += glyph_w[*c - 32];
		else if ((*c & 0xc0) != 0x80)
			w += 1000;
	}
	return w / 1000 * size * (bold ? 1.1 : 1) * 1.03 + 0.5;
}

struct place_box place_text_box(const char *s, double size, bool bold, struct place_spot spot)
{
	double w = place_text_width(s, size, bold);
	double x0 = spot.anchor == PLACE_START ? spot.x : spot.anchor == PLACE_MIDDLE ? spot.x - w / 2 : spot.x - w;

	return (struct place_box){ x0, spot.y - ASCENT * size, x0 + w, spot.y + DESCENT * size };
}

void place_init(struct place *p, struct place_box area)
{
	*p = (struct place){ .area = area };
}

void place_free(struct place *p)
{
	for (size_t i = 0; i < p->nlabels; i++) {
		free(p->labels[i].text);
		free(p->labels[i].spots);
	}
	free(p->labels);
	free(p->boxes);
	free(p->segs);
	*p = (struct place){ 0 };
}

/* Room for item N of SIZE bytes in V: the array doubles when N reaches a power of two. */
static void *grow(void *v, size_t n, size_t size)
{
	if (n && (n & (n - 1)))
		return v;
	v = realloc(v, (n ? 2 * n : 1) * size);
	if (!v)
		abort();
	return v;
}

void place_block(struct place *p, struct place_box b)
{
	p->boxes = grow(p->boxes, p->nboxes, sizeof(*p->boxes));
	p->boxes[p->nboxes++] = b;
}

void place_segment(struct place *p, double x0, double y0, double x1, double y1)
{
	if (!isfinite(x0) || !isfinite(y0) || !isfinite(x1) || !isfinite(y1))
		return;
	p->segs = grow(p->segs, p->nsegs, 4 * sizeof(*p->segs));
	p->segs[p->nsegs * 4] = x0;
	p->segs[p->nsegs * 4 + 1] = y0;
	p->segs[p->nsegs * 4 + 2] = x1;
	p->segs[p->nsegs * 4 + 3] = y1;
	p->nsegs++;
}

void place_line_start(struct place *p)
{
	p->have_prev = false;
}

void place_point(struct place *p, double x, double y)
{
	if (p->have_prev)
		place_segment(p, p->prev_x, p->prev_y, x, y);
	p->prev_x = x, p->prev_y = y;
	p->have_prev = true;
}

static bool overlap(struct place_box a, struct place_box b)
{
	return fmin(a.x1, b.x1) - fmax(a.x0, b.x0) > -GAP && fmin(a.y1, b.y1) - fmax(a.y0, b.y0) > -GAP;
}

/* Does the segment cross the box grown by GAP? Liang-Barsky: clip the segment's parameter range
 * against each of the four sides. */
static bool crosses(const double *s, struct place_box b)
{
	double t0 = 0, t1 = 1, dx = s[2] - s[0], dy = s[3] - s[1];
	const double pq[4][2] = {
		{ -dx, s[0] - (b.x0 - GAP) }, { dx, b.x1 + GAP - s[0] }, { -dy, s[1] - (b.y0 - GAP) }, { dy, b.y1 + GAP - s[1] },
	};

	for (unsigned k = 0; k < 4; k++) {
		double t;

		if (pq[k][0] == 0) {
			if (pq[k][1] < 0)
				return false;
			continue;
		}
		t = pq[k][1] / pq[k][0];
		if (pq[k][0] < 0)
			t0 = fmax(t0, t);
		else
			t1 = fmin(t1, t);
		if (t0 > t1)
			return false;
	}
	return true;
}

bool place_fits(const struct place *p, struct place_box b, bool in_area)
{
	if (in_area && (b.x0 < p->area.x0 || b.x1 > p->area.x1 || b.y0 < p->area.y0 || b.y1 > p->area.y1))
		return false;
	for (size_t i = 0; i < p->nboxes; i++)
		if (overlap(b, p->boxes[i]))
			return false;
	for (size_t i = 0; i < p->nsegs; i++)
		if (crosses(&p->segs[i * 4], b))
			return false;
	return true;
}

void place_ask(struct place *p, const char *text, double size, bool must, const char *color,
	       const struct place_spot *spots, size_t n)
{
	struct place_label *l;

	p->labels = grow(p->labels, p->nlabels, sizeof(*p->labels));
	l = &p->labels[p->nlabels++];
	*l = (struct place_label){ .text = xstrdup(text ?: ""), .size = size, .must = must, .color = color, .nspots = n };
	l->spots = xcalloc(n ? n : 1, sizeof(*spots));
	memcpy(l->spots, spots, n * sizeof(*spots));
}

void place_all(struct place *p)
{
	for (size_t i = 0; i < p->nlabels; i++) {
		struct place_label *l = &p->labels[i];

		for (size_t k = 0; k < l->nspots && !l->placed; k++) {
			struct place_box b = place_text_box(l->text, l->size, false, l->spots[k]);

			if (place_fits(p, b, true)) {
				l->placed = true;
				l->at = l->spots[k];
				place_block(p, b);
			}
		}
	}
}

static size_t spot(struct place_spot *spots, size_t n, double x, double y, enum place_anchor a)
{
	if (n < PLACE_MAX_SPOTS)
		spots[n++] = (struct place_spot){ x, y, a };
	return n;
}

size_t place_spots_point(double x, double y, double r, double size, struct place_spot *spots)
{
	size_t n = 0;

	/* next to it, then a row farther: a value farther off would seem another point's */
	for (unsigned far = 0; far < 2; far++) {
		double d = far * 1.3 * size;

		n = spot(spots, n, x + r + 3 + d, y + 0.35 * size, PLACE_START);
		n = spot(spots, n, x + r + 2, y - r - 2 - d, PLACE_START);
		n = spot(spots, n, x + r + 2, y + r + size + d, PLACE_START);
		n = spot(spots, n, x - r - 3 - d, y + 0.35 * size, PLACE_END);
		n = spot(spots, n, x - r - 2, y - r - 2 - d, PLACE_END);
		n = spot(spots, n, x - r - 2, y + r + size + d, PLACE_END);
		n = spot(spots, n, x, y - r - 3 - d, PLACE_MIDDLE);
		n = spot(spots, n, x, y + r + size + 1 + d, PLACE_MIDDLE);
	}
	return n;
}

size_t place_spots_hline(double x0, double x1, double y, double size, double xmin, double xmax, struct place_spot *spots)
{
	size_t n = 0;

	for (unsigned row = 0; row < 3; row++) {
		double above = y - 4 - row * 1.3 * size, below = y + size + 1 + row * 1.3 * size;

		n = spot(spots, n, x0 + 3, above, PLACE_START);
		n = spot(spots, n, x1 - 3, above, PLACE_END);
		n = spot(spots, n, x0 + 3, below, PLACE_START);
		n = spot(spots, n, x1 - 3, below, PLACE_END);
		n = spot(spots, n, (x0 + x1) / 2, above, PLACE_MIDDLE);
		n = spot(spots, n, (x0 + x1) / 2, below, PLACE_MIDDLE);
	}
	/* at the line's height elsewhere in the plot, where a short line has data lines all round it */
	for (unsigned row = 0; row < 2; row++)
		for (unsigned k = 0; k <= 8; k++) {
			double x = xmin + 3 + (xmax - xmin - 6) * k / 8;
			enum place_anchor a = k == 8 ? PLACE_END : k ? PLACE_MIDDLE : PLACE_START;

			n = spot(spots, n, x, y - 4 - row * 1.3 * size, a);
			n = spot(spots, n, x, y + size + 1 + row * 1.3 * size, a);
		}
	return n;
}

size_t place_spots_vline(double x, double top, double bottom, double size, struct place_spot *spots)
{
	size_t n = 0;

	for (double y = top + 1.1 * size; y <= bottom && n + 2 <= PLACE_MAX_SPOTS; y += 1.3 * size) {
		n = spot(spots, n, x + 3, y, PLACE_START);
		n = spot(spots, n, x - 3, y, PLACE_END);
	}
	return n;
}
