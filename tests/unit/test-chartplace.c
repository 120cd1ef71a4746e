/* SPDX-License-Identifier: MIT */
/* Where a chart's words go (src/chartplace.c): text widths from the font's, boxes by anchor, and
 * labels placed clear of one another, of marks and of data lines, inside the plot, or not at all. */
#include "tap.h"
#include "util.h"
#include "chartplace.h"

#include <math.h>

static void widths(void)
{
	struct place_box b;

	/* DejaVu Sans: a digit is 0.636 em, a space 0.318, an i 0.278; estimates are a little wide */
	CHECK(fabs(place_text_width("0", 1000, false) - 655.6) < 1);
	CHECK(place_text_width("iii", 12, false) < place_text_width("mmm", 12, false));
	CHECK(place_text_width("121.0 K", 11, true) > place_text_width("121.0 K", 11, false));
	/* a character beyond ASCII counts once, as wide as the widest, whatever its bytes */
	CHECK(fabs(place_text_width("\xc3\xa9", 10, false) - place_text_width("@", 10, false)) < 0.01);
	CHECK(place_text_width(NULL, 10, false) < 1);
	b = place_text_box("ab", 10, false, (struct place_spot){ 100, 50, PLACE_END });
	CHECK(fabs(b.x1 - 100) < 1e-9 && b.x0 < 100 && b.y0 < 50 - 9 && b.y1 > 50 + 2);
	b = place_text_box("ab", 10, false, (struct place_spot){ 100, 50, PLACE_MIDDLE });
	CHECK(fabs((b.x0 + b.x1) / 2 - 100) < 1e-9);
	b = place_text_box("ab", 10, false, (struct place_spot){ 100, 50, PLACE_START });
	CHECK(fabs(b.x0 - 100) < 1e-9);
}

static void fits(void)
{
	struct place p;

	place_init(&p, (struct place_box){ 0, 0, 200, 100 });
	/* inside the area, and nothing else there */
	CHECK(place_fits(&p, (struct place_box){ 10, 10, 50, 20 }, true));
	CHECK(!place_fits(&p, (struct place_box){ 180, 10, 220, 20 }, true));
	CHECK(place_fits(&p, (struct place_box){ 180, 10, 220, 20 }, false));
	/* a box placed: nothing may touch it */
	place_block(&p, (struct place_box){ 40, 40, 60, 60 });
	CHECK(!place_fits(&p, (struct place_box){ 55, 55, 70, 70 }, true));
	CHECK(!place_fits(&p, (struct place_box){ 60.5, 40, 70, 50 }, true)); /* within the gap */
	CHECK(place_fits(&p, (struct place_box){ 62, 40, 70, 50 }, true));
	/* a line: a box it passes through does not fit, one beside it does; a line through a corner */
	place_line_start(&p);
	place_point(&p, 0, 90);
	place_point(&p, 100, 90);
	place_point(&p, 200, 0);
	CHECK(p.nsegs == 2);
	CHECK(!place_fits(&p, (struct place_box){ 20, 85, 30, 95 }, true));
	CHECK(place_fits(&p, (struct place_box){ 20, 70, 30, 80 }, true));
	CHECK(!place_fits(&p, (struct place_box){ 140, 40, 160, 60 }, true));
	CHECK(place_fits(&p, (struct place_box){ 100, 10, 120, 20 }, true));
	/* a new line does not join the last one */
	place_line_start(&p);
	place_point(&p, 5, 5);
	CHECK(p.nsegs == 2);
	/* a segment of infinities (a value off the scale) is no line */
	place_segment(&p, 0, INFINITY, 1, 1);
	CHECK(p.nsegs == 2);
	place_free(&p);
}

static void labels(void)
{
	struct place p;
	struct place_spot s[PLACE_MAX_SPOTS];
	size_t n;

	place_init(&p, (struct place_box){ 0, 0, 300, 200 });
	/* two labels of one point: the second goes where the first is not */
	n = place_spots_point(100, 100, 3, 11, s);
	CHECK(n > 8 && n <= PLACE_MAX_SPOTS);
	place_ask(&p, "121.0 K", 11, false, "#000", s, n);
	place_ask(&p, "120.9 K", 11, false, "#000", s, n);
	/* a label too wide for the area anywhere: not placed */
	place_ask(&p, "a label far wider than the whole plot it is asked to stand in, so it finds no room", 11, true,
		  "#000", s, n);
	place_all(&p);
	CHECK(p.labels[0].placed && p.labels[1].placed && !p.labels[2].placed);
	CHECK(p.labels[0].at.x != p.labels[1].at.x || p.labels[0].at.y != p.labels[1].at.y);
	{
		struct place_box a = place_text_box(p.labels[0].text, 11, false, p.labels[0].at);
		struct place_box b = place_text_box(p.labels[1].text, 11, false, p.labels[1].at);

		CHECK(fmin(a.x1, b.x1) <= fmax(a.x0, b.x0) || fmin(a.y1, b.y1) <= fmax(a.y0, b.y0));
	}
	place_free(&p);

	/* a gate's words beside a vertical line at the right edge: left of it, not cut off */
	place_init(&p, (struct place_box){ 64, 16, 620, 294 });
	n = place_spots_vline(615, 16, 294, 11, s);
	place_ask(&p, "gate rand64-p99.9 <= 2000 us (pass)", 11, true, "#b00", s, n);
	place_all(&p);
	CHECK(p.labels[0].placed && p.labels[0].at.anchor == PLACE_END && p.labels[0].at.x < 615);
	place_free(&p);

	/* along a horizontal line crossed by a data line above it: below the line */
	place_init(&p, (struct place_box){ 0, 0, 400, 200 });
	place_line_start(&p);
	place_point(&p, 0, 95);
	place_point(&p, 400, 95);
	n = place_spots_hline(0, 400, 100, 11, 0, 400, s);
	place_ask(&p, "gate", 11, true, "#000", s, n);
	place_all(&p);
	CHECK(p.labels[0].placed && p.labels[0].at.y > 100);
	place_free(&p);
}

int main(void)
{
	widths();
	fits();
	labels();
	return tap_done();
}
