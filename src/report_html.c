/* SPDX-License-Identifier: MIT */
/* report.html: the report's model (src/report.c) as one self-contained page, its charts inline SVG
 * (src/report_svg.c), readable without a network and printable on A4. */
#include "util.h"
#include "report.h"
#include "report_fmt.h"
#include "report_svg.h"
#include "schema.h"
#include "size.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>

/* A status cell: coloured, and the word says it without the colour. */
static void st_cell(FILE *f, const char *st)
{
	const char *w = st ?: "unknown";
	const char *cls = streq(w, "pass") || streq(w, "done") ? "pass" : streq(w, "warn") ? "warn" : streq(w, "fail") ? "fail" :
			  streq(w, REPORT_VERDICT_TRAP) ? "trap" : streq(w, "skip") ? "skip" : "missing";

	fprintf(f, "<td class=\"st st-%s\">", cls);
	for (const char *p = w; *p; p++)
		fputc(streq(cls, "skip") || streq(cls, "missing") ? *p : toupper((unsigned char)*p), f);
	fputs("</td>", f);
}

static void td(FILE *f, const char *cls, const char *s)
{
	if (cls)
		fprintf(f, "<td class=\"%s\">", cls);
	else
		fputs("<td>", f);
	html_esc(f, s ?: "-");
	fputs("</td>", f);
}

/* A table's start: in a scroller (a screen too narrow for it scrolls the table sideways, never the
 * page); of at most 12 ROWS, printed whole on one page (class keep). Its header row follows in a
 * thead, printed again at the top of each page a longer table spans (table_head), then its body. */
static void table_open(FILE *f, const char *cls, size_t rows)
{
	fprintf(f, "<div class=\"tw\"><table class=\"%s%s%s\">\n", cls ?: "", cls && rows <= 12 ? " " : "", rows <= 12 ? "keep" : "");
}

/* The header row of the cells THS (HTML), and the body's start; NULL: no header row. */
static void table_head(FILE *f, const char *ths)
{
	if (ths)
		fprintf(f, "<thead><tr>%s</tr></thead>\n", ths);
	fputs("<tbody>\n", f);
}

static void table_close(FILE *f)
{
	fputs("</tbody></table></div>\n", f);
}

/* Tables scroll sideways in their own box (.tw) where the screen is too narrow, never the page;
 * cells wrap at spaces and after hyphens, never inside a word or a number (no overflow-wrap
 * anywhere in a table; numbers, times and hashes do not wrap at all). On a phone the steps'
 * reasons go under their row. On paper (Chromium's print) every page carries the node, the
 * verdict and "page N of M" (html_page_header), a table's header row comes again at the top of
 * each page it spans, rows are whole, a short table is kept on one page and a long one leaves
 * no fewer than three rows on a page. */
static const char html_style[] =
	"*{box-sizing:border-box}\n"
	"body{font:15px/1.45 system-ui,sans-serif;margin:0;padding:1.2em 2em 2em;color:#1d1d1d}\n"
	"h1{font-size:1.6em;margin:.1em 0 .3em}h2{font-size:1.25em;border-bottom:2px solid #ddd;padding-bottom:.1em;margin:1.4em 0 .5em}\n"
	"h3{font-size:1.05em;margin:1em 0 .3em}\n"
	".meta{color:#444;margin:.2em 0}\n"
	".grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(34em,100%),1fr));gap:.5em 2em;align-items:start}\n"
	".grid>*{min-width:0}\n"
	".tw{overflow-x:auto;margin:.3em 0 1em}table{border-collapse:collapse;width:100%}\n"
	"td,th{border:1px solid #c8c8c8;padding:.2em .5em;text-align:left;vertical-align:top}\n"
	"th:first-child,td.nw{white-space:nowrap}td.unknown{color:#666;font-style:italic}\n"
	"th{background:#f0f0f0}td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}\n"
	".drives td.num{white-space:normal}\n"
	"td.hash{font-family:ui-monospace,monospace;font-size:.85em;white-space:nowrap}\n"
	".st{font-weight:bold;white-space:nowrap}\n"
	".st-pass{background:#cdeccd}.st-warn,.st-trap{background:#ffe8a3}.st-fail{background:#f6c1c1}"
	".st-skip,.st-missing{background:#eee;color:#555}\n"
	".verdict{font-size:1.3em;font-weight:bold;padding:.3em .8em;display:inline-block;border:2px solid #888;margin:.3em 0}\n"
	".verdict.accepted{background:#cdeccd;border-color:#2a7d2a}.verdict.incomplete{background:#ffe8a3;border-color:#a07800}"
	".verdict.rejected{background:#f6c1c1;border-color:#a02020}\n"
	".sig{border:1px solid #c8c8c8;background:#fafafa;padding:.5em 1em;margin:.5em 0}\n"
	"code{font-family:ui-monospace,monospace;font-size:.88em;background:#f3f3f3;padding:.1em .3em;overflow-wrap:anywhere}\n"
	"figure{margin:.3em 0 1em;break-inside:avoid}svg.chart{width:100%;height:auto;display:block}\n"
	"figcaption{font-size:.88em;color:#333}.key{white-space:nowrap;margin-right:.6em}\n"
	"@media (max-width:50em){body{padding:.8em}.grid{grid-template-columns:1fr}}\n"
	"@media screen and (max-width:40em){table{font-size:.9em}th:first-child{white-space:normal}"
	"table.steps,table.steps>thead,table.steps>tbody{display:block}"
	"table.steps tr{display:grid;grid-template-columns:6.4em 6.6em 1fr;border-top:1px solid #c8c8c8}"
	"table.steps td,table.steps th{border:0}table.steps th.why{display:none}table.steps td.why{grid-column:1/-1}}\n"
	"@media print{body{padding:0;font-size:9.5pt}.grid{display:block}figure{max-width:17cm}"
	"h2,h3{break-after:avoid}tr,figure,.sig,table.keep,.records{break-inside:avoid}"
	".tw{overflow:visible}thead{display:table-header-group}"
	"tbody>tr:nth-child(-n+2){break-after:avoid}tbody>tr:nth-last-child(-n+2){break-before:avoid}"
	"*{-webkit-print-color-adjust:exact;print-color-adjust:exact}}\n";

/* S as a CSS string: letters, digits and a few signs as they are, bytes of UTF-8 characters as
 * they are, anything else (quotes, backslash, '<': a hostile node name) as a hex escape. */
static void css_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *c = (const unsigned char *)(s ?: ""); *c; c++)
		if (isalnum(*c) || strchr(" .,:_-()", *c) || *c >= 0x80)
			fputc(*c, f);
		else
			fprintf(f, "\\%x ", *c);
	fputc('"', f);
}

/* On paper, the top of every page: the node and the verdict on the left, "page N of M" on the
 * right (CSS page margin boxes, which Chromium prints). */
static void html_page_header(FILE *f, const char *node, const char *verdict)
{
	_cleanup_free_ char *words = xasprintf("swaptool report: %s \xe2\x80\x94 %s", node ?: "?", verdict);

	for (char *c = strrchr(words, ' ') + 1; *c; c++)
		*c = (char)toupper((unsigned char)*c);
	fputs("@page{size:A4;margin:16mm 12mm 12mm;@top-left{content:", f);
	css_string(f, words);
	fputs(";font:8pt system-ui,sans-serif;color:#444}@top-right{content:\"page \" counter(page) \" of \" counter(pages);"
	      "font:8pt system-ui,sans-serif;color:#444}}\n", f);
}

static void html_signature(FILE *f, json_object *rep)
{
	json_object *signer = jget(rep, "signer");

	fputs("<div class=\"sig\"><b>Signature:</b> ", f);
	if (!signer) {
		fputs("<span class=\"st st-missing\">NOT SIGNED</span> (made with --no-sign): nothing vouches for this report.</div>\n", f);
		return;
	}
	fputs("<span class=\"st st-pass\">SIGNED</span> report.json is signed by <b>", f);
	html_esc(f, jget_str(signer, "identity") ?: "?");
	fputs("</b> with key ", f);
	html_esc(f, jget_str(signer, "key_type") ?: "?");
	fputs(" <code>", f);
	html_esc(f, jget_str(signer, "fingerprint") ?: "?");
	fputs("</code> (SSHSIG, namespace swaptool-report, sha512). This page is drawn from report.json and is not "
	      "signed itself; check the signature in the report's directory with<br><code>ssh-keygen -Y verify -f allowed_signers -I ", f);
	html_esc(f, jget_str(signer, "identity") ?: "ID");
	fputs(" -n swaptool-report -s report.json.sig &lt; report.json</code><br>or <code>swaptool verify-report report.json "
	      "--allowed-signers allowed_signers --identity ", f);
	html_esc(f, jget_str(signer, "identity") ?: "ID");
	fputs("</code> (which also recomputes the record hashes and the verdict).</div>\n", f);
}

static void html_drives(FILE *f, json_object *rep)
{
	bool owned;
	json_object *d = report_drives_of(rep, &owned), *o = jget(d, "old"), *n = jget(d, "new");

	fputs("<h2>Drives</h2>\n", f);
	table_open(f, "drives", report_drive_nrows);
	table_head(f, "<th></th><th>old drive (source)</th><th>new drive (target)</th>");
	for (size_t i = 0; i < report_drive_nrows; i++) {
		json_object *sides[2] = { o, n };

		fputs("<tr><th>", f);
		html_esc(f, report_drive_rows[i].label);
		fputs("</th>", f);
		for (unsigned s = 0; s < 2; s++) {
			_cleanup_free_ char *cell = report_drive_cell(sides[s], i);
			const char *key = report_drive_rows[i].key, *cls = NULL;
			json_object *v = jget(sides[s], key);

			if (streq(key, "class") && jget_str(sides[s], "class"))
				cls = streq(jget_str(sides[s], "class"), "good") ? "st st-pass" :
				      streq(jget_str(sides[s], "class"), "unknown") ? "st st-missing" : "st st-warn";
			else if ((streq(key, "media_errors") || streq(key, "critical_warning")) && v &&
				 !json_object_is_type(v, json_type_null))
				cls = json_object_get_uint64(v) ? "st st-fail" : "num";
			else if (!v || json_object_is_type(v, json_type_null))
				cls = "unknown";
			else if (report_drive_rows[i].kind != DK_STR)
				cls = "num";
			fprintf(f, "<td%s%s%s data-field=\"%s\" data-side=\"%s\">", cls ? " class=\"" : "", cls ?: "", cls ? "\"" : "", key,
				s ? "new" : "old");
			/* a figure and its unit stay together: "2,048,408,248,320 B (2.048 TB)" wraps only before "(" */
			for (const char *c = cell; c && *c; c++) {
				char one[2] = { *c, 0 };

				if (*c == ' ' && c[1] != '(' && cls && streq(cls, "num"))
					fputs("&nbsp;", f);
				else
					html_esc(f, one);
			}
			fputs("</td>", f);
		}
		fputs("</tr>\n", f);
	}
	table_close(f);
	/* whether accept measured the drive preflight planned for (report_target_match) */
	if (jget(d, "match")) {
		const char *res = jget_str(jget(d, "match"), "result") ?: "unknown";

		fprintf(f, "<p class=\"target-match\"><span class=\"st %s\">", streq(res, "same") ? "st-pass" : "st-warn");
		html_esc(f, streq(res, "same") ? "SAME DRIVE" : streq(res, "different") ? "ANOTHER DRIVE" : "NOT SHOWN SAME");
		fputs("</span> target drive: ", f);
		html_esc(f, jget_str(jget(d, "match"), "why") ?: "");
		fputs("</p>\n", f);
	}
	if (owned)
		json_object_put(d);
}

/* the title, the heading, where and when it was made, and the verdict */
static void html_head(FILE *f, json_object *rep)
{
	const char *verdict = jget_str(rep, "verdict") ?: "incomplete";

	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\n<title>swaptool report: ", f);
	html_esc(f, jget_str(rep, "node") ?: jget_str(rep, "host"));
	fprintf(f, "</title>\n<style>\n%s", html_style);
	html_page_header(f, jget_str(rep, "node") ?: jget_str(rep, "host"), verdict);
	fputs("</style></head><body>\n<h1>swaptool report: ", f);
	html_esc(f, jget_str(rep, "node") ?: jget_str(rep, "host"));
	fputs("</h1>\n<p class=\"meta\">made on ", f);
	html_esc(f, jget_str(rep, "host"));
	fputs(" at ", f);
	html_esc(f, jget_str(rep, "created"));
	fputs(" by swaptool ", f);
	html_esc(f, jget_str(rep, "version"));
	fputs(" (kernel ", f);
	html_esc(f, jget_str(rep, "kernel"));
	fprintf(f, ")</p>\n<p><span class=\"verdict %s\">", streq(verdict, "accepted") ? "accepted" : streq(verdict, "rejected") ? "rejected" : "incomplete");
	for (const char *c = verdict; *c; c++)
		fputc(toupper((unsigned char)*c), f);
	fputs("</span> ", f);
	html_esc(f, jget_str(rep, "why"));
	fputs("</p>\n", f);
}

static void html_steps(FILE *f, json_object *summary)
{
	fputs("<section>\n<h2>Steps</h2>\n", f);
	table_open(f, "steps", jlen(summary));
	table_head(f, "<th>step</th><th>status</th><th>finished</th><th class=\"why\">why</th>");
	for (size_t i = 0; i < jlen(summary); i++) {
		json_object *s = jarray_at(summary, i);
		fputs("<tr>", f);
		td(f, "nw", jget_str(s, "step"));
		st_cell(f, jget_str(s, "status"));
		td(f, "nw", jget_str(s, "finished"));
		td(f, "why", jget_str(s, "why"));
		fputs("</tr>\n", f);
	}
	table_close(f);
	fputs("</section>\n", f);
}

/* a table row <tr><th>LABEL</th><td class="num">BYTES B</td></tr> */
static void html_bytes_row(FILE *f, const char *label, const char *bytes)
{
	char b[32];

	fprintf(f, "<tr><th>%s</th>", label);
	snprintf(b, sizeof(b), "%s B", bytes);
	td(f, "num", b);
	fputs("</tr>\n", f);
}

static void html_trap(FILE *f, json_object *pre)
{
	json_object *src = jget(pre, "source"), *tgt = jget(pre, "target");
	json_object *gpt = jget(jget(src, "partition_table"), "backup_header_lba");
	json_object *fi = schema_preflight_path(pre, SCHEMA_PATH_FRESH_INSTALL);
	char a[32];

	fputs("<section>\n<h2>Clone trap</h2>\n", f);
	table_open(f, NULL, 9);
	table_head(f, NULL);
	html_bytes_row(f, "source size", fmt_thousands(schema_preflight_source_bytes(pre), a));
	html_bytes_row(f, "target size (preflight --target)", fmt_thousands(schema_preflight_target_bytes(pre), a));
	html_bytes_row(f, "delta (target minus source)", fmt_thousands_signed(jget_i64(pre, "delta_bytes"), a));
	if (gpt && jget_u64(tgt, "lba_count")) {
		fputs("<tr><th>backup GPT header (old drive)</th>", f);
		td(f, "num", fmt_thousands(json_object_get_uint64(gpt), a));
		fputs("</tr>\n<tr><th>last LBA (new drive)</th>", f);
		td(f, "num", fmt_thousands(jget_u64(tgt, "lba_count") - 1, a));
		fputs("</tr>\n", f);
	}
	fputs("<tr><th>raw clone</th>", f);
	st_cell(f, path_possible(pre, SCHEMA_PATH_RAW_CLONE) ? "pass" : "fail");
	fputs("</tr>\n<tr><th>filesystem-aware clone</th>", f);
	st_cell(f, path_possible(pre, SCHEMA_PATH_FS_CLONE) ? "pass" : "fail");
	fputs("</tr>\n<tr><th>fresh install + restore</th>", f);
	st_cell(f, path_possible(pre, SCHEMA_PATH_FRESH_INSTALL) ? "pass" : "fail");
	fputs("</tr>\n", f);
	if (jget(fi, "refetchable_bytes")) {
		char c2[32];
		_cleanup_free_ char *both = NULL;

		fputs("<tr><th>re-fetchable / irreplaceable</th>", f);
		fmt_decimal(jget_u64(fi, "refetchable_bytes"), a);
		both = xasprintf("%s / %s", a, fmt_decimal(jget_u64(fi, "irreplaceable_bytes"), c2));
		td(f, "num", both);
		fputs("</tr>\n", f);
	}
	table_close(f);
	fputs("<p class=\"meta\">PASS: the path is possible; FAIL: it is not.</p>\n</section>\n", f);
}

static void html_backup(FILE *f, json_object *backup)
{
	const char *path, *sha;
	uint64_t bytes, entries;
	char a[32], b[32];

	backup_fields(backup, &path, &sha, &bytes, &entries);
	snprintf(b, sizeof(b), "%" PRIu64, entries);
	fputs("<section>\n<h2>Backup</h2>\n", f);
	table_open(f, NULL, 4);
	table_head(f, NULL);
	fputs("<tr><th>archive</th>", f);
	td(f, NULL, path);
	fputs("</tr>\n<tr><th>bytes</th>", f);
	td(f, "num", fmt_thousands(bytes, a));
	fputs("</tr>\n<tr><th>entries</th>", f);
	td(f, "num", b);
	fputs("</tr>\n<tr><th>sha256</th>", f);
	td(f, "hash", sha);
	fputs("</tr>\n", f);
	table_close(f);
	fputs("</section>\n", f);
}

/* where accept read, and whether the engine gates ran */
static void html_accept_meta(FILE *f, json_object *acc)
{
	bool run, failed;
	char a[32];

	fputs("<h2>Acceptance</h2>\n<p class=\"meta\">on ", f);
	html_esc(f, schema_host(acc));
	fputs(", reading ", f);
	html_esc(f, schema_accept_target_path(acc));
	fprintf(f, " (working set %s)", fmt_binary(jget_u64(jget(acc, "target"), "working_set_bytes"), a));
	schema_accept_engine_gates(acc, &run, &failed);
	fputs("; engine gates (cold-boot 157 K prompt, full 97-scenario bench): ", f);
	fprintf(f, "<span class=\"st %s\">%s</span></p>\n", !run ? "st-warn" : failed ? "st-fail" : "st-pass",
		!run ? "NOT RUN" : failed ? "FAILED" : "PASSED");
}

static void html_runs(FILE *f, json_object *runs)
{
	fputs("<section>\n<h3>Runs</h3>\n", f);
	table_open(f, NULL, jlen(runs));
	table_head(f, "<th>run</th><th>mode</th><th>in flight</th><th>IOPS</th><th>MB/s</th><th>p50</th><th>p99.9</th>");
	for (size_t i = 0; i < jlen(runs); i++) {
		json_object *r = jarray_at(runs, i);
		char a[32], b[32], c[32], d[32], e[32];

		snprintf(d, sizeof(d), "%" PRIu64, jget_u64(r, "inflight"));
		snprintf(e, sizeof(e), "%.0f", jget_double(r, "mb_s"));
		fmt_iops(jget_double(r, "iops"), a);
		fmt_us(run_lat_us(r, SCHEMA_LAT_P50), b);
		fmt_us(run_lat_us(r, SCHEMA_LAT_P99_9), c);
		fputs("<tr>", f);
		td(f, "nw", jget_str(r, "name"));
		td(f, "nw", jget_str(r, "mode"));
		td(f, "num", d);
		td(f, "num", a);
		td(f, "num", e);
		td(f, "num", b);
		td(f, "num", c);
		fputs("</tr>\n", f);
	}
	table_close(f);
	fputs("</section>\n", f);
}

static void html_gates(FILE *f, json_object *gates)
{
	fputs("<section>\n<h3>Gates</h3>\n", f);
	table_open(f, NULL, jlen(gates));
	table_head(f, "<th>gate</th><th>threshold</th><th>measured</th><th>status</th>");
	for (size_t i = 0; i < jlen(gates); i++) {
		json_object *g = jarray_at(gates, i);
		_cleanup_free_ char *th = report_gate_threshold(g), *me = report_value_text(jget(g, "measured"));
		_cleanup_free_ char *mu = jget_str(g, "unit") && !json_object_is_type(jget(g, "threshold"), json_type_string)
			? xasprintf("%s %s", me, jget_str(g, "unit")) : xstrdup(me);

		fputs("<tr>", f);
		td(f, "nw", schema_gate_name(g));
		td(f, "num", th);
		td(f, "num", mu);
		st_cell(f, schema_gate_status(g));
		fputs("</tr>\n", f);
	}
	table_close(f);
	fputs("</section>\n", f);
}

/* the sweep's table, with the reference's IOPS and the ratio when it has a sweep, then its chart */
static void html_sweep(FILE *f, json_object *sweep, json_object *ra)
{
	bool with_ref = ra && jlen(jget(ra, "sweep"));

	fputs("<h2>Sweep: 4 KiB random reads by working set</h2>\n<div class=\"grid\">\n<section>\n", f);
	table_open(f, NULL, jlen(sweep));
	table_head(f, with_ref ? "<th>working set</th><th>IOPS</th><th>p50</th><th>reference IOPS</th><th>IOPS B/A</th>"
			       : "<th>working set</th><th>IOPS</th><th>p50</th>");
	for (size_t i = 0; i < jlen(sweep); i++) {
		json_object *s = jarray_at(sweep, i);
		json_object *rs = find_ws(jget(ra, "sweep"), jget_u64(s, "working_set_bytes"));
		char a[32], b[32], c[32];

		fputs("<tr>", f);
		td(f, "num", fmt_binary(jget_u64(s, "working_set_bytes"), a));
		fmt_iops(jget_double(s, "iops"), b);
		fmt_us(jget_double(jget(s, "lat_us"), "p50"), c);
		td(f, "num", b);
		td(f, "num", c);
		if (with_ref) {
			if (rs)
				fmt_iops(jget_double(rs, "iops"), b);
			fmt_ratio(rs ? ratio_of(jget_double(s, "iops"), jget_double(rs, "iops")) : NAN, c);
			td(f, "num", rs ? b : "-");
			td(f, "num", c);
		}
		fputs("</tr>\n", f);
	}
	table_close(f);
	fputs("</section>\n", f);
	report_chart_sweep(f, sweep, jget(ra, "sweep"));
	fputs("</div>\n", f);
}

/* The engine predicted from the runs and the sweep (src/predict.h): what a prefill chunk is, a row
 * per working set, the check's judgement, then the chart of the chunk times against the spin limit. */
static void html_prediction(FILE *f, json_object *acc)
{
	_cleanup_json_ json_object *preds = report_predictions(acc);
	json_object *p0 = jget(jarray_at(preds, 0), "prediction"), *spin = jget_object(p0, "spin_limit_s");
	const char *run = NULL;
	json_object *judged = schema_accept_prediction(acc, &run);
	char a[32], b[32], c[32], d[32], e[32];

	if (!jlen(preds))
		return;
	fprintf(f, "<h2>Predicted engine</h2>\n<p class=\"meta\">A %s-token prefill chunk is %s random reads (%s) at "
		   "%.2f reads per token; the cold boot's %s-token prompt is %s reads. The collective's spin limit is "
		   "%" PRIu64 "-%" PRIu64 " s: a chunk past its low end fails, one inside it by less than 2x warns.",
		fmt_thousands(jget_u64(p0, "chunk_tokens"), a), fmt_thousands(jget_u64(p0, "reads_per_chunk"), b),
		fmt_decimal(jget_u64(p0, "chunk_bytes"), c), jget_double(p0, "reads_per_token"),
		fmt_thousands(jget_u64(p0, "cold_prompt_tokens"), d), fmt_thousands(jget_u64(p0, "cold_prompt_reads"), e),
		jget_u64(spin, "low"), jget_u64(spin, "high"));
	if (judged) {
		fmt_secs(schema_prediction_s(judged, "worst_chunk_s"), a);
		fputs(" The check judged <b>", f);
		html_esc(f, run);
		fprintf(f, "</b>, the slowest worst chunk: %s.", a);
	}
	fputs("</p>\n<div class=\"grid\">\n<section>\n", f);
	table_open(f, "prediction", jlen(preds));
	table_head(f, "<th>run</th><th>working set</th><th>IOPS</th><th>chunk at mean</th><th>worst chunk</th>"
		      "<th>cold prompt</th><th>margin</th><th>status</th>");
	for (size_t i = 0; i < jlen(preds); i++) {
		json_object *row = jarray_at(preds, i), *p = jget(row, "prediction");

		fputs("<tr>", f);
		td(f, "nw", jget_str(row, "name"));
		td(f, "num", fmt_binary(jget_u64(row, "working_set_bytes"), a));
		fmt_iops(jget_double(p, "iops"), a);
		td(f, "num", a);
		fmt_secs(schema_prediction_s(p, "chunk_s"), a);
		td(f, "num", a);
		fmt_secs(schema_prediction_s(p, "worst_chunk_s"), a);
		td(f, "num", a);
		fmt_secs(schema_prediction_s(p, "cold_prompt_s"), a);
		td(f, "num", a);
		snprintf(a, sizeof(a), "%.2fx", jget_double(p, "margin"));
		td(f, "num", a);
		st_cell(f, schema_prediction_status(p));
		fputs("</tr>\n", f);
	}
	table_close(f);
	fputs("</section>\n", f);
	report_chart_prediction(f, preds);
	fputs("</div>\n", f);
}

/* this node's runs against the reference node's: A, B and B/A for IOPS, p50 and p99.9, then the chart */
static void html_reference(FILE *f, json_object *ref, json_object *acc, json_object *rruns)
{
	json_object *runs = schema_accept_runs(acc);

	fputs("<h2>Against the reference node</h2>\n<p class=\"meta\">A: ", f);
	html_esc(f, jget_str(ref, "node"));
	fputs(" (", f);
	html_esc(f, jget_str(ref, "file"));
	fputs(", accept record sha256 <code>", f);
	html_esc(f, jget_str(ref, "sha256"));
	fputs("</code>); B: this node, ", f);
	html_esc(f, schema_host(acc));
	fputs(". Ratios are B/A: below 1 for IOPS, above 1 for latency, is worse than the reference.</p>\n"
	      "<div class=\"grid\">\n<section>\n", f);
	table_open(f, NULL, jlen(runs));
	table_head(f, "<th>run</th><th>IOPS A</th><th>IOPS B</th><th>B/A</th><th>p50 A</th><th>p50 B</th><th>B/A</th>"
		      "<th>p99.9 A</th><th>p99.9 B</th><th>B/A</th>");
	for (size_t i = 0; i < jlen(runs); i++) {
		json_object *b = jarray_at(runs, i), *a = find_run(rruns, jget_str(b, "name"));
		char c[9][32];

		if (!a)
			continue;
		report_compare_cells(a, b, c);
		fputs("<tr>", f);
		td(f, "nw", jget_str(b, "name"));
		for (unsigned k = 0; k < 9; k++)
			td(f, "num", c[k]);
		fputs("</tr>\n", f);
	}
	table_close(f);
	fputs("</section>\n", f);
	report_chart_compare(f, runs, rruns);
	fputs("</div>\n", f);
}

/* accept --sustain: the sentence, the intervals' table and chart, the random runs before and after */
static void html_sustain(FILE *f, json_object *acc, json_object *sus)
{
	_cleanup_free_ char *sum = report_sustain_summary(sus);
	json_object *iv = jget(sus, "intervals"), *runs = jget(sus, "runs");

	fputs("<h2>Sustained load</h2>\n<p class=\"meta\">", f);
	html_esc(f, sum);
	fputs("</p>\n<div class=\"grid\">\n<section>\n", f);
	table_open(f, NULL, jlen(iv));
	table_head(f, "<th>interval</th><th>start s</th><th>IOPS</th><th>p50</th><th>p99.9</th>");
	for (size_t i = 0; i < jlen(iv); i++) {
		json_object *v = jarray_at(iv, i);
		char a[32], b[32], c[32], d[32], e[32];

		snprintf(a, sizeof(a), "%zu%s", i + 1, jget_bool(v, "complete") ? "" : " (cut)");
		snprintf(b, sizeof(b), "%" PRIu64, jget_u64(v, "start_s"));
		fmt_iops(jget_double(v, "iops"), c);
		fmt_us(jget_double(v, "p50_us"), d);
		fmt_us(jget_double(v, "p99_9_us"), e);
		fputs("<tr>", f);
		td(f, "num", a);
		td(f, "num", b);
		td(f, "num", c);
		td(f, "num", d);
		td(f, "num", e);
		fputs("</tr>\n", f);
	}
	table_close(f);
	fputs("</section>\n", f);
	report_chart_sustain(f, sus);
	fputs("</div>\n", f);
	if (!jlen(runs))
		return;
	fputs("<h3>The random runs again, after the sustained load</h3>\n", f);
	table_open(f, NULL, jlen(runs));
	table_head(f, "<th>run</th><th>IOPS before</th><th>IOPS after</th><th>p99.9 before</th><th>p99.9 after</th>"
		      "<th>worst chunk before</th><th>worst chunk after</th>");
	for (size_t i = 0; i < jlen(runs); i++) {
		json_object *after = jarray_at(runs, i);
		char c[6][32];

		report_sustain_cells(schema_accept_run(acc, jget_str(after, "name")), after, c);
		fputs("<tr>", f);
		td(f, "nw", jget_str(after, "name"));
		for (unsigned k = 0; k < 6; k++)
			td(f, "num", c[k]);
		fputs("</tr>\n", f);
	}
	table_close(f);
}

static void html_accept(FILE *f, json_object *rep, json_object *acc)
{
	json_object *runs = schema_accept_runs(acc), *gates = schema_accept_gates(acc), *sweep = jget(acc, "sweep");
	json_object *ref = jget(rep, "reference"), *ra = report_accept_of(jget(ref, "accept"));
	json_object *rruns = schema_accept_runs(ra);

	html_accept_meta(f, acc);
	fputs("<div class=\"grid\">\n", f);
	html_runs(f, runs);
	html_gates(f, gates);
	fputs("</div>\n<h3>Latency against the gates</h3>\n<div class=\"grid\">\n", f);
	report_chart_pctl(f, runs, gates, rruns);
	report_chart_persec(f, runs, gates, rruns);
	fputs("</div>\n<h3>Latency distribution of each run</h3>\n<div class=\"grid\">\n", f);
	for (size_t i = 0; i < jlen(runs); i++) {
		json_object *r = jarray_at(runs, i);
		report_chart_hist(f, r, gates, find_run(rruns, jget_str(r, "name")));
	}
	fputs("</div>\n", f);
	if (jlen(sweep))
		html_sweep(f, sweep, ra);
	html_prediction(f, acc);
	if (jget_object(acc, "sustain"))
		html_sustain(f, acc, jget(acc, "sustain"));
	if (ra)
		html_reference(f, ref, acc, rruns);
}

static void html_records(FILE *f, json_object *rep)
{
	fputs("<section class=\"records\">\n<h2>Records</h2>\n", f);
	table_open(f, NULL, jlen(jget(rep, "records")));
	fputs("<thead><tr><th>step</th><th>sha256 of the embedded record (", f);
	html_esc(f, jget_str(rep, "record_hash") ?: "json-c text");
	fputs(")</th></tr></thead>\n", f);
	table_head(f, NULL);
	for (size_t i = 0; i < jlen(jget(rep, "records")); i++) {
		json_object *e = jarray_at(jget(rep, "records"), i);
		fputs("<tr>", f);
		td(f, "nw", jget_str(e, "step"));
		td(f, "hash", jget_str(e, "sha256"));
		fputs("</tr>\n", f);
	}
	table_close(f);
	fputs("</section>\n</body></html>\n", f);
}

char *report_html(json_object *rep, const struct profile *p)
{
	json_object *steps = jget(rep, "steps"), *acc = jget(steps, "accept"), *pre = jget(steps, "preflight");
	char *html = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&html, &len);

	(void)p; /* the gates drawn are those the accept record was measured against */
	if (!f)
		abort();
	html_head(f, rep);
	html_signature(f, rep);
	fputs("<div class=\"grid\">\n", f);
	html_steps(f, jget(rep, "summary"));
	fputs("<section>\n", f);
	html_drives(f, rep);
	fputs("</section>\n", f);
	if (pre)
		html_trap(f, pre);
	if (jget(steps, "backup"))
		html_backup(f, jget(steps, "backup"));
	fputs("</div>\n", f);
	if (acc)
		html_accept(f, rep, acc);
	html_records(f, rep);
	fclose(f);
	return html;
}
