/* SPDX-License-Identifier: MIT */
/* The report's model: step judgements, the verdict verify-report recomputes, canonical JSON and
 * record hashes, report.json assembly, the drives side by side, and the cells both renderings
 * print (src/report_text.c writes report.txt, src/report_html.c report.html). */
#include "util.h"
#include "report.h"
#include "report_fmt.h"
#include "json.h"
#include "schema.h"
#include "profile.h"
#include "size.h"
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

/* Every failed gate by name, not only the first: whoever fixes one of four would otherwise rerun
 * accept four times. A hostile record may hold thousands of gates with long names, so the list
 * stops at REASON_GATES_MAX names of at most 64 bytes each and counts the rest. */
#define REASON_GATES_MAX 8
static size_t accept_failed_n(json_object *rec)
{
	json_object *gates = schema_accept_gates(rec);
	size_t n = 0;

	for (size_t i = 0; i < jarray_len(gates); i++)
		n += streq(schema_gate_status(jarray_at(gates, i)), "fail");
	return n;
}

static char *failed_gates(json_object *rec)
{
	json_object *gates = schema_accept_gates(rec);
	_cleanup_free_ char *list = NULL, *more = NULL;
	size_t n = 0;

	for (size_t i = 0; i < jarray_len(gates); i++) {
		json_object *g = jarray_at(gates, i);

		if (!streq(schema_gate_status(g), "fail"))
			continue;
		if (++n > REASON_GATES_MAX)
			continue;
		char *l = xasprintf("%s%s%.64s", list ?: "", list ? ", " : "", schema_gate_name(g) ?: "?");
		free(list);
		list = l;
	}
	if (n == 0)
		return NULL;
	if (n > REASON_GATES_MAX)
		more = xasprintf(" and %zu more", n - REASON_GATES_MAX);
	return xasprintf("%zu gate%s failed: %s%s", n, n == 1 ? "" : "s", list, more ?: "");
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
		_cleanup_free_ char *gap = schema_accept_evidence_gap(rec);
		bool run, failed;

		schema_accept_engine_gates(rec, &run, &failed);
		if (failed && !streq(verdict, "fail")) {
			*why = failed_gates(rec) ?: xstrdup("an engine gate failed");
			return ST_FAIL;
		}
		/* "0 of 0 gates passed" is no acceptance: a pass needs the runs and the gates on them */
		if (gap && !streq(verdict, "fail")) {
			*why = xasprintf("no evidence: %s; run accept again with the profile's runs and gates", gap);
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
	/* one failed gate reads best as its check's summary; several are all named, that one's detail after */
	if (streq(step, "accept") && accept_failed_n(rec) > 1) {
		_cleanup_free_ char *first = *why, *all = failed_gates(rec);

		*why = xasprintf("%s (%s)", all, first);
	}
	return ST_FAIL;
}

/* Two model strings name one model when they agree word for word, case aside: sysfs pads SCSI
 * INQUIRY models with spaces, and a catalogue spelling may differ in case. */
static bool models_equal(const char *a, const char *b)
{
	for (;;) {
		while (*a == ' ')
			a++;
		while (*b == ' ')
			b++;
		if (!*a || !*b)
			return !*a && !*b;
		for (; *a && *a != ' ' && *b && *b != ' '; a++, b++)
			if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
				return false;
		if ((*a && *a != ' ') || (*b && *b != ' '))
			return false;
	}
}

/* The kernel's name of a drive: its `disk`, else (a preflight record made before `disk`) the
 * node of its path under /dev. */
static const char *kernel_name(const struct schema_drive *d)
{
	if (d->disk)
		return d->disk;
	return d->device && startswith(d->device, "/dev/") && !strchr(d->device + 5, '/') ? d->device + 5 : NULL;
}

/* A drive as a reason names it: "'/dev/vda' (virtio, 274,877,906,944 B = 0.275 TB, serial unknown)". */
static char *drive_words(const struct schema_drive *d)
{
	char a[32], b[32];
	_cleanup_free_ char *size = d->size_bytes ? xasprintf("%s B = %s", fmt_thousands(d->size_bytes, a), fmt_tb(d->size_bytes, b))
						  : xstrdup("size unknown");
	_cleanup_free_ char *model = d->model ? xasprintf(", model '%s'%s", d->model, d->model_typed ? " (--target-model)" : "")
					      : xstrdup("");
	_cleanup_free_ char *serial = d->serial ? xasprintf("serial '%s'", d->serial) : xstrdup("serial unknown");
	const char *name = d->device ?: kernel_name(d);

	return xasprintf("%s%s%s (%s%s%s%s, %s)", name ? "'" : "", name ?: "no named device", name ? "'" : "",
			 d->transport ?: "", d->transport ? ", " : "", size, model, serial);
}

enum report_drive_match report_target_match(json_object *pre, json_object *acc, char **why)
{
	struct schema_drive t, m;
	bool have_t = schema_preflight_target_drive(pre, &t), have_m = schema_accept_drive_of(acc, &m);
	const char *tk = kernel_name(&t), *mk = kernel_name(&m), *how;
	_cleanup_free_ char *tw = drive_words(&t), *mw = drive_words(&m), *todo = NULL;
	enum report_drive_match r = RDM_UNKNOWN;

	if (t.serial && m.serial) {
		r = streq(t.serial, m.serial) ? RDM_SAME : RDM_DIFFERENT;
		how = r == RDM_SAME ? "the same serial" : "their serials differ";
	} else if (t.size_bytes && m.size_bytes && t.size_bytes != m.size_bytes) {
		r = RDM_DIFFERENT;
		how = "their sizes differ";
	} else if (t.model && m.model && !models_equal(t.model, m.model) && !t.model_typed) {
		r = RDM_DIFFERENT;
		how = "their models differ";
	} else if (t.size_bytes && m.size_bytes && t.model && m.model && models_equal(t.model, m.model)) {
		r = RDM_SAME;
		how = "the same size and model (no serial on both sides)";
	} else if (tk && mk && streq(tk, mk)) {
		r = RDM_SAME;
		how = "the same device name and no size or model that differs (no serial on both sides)";
	} else
		how = !have_m ? "accept's record names no drive under what it read"
		      : !have_t ? "preflight's record names no target"
				: "neither a serial on both sides, nor size and model, nor the device name agree";
	if (r == RDM_SAME) {
		*why = xasprintf("accept measured the target preflight planned for, %s: %s", how, mw);
		return r;
	}
	/* the target's block device: a controller given to preflight (/dev/nvme1) is read through the
	 * namespace it judged (nvme1n1) */
	if (tk)
		todo = xasprintf("run accept on the target: swaptool accept /dev/%s", tk);
	else
		todo = xstrdup("name the new drive to preflight (swaptool preflight SOURCE --target /dev/NEW), then run "
			       "accept on it (swaptool accept /dev/NEW)");
	*why = xasprintf("accept measured %s, preflight planned for %s: %s%s; %s", have_m ? mw : "no drive",
			 have_t ? tw : "no target", r == RDM_DIFFERENT ? "not the same drive, " : "not shown to be the same drive: ",
			 how, todo);
	return r;
}

const char *report_drive_match_name(enum report_drive_match m)
{
	return m == RDM_SAME ? "same" : m == RDM_DIFFERENT ? "different" : "unknown";
}

const char *report_verdict_name(enum report_verdict v)
{
	return v == RV_ACCEPTED ? "accepted" : v == RV_REJECTED ? "rejected" : "incomplete";
}

enum report_verdict report_verdict(json_object *steps, json_object *missing, char **why)
{
	_cleanup_free_ char *failed = NULL, *absent = NULL, *drive_why = NULL;

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
		/* a pass of another drive says nothing about the new one: the evidence for it is missing */
		_cleanup_free_ char *mw = NULL;
		if (streq(step, "accept") && rec && st != ST_FAIL && jget(steps, "preflight") &&
		    report_target_match(jget(steps, "preflight"), rec, &mw) != RDM_SAME) {
			const char *what = "accept of the target drive";
			if (missing)
				json_object_array_add(missing, json_object_new_string(what));
			char *n = xasprintf("%s%s%s", absent ?: "", absent ? ", " : "", what);
			free(absent);
			absent = n;
			free(drive_why);
			drive_why = TAKE_PTR(mw);
		}
		/* figures measured through a USB bridge are the bridge's: the drive is judged in the slot */
		if (streq(step, "accept") && rec && st != ST_FAIL && jget_bool(schema_accept_drive(rec), "bridge_limited")) {
			const char *what = "accept of the drive in the slot (its figures were measured through a USB bridge)";
			if (missing)
				json_object_array_add(missing, json_object_new_string(what));
			char *n = xasprintf("%s%s%s", absent ?: "", absent ? ", " : "", what);
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
		*why = xasprintf("missing: %s%s%s", absent, drive_why ? "; " : "", drive_why ?: "");
		return RV_INCOMPLETE;
	}
	*why = xstrdup("preflight, backup, verify and accept (with the engine gates) of the target drive passed");
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

static void add_prediction(json_object *list, json_object *run, uint64_t ws, bool sweep)
{
	json_object *p = schema_run_prediction(run), *o;

	if (!p)
		return;
	o = json_object_new_object();
	jset_str(o, "name", jget_str(run, "name"));
	jset_u64(o, "working_set_bytes", ws);
	jset_bool(o, "sweep", sweep);
	json_object_object_add(o, "prediction", json_object_get(p));
	json_object_array_add(list, o);
}

json_object *report_predictions(json_object *acc)
{
	json_object *list = json_object_new_array(), *runs = schema_accept_runs(acc), *sweep = jget_array(acc, "sweep");
	uint64_t ws = jget_u64(jget_object(acc, "target"), "working_set_bytes");

	for (size_t i = 0; i < jlen(runs); i++)
		add_prediction(list, jarray_at(runs, i), ws, false);
	for (size_t i = 0; i < jlen(sweep); i++)
		add_prediction(list, jarray_at(sweep, i), jget_u64(jarray_at(sweep, i), "working_set_bytes"), true);
	return list;
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

/* The transport cell: "usb, behind bridge 0bda:9210 Realtek RTL9210B-CG (10000 Mb/s, uas)", and
 * "; figures bridge-limited" when accept measured through it (--force). The bridge's strings are
 * the record's, escaped where they are printed. */
static json_object *transport_json(json_object *transport, json_object *bridge, bool limited)
{
	_cleanup_free_ char *speed = NULL, *t = NULL;
	const char *man = jget_str(bridge, "manufacturer"), *prod = jget_str(bridge, "product");

	if (!json_object_is_type(bridge, json_type_object))
		return transport ? json_object_get(transport) : NULL;
	speed = jget_u64(bridge, "speed_mbps") ? xasprintf("%" PRIu64 " Mb/s", jget_u64(bridge, "speed_mbps"))
					       : xstrdup("link speed unknown");
	t = xasprintf("%s, behind bridge %s:%s%s%s%s%s (%s, %s)%s", json_object_get_string(transport) ?: "usb",
		      jget_str(bridge, "vendor_id") ?: "?", jget_str(bridge, "product_id") ?: "?", man ? " " : "",
		      man ?: "", prod ? " " : "", prod ?: "", speed, jget_str(bridge, "driver") ?: "driver unknown",
		      limited ? "; figures bridge-limited" : "");
	return json_object_new_string(t);
}

/* Where an NVMe identity preflight read came from, for the report's "from". */
static const char *identity_words(json_object *id)
{
	return jget_str(id, "read_through") ? "preflight (NVMe identify and SMART log read through the USB bridge)"
					    : "preflight (NVMe controller)";
}

static json_object *drive_old(json_object *pre)
{
	json_object *o = json_object_new_object(), *src = jget(pre, "source"), *id = schema_preflight_identity(pre, false);
	json_object *ns = judged_ns(id);

	jset_str(o, "from", !pre ? NULL : !id ? "preflight (no drive identity in its record)" :
		 !jget_bool(id, "nvme") ? "preflight (sysfs: not an NVMe identity)" :
		 streq(jget_str(id, "from"), "dumps") ? "preflight (NVMe identify and log dumps)" : identity_words(id));
	put(o, "device", jget(src, "path"));
	json_object_object_add(o, "transport", transport_json(jget(src, "transport"), jget(id, "bridge"), false));
	put(o, "controller", jget(id, "controller"));
	if (!jget_str(id, "controller") && streq(jget_str(id, "from"), "dumps")) {
		/* dumps name no controller: say what preflight judged instead of "unknown" */
		_cleanup_free_ char *c = xasprintf("not named: judged from nvme-cli dumps in %s", jget_str(id, "origin") ?: "a directory");
		jset_str(o, "controller", c);
	}
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
		_cleanup_free_ char *from = xasprintf("accept (%s of %s under %s)%s%s",
						      jget_str(d, "read_through") ? "read through the USB bridge" : "sysfs",
						      jget_str(d, "disk") ?: "?",
						      jget_str(d, "under") ?: schema_accept_target_path(acc) ?: "?",
						      same ? "; class and health: " : "", same ? identity_words(tid) : "");
		jset_str(o, "from", from);
		put(o, "device", jget(d, "disk"));
		json_object_object_add(o, "transport", transport_json(jget(d, "transport"), jget(d, "bridge"),
								      jget_bool(d, "bridge_limited")));
		put(o, "controller", jget(d, "controller"));
		put(o, "model", jget(d, "model"));
		put(o, "serial", jget(d, "serial"));
		put(o, "firmware", jget(d, "firmware"));
		put(o, "namespace_bytes", jget(d, "size_bytes"));
		/* a file's target lba_size is the 4096 accept reads in, not the device's */
		put(o, "lba_size", streq(jget_str(jget(acc, "target"), "kind"), "block") ? jget(jget(acc, "target"), "lba_size")
										       : jget(ns, "lba_size"));
	} else if (same) {
		jset_str(o, "from", jget_str(tid, "read_through") ? "preflight (NVMe identify and SMART log of the target, read "
								      "through the USB bridge)"
								    : "preflight (NVMe controller of the target)");
		put(o, "device", jget(jget(pre, "target"), "path"));
		json_object_object_add(o, "transport", transport_json(jget(jget(pre, "target"), "transport"),
								      jget(tid, "bridge"), false));
		put(o, "controller", jget(tid, "controller"));
		put(o, "model", jget(tid, "model"));
		put(o, "serial", jget(tid, "serial"));
		put(o, "firmware", jget(tid, "firmware"));
		put(o, "namespace_bytes", jget(ns, "size_bytes"));
		put(o, "lba_size", jget(ns, "lba_size"));
	} else {
		jset_str(o, "from", NULL);
		const char *keys[] = { "device", "transport", "controller", "model", "serial", "firmware", "namespace_bytes", "lba_size" };
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

/* What preflight planned for and whether accept measured it: drives.target and drives.match. */
static void drive_target(json_object *o, json_object *pre, json_object *acc)
{
	struct schema_drive t;
	json_object *tj = NULL, *mj;
	_cleanup_free_ char *why = NULL;
	enum report_drive_match m;

	if (pre && schema_preflight_target_drive(pre, &t)) {
		tj = json_object_new_object();
		jset_str(tj, "device", t.device);
		jset_str(tj, "disk", t.disk);
		jset_str(tj, "transport", t.transport);
		jset_str(tj, "model", t.model);
		jset_bool(tj, "model_typed", t.model_typed);
		jset_str(tj, "serial", t.serial);
		json_object_object_add(tj, "size_bytes", t.size_bytes ? json_object_new_uint64(t.size_bytes) : NULL);
	}
	json_object_object_add(o, "target", tj);
	if (!pre || !acc) {
		json_object_object_add(o, "match", NULL);
		return;
	}
	m = report_target_match(pre, acc, &why);
	mj = json_object_new_object();
	jset_str(mj, "result", report_drive_match_name(m));
	jset_str(mj, "why", why);
	json_object_object_add(o, "match", mj);
}

static json_object *drives_of_steps(json_object *steps, const struct profile *p)
{
	json_object *o = json_object_new_object(), *pre = jget(steps, "preflight"), *acc = jget(steps, "accept");

	json_object_object_add(o, "old", drive_old(pre));
	json_object_object_add(o, "new", drive_new(pre, acc, p));
	drive_target(o, pre, acc);
	return o;
}

void report_add_drives(json_object *rep, const struct profile *p)
{
	json_object_object_add(rep, "drives", drives_of_steps(jget(rep, "steps"), p));
}

const struct report_drive_row report_drive_rows[] = {
	{ "device", "device", DK_STR },
	{ "transport", "transport", DK_STR },
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
const size_t report_drive_nrows = ARRAY_SIZE(report_drive_rows);

char *report_drive_cell(json_object *side, size_t row)
{
	json_object *v = jget(side, report_drive_rows[row].key);
	uint64_t u = v ? json_object_get_uint64(v) : 0;
	char a[32], b[32];

	if (!v || json_object_is_type(v, json_type_null))
		return xstrdup("unknown");
	switch (report_drive_rows[row].kind) {
	case DK_STR: return xstrdup(json_object_get_string(v));
	case DK_BYTES: return xasprintf("%s B (%s)", fmt_thousands(u, a), fmt_tb(u, b));
	case DK_TB: return xstrdup(fmt_tb(u, a));
	case DK_MB: return u ? xasprintf("%" PRIu64 " MB", u) : xstrdup("none (0 MB)");
	case DK_NUM: return xstrdup(fmt_thousands(u, a));
	case DK_C: return xasprintf("%" PRId64 " °C", json_object_get_int64(v));
	case DK_B: return xasprintf("%" PRIu64 " B", u);
	}
	return xstrdup("unknown");
}

json_object *report_drives_of(json_object *rep, bool *owned)
{
	json_object *d = jget(rep, "drives");

	*owned = !d;
	if (d)
		return d;
	return drives_of_steps(jget(rep, "steps"), NULL);
}

/* ---- the cells both renderings print ---- */

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

void report_compare_cells(json_object *a, json_object *b, char c[9][32])
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

static void temp_text(json_object *temp, const char *key, char buf[32])
{
	if (jget(temp, key))
		snprintf(buf, 32, "%" PRIi64 " °C", jget_i64(temp, key));
	else
		snprintf(buf, 32, "?");
}

char *report_sustain_summary(json_object *sus)
{
	json_object *d = jget_object(sus, "drift"), *temp = jget_object(sus, "temperature");
	_cleanup_free_ char *drift = NULL, *heat = NULL;
	char a[32], b[32], t1[32], t2[32];

	if (d) {
		fmt_ratio(jget(d, "iops_ratio") ? jget_double(d, "iops_ratio") : NAN, a);
		fmt_ratio(jget(d, "p99_9_ratio") ? jget_double(d, "p99_9_ratio") : NAN, b);
		drift = xasprintf("IOPS %sx and p99.9 %sx from the first interval to the last (%s)", a, b,
				  jget_str(d, "status") ?: "?");
	} else
		drift = xstrdup("no drift: fewer than two whole intervals");
	temp_text(temp, "before_c", t1);
	temp_text(temp, "after_c", t2);
	if (jget_str(temp, "reason"))
		heat = xasprintf("temperature not read: %s", jget_str(temp, "reason"));
	else
		heat = xasprintf("temperature %s before, %s after (SMART, %s)", t1, t2, jget_str(temp, "controller") ?: "?");
	return xasprintf("%s, %" PRIu64 " in flight, for %" PRIu64 " s in intervals of %" PRIu64 " s%s: %s; %s",
			 jget_str(sus, "run") ?: "?", jget_u64(sus, "inflight"), jget_u64(sus, "duration_s"),
			 jget_u64(sus, "interval_s"), jget_bool(sus, "complete") ? "" : " (cut short)", drift, heat);
}

static void worst_chunk_text(json_object *run, char buf[32])
{
	json_object *p = jget_object(run, "engine_prediction");

	if (!p)
		snprintf(buf, 32, "-");
	else if (!jget(p, "worst_chunk_s"))
		snprintf(buf, 32, "never"); /* no read completed: the chunk never finishes */
	else
		snprintf(buf, 32, "%.1f s", jget_double(p, "worst_chunk_s"));
}

void report_sustain_cells(json_object *before, json_object *after, char c[6][32])
{
	fmt_iops(jget_double(before, "iops"), c[0]);
	fmt_iops(jget_double(after, "iops"), c[1]);
	fmt_us(run_lat_us(before, SCHEMA_LAT_P99_9), c[2]);
	fmt_us(run_lat_us(after, SCHEMA_LAT_P99_9), c[3]);
	worst_chunk_text(before, c[4]);
	worst_chunk_text(after, c[5]);
	if (!before)
		for (unsigned k = 0; k < 6; k += 2)
			snprintf(c[k], 32, "-");
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
