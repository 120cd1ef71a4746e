/* SPDX-License-Identifier: MIT */
/* The charts of report.html: inline SVG with axes, units, ticks and legends, drawn from the accept
 * records' runs, histograms, per-second IOPS, sweep and a reference node's runs. Words inside a
 * plot are placed (src/chartplace.h) where they cover no other word, mark, bar or data line and
 * stay inside it; one that finds no room is named in the caption instead. */
#include "util.h"
#include "chartplace.h"
#include "report.h"
#include "report_fmt.h"
#include "report_svg.h"
#include "schema.h"
#include "size.h"

#include <inttypes.h>
#include <math.h>

static const char *const chart_colors[] = { "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b" };
#define REF_COLOR "#555"
/* the svg's font size, and its labels' */
#define FONT 12
#define LABEL_FONT 11

/* ---- charts: inline SVG with axes, units, ticks; every series says how many points it has ---- */

enum unit { U_US, U_IOPS, U_BYTES, U_S, U_PCT, U_PCTL };

struct axis {
	double lo, hi;
	bool log;
	enum unit unit;
	const char *title; /* NULL: no such axis (y2) */
};

struct chart {
	double W, H, L, R, T, B;
	struct axis x, y, y2;
	struct place *pl; /* what the chart's labels must not cover, and the labels asked (chart_open) */
};

static double nice_step(double x)
{
	double p, f;

	if (!(x > 0))
		return 1;
	p = pow(10, floor(log10(x)));
	f = x / p;
	return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * p;
}

/* Whole decades on a log axis; 0 to a round number on a linear one. */
static void ax_fit(struct axis *a, double lo, double hi)
{
	if (a->log && a->unit == U_BYTES) {
		/* sizes in powers of two: 16 MiB, 64 MiB, 256 MiB read better than 10^k bytes */
		if (!(hi > 0))
			hi = 1;
		if (!(lo > 0) || lo > hi)
			lo = hi / 4;
		a->lo = exp2(floor(log2(lo)));
		a->hi = exp2(ceil(log2(hi)));
		if (a->hi < a->lo * 4)
			a->lo /= 2, a->hi *= 2;
		return;
	}
	if (a->log) {
		if (!(hi > 0))
			hi = 1;
		if (!(lo > 0) || lo > hi)
			lo = hi / 10;
		a->lo = pow(10, floor(log10(lo)));
		a->hi = pow(10, ceil(log10(hi)));
		if (a->hi <= a->lo)
			a->hi = a->lo * 10;
		return;
	}
	if (!(hi > 0))
		hi = 1;
	a->lo = 0;
	a->hi = ceil(hi * 1.05 / nice_step(hi / 5)) * nice_step(hi / 5);
}

static double ax_frac(const struct axis *a, double v)
{
	if (a->log)
		return (log10(v) - log10(a->lo)) / (log10(a->hi) - log10(a->lo));
	return (v - a->lo) / (a->hi - a->lo);
}

static double X(const struct chart *c, double v)
{
	return c->L + ax_frac(&c->x, v) * (c->W - c->L - c->R);
}

static double Ya(const struct chart *c, const struct axis *a, double v)
{
	return c->H - c->B - ax_frac(a, v) * (c->H - c->T - c->B);
}

static double Y(const struct chart *c, double v)
{
	return Ya(c, &c->y, v);
}

static size_t ax_ticks(const struct axis *a, double t[], size_t max)
{
	size_t n = 0;

	if (a->unit == U_PCTL) {
		for (double v = 2; v <= a->hi * 1.0001 && n < max; v = v == 2 ? 10 : v * 10)
			t[n++] = v;
		return n;
	}
	if (a->log && a->unit == U_BYTES) {
		double octaves = round(log2(a->hi) - log2(a->lo)), step = ceil(octaves / 8);

		for (double k = 0; k <= octaves + 1e-9 && n < max; k += step)
			t[n++] = a->lo * exp2(k);
		return n;
	}
	if (a->log) {
		double decades = log10(a->hi) - log10(a->lo);

		for (double d = log10(a->lo); d <= log10(a->hi) + 1e-9; d++)
			for (int m = 1; m <= 5 && n < max; m += m == 1 ? 1 : 3) {
				double v = pow(10, d) * m;
				if (v > a->hi * 1.0001 || (m != 1 && decades > 2))
					continue;
				t[n++] = v;
			}
		return n;
	}
	{
		double step = nice_step((a->hi - a->lo) / 5);
		for (double v = a->lo; v <= a->hi + step * 1e-6 && n < max; v += step)
			t[n++] = v;
	}
	return n;
}

static void ax_label(enum unit u, double v, char buf[32])
{
	switch (u) {
	case U_US:
		if (v >= 1e6)
			snprintf(buf, 32, "%g s", v / 1e6);
		else if (v >= 1000)
			snprintf(buf, 32, "%g ms", v / 1000);
		else
			snprintf(buf, 32, "%g us", v);
		break;
	case U_IOPS:
		if (v >= 1000)
			snprintf(buf, 32, "%g K", v / 1000);
		else
			snprintf(buf, 32, "%g", v);
		break;
	case U_BYTES: fmt_binary((uint64_t)v, buf); break;
	case U_S: snprintf(buf, 32, "%g s", v); break;
	case U_PCT: snprintf(buf, 32, "%g %%", v); break;
	case U_PCTL:
		snprintf(buf, 32, "%s", v < 5 ? "p50" : v < 50 ? "p90" : v < 500 ? "p99" : v < 5000 ? "p99.9" : v < 50000 ? "p99.99" : "max");
		break;
	}
}

/* The margins the tick values need: the left axis' values end 8 units left of the plot, clear of
 * its title, which runs up the side at x = 14 (its glyphs span x 2.5 to 17); the right axis' values
 * start 8 units right of the plot, clear of its title at W - 12 (glyphs from W - 15). */
static void chart_margins(struct chart *c)
{
	const struct axis *axes[2] = { &c->y, &c->y2 };

	for (unsigned k = 0; k < 2; k++) {
		double t[64], w = 0;
		size_t n = axes[k]->title ? ax_ticks(axes[k], t, ARRAY_SIZE(t)) : 0;
		char b[32];

		for (size_t i = 0; i < n; i++) {
			ax_label(axes[k]->unit, t[i], b);
			w = fmax(w, place_text_width(b, FONT, false));
		}
		if (k == 0)
			c->L = fmax(c->L, ceil(w + 28));
		else if (n)
			c->R = fmax(c->R, ceil(w + 26));
	}
}

/* The figure, the svg element and the plot's frame; the chart's labels are to stay inside the
 * frame (AREA_ALL: anywhere in the svg). */
enum area { AREA_PLOT, AREA_ALL };

static void svg_frame(FILE *f, struct chart *c, const char *name, const char *label, enum area area)
{
	struct place_box plot = { c->L, c->T, c->W - c->R, c->H - c->B };

	c->pl = xcalloc(1, sizeof(*c->pl));
	place_init(c->pl, area == AREA_PLOT ? plot : (struct place_box){ 0, 0, c->W, c->H });
	fputs("<figure>\n<svg class=\"chart\" data-chart=\"", f);
	html_esc(f, name);
	fprintf(f, "\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %.0f %.0f\" role=\"img\" aria-label=\"", c->W, c->H);
	html_esc(f, label);
	fprintf(f, "\" font-family=\"system-ui,sans-serif\" font-size=\"%d\">\n<rect class=\"plot\" x=\"%.0f\" y=\"%.0f\" "
		   "width=\"%.0f\" height=\"%.0f\" fill=\"#fff\" stroke=\"#888\"/>\n", FONT, c->L, c->T, c->W - c->L - c->R,
		c->H - c->T - c->B);
}

/* x: a grid line, a tick mark below the plot and the value under it, for each tick; a value that
 * would touch the one before is left out (its tick stays), one at an end is moved inside the svg */
static void x_ticks(FILE *f, const struct chart *c)
{
	double t[64], last = -INFINITY;
	size_t n = ax_ticks(&c->x, t, ARRAY_SIZE(t));
	char b[32];

	for (size_t i = 0; i < n; i++) {
		double x = X(c, t[i]), w, xl;

		ax_label(c->x.unit, t[i], b);
		w = place_text_width(b, FONT, false);
		xl = fmin(fmax(x, w / 2 + 1), c->W - w / 2 - 1);
		fprintf(f, "<g class=\"xtick\"><line x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\" stroke=\"#e4e4e4\"/>"
			   "<line x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\" stroke=\"#888\"/>",
			x, c->T, x, c->H - c->B, x, c->H - c->B, x, c->H - c->B + 5);
		if (xl - w / 2 > last + 4) {
			fprintf(f, "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%s</text>", xl, c->H - c->B + 18, b);
			last = xl + w / 2;
		}
		fputs("</g>\n", f);
	}
}

/* y (left): a grid line, with marks a tick mark left of the plot, and the value, for each tick */
static void y_ticks(FILE *f, const struct chart *c, bool marks)
{
	double t[64];
	size_t n = ax_ticks(&c->y, t, ARRAY_SIZE(t));
	char b[32];

	for (size_t i = 0; i < n; i++) {
		double y = Y(c, t[i]);

		ax_label(c->y.unit, t[i], b);
		fprintf(f, "<g class=\"ytick\"><line x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" stroke=\"#e4e4e4\"/>", c->L, y,
			c->W - c->R, y);
		if (marks)
			fprintf(f, "<line x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" stroke=\"#888\"/>", c->L - 5, y, c->L, y);
		fprintf(f, "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">%s</text></g>\n", c->L - 8, y + 4, b);
	}
}

/* y2 (right): a tick mark right of the plot and the value, for each tick, then its title */
static void y2_ticks(FILE *f, const struct chart *c)
{
	double t[64];
	size_t n = ax_ticks(&c->y2, t, ARRAY_SIZE(t));
	char b[32];
	const double ph = c->H - c->T - c->B;

	for (size_t i = 0; i < n; i++) {
		ax_label(c->y2.unit, t[i], b);
		fprintf(f, "<g class=\"y2tick\"><line x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" stroke=\"#888\"/>"
			   "<text x=\"%.0f\" y=\"%.1f\">%s</text></g>\n",
			c->W - c->R, Ya(c, &c->y2, t[i]), c->W - c->R + 5, Ya(c, &c->y2, t[i]), c->W - c->R + 8,
			Ya(c, &c->y2, t[i]) + 4, b);
	}
	fprintf(f, "<text x=\"%.0f\" y=\"%.1f\" transform=\"rotate(90 %.0f %.1f)\" text-anchor=\"middle\">%s</text>\n",
		c->W - 12, c->T + ph / 2, c->W - 12, c->T + ph / 2, c->y2.title);
}

/* the left axis' title, turned to run up the side */
static void y_title(FILE *f, const struct chart *c)
{
	const double ph = c->H - c->T - c->B;

	fprintf(f, "<text x=\"14\" y=\"%.1f\" transform=\"rotate(-90 14 %.1f)\" text-anchor=\"middle\">%s</text>\n",
		c->T + ph / 2, c->T + ph / 2, c->y.title);
}

/* A chart's frame, grid, ticks and axis titles; its series follow. */
static void chart_open(FILE *f, struct chart *c, const char *name, const char *label)
{
	chart_margins(c);
	svg_frame(f, c, name, label, AREA_PLOT);
	x_ticks(f, c);
	y_ticks(f, c, true);
	if (c->y2.title)
		y2_ticks(f, c);
	fprintf(f, "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%s</text>\n", c->L + (c->W - c->L - c->R) / 2, c->H - 8,
		c->x.title);
	y_title(f, c);
}

/* A point of the series being drawn; a data line no label may cross. */
static void pt(FILE *f, const struct chart *c, double x, double y)
{
	fprintf(f, "%.1f,%.1f ", x, y);
	place_point(c->pl, x, y);
}

/* A mark (a dot, a square, a bar) no label may cover. */
static void mark(const struct chart *c, double x0, double y0, double x1, double y1)
{
	place_block(c->pl, (struct place_box){ fmin(x0, x1), fmin(y0, y1), fmax(x0, x1), fmax(y0, y1) });
}

/* A series: one polyline; data-points says how many points it has (tests count them). */
static void series_open(FILE *f, const struct chart *c, const char *name, const char *color, bool dashed, size_t npoints)
{
	place_line_start(c->pl);
	fputs("<polyline class=\"series\" data-series=\"", f);
	html_esc(f, name);
	fprintf(f, "\" data-points=\"%zu\" fill=\"none\" stroke=\"%s\" stroke-width=\"%s\"%s points=\"", npoints, color,
		dashed ? "1.5" : "2", dashed ? " stroke-dasharray=\"6,4\"" : "");
}

static void series_close(FILE *f)
{
	fputs("\"/>\n", f);
}

/* the points of a series, from a run's or a sweep's data */
typedef void points_fn(FILE *f, const struct chart *c, json_object *data);

/* A whole series: the polyline of N points that POINTS draws from DATA. */
static void series(FILE *f, const struct chart *c, const char *name, const char *color, bool dashed, size_t n,
		   points_fn *points, json_object *data)
{
	series_open(f, c, name, color, dashed, n);
	points(f, c, data);
	series_close(f);
}

/* A gate as a line: horizontal (y value) from FROM to TO, or vertical (x value), dashed; its words
 * are placed beside it when the chart closes. */
static void gate_line(FILE *f, const struct chart *c, bool vertical, double v, double from, double to, const char *color,
		      const char *label)
{
	struct place_spot spots[PLACE_MAX_SPOTS];
	double x1, y1, x2, y2;
	size_t n;

	if (vertical) {
		x1 = x2 = X(c, v);
		y1 = c->T, y2 = c->H - c->B;
		n = place_spots_vline(x1, c->T, c->H - c->B, LABEL_FONT, spots);
	} else {
		y1 = y2 = Y(c, v);
		x1 = from, x2 = to;
		n = place_spots_hline(x1, x2, y1, LABEL_FONT, c->L, c->W - c->R, spots);
	}
	fprintf(f, "<g class=\"gate\"><line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"1.5\" "
		   "stroke-dasharray=\"2,3\"/></g>\n", x1, y1, x2, y2, color);
	place_segment(c->pl, x1, y1, x2, y2);
	place_ask(c->pl, label, LABEL_FONT, true, color, spots, n);
}

/* s escaped for HTML as a new string, for captions built with a format before they are written. */
static char *html_esc_dup(const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	if (!m)
		abort(); /* as xasprintf: out of memory */
	html_esc(m, s);
	fclose(m);
	return buf;
}

/* The labels asked for, each where it fits (class "label"); what found no room is said in words
 * after the caption: the gates by name, the values beside points as a count. */
static void labels_flush(FILE *f, const struct chart *c, FILE *words)
{
	size_t dropped = 0, unnamed = 0;

	place_all(c->pl);
	for (size_t i = 0; i < c->pl->nlabels; i++) {
		const struct place_label *l = &c->pl->labels[i];

		if (!l->placed) {
			if (l->must) {
				fputs(dropped++ ? ", " : "; for want of room not written in the chart: ", words);
				html_esc(words, l->text);
			} else
				unnamed++;
			continue;
		}
		fprintf(f, "<text class=\"label\" x=\"%.1f\" y=\"%.1f\" font-size=\"%.0f\" fill=\"%s\"%s>", l->at.x, l->at.y, l->size,
			l->color, l->at.anchor == PLACE_END ? " text-anchor=\"end\"" : l->at.anchor == PLACE_MIDDLE ? " text-anchor=\"middle\"" : "");
		html_esc(f, l->text);
		fputs("</text>\n", f);
	}
	if (unnamed)
		fprintf(words, "; %zu of the values beside the points left out for want of room (the table has them all)", unnamed);
}

/* The chart's labels, the end of the svg, and the caption: CAPTION_HTML, then what the labels
 * could not say. */
static void chart_close(FILE *f, struct chart *c, const char *caption_html)
{
	char *rest = NULL;
	size_t len = 0;
	FILE *words = open_memstream(&rest, &len);

	if (!words)
		abort();
	labels_flush(f, c, words);
	fclose(words);
	fprintf(f, "</svg>\n<figcaption>%s%s</figcaption>\n</figure>\n", caption_html ?: "", rest ?: "");
	free(rest);
	place_free(c->pl);
	free(c->pl);
	c->pl = NULL;
}

/* A legend entry: the colour and the line style, and the name in words. */
static void key(FILE *f, const char *color, bool dashed, const char *name)
{
	fprintf(f, "<span class=\"key\"><svg width=\"22\" height=\"10\" aria-hidden=\"true\"><line x1=\"0\" y1=\"5\" x2=\"22\" "
		   "y2=\"5\" stroke=\"%s\" stroke-width=\"2\"%s/></svg> ", color, dashed ? " stroke-dasharray=\"6,4\"" : "");
	html_esc(f, name);
	fputs("</span> ", f);
}

/* A chart's legend, gathered while its series are drawn, for the caption under it. */
struct legend {
	char *buf;
	size_t len;
	FILE *f;
};

static void legend_open(struct legend *l)
{
	*l = (struct legend){ 0 };
	l->f = open_memstream(&l->buf, &l->len);
	if (!l->f)
		abort();
}

/* The chart closed with the legend, then REST, as its caption. */
static void chart_close_legend(FILE *f, struct chart *c, struct legend *l, const char *rest)
{
	_cleanup_free_ char *cap = NULL;

	fclose(l->f);
	cap = xasprintf("%s%s", l->buf ?: "", rest);
	free(l->buf);
	chart_close(f, c, cap);
}

/* A reference node's series, dashed in the run's colour, and its legend entry. */
static void ref_series(FILE *f, const struct chart *c, struct legend *l, const char *name, const char *color, size_t n,
		       points_fn *points, json_object *data)
{
	_cleanup_free_ char *sn = xasprintf("reference %s", name);

	series(f, c, sn, color, true, n, points, data);
	key(l->f, color, true, sn);
}

static bool gate_is(json_object *g, const char *run, const char *unit)
{
	const char *gr = jget_str(g, "run");

	return (gr ? streq(gr, run) : report_gate_of_run(schema_gate_name(g), run)) && streq(jget_str(g, "unit"), unit) &&
	       json_object_is_type(jget(g, "threshold"), json_type_int) + json_object_is_type(jget(g, "threshold"), json_type_double);
}

static char *gate_words(json_object *g)
{
	_cleanup_free_ char *th = report_gate_threshold(g);
	return xasprintf("gate %s %s (%s)", schema_gate_name(g) ?: "?", th, schema_gate_status(g) ?: "?");
}

/* Each of RUN's gates in UNIT as a line: vertical at its x value, or across FROM..TO at its y value. */
static void gate_lines(FILE *f, const struct chart *c, json_object *gates, const char *run, const char *unit, bool vertical,
		       double from, double to, const char *color)
{
	for (size_t i = 0; i < jlen(gates); i++) {
		json_object *g = jarray_at(gates, i);
		if (gate_is(g, run, unit)) {
			_cleanup_free_ char *w = gate_words(g);
			gate_line(f, c, vertical, jget_double(g, "threshold"), from, to, color, w);
		}
	}
}

/* The x position of a percentile key on the 1/(1-p) axis. */
static const struct { const char *key; double x; } pctl_pts[] = {
	{ "p50", 2 }, { "p90", 10 }, { "p99", 100 }, { "p99_9", 1000 }, { "p99_99", 10000 }, { "max", 100000 },
};

static size_t pctl_count(json_object *lat)
{
	size_t n = 0;

	for (size_t k = 0; k < ARRAY_SIZE(pctl_pts); k++)
		n += jget_double(lat, pctl_pts[k].key) > 0;
	return n;
}

/* reads per 1 % latency band, as % of the run: the log-linear buckets are 0.2-0.4 % wide, so the
 * count is divided by the bucket's width on the log axis (else every octave shows a sawtooth) */
static double bin_density(json_object *bin, uint64_t total)
{
	double lo = (double)json_object_get_uint64(jarray_at(bin, 0));
	double hi = (double)json_object_get_uint64(jarray_at(bin, 1)) + 1;
	double n = (double)json_object_get_uint64(jarray_at(bin, 2));

	if (!(lo > 0) || !total)
		return 0;
	return 100.0 * n / (double)total / (log(hi / lo) / log(1.01));
}

static uint64_t bins_total(json_object *h)
{
	json_object *bins = jget(h, "bins");
	uint64_t t = 0;

	for (size_t i = 0; i < jlen(bins); i++)
		t += json_object_get_uint64(jarray_at(jarray_at(bins, i), 2));
	return t;
}

static void hist_points(FILE *f, const struct chart *c, json_object *h)
{
	json_object *bins = jget(h, "bins");
	uint64_t total = bins_total(h);

	for (size_t i = 0; i < jlen(bins); i++) {
		json_object *b = jarray_at(bins, i);
		double lo = (double)json_object_get_uint64(jarray_at(b, 0));
		double hi = (double)json_object_get_uint64(jarray_at(b, 1)) + 1;
		double x = sqrt(fmax(lo, 1) * hi) / 1000, y = fmin(bin_density(b, total), c->y.hi);

		pt(f, c, X(c, fmax(x, c->x.lo)), Y(c, y));
	}
}

/* A histogram with fewer than 4 reads a bucket on average is sparse: its buckets, 0.4 % wide, hold
 * a read or two each, and a line through them zigzags like noise (a short sequential run: 64 reads
 * in 50 buckets). Such a one is drawn as bars: its reads gathered into bands of equal width on the
 * log axis, 1/40 of a decade, or wider (up to 1/5) until a band holds 4 reads on average. */
struct band {
	long k; /* the band [10^(k w), 10^((k+1) w)) us */
	uint64_t n;
};

/* The band of a bucket [LO, HI] ns: its middle's, in us, on the log axis. A bucket's bounds are
 * at most 2^64 ns and at least 1 here, so the band lies within 10^-3.5 .. 10^13.3 us: at most
 * 16.8 / W bands, counted in an array, whatever order a hostile record gives its buckets in. */
static long band_of(double lo, double hi, double w)
{
	return lround(floor(log10(sqrt(fmax(lo, 1) * fmax(hi, 1)) / 1000) / w));
}

/* H's reads in bands W decades wide, the empty ones left out, lowest first; their number. */
static size_t hist_bands(json_object *h, double w, struct band **out)
{
	json_object *bins = jget(h, "bins");
	long kmin = band_of(1, 1, w), kmax = band_of(18446744073709551615.0, 18446744073709551615.0, w);
	_cleanup_free_ uint64_t *count = xcalloc((size_t)(kmax - kmin + 1), sizeof(*count));
	struct band *b;
	size_t n = 0;

	for (size_t i = 0; i < jlen(bins); i++) {
		json_object *bin = jarray_at(bins, i);
		long k = band_of((double)json_object_get_uint64(jarray_at(bin, 0)),
				 (double)json_object_get_uint64(jarray_at(bin, 1)) + 1, w);

		count[k - kmin] += json_object_get_uint64(jarray_at(bin, 2));
	}
	b = xcalloc((size_t)(kmax - kmin + 1), sizeof(*b));
	for (long k = kmin; k <= kmax; k++)
		if (count[k - kmin])
			b[n++] = (struct band){ k, count[k - kmin] };
	*out = b;
	return n;
}

/* The bands' width in decades for a sparse histogram; 0 for a dense one, drawn as a line. */
static double hist_band_width(json_object *h)
{
	uint64_t total = bins_total(h);
	double w = 0.025;

	if (!jlen(jget(h, "bins")) || total >= 4 * (uint64_t)jlen(jget(h, "bins")))
		return 0;
	for (;; w *= 2) {
		_cleanup_free_ struct band *b = NULL;
		size_t n = hist_bands(h, w, &b);

		if (w >= 0.2 || total >= 4 * (uint64_t)n)
			return w;
	}
}

/* reads per 1 % latency band, as % of the run, of a band W decades wide holding N of TOTAL reads */
static double band_density(uint64_t n, uint64_t total, double w)
{
	return total ? 100.0 * (double)n / (double)total / (w * log(10) / log(1.01)) : 0;
}

/* H as bars W decades wide (a group that names the series, its buckets and reads; a bar a band,
 * with its reads): filled, or outlined and dashed for the reference node. */
static void hist_bars(FILE *f, const struct chart *c, const char *name, json_object *h, double w, bool ref)
{
	_cleanup_free_ struct band *b = NULL;
	size_t n = hist_bands(h, w, &b);
	uint64_t total = bins_total(h);

	fputs("<g class=\"hist-bars\" data-series=\"", f);
	html_esc(f, name);
	fprintf(f, "\" data-buckets=\"%zu\" data-reads=\"%" PRIu64 "\" data-band-decades=\"%g\">\n", jlen(jget(h, "bins")), total, w);
	for (size_t i = 0; i < n; i++) {
		double x0 = X(c, fmax(pow(10, (double)b[i].k * w), c->x.lo)), x1 = X(c, fmin(pow(10, (double)(b[i].k + 1) * w), c->x.hi));
		double y = Y(c, fmin(band_density(b[i].n, total, w), c->y.hi));

		fprintf(f, "<rect class=\"hbar\" data-reads=\"%" PRIu64 "\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" ",
			b[i].n, x0, y, fmax(x1 - x0, 0.5), Y(c, 0) - y);
		if (ref)
			fputs("fill=\"none\" stroke=\"" REF_COLOR "\" stroke-dasharray=\"3,2\"/>\n", f);
		else
			fprintf(f, "fill=\"%s\" fill-opacity=\"0.8\"/>\n", chart_colors[0]);
		mark(c, x0, y, x1, Y(c, 0));
	}
	fputs("</g>\n", f);
}

/* The latency range and the highest density of H (as bars W decades wide when W) into the limits. */
static void hist_extent(json_object *h, double w, double *xlo, double *xhi, double *ymax)
{
	json_object *bins = jget(h, "bins");
	uint64_t total = bins_total(h);

	if (w > 0) {
		_cleanup_free_ struct band *b = NULL;
		size_t n = hist_bands(h, w, &b);

		for (size_t i = 0; i < n; i++) {
			*xlo = fmin(*xlo, pow(10, (double)b[i].k * w));
			*xhi = fmax(*xhi, pow(10, (double)(b[i].k + 1) * w));
			*ymax = fmax(*ymax, band_density(b[i].n, total, w));
		}
		return;
	}
	for (size_t i = 0; i < jlen(bins); i++) {
		json_object *b = jarray_at(bins, i);
		*xlo = fmin(*xlo, (double)json_object_get_uint64(jarray_at(b, 0)) / 1000);
		*xhi = fmax(*xhi, (double)json_object_get_uint64(jarray_at(b, 1)) / 1000);
		*ymax = fmax(*ymax, bin_density(b, total));
	}
}

/* Each run's latency distribution from its histogram (a line, or bars when sparse), the run's
 * latency gates as vertical lines. */
void report_chart_hist(FILE *f, json_object *run, json_object *gates, json_object *ref_run)
{
	json_object *h = jget(run, "lat_hist"), *rh = jget(ref_run, "lat_hist");
	struct chart c = { .W = 640, .H = 340, .L = 64, .R = 20, .T = 16, .B = 46,
			   .x = { .log = true, .unit = U_US, .title = "read latency (log scale)" },
			   .y = { .unit = U_PCT, .title = "reads per 1 % latency band" } };
	double xlo = INFINITY, xhi = 0, ymax = 0, w = hist_band_width(h);
	const char *name = jget_str(run, "name") ?: "?";
	_cleanup_free_ char *cname = xasprintf("hist-%s", name), *label = xasprintf("latency distribution of run %s", name);
	_cleanup_free_ char *cap = NULL, *ename = html_esc_dup(name); /* a run's name comes from a record: outside bytes */
	_cleanup_free_ char *bars = NULL;
	bool with_ref = rh && jlen(jget(rh, "bins"));
	char a[32], b[32];

	if (!jlen(jget(h, "bins")))
		return;
	hist_extent(h, w, &xlo, &xhi, &ymax);
	if (with_ref)
		hist_extent(rh, w, &xlo, &xhi, &ymax);
	for (size_t i = 0; i < jlen(gates); i++)
		if (gate_is(jarray_at(gates, i), name, "us")) {
			double v = jget_double(jarray_at(gates, i), "threshold");
			xlo = fmin(xlo, v), xhi = fmax(xhi, v);
		}
	ax_fit(&c.x, xlo, xhi);
	ax_fit(&c.y, 0, ymax);
	chart_open(f, &c, cname, label);
	gate_lines(f, &c, gates, name, "us", true, 0, 0, "#b00");
	if (w > 0) {
		hist_bars(f, &c, name, h, w, false);
		if (with_ref)
			hist_bars(f, &c, "reference", rh, w, true);
		bars = xasprintf(", drawn as bars each %.0f %% of latency wide (too few reads a bucket for a curve)",
				 (pow(10, w) - 1) * 100);
	} else {
		if (with_ref)
			series(f, &c, "reference", REF_COLOR, true, jlen(jget(rh, "bins")), hist_points, rh);
		series(f, &c, name, chart_colors[0], false, jlen(jget(h, "bins")), hist_points, h);
	}
	fmt_us(jget_double(jget(run, "lat_us"), "p50"), a);
	fmt_us(jget_double(jget(run, "lat_us"), "p99_9"), b);
	cap = xasprintf("<b>%s</b>: %" PRIu64 " reads in %zu histogram buckets%s; p50 %s, p99.9 %s; dotted: the gates%s", ename,
			bins_total(h), jlen(jget(h, "bins")), bars ?: "", a, b, with_ref ? "; dashed grey: the reference node" : "");
	chart_close(f, &c, cap);
}

static void pctl_points(FILE *f, const struct chart *c, json_object *lat)
{
	for (size_t k = 0; k < ARRAY_SIZE(pctl_pts); k++) {
		double v = jget_double(lat, pctl_pts[k].key);
		if (v > 0)
			pt(f, c, X(c, pctl_pts[k].x), Y(c, v));
	}
}

/* What a chart draws of each run: its data, the gates, the reference node's series and its own. */
struct run_series {
	const char *key; /* the run's data: "lat_us", "per_second_iops" */
	size_t (*count)(json_object *data);
	points_fn *points;
	void (*gates)(FILE *f, const struct chart *c, json_object *gates, const char *run, const char *color);
	void (*marks)(FILE *f, const struct chart *c, json_object *data, const char *color); /* or NULL */
};

/* Every run with data, in its colour: its gates, the reference's run of that name dashed, its own
 * series, its marks; each series in the legend. */
static void runs_series(FILE *f, const struct chart *c, struct legend *l, json_object *runs, json_object *gates,
			json_object *ref_runs, const struct run_series *rs)
{
	for (size_t i = 0; i < jlen(runs); i++) {
		json_object *r = jarray_at(runs, i), *data = jget(r, rs->key);
		const char *name = jget_str(r, "name") ?: "?", *col = chart_colors[i % ARRAY_SIZE(chart_colors)];
		json_object *rr = find_run(ref_runs, name);

		if (!rs->count(data))
			continue;
		rs->gates(f, c, gates, name, col);
		if (rr && rs->count(jget(rr, rs->key)))
			ref_series(f, c, l, name, col, rs->count(jget(rr, rs->key)), rs->points, jget(rr, rs->key));
		series(f, c, name, col, false, rs->count(data), rs->points, data);
		if (rs->marks)
			rs->marks(f, c, data, col);
		key(l->f, col, false, name);
	}
}

/* a run's latency gates as short lines at their percentile */
static void pctl_gates(FILE *f, const struct chart *c, json_object *gates, const char *run, const char *color)
{
	for (size_t j = 0; j < jlen(gates); j++) {
		json_object *g = jarray_at(gates, j);
		const char *gn = schema_gate_name(g) ?: "";
		double px = strstr(gn, "p99.9") || strstr(gn, "p99_9") ? 1000 : strstr(gn, "p99") ? 100 :
			    strstr(gn, "p90") ? 10 : 2;
		_cleanup_free_ char *w = NULL;

		if (!gate_is(g, run, "us"))
			continue;
		w = gate_words(g);
		/* the line ends inside the plot (p50's would start left of it) */
		gate_line(f, c, false, jget_double(g, "threshold"), fmax(X(c, px / 2.2), c->L), fmin(X(c, px * 2.2), c->W - c->R),
			  color, w);
	}
}

/* a dot on each percentile measured */
static void pctl_marks(FILE *f, const struct chart *c, json_object *lat, const char *color)
{
	for (size_t k = 0; k < ARRAY_SIZE(pctl_pts); k++) {
		double v = jget_double(lat, pctl_pts[k].key);
		if (v > 0) {
			fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>", X(c, pctl_pts[k].x), Y(c, v), color);
			mark(c, X(c, pctl_pts[k].x) - 3, Y(c, v) - 3, X(c, pctl_pts[k].x) + 3, Y(c, v) + 3);
		}
	}
	fputc('\n', f);
}

static const struct run_series pctl_series = { "lat_us", pctl_count, pctl_points, pctl_gates, pctl_marks };

/* The percentile curve of every run against its gates (p50 and p99.9 gates as lines at their
 * percentile), on log axes: x = 1/(1-p), so p50 .. p99.99 are evenly spaced, max last. */
void report_chart_pctl(FILE *f, json_object *runs, json_object *gates, json_object *ref_runs)
{
	struct chart c = { .W = 640, .H = 360, .L = 64, .R = 20, .T = 16, .B = 46,
			   .x = { .lo = 1.5, .hi = 100000, .log = true, .unit = U_PCTL, .title = "percentile (log scale of 1/(1-p))" },
			   .y = { .log = true, .unit = U_US, .title = "read latency (log scale)" } };
	double lo = INFINITY, hi = 0;
	struct legend l;

	for (unsigned pass = 0; pass < 2; pass++) {
		json_object *rs = pass ? ref_runs : runs;
		for (size_t i = 0; i < jlen(rs); i++)
			for (size_t k = 0; k < ARRAY_SIZE(pctl_pts); k++) {
				double v = jget_double(jget(jarray_at(rs, i), "lat_us"), pctl_pts[k].key);
				if (v > 0)
					lo = fmin(lo, v), hi = fmax(hi, v);
			}
	}
	for (size_t i = 0; i < jlen(gates); i++)
		if (streq(jget_str(jarray_at(gates, i), "unit"), "us")) {
			double v = jget_double(jarray_at(gates, i), "threshold");
			if (v > 0)
				lo = fmin(lo, v), hi = fmax(hi, v);
		}
	if (!(hi > 0))
		return;
	ax_fit(&c.y, lo, hi);
	chart_open(f, &c, "percentiles", "read latency percentiles per run against the gates");
	legend_open(&l);
	runs_series(f, &c, &l, runs, gates, ref_runs, &pctl_series);
	chart_close_legend(f, &c, &l, "; dotted lines: each run's latency gates at their percentile");
}

static void persec_points(FILE *f, const struct chart *c, json_object *ps)
{
	for (size_t k = 0; k < jlen(ps); k++)
		pt(f, c, X(c, (double)k + 1), Y(c, fmin(json_object_get_double(jarray_at(ps, k)), c->y.hi)));
}

/* a run's IOPS gates as lines across the plot */
static void persec_gates(FILE *f, const struct chart *c, json_object *gates, const char *run, const char *color)
{
	gate_lines(f, c, gates, run, "IOPS", false, c->L, c->W - c->R, color);
}

static const struct run_series persec_series = { "per_second_iops", jlen, persec_points, persec_gates, NULL };

/* IOPS second by second of the timed runs (stability), the IOPS gates as lines. */
void report_chart_persec(FILE *f, json_object *runs, json_object *gates, json_object *ref_runs)
{
	struct chart c = { .W = 640, .H = 340, .L = 64, .R = 20, .T = 16, .B = 46,
			   .x = { .unit = U_S, .title = "time into the run" }, .y = { .unit = U_IOPS, .title = "IOPS" } };
	double xmax = 0, ymax = 0;
	struct legend l;

	for (unsigned pass = 0; pass < 2; pass++) {
		json_object *rs = pass ? ref_runs : runs;
		for (size_t i = 0; i < jlen(rs); i++) {
			json_object *ps = jget(jarray_at(rs, i), "per_second_iops");
			xmax = fmax(xmax, (double)jlen(ps));
			for (size_t k = 0; k < jlen(ps); k++)
				ymax = fmax(ymax, json_object_get_double(jarray_at(ps, k)));
		}
	}
	if (!(xmax > 0))
		return;
	for (size_t i = 0; i < jlen(gates); i++)
		if (streq(jget_str(jarray_at(gates, i), "unit"), "IOPS"))
			ymax = fmax(ymax, jget_double(jarray_at(gates, i), "threshold"));
	ax_fit(&c.x, 0, xmax);
	ax_fit(&c.y, 0, ymax);
	chart_open(f, &c, "per-second", "IOPS per second of each run");
	legend_open(&l);
	runs_series(f, &c, &l, runs, gates, ref_runs, &persec_series);
	chart_close_legend(f, &c, &l, "; one point per second; dotted lines: the IOPS gates");
}

static void sweep_points(FILE *f, const struct chart *c, json_object *sweep, bool p50)
{
	for (size_t i = 0; i < jlen(sweep); i++) {
		json_object *s = jarray_at(sweep, i);
		double x = (double)jget_u64(s, "working_set_bytes");
		double y = p50 ? jget_double(jget(s, "lat_us"), "p50") : jget_double(s, "iops");

		pt(f, c, X(c, fmax(x, c->x.lo)), p50 ? Ya(c, &c->y2, y) : Y(c, y));
	}
}

static void sweep_iops_points(FILE *f, const struct chart *c, json_object *sweep)
{
	sweep_points(f, c, sweep, false);
}

static void sweep_p50_points(FILE *f, const struct chart *c, json_object *sweep)
{
	sweep_points(f, c, sweep, true);
}

/* The --sweep: IOPS (left axis) and p50 (right axis) against the working set: a drive whose
 * mapping table outgrows its cache falls off a cliff (docs/incident.md: 69 K -> 13 K IOPS). */
void report_chart_sweep(FILE *f, json_object *sweep, json_object *ref_sweep)
{
	struct chart c = { .W = 640, .H = 340, .L = 64, .R = 70, .T = 16, .B = 46,
			   .x = { .log = true, .unit = U_BYTES, .title = "working set (log scale)" },
			   .y = { .unit = U_IOPS, .title = "IOPS (solid)" },
			   .y2 = { .unit = U_US, .title = "p50 latency (squares)" } };
	double xlo = INFINITY, xhi = 0, ymax = 0, pmax = 0;
	struct legend l;

	for (unsigned pass = 0; pass < 2; pass++) {
		json_object *sw = pass ? ref_sweep : sweep;
		for (size_t i = 0; i < jlen(sw); i++) {
			json_object *s = jarray_at(sw, i);
			double x = (double)jget_u64(s, "working_set_bytes");
			if (x > 0)
				xlo = fmin(xlo, x), xhi = fmax(xhi, x);
			ymax = fmax(ymax, jget_double(s, "iops"));
			pmax = fmax(pmax, jget_double(jget(s, "lat_us"), "p50"));
		}
	}
	if (!(xhi > 0))
		return;
	/* binary decades read better for sizes: 1 MiB .. 1 TiB */
	ax_fit(&c.x, xlo, xhi);
	ax_fit(&c.y, 0, ymax);
	ax_fit(&c.y2, 0, pmax);
	chart_open(f, &c, "sweep", "IOPS and p50 latency against working set");
	legend_open(&l);
	if (jlen(ref_sweep)) {
		series(f, &c, "reference IOPS", REF_COLOR, true, jlen(ref_sweep), sweep_iops_points, ref_sweep);
		series(f, &c, "reference p50", "#e377c2", true, jlen(ref_sweep), sweep_p50_points, ref_sweep);
		key(l.f, REF_COLOR, true, "reference IOPS");
		key(l.f, "#e377c2", true, "reference p50");
	}
	series(f, &c, "IOPS", chart_colors[0], false, jlen(sweep), sweep_iops_points, sweep);
	series(f, &c, "p50", chart_colors[1], false, jlen(sweep), sweep_p50_points, sweep);
	/* the marks, then each point's IOPS beside it where it covers no mark and no line */
	for (size_t i = 0; i < jlen(sweep); i++) {
		json_object *s = jarray_at(sweep, i);
		double x = X(&c, fmax((double)jget_u64(s, "working_set_bytes"), c.x.lo));
		double y = Y(&c, jget_double(s, "iops")), y2 = Ya(&c, &c.y2, jget_double(jget(s, "lat_us"), "p50"));

		fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"/><rect x=\"%.1f\" y=\"%.1f\" width=\"6\" "
			   "height=\"6\" fill=\"%s\"/>\n", x, y, chart_colors[0], x - 3, y2 - 3, chart_colors[1]);
		mark(&c, x - 3.5, y - 3.5, x + 3.5, y + 3.5);
		mark(&c, x - 3, y2 - 3, x + 3, y2 + 3);
	}
	for (size_t i = 0; i < jlen(sweep); i++) {
		json_object *s = jarray_at(sweep, i);
		double x = X(&c, fmax((double)jget_u64(s, "working_set_bytes"), c.x.lo)), y = Y(&c, jget_double(s, "iops"));
		struct place_spot spots[PLACE_MAX_SPOTS];
		char a[32];

		fmt_iops(jget_double(s, "iops"), a);
		place_ask(c.pl, a, LABEL_FONT, false, "#1d1d1d", spots, place_spots_point(x, y, 3.5, LABEL_FONT, spots));
	}
	key(l.f, chart_colors[0], false, "IOPS");
	key(l.f, chart_colors[1], false, "p50");
	chart_close_legend(f, &c, &l, "; one point per working set");
}

static void prediction_points(FILE *f, const struct chart *c, json_object *preds)
{
	for (size_t i = 0; i < jlen(preds); i++) {
		json_object *e = jarray_at(preds, i);
		double s = schema_prediction_s(jget(e, "prediction"), "worst_chunk_s");

		if (jget_bool(e, "sweep"))
			pt(f, c, X(c, fmax((double)jget_u64(e, "working_set_bytes"), c->x.lo)), Y(c, fmin(s, c->y.hi)));
	}
}

/* The spin limit as a band from its low end to its high end, across the plot, its words inside it
 * at the top, else above it or under its low end. */
static void spin_band(FILE *f, const struct chart *c, uint64_t low, uint64_t high)
{
	double top = Y(c, fmin((double)high, c->y.hi)), bottom = Y(c, (double)low), l = c->L + 4, r = c->W - c->R - 4;
	const struct place_spot spots[] = {
		{ l, top + 13, PLACE_START }, { r, top + 13, PLACE_END }, { l, top - 4, PLACE_START },
		{ r, top - 4, PLACE_END },    { l, bottom + 13, PLACE_START }, { r, bottom + 13, PLACE_END },
		{ l, bottom - 4, PLACE_START }, { r, bottom - 4, PLACE_END },
	};
	_cleanup_free_ char *w = xasprintf("spin limit %" PRIu64 "-%" PRIu64 " s: a chunk past %" PRIu64 " s times the "
					   "collective out", low, high, low);

	fprintf(f, "<g class=\"spin-band\" data-low=\"%" PRIu64 "\" data-high=\"%" PRIu64 "\"><rect x=\"%.0f\" "
		   "y=\"%.1f\" width=\"%.0f\" height=\"%.1f\" fill=\"#d62728\" fill-opacity=\"0.15\"/><line x1=\"%.0f\" "
		   "y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" stroke=\"#b00\" stroke-dasharray=\"2,3\"/></g>\n",
		low, high, c->L, top, c->W - c->L - c->R, bottom - top, c->L, bottom, c->W - c->R, bottom);
	place_segment(c->pl, c->L, bottom, c->W - c->R, bottom);
	place_ask(c->pl, w, LABEL_FONT, true, "#b00", spots, ARRAY_SIZE(spots));
}

/* The predicted chunk time per working set (src/predict.h): the sweep's points as a line, each
 * random run at its working set as a point, its time in the legend (the runs share one working
 * set, so words beside the points would cover each other), the spin limit as a band. The chunk of
 * a run in which no read completed is drawn at the top and called "never". */
void report_chart_prediction(FILE *f, json_object *preds)
{
	struct chart c = { .W = 640, .H = 340, .L = 64, .R = 40, .T = 16, .B = 46,
			   .x = { .log = true, .unit = U_BYTES, .title = "working set (log scale)" },
			   .y = { .unit = U_S, .title = "predicted worst chunk" } };
	json_object *spin = jget_object(jget(jarray_at(preds, 0), "prediction"), "spin_limit_s");
	uint64_t low = jget_u64(spin, "low"), high = jget_u64(spin, "high");
	double xlo = INFINITY, xhi = 0, ymax = (double)high;
	size_t nsweep = 0;
	struct legend l;

	for (size_t i = 0; i < jlen(preds); i++) {
		json_object *e = jarray_at(preds, i);
		double x = (double)jget_u64(e, "working_set_bytes"), s = schema_prediction_s(jget(e, "prediction"), "worst_chunk_s");

		if (x > 0)
			xlo = fmin(xlo, x), xhi = fmax(xhi, x);
		if (isfinite(s))
			ymax = fmax(ymax, s);
		nsweep += jget_bool(e, "sweep");
	}
	if (!(xhi > 0))
		return;
	ax_fit(&c.x, xlo, xhi);
	ax_fit(&c.y, 0, ymax);
	chart_open(f, &c, "prediction", "predicted worst chunk time per working set against the spin limit");
	if (low && low <= high)
		spin_band(f, &c, low, high);
	legend_open(&l);
	if (nsweep) {
		series(f, &c, "sweep", chart_colors[0], false, nsweep, prediction_points, preds);
		key(l.f, chart_colors[0], false, "sweep: one point per working set");
	}
	for (size_t i = 0, k = 0; i < jlen(preds); i++) {
		json_object *e = jarray_at(preds, i), *p = jget(e, "prediction");
		double s = schema_prediction_s(p, "worst_chunk_s");
		double x = X(&c, fmax((double)jget_u64(e, "working_set_bytes"), c.x.lo)), y = Y(&c, fmin(s, c.y.hi));
		const char *col = jget_bool(e, "sweep") ? chart_colors[0] : chart_colors[1 + k++ % (ARRAY_SIZE(chart_colors) - 1)];
		const char *st = schema_prediction_status(p) ?: "?";
		char t[32];

		fputs("<circle class=\"prediction\" data-run=\"", f);
		html_esc(f, jget_str(e, "name") ?: "?");
		fprintf(f, "\" data-working-set=\"%" PRIu64 "\" data-worst-chunk-s=\"", jget_u64(e, "working_set_bytes"));
		if (isfinite(s))
			fprintf(f, "%.3f", s);
		else
			fputs("inf", f);
		fprintf(f, "\" data-status=\"%s\" cx=\"%.1f\" cy=\"%.1f\" r=\"%s\" fill=\"%s\"/>\n", st, x, y,
			jget_bool(e, "sweep") ? "3" : "4.5", col);
		mark(&c, x - 4.5, y - 4.5, x + 4.5, y + 4.5);
		if (!jget_bool(e, "sweep")) {
			_cleanup_free_ char *w = NULL;

			fmt_secs(s, t);
			w = xasprintf("%s: %s %s", jget_str(e, "name") ?: "?", t, st);
			key(l.f, col, false, w);
		}
	}
	chart_close_legend(f, &c, &l, "; the shaded band: the collective's spin limit (a chunk inside its low end by 2x or "
			   "more passes)");
}

/* where an interval of the hold is drawn: its middle, seconds into the hold */
static double sustain_x(json_object *iv)
{
	return fmax(0, jget_double(iv, "start_s") + jget_double(iv, "duration_s") / 2);
}

static void sustain_points(FILE *f, const struct chart *c, json_object *intervals, bool p99_9)
{
	for (size_t i = 0; i < jlen(intervals); i++) {
		json_object *iv = jarray_at(intervals, i);
		double x = fmin(sustain_x(iv), c->x.hi);

		if (p99_9)
			pt(f, c, X(c, x), Ya(c, &c->y2, fmin(fmax(jget_double(iv, "p99_9_us"), 0), c->y2.hi)));
		else
			pt(f, c, X(c, x), Y(c, fmin(fmax(jget_double(iv, "iops"), 0), c->y.hi)));
	}
}

static void sustain_iops_points(FILE *f, const struct chart *c, json_object *intervals)
{
	sustain_points(f, c, intervals, false);
}

static void sustain_p99_9_points(FILE *f, const struct chart *c, json_object *intervals)
{
	sustain_points(f, c, intervals, true);
}

/* accept --sustain: IOPS (left axis) and p99.9 (right axis) per interval of the hold: a drive
 * that heats or runs out of fast cache under load shows IOPS falling and the tail rising. */
void report_chart_sustain(FILE *f, json_object *sustain)
{
	struct chart c = { .W = 640, .H = 340, .L = 64, .R = 70, .T = 16, .B = 46,
			   .x = { .unit = U_S, .title = "time into the sustained load" },
			   .y = { .unit = U_IOPS, .title = "IOPS (circles)" },
			   .y2 = { .unit = U_US, .title = "p99.9 latency (squares)" } };
	json_object *iv = jget_array(sustain, "intervals");
	double xmax = 0, ymax = 0, pmax = 0;
	struct legend l;
	_cleanup_free_ char *rest = NULL;

	for (size_t i = 0; i < jlen(iv); i++) {
		json_object *v = jarray_at(iv, i);

		xmax = fmax(xmax, jget_double(v, "start_s") + jget_double(v, "duration_s"));
		ymax = fmax(ymax, jget_double(v, "iops"));
		pmax = fmax(pmax, jget_double(v, "p99_9_us"));
	}
	if (!(xmax > 0))
		return;
	ax_fit(&c.x, 0, xmax);
	ax_fit(&c.y, 0, ymax);
	ax_fit(&c.y2, 0, pmax);
	chart_open(f, &c, "sustain", "IOPS and p99.9 latency per interval of the sustained load");
	legend_open(&l);
	series(f, &c, "IOPS", chart_colors[0], false, jlen(iv), sustain_iops_points, iv);
	series(f, &c, "p99.9", chart_colors[1], false, jlen(iv), sustain_p99_9_points, iv);
	for (size_t i = 0; i < jlen(iv); i++) {
		json_object *v = jarray_at(iv, i);
		double x = X(&c, fmin(sustain_x(v), c.x.hi));

		fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/><rect x=\"%.1f\" y=\"%.1f\" width=\"6\" "
			   "height=\"6\" fill=\"%s\"/>\n",
			x, Y(&c, fmin(fmax(jget_double(v, "iops"), 0), c.y.hi)), chart_colors[0], x - 3,
			Ya(&c, &c.y2, fmin(fmax(jget_double(v, "p99_9_us"), 0), c.y2.hi)) - 3, chart_colors[1]);
	}
	key(l.f, chart_colors[0], false, "IOPS");
	key(l.f, chart_colors[1], false, "p99.9");
	rest = xasprintf("; one point per interval of %" PRIu64 " s", jget_u64(sustain, "interval_s"));
	chart_close_legend(f, &c, &l, rest);
}

/* A bar of a run's IOPS, and its words asked for over it (or higher, clear of the other bar's). */
static void compare_bar(FILE *f, const struct chart *c, const char *node, double x, double w, double iops, const char *color)
{
	struct place_spot spots[6];
	char v[32];
	_cleanup_free_ char *words = NULL;

	fprintf(f, "<rect class=\"bar\" data-node=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>\n",
		node, x, Y(c, iops), w, Y(c, 0) - Y(c, iops), color);
	mark(c, x, Y(c, iops), x + w, Y(c, 0));
	for (unsigned k = 0; k < ARRAY_SIZE(spots); k++)
		spots[k] = (struct place_spot){ x + w / 2, Y(c, iops) - 4 - k * 1.3 * LABEL_FONT, PLACE_MIDDLE };
	fmt_iops(iops, v);
	words = xasprintf("%s %s", node, v);
	place_ask(c->pl, words, LABEL_FONT, true, "#1d1d1d", spots, ARRAY_SIZE(spots));
}

/* Both nodes' IOPS per run as bars, reference (A) and this node (B), with B/A over each pair. */
void report_chart_compare(FILE *f, json_object *runs, json_object *ref_runs)
{
	struct chart c = { .W = 640, .H = 320, .L = 64, .R = 20, .T = 24, .B = 46,
			   .x = { .lo = 0, .hi = 1, .unit = U_S, .title = "run" }, .y = { .unit = U_IOPS, .title = "IOPS" } };
	double ymax = 0, pw;
	size_t n = 0, k = 0;
	struct legend l;

	for (size_t i = 0; i < jlen(runs); i++) {
		json_object *b = jarray_at(runs, i), *a = find_run(ref_runs, jget_str(b, "name"));
		if (!a)
			continue;
		n++;
		ymax = fmax(ymax, fmax(jget_double(a, "iops"), jget_double(b, "iops")));
	}
	if (!n)
		return;
	ax_fit(&c.y, 0, ymax);
	chart_margins(&c);
	pw = c.W - c.L - c.R;
	/* no numeric x ticks: the runs are categories; the words over the bars may go above the plot */
	svg_frame(f, &c, "compare", "IOPS per run, reference node and this node", AREA_ALL);
	y_ticks(f, &c, false);
	y_title(f, &c);
	place_block(c.pl, (struct place_box){ 0, 0, c.L, c.H });
	for (size_t i = 0; i < jlen(runs); i++) {
		json_object *b = jarray_at(runs, i), *a = find_run(ref_runs, jget_str(b, "name"));
		double slot = pw / (double)n, x0 = c.L + slot * (double)k, bw = slot * 0.32;
		char q[32];

		if (!a)
			continue;
		k++;
		compare_bar(f, &c, "A", x0 + slot * 0.16, bw, jget_double(a, "iops"), REF_COLOR);
		compare_bar(f, &c, "B", x0 + slot * 0.52, bw, jget_double(b, "iops"), chart_colors[0]);
		fmt_ratio(ratio_of(jget_double(b, "iops"), jget_double(a, "iops")), q);
		fprintf(f, "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\" font-weight=\"bold\">B/A %s</text>"
			   "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">", x0 + slot / 2, c.T - 8, q, x0 + slot / 2, c.H - c.B + 18);
		html_esc(f, jget_str(b, "name"));
		fputs("</text>\n", f);
		place_block(c.pl, (struct place_box){ x0, 0, x0 + slot, c.T - 1 });
	}
	legend_open(&l);
	key(l.f, REF_COLOR, false, "A: the reference node");
	key(l.f, chart_colors[0], false, "B: this node");
	chart_close_legend(f, &c, &l, "");
}
