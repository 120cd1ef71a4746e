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

int manifest_parse(const char *text, size_t len, struct manifest *m, char **why)
{
	json_tokener *tok = json_tokener_new();
	json_object *o, *a, *u;
	const char *dup = NULL, *pwhy;
	size_t n;
	int rr;

	*m = (struct manifest){ 0 };
	if (!tok)
		return -ENOMEM;
	o = json_tokener_parse_ex(tok, text, (int)len);
	if (!o || json_tokener_get_error(tok) != json_tokener_success ||
	    (size_t)json_tokener_get_parse_end(tok) < len) {
		size_t end = (size_t)json_tokener_get_parse_end(tok);
		bool trailing_ws = true;

		for (size_t i = end; o && i < len; i++)
			if (!strchr(" \t\r\n", text[i]))
				trailing_ws = false;
		if (!o || !trailing_ws) {
			json_object_put(o);
			json_tokener_free(tok);
			return set_why(why, -EBADMSG, "the manifest is not valid JSON");
		}
	}
	json_tokener_free(tok);
	if (!json_object_is_type(o, json_type_object) || !streq(jget_str(o, "schema"), MANIFEST_SCHEMA)) {
		rr = set_why(why, -EBADMSG, "the manifest's schema is not '%s'", MANIFEST_SCHEMA);
		json_object_put(o);
		return rr;
	}
	m->host = opt_str(o, "host");
	m->user = opt_str(o, "user");
	m->home = opt_str(o, "home");
	m->created = opt_str(o, "created");
	a = jget(o, "entries");
	if (!a || !json_object_is_type(a, json_type_array)) {
		rr = set_why(why, -EBADMSG, "the manifest has no 'entries' array");
		json_object_put(o);
		return rr;
	}
	/* the count is checked against the profile's [limits] by arc_load; the manifest's own
	 * size cap (ARC_MAX_MANIFEST) bounds what is parsed here */
	n = json_object_array_length(a);
	for (size_t i = 0; i < n; i++) {
		json_object *j = json_object_array_get_idx(a, i);
		const char *path = jget_str(j, "path"), *type = jget_str(j, "type"), *mode = jget_str(j, "mode");
		const char *sha = jget_str(j, "sha256"), *link = jget_str(j, "link");
		struct mentry *e;
		char *end = NULL;
		unsigned long mv;

		if (!path || path_check(path, &pwhy) < 0) {
			rr = set_why(why, -EBADMSG, "manifest entry %zu '%s': %s", i, path ? path : "(none)",
				   path ? pwhy : "no path");
			json_object_put(o);
			return rr;
		}
		const char *base = strrchr(path, '/');

		if (startswith(path, MANIFEST_NAME) || streq(path, STATE_DIR_NAME) ||
		    startswith(path, STATE_DIR_NAME "/") || startswith(base ? base + 1 : path, RESTORE_TMP_PREFIX)) {
			rr = set_why(why, -EBADMSG, "manifest entry '%s' uses a name reserved for swaptool", path);
			json_object_put(o);
			return rr;
		}
		e = manifest_add(m, path);
		if (!type || mtype_parse(type, &e->type) < 0) {
			rr = set_why(why, -EBADMSG, "manifest entry '%s': unknown type '%s'", path, type ? type : "(none)");
			json_object_put(o);
			return rr;
		}
		errno = 0;
		mv = mode ? strtoul(mode, &end, 8) : 0;
		if (!mode || !*mode || *end || errno || mv > 07777) {
			rr = set_why(why, -EBADMSG, "manifest entry '%s': bad mode '%s'", path, mode ? mode : "(none)");
			json_object_put(o);
			return rr;
		}
		e->mode = (uint32_t)mv;
		if (!is_uint(jget(j, "uid")) || !is_uint(jget(j, "gid")) || !is_uint(jget(j, "size")) ||
		    !jget_str(j, "user") || !jget_str(j, "group")) {
			rr = set_why(why, -EBADMSG, "manifest entry '%s': uid, gid, size, user or group missing", path);
			json_object_put(o);
			return rr;
		}
		e->uid = (uint32_t)jget_u64(j, "uid");
		e->gid = (uint32_t)jget_u64(j, "gid");
		e->size = jget_u64(j, "size");
		e->user = opt_str(j, "user");
		e->group = opt_str(j, "group");
		e->mtime = jget_i64(j, "mtime");
		e->parent = jget_bool(j, "parent");
		if (e->type == MT_FILE) {
			if (!hex64(sha)) {
				rr = set_why(why, -EBADMSG, "manifest entry '%s': no valid sha256", path);
				json_object_put(o);
				return rr;
			}
			memcpy(e->sha256, sha, 65);
		}
		if (e->type == MT_SYMLINK || e->type == MT_HARDLINK) {
			if (!link || !*link) {
				rr = set_why(why, -EBADMSG, "manifest entry '%s': a %s without a target", path, type);
				json_object_put(o);
				return rr;
			}
			e->link = xstrdup(link);
		}
	}
	a = jget(o, "state");
	if (a && json_object_is_type(a, json_type_array)) {
		n = json_object_array_length(a);
		m->st = xcalloc(n, sizeof(*m->st));
		for (size_t i = 0; i < n; i++) {
			json_object *j = json_object_array_get_idx(a, i);
			const char *name = jget_str(j, "name"), *sha = jget_str(j, "sha256");

			if (!state_name_ok(name) || !hex64(sha) || !is_uint(jget(j, "size"))) {
				rr = set_why(why, -EBADMSG, "manifest state record %zu '%s' is malformed", i, name ? name : "(none)");
				json_object_put(o);
				return rr;
			}
			m->st[m->nst].name = xstrdup(name);
			m->st[m->nst].size = jget_u64(j, "size");
			memcpy(m->st[m->nst].sha256, sha, 65);
			m->nst++;
		}
	}
	u = jget(o, "undo");
	if (u) {
		json_object *c = jget(u, "created");

		m->undo = true;
		for (size_t i = 0; c && json_object_is_type(c, json_type_array) && i < json_object_array_length(c); i++) {
			const char *p = json_object_get_string(json_object_array_get_idx(c, i));

			if (!p || path_check(p, &pwhy) < 0) {
				rr = set_why(why, -EBADMSG, "undo path '%s': %s", p ? p : "(none)", p ? pwhy : "not a string");
				json_object_put(o);
				return rr;
			}
			strlist_add(&m->undo_created, p);
		}
	}
	json_object_put(o);
	if (manifest_index(m, &dup) < 0)
		return set_why(why, -EBADMSG, "the manifest lists '%s' twice", dup);
	return 0;
}
