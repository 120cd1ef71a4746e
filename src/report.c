/* SPDX-License-Identifier: MIT */
/* The report: step judgements, verdict, record hashes, report.json assembly, txt and html. */
#include "util.h"
#include "report.h"
#include "profile.h"
#include "size.h"
#include "out.h"

#include <inttypes.h>
#include <math.h>
#include <sys/utsname.h>
#include <time.h>

const char *const report_known_steps[] = { "preflight", "backup", "plan", "clone", "restore", "verify", "accept" };
const size_t report_known_steps_n = ARRAY_SIZE(report_known_steps);

bool report_step_required(const char *step)
{
	return streq(step, "preflight") || streq(step, "backup") || streq(step, "verify") || streq(step, "accept");
}

static bool clone_trap_check(const char *id)
{
	return streq(id, "raw-clone") || streq(id, "gpt-backup-header") || streq(id, "partition-fit");
}

static size_t jlen(json_object *a)
{
	return a && json_object_is_type(a, json_type_array) ? json_object_array_length(a) : 0;
}

/* First check with status `st`: "id: summary". */
static char *first_check(json_object *rec, const char *st)
{
	json_object *checks = jget(rec, "checks");

	for (size_t i = 0; i < jlen(checks); i++) {
		json_object *c = json_object_array_get_idx(checks, i);
		if (streq(jget_str(c, "status"), st))
			return xasprintf("%s: %s", jget_str(c, "id") ?: "?", jget_str(c, "summary") ?: "");
	}
	return NULL;
}

static bool path_possible(json_object *rec, const char *path)
{
	return jget_bool(jget(jget(rec, "paths"), path), "possible");
}

void report_engine_gates(json_object *accept, bool *run, bool *failed)
{
	json_object *gates = jget(accept, "gates"), *flag = jget(accept, "engine_gates_run");
	size_t engine = 0;

	*failed = false;
	for (size_t i = 0; i < jlen(gates); i++) {
		json_object *g = json_object_array_get_idx(gates, i);
		const char *name = jget_str(g, "name");

		if (!(name && startswith(name, "engine")) && !streq(jget_str(g, "kind"), "engine"))
			continue;
		engine++;
		if (streq(jget_str(g, "status"), "fail"))
			*failed = true;
	}
	*run = flag ? json_object_get_boolean(flag) : engine > 0;
}

static void backup_fields(json_object *rec, const char **path, const char **sha, uint64_t *bytes, uint64_t *entries)
{
	json_object *a = jget(rec, "archive"), *e = jget(rec, "entries");

	*path = NULL, *sha = jget_str(rec, "sha256"), *bytes = jget_u64(rec, "bytes");
	if (a && json_object_is_type(a, json_type_object)) {
		*path = jget_str(a, "path");
		*sha = *sha ?: jget_str(a, "sha256");
		*bytes = *bytes ?: jget_u64(a, "bytes");
		e = e ?: jget(a, "entries");
	} else
		*path = jget_str(rec, "archive") ?: jget_str(rec, "path");
	*entries = e && json_object_is_type(e, json_type_array) ? jlen(e) : e ? json_object_get_uint64(e) : 0;
}

static char *pass_why(const char *step, json_object *rec)
{
	json_object *checks = jget(rec, "checks");
	char a[32], b[32];

	if (streq(step, "backup")) {
		const char *path, *sha;
		uint64_t bytes, entries;

		backup_fields(rec, &path, &sha, &bytes, &entries);
		if (path || sha)
			return xasprintf("'%s': %" PRIu64 " entries, %s bytes, sha256 %.16s...", path ?: "?", entries,
					 fmt_thousands(bytes, a), sha ?: "unknown");
	}
	if (streq(step, "accept")) {
		json_object *gates = jget(rec, "gates");
		size_t pass = 0;
		bool run, failed;

		for (size_t i = 0; i < jlen(gates); i++)
			pass += streq(jget_str(json_object_array_get_idx(gates, i), "status"), "pass");
		report_engine_gates(rec, &run, &failed);
		return xasprintf("%zu of %zu gates passed; engine gates %s", pass, jlen(gates),
				 run ? "run" : "not run (cold-boot 157 K prompt, full bench)");
	}
	if (streq(step, "preflight") && jget(rec, "source")) {
		return xasprintf("source %s B, target %s B; raw clone %s", fmt_thousands(jget_u64(jget(rec, "source"), "size_bytes"), a),
				 fmt_thousands(jget_u64(jget(rec, "target"), "size_bytes"), b),
				 path_possible(rec, "raw_clone") ? "possible" : "impossible");
	}
	return xasprintf("%zu checks passed", jlen(checks));
}

bool report_preflight_trap(json_object *rec)
{
	const char *verdict = jget_str(rec, "verdict");
	json_object *checks = jget(rec, "checks");
	bool only_trap = true, any = false;

	if (!streq(verdict, "fail") && !streq(verdict, REPORT_VERDICT_TRAP))
		return false;
	if (!path_possible(rec, "fs_clone") && !path_possible(rec, "fresh_install"))
		return false;
	for (size_t i = 0; i < jlen(checks); i++) {
		json_object *c = json_object_array_get_idx(checks, i);
		if (streq(jget_str(c, "status"), "fail")) {
			any = true;
			only_trap = only_trap && clone_trap_check(jget_str(c, "id"));
		}
	}
	return any && only_trap;
}

const char *report_step_word(const char *step, json_object *rec, enum status st)
{
	if (streq(step, "preflight") && st == ST_PASS && report_preflight_trap(rec))
		return REPORT_VERDICT_TRAP;
	return status_name(st);
}

enum status report_judge_step(const char *step, json_object *rec, char **why)
{
	const char *verdict = jget_str(rec, "verdict");

	if (!rec) {
		*why = xstrdup("not run");
		return ST_SKIP;
	}
	if (streq(step, "accept")) {
		bool run, failed;

		report_engine_gates(rec, &run, &failed);
		if (failed && !streq(verdict, "fail")) {
			*why = xstrdup("an engine gate failed");
			return ST_FAIL;
		}
	}
	if (streq(verdict, "pass")) {
		*why = pass_why(step, rec);
		return ST_PASS;
	}
	if (streq(verdict, "warn")) {
		*why = first_check(rec, "warn") ?: xstrdup("passed with warnings");
		return ST_WARN;
	}
	if (streq(step, "preflight") && report_preflight_trap(rec)) {
		*why = xasprintf("clone trap found, a path exists: raw clone impossible; possible: %s%s%s",
				 path_possible(rec, "fresh_install") ? "fresh install + restore" : "",
				 path_possible(rec, "fresh_install") && path_possible(rec, "fs_clone") ? ", " : "",
				 path_possible(rec, "fs_clone") ? "filesystem-aware clone" : "");
		return ST_PASS;
	}
	*why = first_check(rec, "fail") ?: xasprintf("verdict '%s'", verdict ?: "missing");
	return ST_FAIL;
}

const char *report_verdict_name(enum report_verdict v)
{
	return v == RV_ACCEPTED ? "accepted" : v == RV_REJECTED ? "rejected" : "incomplete";
}

enum report_verdict report_verdict(json_object *steps, json_object *missing, char **why)
{
	_cleanup_free_ char *failed = NULL, *absent = NULL;

	for (size_t i = 0; i < report_known_steps_n; i++) {
		const char *step = report_known_steps[i];
		json_object *rec = jget(steps, step);
		_cleanup_free_ char *w = NULL;
		enum status st = report_judge_step(step, rec, &w);

		/* plan is advice: a failed rehearsal of path 2 is not a failed swap when path 1 was taken */
		if (st == ST_FAIL && !streq(step, "plan") && !failed)
			failed = xasprintf("%s failed: %s", step, w);
		if (st == ST_SKIP && report_step_required(step)) {
			if (missing)
				json_object_array_add(missing, json_object_new_string(step));
			char *n = xasprintf("%s%s%s", absent ?: "", absent ? ", " : "", step);
			free(absent);
			absent = n;
		}
		if (streq(step, "accept") && rec && st != ST_FAIL) {
			bool run, efailed;

			report_engine_gates(rec, &run, &efailed);
			if (!run) {
				const char *what = "accept engine gates (cold-boot 157 K prompt, full bench)";
				if (missing)
					json_object_array_add(missing, json_object_new_string(what));
				char *n = xasprintf("%s%s%s", absent ?: "", absent ? ", " : "", what);
				free(absent);
				absent = n;
			}
		}
	}
	if (failed) {
		*why = TAKE_PTR(failed);
		return RV_REJECTED;
	}
	if (absent) {
		*why = xasprintf("missing: %s", absent);
		return RV_INCOMPLETE;
	}
	*why = xstrdup("preflight, backup, verify and accept (with the engine gates) passed");
	return RV_ACCEPTED;
}

/* A number as RFC 8785 (ECMAScript's Number::toString) writes it: the shortest digits that read
 * back as the same double, without exponent from 1e-6 to 1e21. */
static void canon_number(FILE *f, double d)
{
	char buf[40], digits[24];
	int exp10 = 0, k = 0, n;

	if (!isfinite(d)) { /* not JSON; json-c never parses one */
		fputs("null", f);
		return;
	}
	if (d == 0) {
		fputc('0', f);
		return;
	}
	if (d < 0) {
		fputc('-', f);
		d = -d;
	}
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*e", prec - 1, d);
		if (strtod(buf, NULL) == d)
			break;
	}
	/* buf is "D.DDDDe+XX": the digits and the exponent */
	for (const char *p = buf; *p && *p != 'e'; p++)
		if (*p >= '0' && *p <= '9')
			digits[k++] = *p;
	digits[k] = '\0';
	exp10 = atoi(strchr(buf, 'e') + 1);
	while (k > 1 && digits[k - 1] == '0')
		digits[--k] = '\0';
	n = exp10 + 1; /* the decimal point sits after n digits */
	if (k <= n && n <= 21) {
		fputs(digits, f);
		for (int i = k; i < n; i++)
			fputc('0', f);
	} else if (0 < n && n <= 21)
		fprintf(f, "%.*s.%s", n, digits, digits + n);
	else if (-6 < n && n <= 0) {
		fputs("0.", f);
		for (int i = n; i < 0; i++)
			fputc('0', f);
		fputs(digits, f);
	} else {
		fputc(digits[0], f);
		if (k > 1)
			fprintf(f, ".%s", digits + 1);
		fprintf(f, "e%c%d", n - 1 < 0 ? '-' : '+', abs(n - 1));
	}
}

static void canon_string(FILE *f, const char *s, size_t len)
{
	fputc('"', f);
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		switch (c) {
		case '"': fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\b': fputs("\\b", f); break;
		case '\f': fputs("\\f", f); break;
		case '\n': fputs("\\n", f); break;
		case '\r': fputs("\\r", f); break;
		case '\t': fputs("\\t", f); break;
		default:
			if (c < 0x20)
				fprintf(f, "\\u%04x", c);
			else
				fputc(c, f);
		}
	}
	fputc('"', f);
}

static int key_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void canon(FILE *f, json_object *v)
{
	switch (json_object_get_type(v)) {
	case json_type_null:
		fputs("null", f);
		break;
	case json_type_boolean:
		fputs(json_object_get_boolean(v) ? "true" : "false", f);
		break;
	case json_type_int: {
		/* as the double it is for any other JSON tool (jq, JavaScript): 2^64-1 and 1.8446744073709552e19 agree */
		int64_t i = json_object_get_int64(v);
		canon_number(f, i == INT64_MAX ? (double)json_object_get_uint64(v) : (double)i);
		break;
	}
	case json_type_double:
		canon_number(f, json_object_get_double(v));
		break;
	case json_type_string:
		canon_string(f, json_object_get_string(v), (size_t)json_object_get_string_len(v));
		break;
	case json_type_array:
		fputc('[', f);
		for (size_t i = 0; i < json_object_array_length(v); i++) {
			if (i)
				fputc(',', f);
			canon(f, json_object_array_get_idx(v, i));
		}
		fputc(']', f);
		break;
	case json_type_object: {
		size_t n = (size_t)json_object_object_length(v), k = 0;
		const char **keys = xcalloc(n ? n : 1, sizeof(*keys));

		json_object_object_foreach(v, key, val) {
			(void)val;
			keys[k++] = key;
		}
		qsort(keys, k, sizeof(*keys), key_cmp);
		fputc('{', f);
		for (size_t i = 0; i < k; i++) {
			if (i)
				fputc(',', f);
			canon_string(f, keys[i], strlen(keys[i]));
			fputc(':', f);
			canon(f, json_object_object_get(v, keys[i]));
		}
		fputc('}', f);
		free(keys);
		break;
	}
	}
}

char *report_canonical_json(json_object *v)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		abort();
	canon(f, v);
	if (fclose(f) != 0)
		abort();
	return text;
}

int report_record_sha256(json_object *rec, char hex[65])
{
	_cleanup_free_ char *text = report_canonical_json(rec);

	return sha256_buf(text, strlen(text), hex);
}

/* Reports made before REPORT_RECORD_HASH: json-c's plain text of the record (keys in record order). */
static int record_sha256_jsonc(json_object *rec, char hex[65])
{
	const char *text = json_object_to_json_string_ext(rec, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);

	return sha256_buf(text, strlen(text), hex);
}

int report_build(const char *state_dir, json_object **out)
{
	json_object *rep = json_object_new_object(), *steps = json_object_new_object();
	json_object *records = json_object_new_array(), *summary = json_object_new_array();
	json_object *missing = json_object_new_array();
	_cleanup_free_ char *why = NULL;
	struct utsname u;
	char now[32];

	iso8601_utc(time(NULL), now);
	jset_str(rep, "schema", "swaptool-report/1");
	jset_str(rep, "version", SWAPTOOL_VERSION);
	jset_str(rep, "host", host_name());
	jset_str(rep, "kernel", uname(&u) == 0 ? u.release : NULL);
	jset_str(rep, "created", now);

	for (size_t i = 0; i < report_known_steps_n; i++) {
		const char *step = report_known_steps[i];
		_cleanup_free_ char *file = xasprintf("%s/%s.json", state_dir, step), *w = NULL;
		json_object *rec = NULL, *s = json_object_new_object();
		char hex[65], fhex[65];
		int r = record_load(state_dir, step, &rec);
		enum status st;

		if (r < 0 && r != -ENOENT) {
			json_object_put(rep);
			json_object_put(steps);
			json_object_put(records);
			json_object_put(summary);
			json_object_put(missing);
			json_object_put(s);
			return r;
		}
		st = report_judge_step(step, rec, &w);
		jset_str(s, "step", step);
		jset_str(s, "status", rec ? report_step_word(step, rec, st) : "missing");
		jset_str(s, "finished", jget_str(rec, "finished"));
		jset_str(s, "host", jget_str(rec, "host"));
		jset_str(s, "why", w);
		json_object_array_add(summary, s);
		if (!rec)
			continue;
		json_object_object_add(steps, step, rec);
		json_object *e = json_object_new_object();
		report_record_sha256(rec, hex);
		jset_str(e, "step", step);
		jset_str(e, "file", file);
		jset_str(e, "sha256", hex);
		jset_str(e, "file_sha256", sha256_path(file, fhex, NULL) == 0 ? fhex : NULL);
		json_object_array_add(records, e);
	}
	/* The node the records are about (the report may be made elsewhere): preflight's, else the first. */
	{
		const char *node = jget_str(jget(steps, "preflight"), "host");
		for (size_t i = 0; !node && i < report_known_steps_n; i++)
			node = jget_str(jget(steps, report_known_steps[i]), "host");
		jset_str(rep, "node", node);
	}
	jset_str(rep, "record_hash", REPORT_RECORD_HASH);
	jset_str(rep, "verdict", report_verdict_name(report_verdict(steps, missing, &why)));
	jset_str(rep, "why", why);
	json_object_object_add(rep, "missing", missing);
	json_object_object_add(rep, "signer", NULL);
	json_object_object_add(rep, "summary", summary);
	json_object_object_add(rep, "records", records);
	json_object_object_add(rep, "steps", steps);
	*out = rep;
	return 0;
}

int report_check_hashes(json_object *report, char **why)
{
	json_object *records = jget(report, "records"), *steps = jget(report, "steps");
	const char *method = jget_str(report, "record_hash");
	int (*hash)(json_object *, char[65]) = report_record_sha256;
	size_t n = 0;

	if (!steps || !json_object_is_type(steps, json_type_object) || !json_object_is_type(records, json_type_array)) {
		*why = xstrdup("the report has no records or steps");
		return -EBADMSG;
	}
	if (!jget(report, "record_hash"))
		hash = record_sha256_jsonc;
	else if (!streq(method, REPORT_RECORD_HASH)) {
		*why = xasprintf("unknown record hash '%s' (this swaptool knows %s)", method ?: "?", REPORT_RECORD_HASH);
		return -EBADMSG;
	}
	for (size_t i = 0; i < jlen(records); i++) {
		json_object *e = json_object_array_get_idx(records, i);
		const char *step = jget_str(e, "step"), *want = jget_str(e, "sha256");
		json_object *rec = jget(steps, step ?: "");
		char hex[65];

		if (!rec) {
			*why = xasprintf("record '%s' is listed but not embedded", step ?: "?");
			return -EBADMSG;
		}
		hash(rec, hex);
		if (!streq(hex, want)) {
			*why = xasprintf("record '%s' does not match its sha256 (changed after the report was made)", step);
			return -EBADMSG;
		}
	}
	json_object_object_foreach(steps, key, val) {
		bool listed = false;

		(void)val;
		for (size_t i = 0; i < jlen(records); i++)
			listed = listed || streq(jget_str(json_object_array_get_idx(records, i), "step"), key);
		if (!listed) {
			*why = xasprintf("record '%s' is embedded without a hash", key);
			return -EBADMSG;
		}
		n++;
	}
	if (!n) {
		/* nothing to check a verdict against: a report whose records were all removed */
		*why = xstrdup("the report embeds no step records");
		return -EBADMSG;
	}
	*why = xasprintf("%zu record hashes match", n);
	return 0;
}

int report_check_verdict(json_object *report, char **why)
{
	json_object *steps = jget(report, "steps");
	const char *claimed = jget_str(report, "verdict");
	_cleanup_free_ char *vwhy = NULL;
	enum report_verdict v;
	size_t n = 0;

	if (!steps || !json_object_is_type(steps, json_type_object) || !json_object_object_length(steps)) {
		*why = xasprintf("the report embeds no step records: its verdict '%s' rests on nothing", claimed ?: "?");
		return -EBADMSG;
	}
	/* each record's own verdict is the worst of its checks (record_finish) */
	json_object_object_foreach(steps, step, rec) {
		json_object *checks = jget(rec, "checks");
		enum status worst = ST_PASS;
		const char *want;

		if (!json_object_is_type(rec, json_type_object) || (checks && !json_object_is_type(checks, json_type_array))) {
			*why = xasprintf("record '%s' is not a step record", step);
			return -EBADMSG;
		}
		for (size_t i = 0; i < jlen(checks); i++) {
			enum status st;

			if (status_parse(jget_str(json_object_array_get_idx(checks, i), "status"), &st) < 0) {
				*why = xasprintf("record '%s': check %zu has no valid status", step, i + 1);
				return -EBADMSG;
			}
			if (st > worst)
				worst = st;
		}
		want = worst == ST_FAIL ? "fail" : worst == ST_WARN ? "warn" : "pass";
		/* preflight names its clone-trap finding "trap" (records made before the word say "fail") */
		if (streq(step, "preflight") && worst == ST_FAIL && streq(jget_str(rec, "verdict"), REPORT_VERDICT_TRAP) &&
		    report_preflight_trap(rec))
			want = REPORT_VERDICT_TRAP;
		if (!streq(jget_str(rec, "verdict"), want)) {
			*why = xasprintf("record '%s' says '%s' but its checks say '%s'", step, jget_str(rec, "verdict") ?: "?",
					 want);
			return -EBADMSG;
		}
		n++;
	}
	v = report_verdict(steps, NULL, &vwhy);
	if (!streq(claimed, report_verdict_name(v))) {
		*why = xasprintf("the report says '%s' but its records say '%s' (%s)", claimed ?: "?", report_verdict_name(v),
				 vwhy);
		return -EBADMSG;
	}
	*why = xasprintf("'%s' follows from the %zu embedded records (%s)", claimed, n, vwhy);
	return 0;
}

json_object *report_accept_of(json_object *doc)
{
	if (streq(jget_str(doc, "schema"), "swaptool-report/1"))
		return jget(jget(doc, "steps"), "accept");
	if (streq(jget_str(doc, "step"), "accept"))
		return doc;
	return NULL;
}

bool report_gate_of_run(const char *gate, const char *run)
{
	size_t n = strlen(run);

	return gate && strncmp(gate, run, n) == 0 && (gate[n] == '\0' || gate[n] == '-' || gate[n] == '_' || gate[n] == '.');
}

/* ---- text ---- */

static const char *u64s(json_object *o, const char *key, char buf[32])
{
	return jget(o, key) ? fmt_thousands(jget_u64(o, key), buf) : "-";
}

/* "68.8 K" as the write-up writes IOPS. */
static void fmt_iops(double v, char buf[32])
{
	if (v >= 1000)
		snprintf(buf, 32, "%.1f K", v / 1000);
	else
		snprintf(buf, 32, "%.0f", v);
}

static void fmt_us(double v, char buf[32])
{
	if (v >= 1000)
		snprintf(buf, 32, "%.2f ms", v / 1000);
	else
		snprintf(buf, 32, "%.0f us", v);
}

char *report_value_text(json_object *v)
{
	if (!v)
		return xstrdup("-");
	if (json_object_is_type(v, json_type_string))
		return xstrdup(json_object_get_string(v));
	if (json_object_is_type(v, json_type_double)) {
		/* json-c keeps 17 significant digits (376.31900000000002): people read one decimal */
		double d = json_object_get_double(v);
		return d == floor(d) && fabs(d) < 1e15 ? xasprintf("%.0f", d) : xasprintf("%.1f", d);
	}
	return xstrdup(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
}

static char *json_text(json_object *v)
{
	return report_value_text(v);
}

/* A gate's threshold as people read it: ">= 60000 IOPS". */
char *report_gate_threshold(json_object *g)
{
	_cleanup_free_ char *v = NULL;
	json_object *t = jget(g, "threshold");
	const char *op = jget_str(g, "op"), *unit = jget_str(g, "unit");

	if (!t)
		return xstrdup("-");
	v = report_value_text(t);
	if (json_object_is_type(t, json_type_string))
		return TAKE_PTR(v);
	return xasprintf("%s%s%s%s%s", op ?: "", op ? " " : "", v, unit ? " " : "", unit ?: "");
}

char *report_text(json_object *rep)
{
	json_object *steps = jget(rep, "steps"), *pre = jget(steps, "preflight"), *acc = jget(steps, "accept");
	json_object *summary = jget(rep, "summary"), *signer = jget(rep, "signer");
	char *text = NULL, a[32], b[32], c[32];
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		abort();
	fprintf(f, "swaptool report for %s: made on %s at %s (swaptool %s, kernel %s)\n",
		jget_str(rep, "node") ?: jget_str(rep, "host") ?: "?", jget_str(rep, "host") ?: "?",
		jget_str(rep, "created") ?: "?", jget_str(rep, "version") ?: "?", jget_str(rep, "kernel") ?: "?");
	fprintf(f, "verdict: %s  %s\n", jget_str(rep, "verdict") ?: "?", jget_str(rep, "why") ?: "");

	{
		_cleanup_table_ struct table *t = table_new(4);

		table_header(t, "step", "finished", "status", "why");
		for (size_t i = 0; i < jlen(summary); i++) {
			json_object *s = json_object_array_get_idx(summary, i);
			table_row(t, jget_str(s, "step") ?: "?", jget_str(s, "finished"), jget_str(s, "status") ?: "?",
				  jget_str(s, "why") ?: "");
		}
		fprintf(f, "\nSteps\n");
		table_fprint(f, t, false);
	}

	if (pre) {
		json_object *src = jget(pre, "source"), *tgt = jget(pre, "target");
		json_object *gpt = jget(jget(src, "partition_table"), "backup_header_lba");
		_cleanup_table_ struct table *t = table_new(3);

		table_header(t, "", "old (source)", "new (target)");
		table_row(t, "device", jget_str(src, "path"), jget_str(jget(acc, "target"), "path") ?: jget_str(tgt, "spec"));
		table_row(t, "model", jget_str(src, "model"),
			  jget_str(tgt, "model") ?: jget_str(jget(pre, "target_identity"), "model") ?:
			  jget_str(jget(acc, "target"), "model"));
		table_row(t, "firmware", jget_str(src, "firmware"), jget_str(tgt, "firmware"));
		table_row(t, "bytes", u64s(src, "size_bytes", a), u64s(tgt, "size_bytes", b));
		table_row(t, "size", fmt_tib(jget_u64(src, "size_bytes"), a), fmt_tib(jget_u64(tgt, "size_bytes"), b));
		table_row(t, "LBAs", u64s(src, "lba_count", a), u64s(tgt, "lba_count", b));
		fprintf(f, "\nDrives (old -> new)\n");
		table_fprint(f, t, false);

		fprintf(f, "\nClone trap\n");
		fprintf(f, "  delta: %s bytes (target minus source)\n", fmt_thousands_signed(jget_i64(pre, "delta_bytes"), a));
		if (gpt && jget_u64(tgt, "lba_count"))
			fprintf(f, "  GPT backup header at LBA %s on the old drive; the new drive's last LBA is %s\n",
				fmt_thousands(json_object_get_uint64(gpt), a), fmt_thousands(jget_u64(tgt, "lba_count") - 1, b));
		fprintf(f, "  raw clone %s; filesystem-aware clone %s; fresh install + restore %s\n",
			path_possible(pre, "raw_clone") ? "possible" : "IMPOSSIBLE",
			path_possible(pre, "fs_clone") ? "possible" : "impossible",
			path_possible(pre, "fresh_install") ? "possible" : "impossible");
		json_object *fi = jget(jget(pre, "paths"), "fresh_install");
		if (jget(fi, "refetchable_bytes"))
			fprintf(f, "  re-fetchable %s, irreplaceable %s\n", fmt_decimal(jget_u64(fi, "refetchable_bytes"), a),
				fmt_decimal(jget_u64(fi, "irreplaceable_bytes"), b));
	}

	if (jget(steps, "backup")) {
		const char *path, *sha;
		uint64_t bytes, entries;

		backup_fields(jget(steps, "backup"), &path, &sha, &bytes, &entries);
		fprintf(f, "\nBackup\n  archive  %s\n  bytes    %s\n  entries  %" PRIu64 "\n  sha256   %s\n", path ?: "-",
			fmt_thousands(bytes, a), entries, sha ?: "-");
	}
	for (const char *const *s = (const char *const[]){ "restore", "verify", NULL }; *s; s++) {
		json_object *rec = jget(steps, *s), *checks = jget(rec, "checks");
		size_t n[4] = { 0 };

		if (!rec)
			continue;
		for (size_t i = 0; i < jlen(checks); i++) {
			enum status st = ST_FAIL;
			status_parse(jget_str(json_object_array_get_idx(checks, i), "status"), &st);
			n[st]++;
		}
		fprintf(f, "\n%s\n  verdict %s: %zu checks passed, %zu warned, %zu failed, %zu skipped\n",
			streq(*s, "restore") ? "Restore" : "Restore verification", jget_str(rec, "verdict") ?: "?",
			n[ST_PASS], n[ST_WARN], n[ST_FAIL], n[ST_SKIP]);
		{
			json_object *arc = jget(rec, "archive");
			const char *bpath, *bsha, *vsha = jget_str(arc, "sha256");
			uint64_t bbytes, bentries;

			backup_fields(jget(steps, "backup"), &bpath, &bsha, &bbytes, &bentries);
			if (vsha)
				fprintf(f, "  tarball  %s, sha256 %.16s... %s\n", jget_str(arc, "path") ?: "?", vsha,
					!bsha ? "(no backup record to compare)" : streq(vsha, bsha) ? "(the backup's)" : "(NOT the backup's tarball)");
		}
	}

	if (acc) {
		json_object *runs = jget(acc, "runs"), *gates = jget(acc, "gates");
		bool run, failed;

		fprintf(f, "\nAcceptance on %s (%s, working set %s)\n", jget_str(acc, "host") ?: "?",
			jget_str(jget(acc, "target"), "path") ?: "?",
			fmt_binary(jget_u64(jget(acc, "target"), "working_set_bytes"), a));
		{
			_cleanup_table_ struct table *t = table_new(7);

			table_header(t, "run", "mode", "inflight", "IOPS", "MB/s", "p50", "p99.9");
			for (unsigned k = 2; k < 7; k++)
				table_align(t, k, ALIGN_RIGHT);
			for (size_t i = 0; i < jlen(runs); i++) {
				json_object *r = json_object_array_get_idx(runs, i), *lat = jget(r, "lat_us");

				fmt_iops(jget_double(r, "iops"), a);
				fmt_us(jget_double(lat, "p50"), b);
				fmt_us(jget_double(lat, "p99_9"), c);
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
		{
			_cleanup_table_ struct table *t = table_new(4);

			table_header(t, "gate", "threshold", "measured", "status");
			for (size_t i = 0; i < jlen(gates); i++) {
				json_object *g = json_object_array_get_idx(gates, i);
				_cleanup_free_ char *th = report_gate_threshold(g), *me = json_text(jget(g, "measured"));

				table_row(t, jget_str(g, "name") ?: "?", th, me, jget_str(g, "status") ?: "?");
			}
			fputc('\n', f);
			table_fprint(f, t, false);
		}
		report_engine_gates(acc, &run, &failed);
		fprintf(f, "  engine gates (cold-boot 157 K prompt, full 97-scenario bench): %s\n",
			!run ? "NOT RUN" : failed ? "FAILED" : "passed");
	}

	{
		_cleanup_table_ struct table *t = table_new(2);

		for (size_t i = 0; i < jlen(jget(rep, "records")); i++) {
			json_object *e = json_object_array_get_idx(jget(rep, "records"), i);
			table_row(t, jget_str(e, "step") ?: "?", jget_str(e, "sha256") ?: "?");
		}
		fprintf(f, "\nRecords (sha256 of each embedded record)\n");
		table_fprint(f, t, false);
	}
	if (signer)
		fprintf(f, "\nSigned by %s (%s %s), namespace swaptool-report\n", jget_str(signer, "identity") ?: "?",
			jget_str(signer, "key_type") ?: "?", jget_str(signer, "fingerprint") ?: "?");
	else
		fprintf(f, "\nNot signed\n");
	fclose(f);
	return text;
}

/* ---- html ---- */

static void html_esc(FILE *f, const char *s)
{
	for (; s && *s; s++)
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default: fputc(*s, f);
		}
}

static void html_row(FILE *f, const char *tag, int n, ...)
{
	va_list ap;

	va_start(ap, n);
	fputs("<tr>", f);
	for (int i = 0; i < n; i++) {
		fprintf(f, "<%s>", tag);
		html_esc(f, va_arg(ap, const char *) ?: "-");
		fprintf(f, "</%s>", tag);
	}
	fputs("</tr>\n", f);
	va_end(ap);
}

static const char *const chart_colors[] = { "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b" };

/* Percentile curve per run on log-log axes: x = 1/(1-p) (p50 -> 2 ... p99.9 -> 1000, max at 10^4),
 * y = latency in us; the profile's p50 and p99.9 thresholds drawn dashed at their percentile. */
static void svg_latency(FILE *f, json_object *runs, const struct profile *p)
{
	static const struct { const char *key, *label; double x; } pts[] = {
		{ "p50", "p50", 2 }, { "p90", "p90", 10 }, { "p99", "p99", 100 }, { "p99_9", "p99.9", 1000 }, { "max", "max", 10000 },
	};
	const double W = 640, H = 360, L = 70, R = 150, T = 20, B = 50;
	double lo = INFINITY, hi = 0;

	for (size_t i = 0; i < jlen(runs); i++) {
		json_object *lat = jget(json_object_array_get_idx(runs, i), "lat_us");
		for (size_t k = 0; k < ARRAY_SIZE(pts); k++) {
			double v = jget_double(lat, pts[k].key);
			if (v > 0) {
				lo = fmin(lo, v);
				hi = fmax(hi, v);
			}
		}
	}
	for (size_t i = 0; p && i < p->nruns; i++) {
		if (p->runs[i].max_p50_us)
			lo = fmin(lo, (double)p->runs[i].max_p50_us), hi = fmax(hi, (double)p->runs[i].max_p50_us);
		if (p->runs[i].max_p99_9_us)
			lo = fmin(lo, (double)p->runs[i].max_p99_9_us), hi = fmax(hi, (double)p->runs[i].max_p99_9_us);
	}
	if (!(hi > 0))
		return;
	double d0 = floor(log10(lo)), d1 = ceil(log10(hi));
	if (d1 <= d0)
		d1 = d0 + 1;
#define SX(x) (L + (log10(x) - log10(2)) / (4 - log10(2)) * (W - L - R))
#define SY(y) (T + (d1 - log10(y)) / (d1 - d0) * (H - T - B))
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
		   "role=\"img\" aria-label=\"read latency percentiles per run\">\n", W, H, W, H);
	fprintf(f, "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" fill=\"#fff\" stroke=\"#888\"/>\n", L, T,
		W - L - R, H - T - B);
	for (double d = d0; d <= d1; d++) {
		double y = SY(pow(10, d));
		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>", L, y, W - R, y);
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">%s</text>\n", L - 6, y + 4,
			d >= 3 ? (d >= 6 ? "1 s" : d == 3 ? "1 ms" : d == 4 ? "10 ms" : "100 ms")
			       : (d <= 0 ? "1 us" : d == 1 ? "10 us" : "100 us"));
	}
	for (size_t k = 0; k < ARRAY_SIZE(pts); k++)
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"middle\">%s</text>\n", SX(pts[k].x),
			H - B + 16, pts[k].label);
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"middle\">percentile (log scale)</text>\n",
		L + (W - L - R) / 2, H - 12);
	fprintf(f, "<text x=\"14\" y=\"%.1f\" font-size=\"12\" transform=\"rotate(-90 14 %.1f)\" text-anchor=\"middle\">"
		   "read latency (log scale)</text>\n", T + (H - T - B) / 2, T + (H - T - B) / 2);
	for (size_t i = 0; i < jlen(runs); i++) {
		json_object *r = json_object_array_get_idx(runs, i), *lat = jget(r, "lat_us");
		const char *col = chart_colors[i % ARRAY_SIZE(chart_colors)];

		fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"", col);
		for (size_t k = 0; k < ARRAY_SIZE(pts); k++) {
			double v = jget_double(lat, pts[k].key);
			if (v > 0)
				fprintf(f, "%.1f,%.1f ", SX(pts[k].x), SY(v));
		}
		fputs("\"/>\n", f);
		for (size_t k = 0; k < ARRAY_SIZE(pts); k++) {
			double v = jget_double(lat, pts[k].key);
			if (v > 0)
				fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>", SX(pts[k].x), SY(v), col);
		}
		fprintf(f, "\n<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" fill=\"%s\">", W - R + 10, T + 14 + 16.0 * (double)i, col);
		html_esc(f, jget_str(r, "name") ?: "?");
		fputs("</text>\n", f);
		/* the thresholds of this run's profile entry */
		for (size_t j = 0; p && j < p->nruns; j++) {
			const struct accept_run *pr = &p->runs[j];
			if (!streq(pr->name, jget_str(r, "name")))
				continue;
			if (pr->max_p50_us) {
				fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-dasharray=\"5,4\"/>"
					   "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" fill=\"%s\">",
					SX(2), SY((double)pr->max_p50_us), SX(10), SY((double)pr->max_p50_us), col, SX(2) + 2,
					SY((double)pr->max_p50_us) - 3, col);
				html_esc(f, pr->name);
				fprintf(f, " p50 &lt;= %" PRIu64 " us</text>\n", pr->max_p50_us);
			}
			if (pr->max_p99_9_us) {
				fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-dasharray=\"5,4\"/>"
					   "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" fill=\"%s\">",
					SX(300), SY((double)pr->max_p99_9_us), SX(3000), SY((double)pr->max_p99_9_us), col, SX(300),
					SY((double)pr->max_p99_9_us) - 3, col);
				html_esc(f, pr->name);
				fprintf(f, " p99.9 &lt;= %" PRIu64 " us</text>\n", pr->max_p99_9_us);
			}
		}
	}
	fputs("</svg>\n", f);
#undef SX
#undef SY
}

/* IOPS against working set, when the accept record carries a `sweep` [{working_set_bytes, iops}]. */
static void svg_sweep(FILE *f, json_object *sweep)
{
	const double W = 640, H = 300, L = 70, R = 60, T = 20, B = 50;
	double xlo = INFINITY, xhi = 0, yhi = 0;

	for (size_t i = 0; i < jlen(sweep); i++) {
		json_object *s = json_object_array_get_idx(sweep, i);
		double x = (double)jget_u64(s, "working_set_bytes"), y = jget_double(s, "iops");
		if (x > 0) {
			xlo = fmin(xlo, x);
			xhi = fmax(xhi, x);
			yhi = fmax(yhi, y);
		}
	}
	if (!(xhi > 0) || !(yhi > 0))
		return;
	if (xhi <= xlo)
		xhi = xlo * 10;
#define SX(x) (L + (log10(x) - log10(xlo)) / (log10(xhi) - log10(xlo)) * (W - L - R))
#define SY(y) (T + (1 - (y) / (yhi * 1.1)) * (H - T - B))
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
		   "role=\"img\" aria-label=\"IOPS against working set\">\n", W, H, W, H);
	fprintf(f, "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" fill=\"#fff\" stroke=\"#888\"/>\n", L, T,
		W - L - R, H - T - B);
	fputs("<polyline fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"2\" points=\"", f);
	for (size_t i = 0; i < jlen(sweep); i++) {
		json_object *s = json_object_array_get_idx(sweep, i);
		double x = (double)jget_u64(s, "working_set_bytes");
		if (x > 0)
			fprintf(f, "%.1f,%.1f ", SX(x), SY(jget_double(s, "iops")));
	}
	fputs("\"/>\n", f);
	for (size_t i = 0; i < jlen(sweep); i++) {
		json_object *s = json_object_array_get_idx(sweep, i);
		double x = (double)jget_u64(s, "working_set_bytes"), y = jget_double(s, "iops");
		char a[32], b[32];

		if (!(x > 0))
			continue;
		fmt_iops(y, a);
		fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"#1f77b4\"/><text x=\"%.1f\" y=\"%.1f\" font-size=\"10\">%s</text>"
			   "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"middle\">%s</text>\n",
			SX(x), SY(y), SX(x) + 4, SY(y) - 6, a, SX(x), H - B + 16, fmt_binary((uint64_t)x, b));
	}
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"middle\">working set (log scale)</text>\n",
		L + (W - L - R) / 2, H - 12);
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">0</text>", L - 6, SY(0) + 4);
	fprintf(f, "<text x=\"14\" y=\"%.1f\" font-size=\"12\" transform=\"rotate(-90 14 %.1f)\" text-anchor=\"middle\">"
		   "IOPS</text>\n", T + (H - T - B) / 2, T + (H - T - B) / 2);
	fputs("</svg>\n", f);
#undef SX
#undef SY
}

char *report_html(json_object *rep, const struct profile *p)
{
	json_object *steps = jget(rep, "steps"), *acc = jget(steps, "accept");
	const char *verdict = jget_str(rep, "verdict") ?: "incomplete";
	_cleanup_free_ char *txt = report_text(rep);
	char *html = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&html, &len);

	if (!f)
		abort();
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>swaptool report: ", f);
	html_esc(f, jget_str(rep, "node") ?: jget_str(rep, "host"));
	fputs("</title>\n<style>\n"
	      "body{font-family:system-ui,sans-serif;margin:2em;color:#222;max-width:60em}\n"
	      "table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border:1px solid #ccc;padding:.25em .6em;text-align:left}\n"
	      "th{background:#f3f3f3}.v{font-size:1.4em;font-weight:bold;padding:.4em .8em;display:inline-block}\n"
	      ".accepted{background:#d8f5d8}.incomplete{background:#fff1c2}.rejected{background:#f9d0d0}\n"
	      "pre{background:#f7f7f7;padding:1em;overflow:auto;font-size:.85em}\n"
	      "</style></head><body>\n<h1>swaptool report: ", f);
	html_esc(f, jget_str(rep, "node") ?: jget_str(rep, "host"));
	fprintf(f, "</h1>\n<p class=\"v %s\">%s</p>\n<p>", streq(verdict, "accepted") ? "accepted" : streq(verdict, "rejected") ? "rejected" : "incomplete", verdict);
	html_esc(f, jget_str(rep, "why"));
	fputs("</p>\n<h2>Steps</h2>\n<table>\n", f);
	html_row(f, "th", 4, "step", "finished", "status", "why");
	for (size_t i = 0; i < jlen(jget(rep, "summary")); i++) {
		json_object *s = json_object_array_get_idx(jget(rep, "summary"), i);
		html_row(f, "td", 4, jget_str(s, "step"), jget_str(s, "finished"), jget_str(s, "status"), jget_str(s, "why"));
	}
	fputs("</table>\n", f);
	if (jget(steps, "preflight")) {
		json_object *pre = jget(steps, "preflight"), *src = jget(pre, "source"), *tgt = jget(pre, "target");
		json_object *gpt = jget(jget(src, "partition_table"), "backup_header_lba");
		char a[32], b[32], c[32], d[32];

		fputs("<h2>Drives</h2>\n<table>\n", f);
		html_row(f, "th", 3, "", "old (source)", "new (target)");
		html_row(f, "td", 3, "device", jget_str(src, "path"), jget_str(jget(acc, "target"), "path") ?: jget_str(tgt, "spec"));
		html_row(f, "td", 3, "model", jget_str(src, "model"),
			 jget_str(tgt, "model") ?: jget_str(jget(pre, "target_identity"), "model"));
		html_row(f, "td", 3, "bytes", u64s(src, "size_bytes", a), u64s(tgt, "size_bytes", b));
		html_row(f, "td", 3, "size", fmt_tib(jget_u64(src, "size_bytes"), c), fmt_tib(jget_u64(tgt, "size_bytes"), d));
		html_row(f, "td", 3, "LBAs", u64s(src, "lba_count", a), u64s(tgt, "lba_count", b));
		fputs("</table>\n<h2>Clone trap</h2>\n<table>\n", f);
		html_row(f, "td", 2, "delta (target minus source)", fmt_thousands_signed(jget_i64(pre, "delta_bytes"), a));
		if (gpt && jget_u64(tgt, "lba_count")) {
			html_row(f, "td", 2, "backup GPT header (old drive)", fmt_thousands(json_object_get_uint64(gpt), b));
			html_row(f, "td", 2, "last LBA (new drive)", fmt_thousands(jget_u64(tgt, "lba_count") - 1, c));
		}
		html_row(f, "td", 2, "raw clone", path_possible(pre, "raw_clone") ? "possible" : "impossible");
		html_row(f, "td", 2, "filesystem-aware clone", path_possible(pre, "fs_clone") ? "possible" : "impossible");
		html_row(f, "td", 2, "fresh install + restore", path_possible(pre, "fresh_install") ? "possible" : "impossible");
		fputs("</table>\n", f);
	}
	if (jget(steps, "backup")) {
		const char *path, *sha;
		uint64_t bytes, entries;
		char a[32], b[32];

		backup_fields(jget(steps, "backup"), &path, &sha, &bytes, &entries);
		snprintf(b, sizeof(b), "%" PRIu64, entries);
		fputs("<h2>Backup</h2>\n<table>\n", f);
		html_row(f, "td", 2, "archive", path);
		html_row(f, "td", 2, "bytes", fmt_thousands(bytes, a));
		html_row(f, "td", 2, "entries", b);
		html_row(f, "td", 2, "sha256", sha);
		fputs("</table>\n", f);
	}
	if (acc) {
		json_object *runs = jget(acc, "runs"), *gates = jget(acc, "gates");

		fputs("<h2>Acceptance</h2>\n<table>\n", f);
		html_row(f, "th", 6, "run", "mode", "inflight", "IOPS", "p50", "p99.9");
		for (size_t i = 0; i < jlen(runs); i++) {
			json_object *r = json_object_array_get_idx(runs, i);
			char a[32], b[32], c[32], d[32];

			snprintf(d, sizeof(d), "%" PRIu64, jget_u64(r, "inflight"));
			fmt_iops(jget_double(r, "iops"), a);
			fmt_us(jget_double(jget(r, "lat_us"), "p50"), b);
			fmt_us(jget_double(jget(r, "lat_us"), "p99_9"), c);
			html_row(f, "td", 6, jget_str(r, "name"), jget_str(r, "mode"), d, a, b, c);
		}
		fputs("</table>\n<table>\n", f);
		html_row(f, "th", 4, "gate", "threshold", "measured", "status");
		for (size_t i = 0; i < jlen(gates); i++) {
			json_object *g = json_object_array_get_idx(gates, i);
			_cleanup_free_ char *th = report_gate_threshold(g), *me = json_text(jget(g, "measured"));
			html_row(f, "td", 4, jget_str(g, "name"), th, me, jget_str(g, "status"));
		}
		fputs("</table>\n<h3>Read latency by percentile</h3>\n", f);
		svg_latency(f, runs, p);
		if (jlen(jget(acc, "sweep"))) {
			fputs("<h3>IOPS against working set</h3>\n", f);
			svg_sweep(f, jget(acc, "sweep"));
		}
	}
	fputs("<h2>Summary</h2>\n<pre>", f);
	html_esc(f, txt);
	fputs("</pre>\n</body></html>\n", f);
	fclose(f);
	return html;
}
