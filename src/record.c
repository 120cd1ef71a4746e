/* SPDX-License-Identifier: MIT */
/* Step records: envelope, checks and verdict with json-c, saved atomically in the state directory. */
#include "util.h"
#include "record.h"

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

int record_init(struct record *r, const char *step)
{
	char now[32];

	*r = (struct record){ .root = json_object_new_object(), .checks = json_object_new_array() };
	if (!r->root || !r->checks)
		return -ENOMEM;
	iso8601_utc(time(NULL), now);
	jset_str(r->root, "schema", "swaptool/1");
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
	_cleanup_free_ char *withnl = xasprintf("%s\n", text);
	return write_file_atomic(path, withnl, strlen(withnl), 0600);
}

int record_load(const char *state_dir, const char *step, json_object **out)
{
	_cleanup_free_ char *path = xasprintf("%s/%s.json", state_dir, step);
	_cleanup_free_ char *text = NULL;
	json_object *o;
	int r = read_file_all(path, 64 << 20, &text, NULL);

	if (r < 0)
		return r;
	o = json_tokener_parse(text);
	if (!o || !json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		return -EBADMSG;
	}
	*out = o;
	return 0;
}

void jset_u64(json_object *o, const char *key, uint64_t v)
{
	json_object_object_add(o, key, json_object_new_uint64(v));
}

void jset_i64(json_object *o, const char *key, int64_t v)
{
	json_object_object_add(o, key, json_object_new_int64(v));
}

void jset_str(json_object *o, const char *key, const char *s)
{
	json_object_object_add(o, key, s ? json_object_new_string(s) : NULL);
}

void jset_bool(json_object *o, const char *key, bool v)
{
	json_object_object_add(o, key, json_object_new_boolean(v));
}

void jset_double(json_object *o, const char *key, double v)
{
	json_object_object_add(o, key, json_object_new_double(v));
}

json_object *jget(json_object *o, const char *key)
{
	json_object *v = NULL;

	if (!o || !json_object_object_get_ex(o, key, &v))
		return NULL;
	return v;
}

uint64_t jget_u64(json_object *o, const char *key)
{
	json_object *v = jget(o, key);
	return v ? json_object_get_uint64(v) : 0;
}

int64_t jget_i64(json_object *o, const char *key)
{
	json_object *v = jget(o, key);
	return v ? json_object_get_int64(v) : 0;
}

const char *jget_str(json_object *o, const char *key)
{
	json_object *v = jget(o, key);
	return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

bool jget_bool(json_object *o, const char *key)
{
	json_object *v = jget(o, key);
	return v ? json_object_get_boolean(v) : false;
}

double jget_double(json_object *o, const char *key)
{
	json_object *v = jget(o, key);
	return v ? json_object_get_double(v) : 0.0;
}
