/* SPDX-License-Identifier: MIT */
/* The backup manifest: entries to JSON and back, path safety, lookup by path. */
#include "util.h"
#include "manifest.h"
#include "json.h"
#include "rootpath.h"

static const char *const type_names[] = {
	[MT_FILE] = "file", [MT_DIR] = "dir", [MT_SYMLINK] = "symlink", [MT_HARDLINK] = "hardlink",
};

const char *mtype_name(enum mtype t)
{
	return t < ARRAY_SIZE(type_names) ? type_names[t] : "?";
}

int mtype_parse(const char *s, enum mtype *t)
{
	for (unsigned i = 0; i < ARRAY_SIZE(type_names); i++)
		if (streq(s, type_names[i])) {
			*t = (enum mtype)i;
			return 0;
		}
	return -EINVAL;
}

struct mentry *manifest_add(struct manifest *m, const char *path)
{
	if (m->n == m->cap) {
		m->cap = m->cap ? m->cap * 2 : 64;
		m->e = realloc(m->e, m->cap * sizeof(*m->e));
		if (!m->e)
			abort();
	}
	m->e[m->n] = (struct mentry){ .path = xstrdup(path) };
	return &m->e[m->n++];
}

void manifest_free(struct manifest *m)
{
	for (size_t i = 0; i < m->n; i++) {
		free(m->e[i].path);
		free(m->e[i].user);
		free(m->e[i].group);
		free(m->e[i].link);
	}
	for (size_t i = 0; i < m->nst; i++)
		free(m->st[i].name);
	free(m->st);
	free(m->e);
	free(m->index);
	free(m->host);
	free(m->user);
	free(m->home);
	free(m->created);
	strlist_clear(&m->undo_created);
	*m = (struct manifest){ 0 };
}

json_object *manifest_to_json(const struct manifest *m)
{
	json_object *o = json_object_new_object(), *a = json_object_new_array();

	jset_str(o, "schema", MANIFEST_SCHEMA);
	jset_str(o, "host", m->host);
	jset_str(o, "user", m->user);
	jset_str(o, "home", m->home);
	jset_str(o, "created", m->created);
	for (size_t i = 0; i < m->n; i++) {
		const struct mentry *e = &m->e[i];
		json_object *j = json_object_new_object();
		char mode[8];

		snprintf(mode, sizeof(mode), "%04o", e->mode & 07777);
		jset_str(j, "path", e->path);
		jset_str(j, "type", mtype_name(e->type));
		jset_str(j, "mode", mode);
		jset_u64(j, "uid", e->uid);
		jset_u64(j, "gid", e->gid);
		jset_str(j, "user", e->user);
		jset_str(j, "group", e->group);
		jset_u64(j, "size", e->size);
		jset_str(j, "sha256", e->type == MT_FILE ? e->sha256 : NULL);
		jset_str(j, "link", e->link);
		jset_i64(j, "mtime", e->mtime);
		if (e->parent)
			jset_bool(j, "parent", true);
		json_object_array_add(a, j);
	}
	json_object_object_add(o, "entries", a);
	a = json_object_new_array();
	for (size_t i = 0; i < m->nst; i++) {
		json_object *j = json_object_new_object();

		jset_str(j, "name", m->st[i].name);
		jset_u64(j, "size", m->st[i].size);
		jset_str(j, "sha256", m->st[i].sha256);
		json_object_array_add(a, j);
	}
	json_object_object_add(o, "state", a);
	if (m->undo) {
		json_object *u = json_object_new_object(), *c = json_object_new_array();

		for (size_t i = 0; i < m->undo_created.n; i++)
			json_object_array_add(c, json_object_new_string(m->undo_created.v[i]));
		json_object_object_add(u, "created", c);
		json_object_object_add(o, "undo", u);
	}
	return o;
}

static bool hex64(const char *s)
{
	if (!s || strlen(s) != 64)
		return false;
	for (const char *p = s; *p; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
			return false;
	return true;
}

static int cmp_index(const void *a, const void *b, void *arg)
{
	const struct manifest *m = arg;
	return strcmp(m->e[*(const size_t *)a].path, m->e[*(const size_t *)b].path);
}

int manifest_index(struct manifest *m, const char **dup)
{
	free(m->index);
	m->index = xcalloc(m->n, sizeof(size_t));
	for (size_t i = 0; i < m->n; i++)
		m->index[i] = i;
	qsort_r(m->index, m->n, sizeof(size_t), cmp_index, m);
	for (size_t i = 1; i < m->n; i++)
		if (streq(m->e[m->index[i - 1]].path, m->e[m->index[i]].path)) {
			if (dup)
				*dup = m->e[m->index[i]].path;
			return -EEXIST;
		}
	return 0;
}

const struct mentry *manifest_find(const struct manifest *m, const char *path)
{
	size_t lo = 0, hi = m->n;

	if (!m->index)
		return NULL;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(path, m->e[m->index[mid]].path);

		if (c == 0)
			return &m->e[m->index[mid]];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

static bool is_uint(json_object *v)
{
	return v && json_object_is_type(v, json_type_int) && json_object_get_int64(v) >= 0;
}

static char *opt_str(json_object *o, const char *key)
{
	const char *s = jget_str(o, key);
	return s ? xstrdup(s) : NULL;
}

/* The i-th element of 'entries' (counted from 0 in the messages) into m. */
static int parse_entry(json_object *j, size_t i, struct manifest *m, char **why)
{
	const char *path = jget_str(j, "path"), *type = jget_str(j, "type"), *mode = jget_str(j, "mode");
	const char *sha = jget_str(j, "sha256"), *link = jget_str(j, "link"), *pwhy = NULL, *base;
	struct mentry *e;
	char *end = NULL;
	unsigned long mv;

	if (!path || path_check(path, &pwhy) < 0)
		return set_why(why, -EBADMSG, "manifest entry %zu '%s': %s", i, path ? path : "(none)",
			       path ? pwhy : "no path");
	base = strrchr(path, '/');
	if (startswith(path, MANIFEST_NAME) || streq(path, STATE_DIR_NAME) ||
	    startswith(path, STATE_DIR_NAME "/") || startswith(base ? base + 1 : path, RESTORE_TMP_PREFIX))
		return set_why(why, -EBADMSG, "manifest entry '%s' uses a name reserved for swaptool", path);
	e = manifest_add(m, path);
	if (!type || mtype_parse(type, &e->type) < 0)
		return set_why(why, -EBADMSG, "manifest entry '%s': unknown type '%s'", path, type ? type : "(none)");
	errno = 0;
	mv = mode ? strtoul(mode, &end, 8) : 0;
	if (!mode || !*mode || *end || errno || mv > 07777)
		return set_why(why, -EBADMSG, "manifest entry '%s': bad mode '%s'", path, mode ? mode : "(none)");
	e->mode = (uint32_t)mv;
	if (!is_uint(jget(j, "uid")) || !is_uint(jget(j, "gid")) || !is_uint(jget(j, "size")) ||
	    !jget_str(j, "user") || !jget_str(j, "group"))
		return set_why(why, -EBADMSG, "manifest entry '%s': uid, gid, size, user or group missing", path);
	e->uid = (uint32_t)jget_u64(j, "uid");
	e->gid = (uint32_t)jget_u64(j, "gid");
	e->size = jget_u64(j, "size");
	e->user = opt_str(j, "user");
	e->group = opt_str(j, "group");
	e->mtime = jget_i64(j, "mtime");
	e->parent = jget_bool(j, "parent");
	if (e->type == MT_FILE && !hex64(sha))
		return set_why(why, -EBADMSG, "manifest entry '%s': no valid sha256", path);
	if (e->type == MT_FILE)
		memcpy(e->sha256, sha, 65);
	if ((e->type == MT_SYMLINK || e->type == MT_HARDLINK) && (!link || !*link))
		return set_why(why, -EBADMSG, "manifest entry '%s': a %s without a target", path, type);
	if (e->type == MT_SYMLINK || e->type == MT_HARDLINK)
		e->link = xstrdup(link);
	return 0;
}

/* The i-th element of 'state' into m->st (allocated for all of them). */
static int parse_state(json_object *j, size_t i, struct manifest *m, char **why)
{
	const char *name = jget_str(j, "name"), *sha = jget_str(j, "sha256");

	if (!state_name_ok(name) || !hex64(sha) || !is_uint(jget(j, "size")))
		return set_why(why, -EBADMSG, "manifest state record %zu '%s' is malformed", i, name ? name : "(none)");
	m->st[m->nst] = (struct mstate){ .name = xstrdup(name), .size = jget_u64(j, "size") };
	memcpy(m->st[m->nst].sha256, sha, 65);
	m->nst++;
	return 0;
}

/* 'undo' of an undo archive: the paths restore created. An element is read as json-c's text of
 * it, as it always was: a number is that path, only null is refused as not a string. */
static int parse_undo(json_object *u, struct manifest *m, char **why)
{
	json_object *c = jget_array(u, "created");
	const char *pwhy = NULL;

	m->undo = true;
	for (size_t i = 0; i < jarray_len(c); i++) {
		const char *p = json_object_get_string(jarray_at(c, i));

		if (!p || path_check(p, &pwhy) < 0)
			return set_why(why, -EBADMSG, "undo path '%s': %s", p ? p : "(none)", p ? pwhy : "not a string");
		strlist_add(&m->undo_created, p);
	}
	return 0;
}

int manifest_parse(const char *text, size_t len, struct manifest *m, char **why)
{
	_cleanup_json_ json_object *o = NULL;
	json_object *a, *st;
	const char *dup = NULL;
	size_t n = len;
	int r;

	*m = (struct manifest){ 0 };
	/* one document with white space after it (json_parse_doc; its reason is not the manifest's).
	 * NUL bytes after the document were always taken for white space here, and json_parse_doc
	 * refuses them: a trailing run of white space with a NUL in it is cut off first. */
	while (n > 0 && (!text[n - 1] || strchr(" \t\r\n", text[n - 1])))
		n--;
	r = json_parse_doc(text, memchr(text + n, '\0', len - n) ? n : len, &o, NULL);
	if (r < 0)
		return r == -ENOMEM ? r : set_why(why, -EBADMSG, "the manifest is not valid JSON");
	if (!json_object_is_type(o, json_type_object) || !streq(jget_str(o, "schema"), MANIFEST_SCHEMA))
		return set_why(why, -EBADMSG, "the manifest's schema is not '%s'", MANIFEST_SCHEMA);
	m->host = opt_str(o, "host");
	m->user = opt_str(o, "user");
	m->home = opt_str(o, "home");
	m->created = opt_str(o, "created");
	a = jget_array(o, "entries");
	if (!a)
		return set_why(why, -EBADMSG, "the manifest has no 'entries' array");
	/* the count is checked against the profile's [limits] by arc_load; the manifest's own
	 * size cap (ARC_MAX_MANIFEST) bounds what is parsed here */
	for (size_t i = 0; r == 0 && i < jarray_len(a); i++)
		r = parse_entry(jarray_at(a, i), i, m, why);
	st = jget_array(o, "state");
	if (r == 0 && st)
		m->st = xcalloc(jarray_len(st), sizeof(*m->st));
	for (size_t i = 0; r == 0 && i < jarray_len(st); i++)
		r = parse_state(jarray_at(st, i), i, m, why);
	if (r == 0 && jget(o, "undo"))
		r = parse_undo(jget(o, "undo"), m, why);
	if (r == 0 && manifest_index(m, &dup) < 0)
		r = set_why(why, -EBADMSG, "the manifest lists '%s' twice", dup);
	return r;
}
