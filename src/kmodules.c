/* SPDX-License-Identifier: MIT */
/* Kernel module closures from depmod's modules.dep, dependencies first. */
#include "util.h"
#include "kmodules.h"

#define KMOD_MAX_FILE (64u << 20)

char *kmod_name(const char *s)
{
	const char *base = strrchr(s, '/') ? strrchr(s, '/') + 1 : s;
	char *n = xstrdup(base), *ko = strstr(n, ".ko");

	if (ko && (ko[3] == 0 || ko[3] == '.'))
		*ko = 0;
	for (char *p = n; *p; p++)
		if (*p == '-')
			*p = '_';
	return n;
}

struct dep_line {
	char *name, *path;
	char **deps; /* paths */
	size_t ndeps;
	int state;   /* 0 not visited, 1 on the stack, 2 done */
};

struct dep_map {
	struct dep_line *l;
	size_t n;
};

static void dep_map_free(struct dep_map *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->l[i].name), free(m->l[i].path), free(m->l[i].deps);
	free(m->l);
}

/* A path modules.dep may name: relative, inside the modules directory, a .ko file. */
static bool path_ok(const char *p)
{
	_cleanup_free_ char *n = NULL;

	if (!*p || p[0] == '/' || startswith(p, "../") || strstr(p, "/../") || !strstr(p, ".ko"))
		return false;
	n = kmod_name(p);
	return n[0] != 0;
}

/* modules.dep's lines into m: "kernel/fs/ext4/ext4.ko: kernel/lib/crc16.ko kernel/fs/mbcache.ko ..." */
static int dep_parse(char *text, struct dep_map *m, char **why)
{
	size_t lineno = 0, cap = 0;
	char *save = NULL;

	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *colon = strchr(line, ':'), *dsave = NULL;
		struct dep_line *d;

		lineno++;
		if (!colon)
			return set_why(why, -EBADMSG, "modules.dep line %zu has no ':'", lineno);
		*colon = 0;
		if (!path_ok(line))
			return set_why(why, -EBADMSG, "modules.dep line %zu names '%.80s', not a module inside the directory",
				       lineno, line);
		if (m->n == cap) {
			cap = cap ? cap * 2 : 4096;
			m->l = realloc(m->l, cap * sizeof(*m->l));
			if (!m->l)
				abort();
		}
		d = &m->l[m->n++];
		*d = (struct dep_line){ .path = xstrdup(line), .name = kmod_name(line) };
		d->deps = xcalloc(strlen(colon + 1) / 2 + 1, sizeof(char *));
		for (char *p = strtok_r(colon + 1, " \t", &dsave); p; p = strtok_r(NULL, " \t", &dsave)) {
			if (!path_ok(p))
				return set_why(why, -EBADMSG, "modules.dep line %zu depends on '%.80s', not a module inside "
						       "the directory", lineno, p);
			d->deps[d->ndeps++] = p; /* points into text, which outlives the map's use */
		}
	}
	return 0;
}

static struct dep_line *dep_find(struct dep_map *m, const char *name)
{
	for (size_t i = 0; i < m->n; i++)
		if (streq(m->l[i].name, name))
			return &m->l[i];
	return NULL;
}

static int visit(struct dep_map *m, struct dep_line *d, struct kmod_set *out, char **why)
{
	int r;

	if (d->state == 2)
		return 0;
	if (d->state == 1)
		return set_why(why, -ELOOP, "modules.dep has a dependency cycle through '%s'", d->path);
	d->state = 1;
	for (size_t i = 0; i < d->ndeps; i++) {
		_cleanup_free_ char *n = kmod_name(d->deps[i]);
		struct dep_line *x = dep_find(m, n);

		if (!x)
			return set_why(why, -EBADMSG, "modules.dep says '%s' needs '%s', which has no line of its own",
				       d->path, d->deps[i]);
		if ((r = visit(m, x, out, why)) < 0)
			return r;
	}
	d->state = 2;
	strlist_add(&out->files, d->path);
	return 0;
}

/* Is `name` listed in modules.builtin (text, one path a line)? */
static bool builtin(const char *text, const char *name)
{
	_cleanup_free_ char *copy = xstrdup(text ? text : "");
	char *save = NULL;

	for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		_cleanup_free_ char *n = kmod_name(line);

		if (streq(n, name))
			return true;
	}
	return false;
}

int kmod_resolve(const char *moddir, const char *const *names, size_t n, struct kmod_set *out, char **why)
{
	_cleanup_free_ char *dep_path = xasprintf("%s/modules.dep", moddir), *bi_path = xasprintf("%s/modules.builtin", moddir);
	_cleanup_free_ char *text = NULL, *bi = NULL, *w = NULL;
	struct dep_map m = { 0 };
	size_t len;
	int r;

	*out = (struct kmod_set){ 0 };
	r = read_input(dep_path, KMOD_MAX_FILE, 0, &text, &len, &w);
	if (r == -ENOENT)
		return set_why(why, r, "'%s' has no modules.dep: run 'depmod' for that kernel (depmod -b ROOT RELEASE)", moddir);
	if (r < 0)
		return set_why(why, r, "cannot read '%s': %s", dep_path, w);
	if (strlen(text) != len)
		return set_why(why, -EBADMSG, "'%s' holds a NUL byte: not depmod's text", dep_path);
	(void)read_input(bi_path, KMOD_MAX_FILE, 0, &bi, &len, NULL);
	r = dep_parse(text, &m, why);
	for (size_t i = 0; r == 0 && i < n; i++) {
		_cleanup_free_ char *name = kmod_name(names[i]);
		struct dep_line *d = dep_find(&m, name);

		if (d)
			r = visit(&m, d, out, why);
		else if (builtin(bi, name))
			strlist_add(&out->builtin, name);
		else
			strlist_add(&out->missing, name);
	}
	dep_map_free(&m);
	if (r < 0)
		kmod_set_free(out);
	return r;
}

void kmod_set_free(struct kmod_set *s)
{
	strlist_clear(&s->files);
	strlist_clear(&s->builtin);
	strlist_clear(&s->missing);
}
