/* SPDX-License-Identifier: MIT */
/* report.txt: the report's model (src/report.c) as the human summary, one table per section. */
#include "util.h"
#include "report.h"
#include "report_fmt.h"
#include "schema.h"
#include "size.h"
#include "table.h"

#include <inttypes.h>
#include <math.h>

/* The next line of at most `width` columns of s into buf, cut at a space where there is one;
 * returns where the rest starts. */
static const char *wrap_line(const char *s, char buf[64], size_t width)
{
	size_t n = strlen(s), cut;

	if (n <= width) {
		memcpy(buf, s, n + 1);
		return s + n;
	}
	cut = width;
	while (cut > width / 2 && s[cut] != ' ')
		cut--;
	if (s[cut] != ' ')
		cut = width;
	memcpy(buf, s, cut);
	buf[cut] = '\0';
	s += cut;
	while (*s == ' ')
		s++;
	return s;
}

static const char *u64s(json_object *o, const char *key, char buf[32])
{
	return jget(o, key) ? fmt_thousands(jget_u64(o, key), buf) : "-";
}

/* The --sweep as text: IOPS and p50 per working set (the incident's cliff: 69 K -> 13 K IOPS), with
 * the reference node's point at the same working set and the B/A ratio when there is one. */
static void text_sweep(FILE *f, json_object *sweep, json_object *ref)
{
	_cleanup_table_ struct table *t = NULL;
	bool cmp = ref && jlen(jget(ref, "sweep"));
	char a[32], b[32], c[32], d[32], e[32];

	if (!jlen(sweep))
		return;
	t = table_new(cmp ? 6 : 3);
	if (cmp)
		table_header(t, "working set", "IOPS", "p50", "reference IOPS", "reference p50", "IOPS B/A");
	else
		table_header(t, "working set", "IOPS", "p50");
	for (unsigned k = 1; k < (cmp ? 6u : 3u); k++)
		table_align(t, k, ALIGN_RIGHT);
	for (size_t i = 0; i < jlen(sweep); i++) {
		json_object *r = jarray_at(sweep, i);
		json_object *rr = cmp ? find_ws(jget(ref, "sweep"), jget_u64(r, "working_set_bytes")) : NULL;

		fmt_iops(jget_double(r, "iops"), b);
		fmt_us(jget_double(jget(r, "lat_us"), "p50"), c);
		if (!cmp) {
			table_row(t, fmt_binary(jget_u64(r, "working_set_bytes"), a), b, c);
			continue;
		}
		snprintf(d, 32, "-"), snprintf(e, 32, "-");
		if (rr) {
			fmt_iops(jget_double(rr, "iops"), d);
			fmt_us(jget_double(jget(rr, "lat_us"), "p50"), e);
		}
		{
			char q[32];
			fmt_ratio(rr ? ratio_of(jget_double(r, "iops"), jget_double(rr, "iops")) : NAN, q);
			table_row(t, fmt_binary(jget_u64(r, "working_set_bytes"), a), b, c, d, e, q);
		}
	}
	fprintf(f, "\nSweep: 4 KiB random reads by working set\n");
	table_fprint(f, t, false);
}

/* The engine predicted from the runs and the sweep (src/predict.h, docs/incident.md's arithmetic):
 * what a prefill chunk is, then per working set the chunk at the mean IOPS, the worst chunk, the
 * cold prompt, the margin against the spin limit's low end and the status, and the check's line. */
static void text_prediction(FILE *f, json_object *acc)
{
	_cleanup_json_ json_object *preds = report_predictions(acc);
	json_object *p0 = jget(jarray_at(preds, 0), "prediction"), *spin = jget_object(p0, "spin_limit_s");
	_cleanup_table_ struct table *t = NULL;
	const char *run = NULL;
	json_object *judged = schema_accept_prediction(acc, &run);
	char a[32], b[32], c[32], d[32], e[32];

	if (!jlen(preds))
		return;
	fprintf(f, "\nPredicted engine: a %s-token prefill chunk is %s reads (%s) at %.2f reads per token; "
		"the collective's spin limit is %s-%s s\n",
		u64s(p0, "chunk_tokens", a), u64s(p0, "reads_per_chunk", b), fmt_decimal(jget_u64(p0, "chunk_bytes"), c),
		jget_double(p0, "reads_per_token"), u64s(spin, "low", d), u64s(spin, "high", e));
	t = table_new(8);
	table_header(t, "run", "working set", "IOPS", "chunk at mean", "worst chunk", "cold prompt", "margin", "status");
	for (unsigned k = 1; k < 7; k++)
		table_align(t, k, ALIGN_RIGHT);
	for (size_t i = 0; i < jlen(preds); i++) {
		json_object *row = jarray_at(preds, i), *p = jget(row, "prediction");
		char ws[32], iops[32], mean[32], worst[32], cold[32];

		fmt_iops(jget_double(p, "iops"), iops);
		fmt_secs(schema_prediction_s(p, "chunk_s"), mean);
		fmt_secs(schema_prediction_s(p, "worst_chunk_s"), worst);
		fmt_secs(schema_prediction_s(p, "cold_prompt_s"), cold);
		table_cellf(t, "%s", jget_str(row, "name") ?: "?");
		table_cellf(t, "%s", fmt_binary(jget_u64(row, "working_set_bytes"), ws));
		table_cellf(t, "%s", iops);
		table_cellf(t, "%s", mean);
		table_cellf(t, "%s", worst);
		table_cellf(t, "%s", cold);
		table_cellf(t, "%.2fx", jget_double(p, "margin"));
		table_cellf(t, "%s", schema_prediction_status(p) ?: "?");
	}
	table_fprint(f, t, false);
	fprintf(f, "  cold prompt: the %s-token prompt of the cold boot (%s reads); margin: the spin limit's low end "
		"over the worst chunk (fail past it, warn under 2x)\n",
		u64s(p0, "cold_prompt_tokens", a), u64s(p0, "cold_prompt_reads", b));
	if (!judged)
		return;
	fmt_secs(schema_prediction_s(judged, "worst_chunk_s"), a);
	fprintf(f, "  engine-prediction: %s on %s, worst chunk %s\n", schema_prediction_status(judged) ?: "?", run, a);
}

/* This node (B) against the reference node (A) from report --reference: per run, B/A ratios. */
static void text_compare(FILE *f, json_object *rep, json_object *acc)
{
	json_object *ref = jget(rep, "reference"), *ra = report_accept_of(jget(ref, "accept")), *runs = schema_accept_runs(acc);
	_cleanup_table_ struct table *t = NULL;

	if (!ra)
		return;
	t = table_new(10);
	table_header(t, "run", "IOPS A", "IOPS B", "B/A", "p50 A", "p50 B", "B/A", "p99.9 A", "p99.9 B", "B/A");
	for (unsigned k = 1; k < 10; k++)
		table_align(t, k, ALIGN_RIGHT);
	for (size_t i = 0; i < jlen(runs); i++) {
		json_object *b = jarray_at(runs, i), *a = schema_accept_run(ra, jget_str(b, "name"));
		char c[9][32];

		if (!a)
			continue;
		report_compare_cells(a, b, c);
		table_row(t, jget_str(b, "name") ?: "?", c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8]);
	}
	fprintf(f, "\nAgainst the reference node %s (A; this node %s is B; %s, record sha256 %.16s...)\n",
		jget_str(ref, "node") ?: "?", schema_host(acc) ?: "?", jget_str(ref, "file") ?: "?",
		jget_str(ref, "sha256") ?: "?");
	table_fprint(f, t, false);
}

static void text_steps(FILE *f, json_object *summary)
{
	_cleanup_table_ struct table *t = table_new(4);

	table_header(t, "step", "finished", "status", "why");
	for (size_t i = 0; i < jlen(summary); i++) {
		json_object *s = jarray_at(summary, i);
		table_row(t, jget_str(s, "step") ?: "?", jget_str(s, "finished"), jget_str(s, "status") ?: "?",
			  jget_str(s, "why") ?: "");
	}
	fprintf(f, "\nSteps\n");
	table_fprint(f, t, false);
}

static void text_drives(FILE *f, json_object *rep)
{
	bool owned;
	json_object *d = report_drives_of(rep, &owned);
	_cleanup_table_ struct table *t = table_new(3);

	table_header(t, "", "old drive (source)", "new drive (target)");
	for (size_t i = 0; i < report_drive_nrows; i++) {
		_cleanup_free_ char *o = report_drive_cell(jget(d, "old"), i), *n = report_drive_cell(jget(d, "new"), i);
		const char *po = o, *pn = n;

		/* a long cell (the class reason) over several lines of at most 56 columns */
		for (bool first = true; first || *po || *pn; first = false) {
			char lo[64], ln[64];
			po = wrap_line(po, lo, 56);
			pn = wrap_line(pn, ln, 56);
			table_row(t, first ? report_drive_rows[i].label : "", lo, ln);
		}
	}
	fprintf(f, "\nDrives (old -> new)\n");
	table_fprint(f, t, false);
	/* whether accept measured the drive preflight planned for (report_target_match) */
	if (jget(d, "match"))
		fprintf(f, "  target drive: %s: %s\n", jget_str(jget(d, "match"), "result") ?: "?",
			jget_str(jget(d, "match"), "why") ?: "");
	if (owned)
		json_object_put(d);
}

static void text_trap(FILE *f, json_object *pre)
{
	json_object *src = jget(pre, "source"), *tgt = jget(pre, "target");
	json_object *gpt = jget(jget(src, "partition_table"), "backup_header_lba");
	char a[32], b[32], c[32], d4[32];

	fprintf(f, "\nClone trap\n");
	fprintf(f, "  source %s bytes (%s LBAs), target %s bytes (%s LBAs, preflight's --target %s)\n",
		u64s(src, "size_bytes", a), u64s(src, "lba_count", b), u64s(tgt, "size_bytes", c),
		u64s(tgt, "lba_count", d4), schema_preflight_target_spec(pre) ?: "?");
	fprintf(f, "  delta: %s bytes (target minus source)\n", fmt_thousands_signed(jget_i64(pre, "delta_bytes"), a));
	if (gpt && jget_u64(tgt, "lba_count"))
		fprintf(f, "  GPT backup header at LBA %s on the old drive; the new drive's last LBA is %s\n",
			fmt_thousands(json_object_get_uint64(gpt), a), fmt_thousands(jget_u64(tgt, "lba_count") - 1, b));
	fprintf(f, "  raw clone %s; filesystem-aware clone %s; fresh install + restore %s\n",
		path_possible(pre, SCHEMA_PATH_RAW_CLONE) ? "possible" : "IMPOSSIBLE",
		path_possible(pre, SCHEMA_PATH_FS_CLONE) ? "possible" : "impossible",
		path_possible(pre, SCHEMA_PATH_FRESH_INSTALL) ? "possible" : "impossible");
	json_object *fi = schema_preflight_path(pre, SCHEMA_PATH_FRESH_INSTALL);
	if (jget(fi, "refetchable_bytes"))
		fprintf(f, "  re-fetchable %s, irreplaceable %s\n", fmt_decimal(jget_u64(fi, "refetchable_bytes"), a),
			fmt_decimal(jget_u64(fi, "irreplaceable_bytes"), b));
}

static void text_backup(FILE *f, json_object *backup)
{
	const char *path, *sha;
	uint64_t bytes, entries;
	char a[32];

	backup_fields(backup, &path, &sha, &bytes, &entries);
	fprintf(f, "\nBackup\n  archive  %s\n  bytes    %s\n  entries  %" PRIu64 "\n  sha256   %s\n", path ?: "-",
		fmt_thousands(bytes, a), entries, sha ?: "-");
}

/* restore's or verify's checks counted by status, and the tarball it read against the backup's */
static void text_restored(FILE *f, const char *step, json_object *rec, json_object *backup)
{
	json_object *checks = jget(rec, "checks");
	size_t n[4] = { 0 };

	for (size_t i = 0; i < jlen(checks); i++) {
		enum status st = ST_FAIL;
		status_parse(jget_str(jarray_at(checks, i), "status"), &st);
		n[st]++;
	}
	fprintf(f, "\n%s\n  verdict %s: %zu checks passed, %zu warned, %zu failed, %zu skipped\n",
		streq(step, "restore") ? "Restore" : "Restore verification", schema_verdict(rec) ?: "?",
		n[ST_PASS], n[ST_WARN], n[ST_FAIL], n[ST_SKIP]);
	{
		struct schema_archive read, backed;

		schema_archive(rec, &read);
		schema_archive(backup, &backed);
		if (read.sha256)
			fprintf(f, "  tarball  %s, sha256 %.16s... %s\n", read.path ?: "?", read.sha256,
				!backed.sha256 ? "(no backup record to compare)" : streq(read.sha256, backed.sha256)
										 ? "(the backup's)" : "(NOT the backup's tarball)");
	}
}

static void text_runs(FILE *f, json_object *runs)
{
	_cleanup_table_ struct table *t = table_new(7);
	char a[32], b[32], c[32];

	table_header(t, "run", "mode", "inflight", "IOPS", "MB/s", "p50", "p99.9");
	for (unsigned k = 2; k < 7; k++)
		table_align(t, k, ALIGN_RIGHT);
	for (size_t i = 0; i < jlen(runs); i++) {
		json_object *r = jarray_at(runs, i);

		fmt_iops(jget_double(r, "iops"), a);
		fmt_us(run_lat_us(r, SCHEMA_LAT_P50), b);
		fmt_us(run_lat_us(r, SCHEMA_LAT_P99_9), c);
		table_cellf(t, "%s", jget_str(r, "name") ?: "?");
		table_cellf(t, "%s", jget_str(r, "mode") ?: "?");
		table_cellf(t, "%" PRIu64, jget_u64(r, "inflight"));
		table_cellf(t, "%s", a);
		table_cellf(t, "%.0f", jget_double(r, "mb_s"));
		table_cellf(t, "%s", b);
		table_cellf(t, "%s", c);
	}
	table_fprint(f, t, false);
}

static void text_gates(FILE *f, json_object *gates)
{
	_cleanup_table_ struct table *t = table_new(4);

	table_header(t, "gate", "threshold", "measured", "status");
	for (size_t i = 0; i < jlen(gates); i++) {
		json_object *g = jarray_at(gates, i);
		_cleanup_free_ char *th = report_gate_threshold(g), *me = report_value_text(jget(g, "measured"));

		table_row(t, schema_gate_name(g) ?: "?", th, me, schema_gate_status(g) ?: "?");
	}
	fputc('\n', f);
	table_fprint(f, t, false);
}

/* One bar of the sustained chart: v against max in `width` columns. */
static void text_bar(FILE *f, double v, double max, unsigned width)
{
	unsigned w = max > 0 && v > 0 ? (unsigned)fmin(round(v / max * width), width) : 0;

	fputc('|', f);
	for (unsigned k = 0; k < width; k++)
		fputc(k < w ? '#' : ' ', f);
	fputc('|', f);
}

/* The sustained load's series as bars, one line per interval: IOPS and p99.9, each against its
 * own largest value (a drive that slows shows the IOPS bars shrinking and the p99.9 bars growing). */
static void text_sustain_chart(FILE *f, json_object *intervals)
{
	double imax = 0, pmax = 0;

	for (size_t i = 0; i < jlen(intervals); i++) {
		imax = fmax(imax, jget_double(jarray_at(intervals, i), "iops"));
		pmax = fmax(pmax, jget_double(jarray_at(intervals, i), "p99_9_us"));
	}
	if (!(imax > 0))
		return;
	fprintf(f, "\n  %8s  %-43s  %s\n", "start s", "IOPS", "p99.9");
	for (size_t i = 0; i < jlen(intervals); i++) {
		json_object *v = jarray_at(intervals, i);
		char a[32], b[32];

		fmt_iops(jget_double(v, "iops"), a);
		fmt_us(jget_double(v, "p99_9_us"), b);
		fprintf(f, "  %8" PRIu64 "  ", jget_u64(v, "start_s"));
		text_bar(f, jget_double(v, "iops"), imax, 30);
		fprintf(f, " %10s  ", a);
		text_bar(f, jget_double(v, "p99_9_us"), pmax, 30);
		fprintf(f, " %10s\n", b);
	}
}

/* accept --sustain: the sentence, the series (table and bars), the random runs before and after. */
static void text_sustain(FILE *f, json_object *acc, json_object *sus)
{
	_cleanup_free_ char *sum = report_sustain_summary(sus);
	_cleanup_table_ struct table *t = table_new(5), *r = table_new(7);
	json_object *iv = jget(sus, "intervals"), *runs = jget(sus, "runs");

	fprintf(f, "\nSustained load: %s\n", sum);
	table_header(t, "interval", "start s", "IOPS", "p50", "p99.9");
	for (unsigned k = 0; k < 5; k++)
		table_align(t, k, ALIGN_RIGHT);
	for (size_t i = 0; i < jlen(iv); i++) {
		json_object *v = jarray_at(iv, i);
		char a[32], b[32], c[32];

		fmt_iops(jget_double(v, "iops"), a);
		fmt_us(jget_double(v, "p50_us"), b);
		fmt_us(jget_double(v, "p99_9_us"), c);
		table_cellf(t, "%zu%s", i + 1, jget_bool(v, "complete") ? "" : " (cut)");
		table_cellf(t, "%" PRIu64, jget_u64(v, "start_s"));
		table_cellf(t, "%s", a);
		table_cellf(t, "%s", b);
		table_cellf(t, "%s", c);
	}
	table_fprint(f, t, false);
	text_sustain_chart(f, iv);
	if (!jlen(runs))
		return;
	table_header(r, "run", "IOPS before", "IOPS after", "p99.9 before", "p99.9 after", "worst chunk before",
		     "worst chunk after");
	for (unsigned k = 1; k < 7; k++)
		table_align(r, k, ALIGN_RIGHT);
	for (size_t i = 0; i < jlen(runs); i++) {
		json_object *after = jarray_at(runs, i);
		char c[6][32];

		report_sustain_cells(schema_accept_run(acc, jget_str(after, "name")), after, c);
		table_row(r, jget_str(after, "name") ?: "?", c[0], c[1], c[2], c[3], c[4], c[5]);
	}
	fprintf(f, "\n  the random runs again, after the sustained load:\n");
	table_fprint(f, r, false);
}

static void text_accept(FILE *f, json_object *rep, json_object *acc)
{
	bool run, failed;
	char a[32];

	fprintf(f, "\nAcceptance on %s (%s, working set %s)\n", schema_host(acc) ?: "?",
		schema_accept_target_path(acc) ?: "?",
		fmt_binary(jget_u64(jget(acc, "target"), "working_set_bytes"), a));
	text_runs(f, schema_accept_runs(acc));
	text_gates(f, schema_accept_gates(acc));
	schema_accept_engine_gates(acc, &run, &failed);
	fprintf(f, "  engine gates (cold-boot 157 K prompt, full 97-scenario bench): %s\n",
		!run ? "NOT RUN" : failed ? "FAILED" : "passed");
	text_sweep(f, jget(acc, "sweep"), report_accept_of(jget(jget(rep, "reference"), "accept")));
	text_prediction(f, acc);
	if (jget_object(acc, "sustain"))
		text_sustain(f, acc, jget(acc, "sustain"));
	text_compare(f, rep, acc);
}

static void text_records(FILE *f, json_object *rep)
{
	_cleanup_table_ struct table *t = table_new(2);

	for (size_t i = 0; i < jlen(jget(rep, "records")); i++) {
		json_object *e = jarray_at(jget(rep, "records"), i);
		table_row(t, jget_str(e, "step") ?: "?", jget_str(e, "sha256") ?: "?");
	}
	fprintf(f, "\nRecords (sha256 of each embedded record)\n");
	table_fprint(f, t, false);
}

char *report_text(json_object *rep)
{
	json_object *steps = jget(rep, "steps"), *pre = jget(steps, "preflight"), *acc = jget(steps, "accept");
	json_object *signer = jget(rep, "signer");
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		abort();
	fprintf(f, "swaptool report for %s: made on %s at %s (swaptool %s, kernel %s)\n",
		jget_str(rep, "node") ?: jget_str(rep, "host") ?: "?", jget_str(rep, "host") ?: "?",
		jget_str(rep, "created") ?: "?", jget_str(rep, "version") ?: "?", jget_str(rep, "kernel") ?: "?");
	fprintf(f, "verdict: %s  %s\n", jget_str(rep, "verdict") ?: "?", jget_str(rep, "why") ?: "");
	text_steps(f, jget(rep, "summary"));
	text_drives(f, rep);
	if (pre)
		text_trap(f, pre);
	if (jget(steps, "backup"))
		text_backup(f, jget(steps, "backup"));
	for (const char *const *s = (const char *const[]){ "restore", "verify", NULL }; *s; s++)
		if (jget(steps, *s))
			text_restored(f, *s, jget(steps, *s), jget(steps, "backup"));
	if (acc)
		text_accept(f, rep, acc);
	text_records(f, rep);
	if (signer)
		fprintf(f, "\nSigned by %s (%s %s), namespace swaptool-report\n", jget_str(signer, "identity") ?: "?",
			jget_str(signer, "key_type") ?: "?", jget_str(signer, "fingerprint") ?: "?");
	else
		fprintf(f, "\nNot signed\n");
	fclose(f);
	/* The lines beside the tables hold the records' host names, paths and summaries (records of
	 * other nodes, the reference's among them): escaped as libsmartcols escapes the cells, so that
	 * report.txt cannot drive the terminal that cats it. The tables' cells are escaped already
	 * ("\\x1b" is text) and come through as they are. */
	char *safe = text_safe(text, true);

	free(text);
	return safe;
}
