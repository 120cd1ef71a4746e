/* SPDX-License-Identifier: MIT */
/* The report: step judgements, verdict, record hashes, report.json assembly, txt and html. */
#include "util.h"
#include "report.h"
#include "json.h"
#include "schema.h"
#include "profile.h"
#include "size.h"
#include "table.h"
#include "drives.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <sys/utsname.h>
#include <time.h>

bool report_step_required(const char *step)
{
	return streq(step, "preflight") || streq(step, "backup") || streq(step, "verify") || streq(step, "accept");
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
		json_object *c = jarray_at(checks, i);
		if (streq(jget_str(c, "status"), st))
			return xasprintf("%s: %s", jget_str(c, "id") ?: "?", jget_str(c, "summary") ?: "");
	}
	return NULL;
}

static bool path_possible(json_object *rec, const char *path)
{
	return schema_preflight_path_possible(rec, path);
}

/* The tarball of a backup, restore or verify record (src/schema.h reads every shape it had). */
static void backup_fields(json_object *rec, const char **path, const char **sha, uint64_t *bytes, uint64_t *entries)
{
	struct schema_archive a;

	schema_archive(rec, &a);
	*path = a.path, *sha = a.sha256, *bytes = a.bytes, *entries = a.entries;
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
		size_t pass, total;
		bool run, failed;

		schema_accept_gate_counts(rec, &pass, &total);
		schema_accept_engine_gates(rec, &run, &failed);
		return xasprintf("%zu of %zu gates passed; engine gates %s", pass, total,
				 run ? "run" : "not run (cold-boot 157 K prompt, full bench)");
	}
	if (streq(step, "preflight") && jget(rec, "source")) {
		return xasprintf("source %s B, target %s B; raw clone %s", fmt_thousands(schema_preflight_source_bytes(rec), a),
				 fmt_thousands(schema_preflight_target_bytes(rec), b),
				 path_possible(rec, SCHEMA_PATH_RAW_CLONE) ? "possible" : "impossible");
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
	if (!path_possible(rec, SCHEMA_PATH_FS_CLONE) && !path_possible(rec, SCHEMA_PATH_FRESH_INSTALL))
		return false;
	for (size_t i = 0; i < jlen(checks); i++) {
		json_object *c = jarray_at(checks, i);
		if (streq(jget_str(c, "status"), "fail")) {
			any = true;
			only_trap = only_trap && schema_clone_trap_check(jget_str(c, "id"));
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

		schema_accept_engine_gates(rec, &run, &failed);
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
				 path_possible(rec, SCHEMA_PATH_FRESH_INSTALL) ? "fresh install + restore" : "",
				 path_possible(rec, SCHEMA_PATH_FRESH_INSTALL) && path_possible(rec, SCHEMA_PATH_FS_CLONE) ? ", " : "",
				 path_possible(rec, SCHEMA_PATH_FS_CLONE) ? "filesystem-aware clone" : "");
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

	for (size_t i = 0; i < SCHEMA_REPORTED_N; i++) {
		const char *step = schema_steps[i];
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

			schema_accept_engine_gates(rec, &run, &efailed);
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
			canon(f, jarray_at(v, i));
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

int report_build(const char *state_dir, json_object **out, const char **failed_step, char **lwhy)
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

	for (size_t i = 0; i < SCHEMA_REPORTED_N; i++) {
		const char *step = schema_steps[i];
		_cleanup_free_ char *file = xasprintf("%s/%s.json", state_dir, step), *w = NULL;
		json_object *rec = NULL, *s = json_object_new_object();
		char hex[65], fhex[65];
		int r = record_load_why(state_dir, step, &rec, lwhy);
		enum status st;

		if (r < 0 && r != -ENOENT) {
			if (failed_step)
				*failed_step = step;
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
		for (size_t i = 0; !node && i < SCHEMA_REPORTED_N; i++)
			node = schema_host(jget(steps, schema_steps[i]));
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
		json_object *e = jarray_at(records, i);
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
			listed = listed || streq(jget_str(jarray_at(records, i), "step"), key);
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

			if (status_parse(jget_str(jarray_at(checks, i), "status"), &st) < 0) {
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

/* ---- the drives, side by side ---- */

static void put(json_object *o, const char *key, json_object *v)
{
	json_object_object_add(o, key, v ? json_object_get(v) : NULL);
}

/* The namespace preflight judged (the one holding the table), else the first. */
static json_object *judged_ns(json_object *id)
{
	json_object *nss = jget(id, "namespaces");

	for (size_t i = 0; i < jlen(nss); i++)
		if (jget_bool(jarray_at(nss, i), "judged"))
			return jarray_at(nss, i);
	return jlen(nss) ? jarray_at(nss, 0) : NULL;
}

/* What an NVMe identity (preflight's source_identity or target_identity) measured of the drive's
 * class and health. */
static void drive_health(json_object *o, json_object *id)
{
	json_object *smart = jget(id, "smart"), *cls = jget(id, "class"), *ns = judged_ns(id);

	put(o, "class", jget(cls, "verdict"));
	put(o, "class_reason", jget(cls, "reason"));
	put(o, "hmb_mb", jget_bool(id, "nvme") ? jget(id, "hmb_mb") : NULL);
	put(o, "lba_format", jget(ns, "lba_format"));
	put(o, "power_on_hours", jget(smart, "power_on_hours"));
	put(o, "data_read_bytes", jget(smart, "data_read_bytes"));
	put(o, "data_written_bytes", jget(smart, "data_written_bytes"));
	put(o, "media_errors", jget(smart, "media_errors"));
	put(o, "temperature_c", jget(smart, "temperature_c"));
	put(o, "critical_warning", jget(smart, "critical_warning"));
	put(o, "error_log_entries", jget(jget(id, "error_log"), "entries"));
}

static json_object *drive_old(json_object *pre)
{
	json_object *o = json_object_new_object(), *src = jget(pre, "source"), *id = schema_preflight_identity(pre, false);
	json_object *ns = judged_ns(id);

	jset_str(o, "from", !pre ? NULL : !id ? "preflight (no drive identity in its record)" :
		 !jget_bool(id, "nvme") ? "preflight (sysfs: not an NVMe identity)" :
		 streq(jget_str(id, "from"), "dumps") ? "preflight (NVMe identify and log dumps)" : "preflight (NVMe controller)");
	put(o, "device", jget(src, "path"));
	put(o, "controller", jget(id, "controller"));
	put(o, "model", jget(src, "model") ?: jget(id, "model"));
	put(o, "serial", jget(src, "serial") ?: jget(id, "serial"));
	put(o, "firmware", jget(src, "firmware") ?: jget(id, "firmware"));
	put(o, "namespace_bytes", jget(ns, "size_bytes") ?: jget(src, "size_bytes"));
	put(o, "lba_size", jget(ns, "lba_size") ?: jget(src, "lba_size"));
	drive_health(o, id);
	return o;
}

/*
 * The new drive as accept measured it (its `drive`: the device under the file it read). Preflight's
 * target_identity counts only when preflight read that drive's controller itself (nvme true) and,
 * when accept saw a serial, it is the same drive; a --target-model is a name typed by hand and
 * never stands in for a measurement. The class from the catalogue is judged on the model accept read.
 */
static json_object *drive_new(json_object *pre, json_object *acc, const struct profile *p)
{
	json_object *o = json_object_new_object(), *d = schema_accept_drive(acc), *tid = schema_preflight_identity(pre, true);
	const char *ds = jget_str(d, "serial");
	bool tmeasured = jget_bool(tid, "nvme"), same = tmeasured && (!d || !ds || streq(ds, jget_str(tid, "serial")));
	json_object *ns = same ? judged_ns(tid) : NULL;

	if (d) {
		_cleanup_free_ char *from = xasprintf("accept (sysfs of %s under %s)%s", jget_str(d, "disk") ?: "?",
						      jget_str(d, "under") ?: schema_accept_target_path(acc) ?: "?",
						      same ? "; class and health: preflight (NVMe controller)" : "");
		jset_str(o, "from", from);
		put(o, "device", jget(d, "disk"));
		put(o, "controller", jget(d, "controller"));
		put(o, "model", jget(d, "model"));
		put(o, "serial", jget(d, "serial"));
		put(o, "firmware", jget(d, "firmware"));
		put(o, "namespace_bytes", jget(d, "size_bytes"));
		/* a file's target lba_size is the 4096 accept reads in, not the device's */
		put(o, "lba_size", streq(jget_str(jget(acc, "target"), "kind"), "block") ? jget(jget(acc, "target"), "lba_size")
										       : jget(ns, "lba_size"));
	} else if (same) {
		jset_str(o, "from", "preflight (NVMe controller of the target)");
		put(o, "device", jget(jget(pre, "target"), "path"));
		put(o, "controller", jget(tid, "controller"));
		put(o, "model", jget(tid, "model"));
		put(o, "serial", jget(tid, "serial"));
		put(o, "firmware", jget(tid, "firmware"));
		put(o, "namespace_bytes", jget(ns, "size_bytes"));
		put(o, "lba_size", jget(ns, "lba_size"));
	} else {
		jset_str(o, "from", NULL);
		const char *keys[] = { "device", "controller", "model", "serial", "firmware", "namespace_bytes", "lba_size" };
		for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
			json_object_object_add(o, keys[i], NULL);
	}
	drive_health(o, same ? tid : NULL);
	if (!same && jget_str(o, "model") && p) {
		struct drive_class c;
		_cleanup_free_ char *why = NULL, *reason = NULL;

		if (drive_lookup(p, jget_str(o, "model"), &c) == 0) {
			enum drive_verdict v = drive_judge(&c, false, 0, &why);
			reason = xasprintf("%s (catalogue, by the model accept read)", why ?: "");
			jset_str(o, "class", drive_verdict_name(v));
			jset_str(o, "class_reason", reason);
		}
	}
	return o;
}

void report_add_drives(json_object *rep, const struct profile *p)
{
	json_object *steps = jget(rep, "steps"), *o = json_object_new_object();

	json_object_object_add(o, "old", drive_old(jget(steps, "preflight")));
	json_object_object_add(o, "new", drive_new(jget(steps, "preflight"), jget(steps, "accept"), p));
	json_object_object_add(rep, "drives", o);
}

enum dkind { DK_STR, DK_BYTES, DK_TB, DK_MB, DK_NUM, DK_C, DK_B };
static const struct {
	const char *key, *label;
	enum dkind kind;
} drive_rows[] = {
	{ "device", "device", DK_STR },
	{ "controller", "NVMe controller", DK_STR },
	{ "model", "model", DK_STR },
	{ "serial", "serial", DK_STR },
	{ "firmware", "firmware", DK_STR },
	{ "class", "class", DK_STR },
	{ "class_reason", "class reason", DK_STR },
	{ "hmb_mb", "host memory buffer", DK_MB },
	{ "namespace_bytes", "namespace size", DK_BYTES },
	{ "lba_size", "LBA size", DK_B },
	{ "lba_format", "LBA format", DK_NUM },
	{ "power_on_hours", "power-on hours", DK_NUM },
	{ "data_read_bytes", "data read", DK_TB },
	{ "data_written_bytes", "data written", DK_TB },
	{ "media_errors", "media errors", DK_NUM },
	{ "temperature_c", "temperature", DK_C },
	{ "critical_warning", "critical warnings", DK_NUM },
	{ "error_log_entries", "error-log entries", DK_NUM },
	{ "from", "measured by", DK_STR },
};

/* One cell of the drives table: "unknown" where the steps did not measure it. */
static char *drive_cell(json_object *side, size_t row)
{
	json_object *v = jget(side, drive_rows[row].key);
	uint64_t u = v ? json_object_get_uint64(v) : 0;
	char a[32], b[32];

	if (!v || json_object_is_type(v, json_type_null))
		return xstrdup("unknown");
	switch (drive_rows[row].kind) {
	case DK_STR: return xstrdup(json_object_get_string(v));
	case DK_BYTES: return xasprintf("%s B (%s)", fmt_thousands(u, a), fmt_tb(u, b));
	case DK_TB: return xstrdup(fmt_tb(u, a));
	case DK_MB: return u ? xasprintf("%" PRIu64 " MB", u) : xstrdup("none (0 MB)");
	case DK_NUM: return xstrdup(fmt_thousands(u, a));
	case DK_C: return xasprintf("%" PRId64 " C", json_object_get_int64(v));
	case DK_B: return xasprintf("%" PRIu64 " B", u);
	}
	return xstrdup("unknown");
}

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

/* The drives of a report: its `drives`, or (a report made before it) derived from its records. */
static json_object *report_drives_of(json_object *rep, bool *owned)
{
	json_object *d = jget(rep, "drives");

	*owned = !d;
	if (d)
		return d;
	d = json_object_new_object();
	json_object_object_add(d, "old", drive_old(jget(jget(rep, "steps"), "preflight")));
	json_object_object_add(d, "new", drive_new(jget(jget(rep, "steps"), "preflight"), jget(jget(rep, "steps"), "accept"), NULL));
	return d;
}

/* ---- text ---- */

static const char *u64s(json_object *o, const char *key, char buf[32])
{
	return jget(o, key) ? fmt_thousands(jget_u64(o, key), buf) : "-";
}

/* "68.8 K" as docs/incident.md writes IOPS. */
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

static double ratio_of(double b, double a)
{
	return a > 0 ? b / a : NAN;
}

static void fmt_ratio(double r, char buf[32])
{
	if (isnan(r))
		snprintf(buf, 32, "-");
	else
		snprintf(buf, 32, "%.2f", r);
}

/* runs[].lat_us.KEY (SCHEMA_LAT_*) in microseconds, 0 when the run lacks it (fmt_us writes "-"). */
static double run_lat_us(json_object *run, const char *key)
{
	double us = 0;

	schema_run_lat_us(run, key, &us);
	return us;
}

static json_object *find_run(json_object *runs, const char *name)
{
	for (size_t i = 0; i < jlen(runs); i++)
		if (streq(jget_str(jarray_at(runs, i), "name"), name))
			return jarray_at(runs, i);
	return NULL;
}

static json_object *find_ws(json_object *sweep, uint64_t ws)
{
	for (size_t i = 0; i < jlen(sweep); i++)
		if (jget_u64(jarray_at(sweep, i), "working_set_bytes") == ws)
			return jarray_at(sweep, i);
	return NULL;
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

/* One row of the comparison with a reference node's run: IOPS, p50 and p99.9 of A (the
 * reference) and B (this node) with the B/A ratios, as text for report.txt and report.html. */
static void compare_cells(json_object *a, json_object *b, char c[9][32])
{
	fmt_iops(jget_double(a, "iops"), c[0]);
	fmt_iops(jget_double(b, "iops"), c[1]);
	fmt_ratio(ratio_of(jget_double(b, "iops"), jget_double(a, "iops")), c[2]);
	fmt_us(run_lat_us(a, SCHEMA_LAT_P50), c[3]);
	fmt_us(run_lat_us(b, SCHEMA_LAT_P50), c[4]);
	fmt_ratio(ratio_of(run_lat_us(b, SCHEMA_LAT_P50), run_lat_us(a, SCHEMA_LAT_P50)), c[5]);
	fmt_us(run_lat_us(a, SCHEMA_LAT_P99_9), c[6]);
	fmt_us(run_lat_us(b, SCHEMA_LAT_P99_9), c[7]);
	fmt_ratio(ratio_of(run_lat_us(b, SCHEMA_LAT_P99_9), run_lat_us(a, SCHEMA_LAT_P99_9)), c[8]);
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
		compare_cells(a, b, c);
		table_row(t, jget_str(b, "name") ?: "?", c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8]);
	}
	fprintf(f, "\nAgainst the reference node %s (A; this node %s is B; %s, record sha256 %.16s...)\n",
		jget_str(ref, "node") ?: "?", schema_host(acc) ?: "?", jget_str(ref, "file") ?: "?",
		jget_str(ref, "sha256") ?: "?");
	table_fprint(f, t, false);
}

int report_add_reference(json_object *rep, json_object *doc, const char *file)
{
	json_object *acc = report_accept_of(doc), *o;
	char hex[65];

	if (!acc || !json_object_is_type(acc, json_type_object) || !json_object_is_type(jget(acc, "runs"), json_type_array))
		return -EINVAL;
	o = json_object_new_object();
	jset_str(o, "file", file);
	jset_str(o, "node", jget_str(doc, "node") ?: jget_str(acc, "host"));
	report_record_sha256(acc, hex);
	jset_str(o, "sha256", hex);
	put(o, "accept", acc);
	json_object_object_add(rep, "reference", o);
	return 0;
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
	for (size_t i = 0; i < ARRAY_SIZE(drive_rows); i++) {
		_cleanup_free_ char *o = drive_cell(jget(d, "old"), i), *n = drive_cell(jget(d, "new"), i);
		const char *po = o, *pn = n;

		/* a long cell (the class reason) over several lines of at most 56 columns */
		for (bool first = true; first || *po || *pn; first = false) {
			char lo[64], ln[64];
			po = wrap_line(po, lo, 56);
			pn = wrap_line(pn, ln, 56);
			table_row(t, first ? drive_rows[i].label : "", lo, ln);
		}
	}
	fprintf(f, "\nDrives (old -> new)\n");
	table_fprint(f, t, false);
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
		_cleanup_free_ char *th = report_gate_threshold(g), *me = json_text(jget(g, "measured"));

		table_row(t, schema_gate_name(g) ?: "?", th, me, schema_gate_status(g) ?: "?");
	}
	fputc('\n', f);
	table_fprint(f, t, false);
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

static const char *const chart_colors[] = { "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b" };
#define REF_COLOR "#555"

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

/* The figure, the svg element and the plot's frame. */
static void svg_frame(FILE *f, const struct chart *c, const char *name, const char *label)
{
	fputs("<figure>\n<svg class=\"chart\" data-chart=\"", f);
	html_esc(f, name);
	fprintf(f, "\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %.0f %.0f\" role=\"img\" aria-label=\"", c->W, c->H);
	html_esc(f, label);
	fprintf(f, "\" font-family=\"system-ui,sans-serif\" font-size=\"12\">\n<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" "
		   "fill=\"#fff\" stroke=\"#888\"/>\n", c->L, c->T, c->W - c->L - c->R, c->H - c->T - c->B);
}

/* x: a grid line, a tick mark below the plot and the value under it, for each tick */
static void x_ticks(FILE *f, const struct chart *c)
{
	double t[64];
	size_t n = ax_ticks(&c->x, t, ARRAY_SIZE(t));
	char b[32];

	for (size_t i = 0; i < n; i++) {
		ax_label(c->x.unit, t[i], b);
		fprintf(f, "<g class=\"xtick\"><line x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\" stroke=\"#e4e4e4\"/>"
			   "<line x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\" stroke=\"#888\"/>"
			   "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%s</text></g>\n",
			X(c, t[i]), c->T, X(c, t[i]), c->H - c->B, X(c, t[i]), c->H - c->B, X(c, t[i]), c->H - c->B + 5,
			X(c, t[i]), c->H - c->B + 18, b);
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
static void chart_open(FILE *f, const struct chart *c, const char *name, const char *label)
{
	svg_frame(f, c, name, label);
	x_ticks(f, c);
	y_ticks(f, c, true);
	if (c->y2.title)
		y2_ticks(f, c);
	fprintf(f, "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%s</text>\n", c->L + (c->W - c->L - c->R) / 2, c->H - 8,
		c->x.title);
	y_title(f, c);
}

/* A series: one polyline; data-points says how many points it has (tests count them). */
static void series_open(FILE *f, const char *name, const char *color, bool dashed, size_t npoints)
{
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
	series_open(f, name, color, dashed, n);
	points(f, c, data);
	series_close(f);
}

/* A gate as a line: horizontal (y value) or vertical (x value), dashed, with its words. */
static void gate_line(FILE *f, const struct chart *c, bool vertical, double v, double from, double to, const char *color,
		      const char *label)
{
	double x1, y1, x2, y2;

	if (vertical) {
		x1 = x2 = X(c, v);
		y1 = c->T, y2 = c->H - c->B;
	} else {
		y1 = y2 = Y(c, v);
		x1 = from, x2 = to;
	}
	fprintf(f, "<g class=\"gate\"><line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"1.5\" "
		   "stroke-dasharray=\"2,3\"/><text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" fill=\"%s\"%s>",
		x1, y1, x2, y2, color, x1 + 3, vertical ? c->T + 12 : y1 - 4, color,
		vertical && X(c, v) > c->W - c->R - 120 ? " text-anchor=\"end\"" : "");
	html_esc(f, label);
	fputs("</text></g>\n", f);
}

static void chart_close(FILE *f, const char *caption_html)
{
	fprintf(f, "</svg>\n<figcaption>%s</figcaption>\n</figure>\n", caption_html ?: "");
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
static void chart_close_legend(FILE *f, struct legend *l, const char *rest)
{
	_cleanup_free_ char *cap = NULL;

	fclose(l->f);
	cap = xasprintf("%s%s", l->buf ?: "", rest);
	free(l->buf);
	chart_close(f, cap);
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

		fprintf(f, "%.1f,%.1f ", X(c, fmax(x, c->x.lo)), Y(c, y));
	}
}

/* Each run's latency distribution from its histogram, the run's latency gates as vertical lines. */
static void chart_hist(FILE *f, json_object *run, json_object *gates, json_object *ref_run)
{
	json_object *h = jget(run, "lat_hist"), *rh = jget(ref_run, "lat_hist");
	struct chart c = { .W = 640, .H = 340, .L = 64, .R = 20, .T = 16, .B = 46,
			   .x = { .log = true, .unit = U_US, .title = "read latency (log scale)" },
			   .y = { .unit = U_PCT, .title = "reads per 1 % latency band" } };
	double xlo = INFINITY, xhi = 0, ymax = 0;
	const char *name = jget_str(run, "name") ?: "?";
	_cleanup_free_ char *cname = xasprintf("hist-%s", name), *label = xasprintf("latency distribution of run %s", name);
	_cleanup_free_ char *cap = NULL;
	json_object *hs[2] = { h, rh };

	for (unsigned k = 0; k < 2; k++) {
		json_object *bins = jget(hs[k], "bins");
		uint64_t total = bins_total(hs[k]);
		for (size_t i = 0; i < jlen(bins); i++) {
			json_object *b = jarray_at(bins, i);
			xlo = fmin(xlo, (double)json_object_get_uint64(jarray_at(b, 0)) / 1000);
			xhi = fmax(xhi, (double)json_object_get_uint64(jarray_at(b, 1)) / 1000);
			ymax = fmax(ymax, bin_density(b, total));
		}
	}
	if (!jlen(jget(h, "bins")))
		return;
	for (size_t i = 0; i < jlen(gates); i++)
		if (gate_is(jarray_at(gates, i), name, "us")) {
			double v = jget_double(jarray_at(gates, i), "threshold");
			xlo = fmin(xlo, v), xhi = fmax(xhi, v);
		}
	ax_fit(&c.x, xlo, xhi);
	ax_fit(&c.y, 0, ymax);
	chart_open(f, &c, cname, label);
	gate_lines(f, &c, gates, name, "us", true, 0, 0, "#b00");
	if (rh && jlen(jget(rh, "bins")))
		series(f, &c, "reference", REF_COLOR, true, jlen(jget(rh, "bins")), hist_points, rh);
	series(f, &c, name, chart_colors[0], false, jlen(jget(h, "bins")), hist_points, h);
	{
		char a[32], b[32];
		fmt_us(jget_double(jget(run, "lat_us"), "p50"), a);
		fmt_us(jget_double(jget(run, "lat_us"), "p99_9"), b);
		cap = xasprintf("<b>%s</b>: %" PRIu64 " reads in %zu histogram buckets; p50 %s, p99.9 %s; dotted: the gates%s", name,
				bins_total(h), jlen(jget(h, "bins")), a, b, rh ? "; dashed grey: the reference node" : "");
	}
	chart_close(f, cap);
}

static void pctl_points(FILE *f, const struct chart *c, json_object *lat)
{
	for (size_t k = 0; k < ARRAY_SIZE(pctl_pts); k++) {
		double v = jget_double(lat, pctl_pts[k].key);
		if (v > 0)
			fprintf(f, "%.1f,%.1f ", X(c, pctl_pts[k].x), Y(c, v));
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
		gate_line(f, c, false, jget_double(g, "threshold"), X(c, px / 2.2), X(c, px * 2.2), color, w);
	}
}

/* a dot on each percentile measured */
static void pctl_marks(FILE *f, const struct chart *c, json_object *lat, const char *color)
{
	for (size_t k = 0; k < ARRAY_SIZE(pctl_pts); k++) {
		double v = jget_double(lat, pctl_pts[k].key);
		if (v > 0)
			fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>", X(c, pctl_pts[k].x), Y(c, v), color);
	}
	fputc('\n', f);
}

static const struct run_series pctl_series = { "lat_us", pctl_count, pctl_points, pctl_gates, pctl_marks };

/* The percentile curve of every run against its gates (p50 and p99.9 gates as lines at their
 * percentile), on log axes: x = 1/(1-p), so p50 .. p99.99 are evenly spaced, max last. */
static void chart_pctl(FILE *f, json_object *runs, json_object *gates, json_object *ref_runs)
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
	chart_close_legend(f, &l, "; dotted lines: each run's latency gates at their percentile");
}

static void persec_points(FILE *f, const struct chart *c, json_object *ps)
{
	for (size_t k = 0; k < jlen(ps); k++)
		fprintf(f, "%.1f,%.1f ", X(c, (double)k + 1), Y(c, fmin(json_object_get_double(jarray_at(ps, k)), c->y.hi)));
}

/* a run's IOPS gates as lines across the plot */
static void persec_gates(FILE *f, const struct chart *c, json_object *gates, const char *run, const char *color)
{
	gate_lines(f, c, gates, run, "IOPS", false, c->L, c->W - c->R, color);
}

static const struct run_series persec_series = { "per_second_iops", jlen, persec_points, persec_gates, NULL };

/* IOPS second by second of the timed runs (stability), the IOPS gates as lines. */
static void chart_persec(FILE *f, json_object *runs, json_object *gates, json_object *ref_runs)
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
	chart_close_legend(f, &l, "; one point per second; dotted lines: the IOPS gates");
}

static void sweep_points(FILE *f, const struct chart *c, json_object *sweep, bool p50)
{
	for (size_t i = 0; i < jlen(sweep); i++) {
		json_object *s = jarray_at(sweep, i);
		double x = (double)jget_u64(s, "working_set_bytes");
		double y = p50 ? jget_double(jget(s, "lat_us"), "p50") : jget_double(s, "iops");

		fprintf(f, "%.1f,%.1f ", X(c, fmax(x, c->x.lo)), p50 ? Ya(c, &c->y2, y) : Y(c, y));
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
static void chart_sweep(FILE *f, json_object *sweep, json_object *ref_sweep)
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
	for (size_t i = 0; i < jlen(sweep); i++) {
		json_object *s = jarray_at(sweep, i);
		double x = X(&c, fmax((double)jget_u64(s, "working_set_bytes"), c.x.lo));
		double y = Y(&c, jget_double(s, "iops")), y2 = Ya(&c, &c.y2, jget_double(jget(s, "lat_us"), "p50"));
		char a[32];

		fmt_iops(jget_double(s, "iops"), a);
		fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"/><text x=\"%.1f\" y=\"%.1f\" font-size=\"11\">%s</text>"
			   "<rect x=\"%.1f\" y=\"%.1f\" width=\"6\" height=\"6\" fill=\"%s\"/>\n",
			x, y, chart_colors[0], x + 5, y - 6, a, x - 3, y2 - 3, chart_colors[1]);
	}
	key(l.f, chart_colors[0], false, "IOPS");
	key(l.f, chart_colors[1], false, "p50");
	chart_close_legend(f, &l, "; one point per working set");
}

/* Both nodes' IOPS per run as bars, reference (A) and this node (B), with B/A over each pair. */
static void chart_compare(FILE *f, json_object *runs, json_object *ref_runs)
{
	struct chart c = { .W = 640, .H = 320, .L = 64, .R = 20, .T = 24, .B = 46,
			   .x = { .lo = 0, .hi = 1, .unit = U_S, .title = "run" }, .y = { .unit = U_IOPS, .title = "IOPS" } };
	double ymax = 0, pw;
	size_t n = 0, k = 0;

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
	pw = c.W - c.L - c.R;
	/* no numeric x ticks: the runs are categories */
	c.x.unit = U_PCT;
	c.x.lo = 0, c.x.hi = 1;
	svg_frame(f, &c, "compare", "IOPS per run, reference node and this node");
	y_ticks(f, &c, false);
	y_title(f, &c);
	for (size_t i = 0; i < jlen(runs); i++) {
		json_object *b = jarray_at(runs, i), *a = find_run(ref_runs, jget_str(b, "name"));
		double slot = pw / (double)n, x0 = c.L + slot * (double)k, bw = slot * 0.32;
		char ra[32], rb[32], q[32];

		if (!a)
			continue;
		k++;
		fmt_iops(jget_double(a, "iops"), ra);
		fmt_iops(jget_double(b, "iops"), rb);
		fmt_ratio(ratio_of(jget_double(b, "iops"), jget_double(a, "iops")), q);
		fprintf(f, "<rect class=\"bar\" data-node=\"A\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>"
			   "<rect class=\"bar\" data-node=\"B\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>\n",
			x0 + slot * 0.16, Y(&c, jget_double(a, "iops")), bw, Y(&c, 0) - Y(&c, jget_double(a, "iops")), REF_COLOR,
			x0 + slot * 0.52, Y(&c, jget_double(b, "iops")), bw, Y(&c, 0) - Y(&c, jget_double(b, "iops")), chart_colors[0]);
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"middle\">A %s</text>"
			   "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"middle\">B %s</text>"
			   "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\" font-weight=\"bold\">B/A %s</text>"
			   "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">",
			x0 + slot * 0.32, Y(&c, jget_double(a, "iops")) - 4, ra, x0 + slot * 0.68, Y(&c, jget_double(b, "iops")) - 4, rb,
			x0 + slot / 2, c.T - 8, q, x0 + slot / 2, c.H - c.B + 18);
		html_esc(f, jget_str(b, "name"));
		fputs("</text>\n", f);
	}
	fputs("</svg>\n<figcaption>", f);
	key(f, REF_COLOR, false, "A: the reference node");
	key(f, chart_colors[0], false, "B: this node");
	fputs("</figcaption>\n</figure>\n", f);
}

/* ---- the page ---- */

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

static const char html_style[] =
	"*{box-sizing:border-box}\n"
	"body{font:15px/1.45 system-ui,sans-serif;margin:0;padding:1.2em 2em 2em;color:#1d1d1d}\n"
	"h1{font-size:1.6em;margin:.1em 0 .3em}h2{font-size:1.25em;border-bottom:2px solid #ddd;padding-bottom:.1em;margin:1.4em 0 .5em}\n"
	"h3{font-size:1.05em;margin:1em 0 .3em}\n"
	".meta{color:#444;margin:.2em 0}\n"
	".grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(34em,100%),1fr));gap:.5em 2em;align-items:start}\n"
	"table{border-collapse:collapse;margin:.3em 0 1em;width:100%}\n"
	"td,th{border:1px solid #c8c8c8;padding:.2em .5em;text-align:left;vertical-align:top;overflow-wrap:break-word}\n"
	"th:first-child,td.nw{white-space:nowrap}td.unknown{color:#666;font-style:italic}\n"
	"th{background:#f0f0f0}td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}\n"
	"td.hash{font-family:ui-monospace,monospace;font-size:.85em}\n"
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
	".grid>*{min-width:0}.scroll{overflow-x:auto}\n"
	"@media (max-width:50em){body{padding:.8em}.grid{grid-template-columns:1fr}"
	"td,th,th:first-child,td.nw,td.num{white-space:normal;overflow-wrap:anywhere}"
	"th,th:first-child,td.nw,td.st{overflow-wrap:break-word}}\n"
	"@page{size:A4;margin:12mm}\n"
	"@media print{body{padding:0;font-size:9.5pt}.grid{display:block}figure{max-width:17cm}"
	"h2,h3{break-after:avoid}tr,figure,.sig{break-inside:avoid}"
	"*{-webkit-print-color-adjust:exact;print-color-adjust:exact}}\n";

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

	fputs("<h2>Drives</h2>\n<table class=\"drives\">\n<tr><th></th><th>old drive (source)</th><th>new drive (target)</th></tr>\n", f);
	for (size_t i = 0; i < ARRAY_SIZE(drive_rows); i++) {
		json_object *sides[2] = { o, n };

		fputs("<tr><th>", f);
		html_esc(f, drive_rows[i].label);
		fputs("</th>", f);
		for (unsigned s = 0; s < 2; s++) {
			_cleanup_free_ char *cell = drive_cell(sides[s], i);
			const char *key = drive_rows[i].key, *cls = NULL;
			json_object *v = jget(sides[s], key);

			if (streq(key, "class") && jget_str(sides[s], "class"))
				cls = streq(jget_str(sides[s], "class"), "good") ? "st st-pass" :
				      streq(jget_str(sides[s], "class"), "unknown") ? "st st-missing" : "st st-warn";
			else if ((streq(key, "media_errors") || streq(key, "critical_warning")) && v &&
				 !json_object_is_type(v, json_type_null))
				cls = json_object_get_uint64(v) ? "st st-fail" : "num";
			else if (!v || json_object_is_type(v, json_type_null))
				cls = "unknown";
			else if (drive_rows[i].kind != DK_STR)
				cls = "num";
			fprintf(f, "<td%s%s%s data-field=\"%s\" data-side=\"%s\">", cls ? " class=\"" : "", cls ?: "", cls ? "\"" : "", key,
				s ? "new" : "old");
			html_esc(f, cell);
			fputs("</td>", f);
		}
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
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
	fprintf(f, "</title>\n<style>\n%s</style></head><body>\n<h1>swaptool report: ", html_style);
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
	fputs("<section>\n<h2>Steps</h2>\n<table>\n<tr><th>step</th><th>status</th><th>finished</th><th>why</th></tr>\n", f);
	for (size_t i = 0; i < jlen(summary); i++) {
		json_object *s = jarray_at(summary, i);
		fputs("<tr>", f);
		td(f, "nw", jget_str(s, "step"));
		st_cell(f, jget_str(s, "status"));
		td(f, "nw", jget_str(s, "finished"));
		td(f, NULL, jget_str(s, "why"));
		fputs("</tr>\n", f);
	}
	fputs("</table>\n</section>\n", f);
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

	fputs("<section>\n<h2>Clone trap</h2>\n<table>\n", f);
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
	fputs("</table>\n<p class=\"meta\">PASS: the path is possible; FAIL: it is not.</p>\n</section>\n", f);
}

static void html_backup(FILE *f, json_object *backup)
{
	const char *path, *sha;
	uint64_t bytes, entries;
	char a[32], b[32];

	backup_fields(backup, &path, &sha, &bytes, &entries);
	snprintf(b, sizeof(b), "%" PRIu64, entries);
	fputs("<section>\n<h2>Backup</h2>\n<table>\n<tr><th>archive</th>", f);
	td(f, NULL, path);
	fputs("</tr>\n<tr><th>bytes</th>", f);
	td(f, "num", fmt_thousands(bytes, a));
	fputs("</tr>\n<tr><th>entries</th>", f);
	td(f, "num", b);
	fputs("</tr>\n<tr><th>sha256</th>", f);
	td(f, "hash", sha);
	fputs("</tr>\n</table>\n</section>\n", f);
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
	fputs("<section class=\"scroll\">\n<h3>Runs</h3>\n<table>\n<tr><th>run</th><th>mode</th><th>in flight</th><th>IOPS</th>"
	      "<th>MB/s</th><th>p50</th><th>p99.9</th></tr>\n", f);
	for (size_t i = 0; i < jlen(runs); i++) {
		json_object *r = jarray_at(runs, i);
		char a[32], b[32], c[32], d[32], e[32];

		snprintf(d, sizeof(d), "%" PRIu64, jget_u64(r, "inflight"));
		snprintf(e, sizeof(e), "%.0f", jget_double(r, "mb_s"));
		fmt_iops(jget_double(r, "iops"), a);
		fmt_us(run_lat_us(r, SCHEMA_LAT_P50), b);
		fmt_us(run_lat_us(r, SCHEMA_LAT_P99_9), c);
		fputs("<tr>", f);
		td(f, NULL, jget_str(r, "name"));
		td(f, NULL, jget_str(r, "mode"));
		td(f, "num", d);
		td(f, "num", a);
		td(f, "num", e);
		td(f, "num", b);
		td(f, "num", c);
		fputs("</tr>\n", f);
	}
	fputs("</table>\n</section>\n", f);
}

static void html_gates(FILE *f, json_object *gates)
{
	fputs("<section>\n<h3>Gates</h3>\n<table>\n<tr><th>gate</th><th>threshold</th><th>measured</th>"
	      "<th>status</th></tr>\n", f);
	for (size_t i = 0; i < jlen(gates); i++) {
		json_object *g = jarray_at(gates, i);
		_cleanup_free_ char *th = report_gate_threshold(g), *me = json_text(jget(g, "measured"));
		_cleanup_free_ char *mu = jget_str(g, "unit") && !json_object_is_type(jget(g, "threshold"), json_type_string)
			? xasprintf("%s %s", me, jget_str(g, "unit")) : xstrdup(me);

		fputs("<tr>", f);
		td(f, NULL, schema_gate_name(g));
		td(f, "num", th);
		td(f, "num", mu);
		st_cell(f, schema_gate_status(g));
		fputs("</tr>\n", f);
	}
	fputs("</table>\n</section>\n", f);
}

/* the sweep's table, with the reference's IOPS and the ratio when it has a sweep, then its chart */
static void html_sweep(FILE *f, json_object *sweep, json_object *ra)
{
	bool with_ref = ra && jlen(jget(ra, "sweep"));

	fputs("<h2>Sweep: 4 KiB random reads by working set</h2>\n<div class=\"grid\">\n<section>\n<table>\n"
	      "<tr><th>working set</th><th>IOPS</th><th>p50</th>", f);
	if (with_ref)
		fputs("<th>reference IOPS</th><th>IOPS B/A</th>", f);
	fputs("</tr>\n", f);
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
	fputs("</table>\n</section>\n", f);
	chart_sweep(f, sweep, jget(ra, "sweep"));
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
	      "<div class=\"grid\">\n<section class=\"scroll\">\n<table>\n<tr><th>run</th><th>IOPS A</th><th>IOPS B</th><th>B/A</th>"
	      "<th>p50 A</th><th>p50 B</th><th>B/A</th><th>p99.9 A</th><th>p99.9 B</th><th>B/A</th></tr>\n", f);
	for (size_t i = 0; i < jlen(runs); i++) {
		json_object *b = jarray_at(runs, i), *a = find_run(rruns, jget_str(b, "name"));
		char c[9][32];

		if (!a)
			continue;
		compare_cells(a, b, c);
		fputs("<tr>", f);
		td(f, NULL, jget_str(b, "name"));
		for (unsigned k = 0; k < 9; k++)
			td(f, "num", c[k]);
		fputs("</tr>\n", f);
	}
	fputs("</table>\n</section>\n", f);
	chart_compare(f, runs, rruns);
	fputs("</div>\n", f);
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
	chart_pctl(f, runs, gates, rruns);
	chart_persec(f, runs, gates, rruns);
	fputs("</div>\n<h3>Latency distribution of each run</h3>\n<div class=\"grid\">\n", f);
	for (size_t i = 0; i < jlen(runs); i++) {
		json_object *r = jarray_at(runs, i);
		chart_hist(f, r, gates, find_run(rruns, jget_str(r, "name")));
	}
	fputs("</div>\n", f);
	if (jlen(sweep))
		html_sweep(f, sweep, ra);
	if (ra)
		html_reference(f, ref, acc, rruns);
}

static void html_records(FILE *f, json_object *rep)
{
	fputs("<h2>Records</h2>\n<table>\n<tr><th>step</th><th>sha256 of the embedded record (", f);
	html_esc(f, jget_str(rep, "record_hash") ?: "json-c text");
	fputs(")</th></tr>\n", f);
	for (size_t i = 0; i < jlen(jget(rep, "records")); i++) {
		json_object *e = jarray_at(jget(rep, "records"), i);
		fputs("<tr>", f);
		td(f, NULL, jget_str(e, "step"));
		td(f, "hash", jget_str(e, "sha256"));
		fputs("</tr>\n", f);
	}
	fputs("</table>\n</body></html>\n", f);
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
