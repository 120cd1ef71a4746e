/* SPDX-License-Identifier: MIT */
/* Step records: envelope, checks and verdict with json-c, saved atomically in the state directory. */
#include "util.h"
#include "json.h"
#include "record.h"
#include "schema.h"

#include <sys/stat.h>
#include <time.h>

static const char *const status_names[] = {
	[ST_PASS] = "pass", [ST_SKIP] = "skip", [ST_WARN] = "warn", [ST_FAIL] = "fail",
};

const char *status_name(enum status st)
{
	return st < ARRAY_SIZE(status_names) ? status_names[st] : "fail";
}

int status_parse(const char *s, enum status *st)
{
	for (unsigned i = 0; i < ARRAY_SIZE(status_names); i++)
		if (streq(s, status_names[i])) {
			*st = (enum status)i;
			return 0;
		}
	return -EINVAL;
}

bool verdict_word_known(const char *w)
{
	enum status st;

	return streq(w, "trap") || status_parse(w, &st) == 0;
}

int record_init(struct record *r, const char *step)
{
	char now[32];

	*r = (struct record){ .root = json_object_new_object(), .checks = json_object_new_array() };
	if (!r->root || !r->checks)
		return -ENOMEM;
	iso8601_utc(time(NULL), now);
	jset_str(r->root, "schema", RECORD_SCHEMA);
	jset_str(r->root, "step", step);
	jset_str(r->root, "version", SWAPTOOL_VERSION);
	jset_str(r->root, "host", host_name());
	jset_str(r->root, "started", now);
	json_object_object_add(r->root, "finished", NULL);
	jset_str(r->root, "verdict", "pass");
	json_object_object_add(r->root, "checks", r->checks);
	return 0;
}

void record_free(struct record *r)
{
	json_object_put(r->root);
	*r = (struct record){ 0 };
}

json_object *record_check(struct record *r, const char *id, enum status st, const char *fmt, ...)
{
	json_object *c = json_object_new_object();
	_cleanup_free_ char *summary = NULL;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&summary, fmt, ap) < 0)
		abort();
	va_end(ap);
	jset_str(c, "id", id);
	jset_str(c, "status", status_name(st));
	jset_str(c, "summary", summary);
	json_object_array_add(r->checks, c);
	if (st > r->worst)
		r->worst = st;
	return c;
}

void record_finish(struct record *r)
{
	char now[32];

	iso8601_utc(time(NULL), now);
	jset_str(r->root, "finished", now);
	jset_str(r->root, "verdict", r->worst == ST_FAIL ? "fail" : r->worst == ST_WARN ? "warn" : "pass");
}

int record_exit_code(const struct record *r)
{
	return streq(jget_str(r->root, "verdict"), "fail") ? 1 : 0;
}

int state_dir_default(char **out)
{
	const char *xdg = getenv("XDG_STATE_HOME");
	const char *home = getenv("HOME");

	if (geteuid() == 0)
		*out = xstrdup("/var/lib/swaptool");
	else if (xdg && *xdg)
		*out = xasprintf("%s/swaptool", xdg);
	else if (home && *home)
		*out = xasprintf("%s/.local/state/swaptool", home);
	else
		return -ENOENT;
	return 0;
}

int record_save(const struct record *r, const char *state_dir)
{
	const char *step = jget_str(r->root, "step");
	_cleanup_free_ char *path = NULL;
	const char *text;
	int rc;

	if (!step)
		return -EINVAL;
	rc = mkdir_p(state_dir, 0700);
	if (rc < 0)
		return rc;
	path = xasprintf("%s/%s.json", state_dir, step);
	text = json_object_to_json_string_ext(r->root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
	/* a string added without jset_str is made valid UTF-8 here (json-c copies bytes as they are) */
	_cleanup_free_ char *clean = utf8_valid(text) ? NULL : utf8_sanitize(text);
	_cleanup_free_ char *withnl = xasprintf("%s\n", clean ?: text);
	return write_file_atomic(path, withnl, strlen(withnl), 0600);
}

int record_check_envelope(json_object *o, const char *step, char **why)
{
	const char *schema = jget_str(o, "schema"), *got = jget_str(o, "step");
	json_object *checks = jget(o, "checks");

	if (!o || !json_object_is_type(o, json_type_object))
		return set_why(why, -EBADMSG, "it is not a JSON object");
	if (!schema || !startswith(schema, "swaptool/"))
		return set_why(why, -EBADMSG, "it has no schema '%s': not a swaptool record", RECORD_SCHEMA);
	/* A newer swaptool may have changed what a field means: refuse rather than guess. */
	if (!streq(schema, RECORD_SCHEMA))
		return set_why(why, -EPROTONOSUPPORT, "its schema is '%s' but this swaptool reads only '%s'; "
				       "read it with the swaptool that wrote it", schema, RECORD_SCHEMA);
	if (!got)
		return set_why(why, -EBADMSG, "its 'step' is missing or not a string");
	if (step && !streq(got, step))
		return set_why(why, -EBADMSG, "it is the record of '%s', not of '%s'", got, step);
	if (jget(o, "verdict") && !jget_str(o, "verdict"))
		return set_why(why, -EBADMSG, "its 'verdict' is not a string");
	if (checks && !json_object_is_type(checks, json_type_array))
		return set_why(why, -EBADMSG, "its 'checks' is not an array");
	for (size_t i = 0; i < jarray_len(checks); i++)
		if (!json_object_is_type(jarray_at(checks, i), json_type_object))
			return set_why(why, -EBADMSG, "its check %zu is not an object", i + 1);
	return 0;
}

int record_parse(const char *text, size_t len, const char *step, json_object **out, char **why)
{
	json_object *o = NULL;
	int r = json_parse_doc(text, len, &o, why);

	if (r < 0)
		return r;
	r = record_check_envelope(o, step, why);
	/* the keys other steps read have their declared types (src/schema.h): a record of the wrong
	 * shape is refused here, with the key named, instead of misread later */
	if (r == 0)
		r = schema_validate(step, o, why);
	if (r < 0) {
		json_object_put(o);
		return r;
	}
	*out = o;
	return 0;
}

int record_load_why(const char *state_dir, const char *step, json_object **out, char **why)
{
	_cleanup_free_ char *path = xasprintf("%s/%s.json", state_dir, step);
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	/* as root, a record another user could have written (planted, or changed) is not taken as ours
	 * (cli/main.c judges the directory itself) */
	int r = read_input(path, RECORD_MAX_BYTES, geteuid() == 0 ? INPUT_OURS : 0, &text, &len, why);

	if (r < 0)
		return r;
	return record_parse(text, len, step, out, why);
}

int record_load(const char *state_dir, const char *step, json_object **out)
{
	return record_load_why(state_dir, step, out, NULL);
}
