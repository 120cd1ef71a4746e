/* SPDX-License-Identifier: MIT */
/* The profile: the incident's defaults, overridden by an INI file (its own small parser: see parse_profile). */
#include "util.h"
#include "profile.h"
#include "size.h"

#include <fcntl.h>
#include <math.h>
#include <strings.h>
#include <sys/stat.h>

#include "rootpath.h"
#include "json.h"

static struct accept_run *add_run(struct profile *p, const char *name)
{
	for (size_t i = 0; i < p->nruns; i++)
		if (streq(p->runs[i].name, name))
			return &p->runs[i];
	p->runs = realloc(p->runs, (p->nruns + 1) * sizeof(*p->runs));
	if (!p->runs)
		abort();
	p->runs[p->nruns] = (struct accept_run){ .name = xstrdup(name) };
	return &p->runs[p->nruns++];
}

static struct profile_drive *add_drive(struct profile *p, const char *name, unsigned line)
{
	for (size_t i = 0; i < p->ndrives; i++)
		if (streq(p->drives[i].name, name))
			return &p->drives[i];
	p->drives = realloc(p->drives, (p->ndrives + 1) * sizeof(*p->drives));
	if (!p->drives)
		abort();
	p->drives[p->ndrives] = (struct profile_drive){ .name = xstrdup(name), .line = line };
	return &p->drives[p->ndrives++];
}

static void set_str(char **dst, const char *v)
{
	free(*dst);
	*dst = xstrdup(v);
}

/* The incident's values: backup set, re-fetchable stores, and the acceptance table. */
static void profile_defaults(struct profile *p)
{
	static const char *backup[] = { "~/.config/flare/", "~/.ssh/", "/etc/netplan/", "/etc/fstab", "/etc/hosts" };
	struct accept_run *r;

	p->source = xstrdup("built-in");
	for (size_t i = 0; i < ARRAY_SIZE(backup); i++)
		strlist_add(&p->backup_paths, backup[i]);
	strlist_add(&p->required, "~/.config/flare/orbit/controller.key");
	strlist_add(&p->fstab_files, "/etc/fstab");
	strlist_add(&p->refetch_paths, "~/flare-pkgs");
	strlist_add(&p->refetch_paths, "~/.cache/flare");
	p->refetch_minutes = 50;

	p->working_set = 98ULL << 30;
	p->ramp_s = 2;
	p->seq_bytes = 4ULL << 30;
	p->busy_threshold_iops = 500;
	/* the sustained load is asked for (it takes minutes); its figures come per minute */
	p->sustain_interval_s = 60;
	/* where flare's package cache keeps the Engram shard the gates were written for */
	p->target_glob = xstrdup("~/.cache/flare/packages/*/weights/engram-*-weights.safetensors");
	/* "4 K random in the 98 GB shard, 16 threads: >= 60 K IOPS and p50 <= 250 us" */
	r = add_run(p, "rand16");
	r->inflight = 16, r->duration_s = 15, r->min_iops = 60000, r->max_p50_us = 250;
	/* "same, 64 threads: >= 120 K IOPS, p99.9 <= 2 ms (no congestion collapse)" */
	r = add_run(p, "rand64");
	r->inflight = 64, r->duration_s = 20, r->min_iops = 120000, r->max_p99_9_us = 2000;
	/* "sequential (dd bs=1M iflag=direct) >= 2.5 GB/s (sanity, not the point)" */
	r = add_run(p, "seq");
	r->sequential = true, r->inflight = 4, r->min_mb_s = 2500;

	p->cmd_install_os = xstrdup("install DGX OS on the new drive (vendor installer, USB)");
	p->cmd_agent_install = xstrdup("reinstall the flare agent (same version as the other ranks)");
	p->cmd_runtime_install = xstrdup("install the patched runtime: the same build the other ranks run");
	p->cmd_refetch = xstrdup("flare download <package> --revision gb10 --tensor-parallel 4");
	arc_limits_defaults(&p->limits);
	predict_workload_defaults(&p->workload);
}

struct parse_state {
	struct profile *p;
	const char *file;
	unsigned line; /* the line of the handler call */
	char *err;
	/* Sections whose lists the file replaces: the first key of a list empties the default. */
	bool replaced_backup, replaced_required, replaced_refetch, replaced_fstab;
};

static int bad(struct parse_state *s, unsigned line, const char *section, const char *key, const char *why)
{
	if (!s->err)
		s->err = xasprintf("%s:%u: %s '%s' in [%s]", s->file, line, why, key, section);
	return 0; /* stop parsing */
}

static int parse_u64_value(const char *v, uint64_t *out)
{
	const char *why;
	return u64_parse(v, out, &why);
}

static int parse_size_value(const char *v, uint64_t *out)
{
	const char *why;
	return size_parse(v, 512, out, &why);
}

/* A path of the profile's lists: "/REL", "~" or "~/REL" (REL also alone, taken from /), where REL
 * is what backup, verify and restore take below the root: no '.', '..' or empty component, no
 * control character. NULL when good, else why not. */
static const char *path_bad(const char *v)
{
	_cleanup_free_ char *rel = NULL;
	const char *why = NULL;
	size_t n;

	if (v[0] == '~') {
		if (v[1] != '\0' && v[1] != '/')
			return "only '~' and '~/' name the node user's home ('~user' is not supported)";
		if (v[1] == '\0' || v[2] == '\0')
			return NULL;
		v += 2;
		if (*v == '/') /* "~//x": the home joined with "/x" holds an empty component */
			return "empty path component";
	}
	while (*v == '/')
		v++;
	rel = xstrdup(v);
	n = strlen(rel);
	while (n > 0 && rel[n - 1] == '/')
		rel[--n] = '\0';
	if (!n)
		return "it names the whole root";
	return path_check(rel, &why) < 0 ? why : NULL;
}

static int bad_path(struct parse_state *s, unsigned line, const char *section, const char *key, const char *v,
		    const char *why)
{
	if (!s->err)
		s->err = xasprintf("%s:%u: bad path '%s' for '%s' in [%s]: %s; give /PATH or ~/PATH", s->file, line, v,
				   key, section, why);
	return 0;
}

/* A whole number in [min, max] for `key`; 0 (and the error set) when not. */
static int range_key(struct parse_state *s, unsigned line, const char *section, const char *key, const char *v,
		     uint64_t min, uint64_t max, uint64_t *out)
{
	uint64_t n;

	if (parse_u64_value(v, &n) < 0 || n < min || n > max) {
		if (!s->err)
			s->err = xasprintf("%s:%u: '%s' in [%s] must be a whole number from %" PRIu64 " to %" PRIu64
					   ", not '%s'", s->file, line, key, section, min, max, v);
		return 0;
	}
	*out = n;
	return 1;
}

static void list_key(struct strlist *l, bool *replaced, const char *v)
{
	if (!*replaced) {
		strlist_clear(l);
		*replaced = true;
	}
	strlist_add(l, v);
}

static int handle_run(struct parse_state *s, unsigned line, const char *section, const char *name,
		      const char *key, const char *v)
{
	struct accept_run *r = add_run(s->p, name);
	uint64_t n;

	if (streq(key, "mode")) {
		if (streq(v, "randread"))
			r->sequential = false;
		else if (streq(v, "seqread"))
			r->sequential = true;
		else
			return bad(s, line, section, key, "bad value (randread|seqread) for");
		return 1;
	}
	if (streq(key, "inflight")) {
		if (!range_key(s, line, section, key, v, 1, PROFILE_MAX_INFLIGHT, &n))
			return 0;
		r->inflight = (unsigned)n;
		return 1;
	}
	if (streq(key, "duration"))
		return range_key(s, line, section, key, v, 1, PROFILE_MAX_SECONDS, &r->duration_s);
	if (parse_u64_value(v, &n) < 0)
		return bad(s, line, section, key, "not a whole number:");
	if (streq(key, "min_iops"))
		r->min_iops = n;
	else if (streq(key, "max_p50_us"))
		r->max_p50_us = n;
	else if (streq(key, "max_p99_us"))
		r->max_p99_us = n;
	else if (streq(key, "max_p99_9_us"))
		r->max_p99_9_us = n;
	else if (streq(key, "min_mb_s"))
		r->min_mb_s = n;
	else
		return bad(s, line, section, key, "unknown key");
	return 1;
}

static int handle_drive(struct parse_state *s, unsigned line, const char *section, const char *name,
			const char *key, const char *v)
{
	struct profile_drive *d = add_drive(s->p, name, line);

	if (streq(key, "match"))
		set_str(&d->match, v);
	else if (streq(key, "controller"))
		set_str(&d->controller, v);
	else if (streq(key, "dram"))
		set_str(&d->dram, v);
	else if (streq(key, "nand"))
		set_str(&d->nand, v);
	else if (streq(key, "reason"))
		set_str(&d->reason, v);
	else if (streq(key, "verdict")) {
		if (!streq(v, "avoid") && !streq(v, "measure") && !streq(v, "suited") && !streq(v, "reference"))
			return bad(s, line, section, key, "bad value (avoid|measure|suited|reference) for");
		set_str(&d->verdict, v);
	} else if (streq(key, "hmb_mb")) {
		if (parse_u64_value(v, &d->hmb_mb) < 0)
			return bad(s, line, section, key, "not a whole number:");
	} else
		return bad(s, line, section, key, "unknown key");
	return 1;
}

/* ---- [limits] (backup, restore, verify) ---- */

/*
 * The incident's backup set is ~10 KB in a dozen files: the defaults stand three orders of
 * magnitude above that and still keep a hostile tarball (a gzip bomb, 10,000 entries) from
 * exhausting the node. restore holds every entry in memory before writing, so data_bytes is
 * also its memory bound. The state directory holds one record per step (about ten).
 */
void arc_limits_defaults(struct arc_limits *l)
{
	*l = (struct arc_limits){
		.tarball_bytes = 1ULL << 30,
		.expanded_bytes = 1ULL << 30,
		.data_bytes = 256ULL << 20,
		.entry_bytes = 256ULL << 20,
		.entries = 8192,
		.state_records = 4096,
	};
}

static int handle_limits(struct parse_state *s, unsigned line, const char *section, const char *key, const char *v)
{
	struct arc_limits *l = &s->p->limits;
	uint64_t n;

	if (streq(key, "entries") || streq(key, "state_records")) {
		if (parse_u64_value(v, &n) < 0 || n == 0 || n > 1000000)
			return bad(s, line, section, key, "not a whole number from 1 to 1000000:");
		*(streq(key, "entries") ? &l->entries : &l->state_records) = n;
		return 1;
	}
	uint64_t *dst = streq(key, "tarball_bytes") ? &l->tarball_bytes : streq(key, "expanded_bytes") ? &l->expanded_bytes
		      : streq(key, "data_bytes") ? &l->data_bytes : streq(key, "entry_bytes") ? &l->entry_bytes : NULL;
	if (!dst)
		return bad(s, line, section, key, "unknown key");
	/* 1 TiB at most: past that a value is a typo, and data_bytes is held in memory */
	if (parse_size_value(v, &n) < 0 || n == 0 || n > (1ULL << 40))
		return bad(s, line, section, key, "bad size (from 1 byte to 1TiB, e.g. 256MiB) for");
	*dst = n;
	return 1;
}

/* ---- [workload]: the engine model of src/predict.c, defaults from docs/incident.md ---- */
static int handle_workload(struct parse_state *s, unsigned line, const char *section, const char *key,
			   const char *v)
{
	struct predict_workload *w = &s->p->workload;
	uint64_t n;

	if (streq(key, "measured_reads"))
		return range_key(s, line, section, key, v, 1, PROFILE_MAX_WORKLOAD_READS, &w->measured_reads);
	if (streq(key, "measured_tokens"))
		return range_key(s, line, section, key, v, 1, PROFILE_MAX_WORKLOAD_TOKENS, &w->measured_tokens);
	if (streq(key, "chunk_tokens"))
		return range_key(s, line, section, key, v, 1, PROFILE_MAX_CHUNK_TOKENS, &w->chunk_tokens);
	if (streq(key, "cold_prompt_tokens"))
		return range_key(s, line, section, key, v, 1, PROFILE_MAX_WORKLOAD_TOKENS, &w->cold_prompt_tokens);
	if (streq(key, "spin_limit_low"))
		return range_key(s, line, section, key, v, 1, PROFILE_MAX_SECONDS, &w->spin_low_s);
	if (streq(key, "spin_limit_high"))
		return range_key(s, line, section, key, v, 1, PROFILE_MAX_SECONDS, &w->spin_high_s);
	if (streq(key, "read_bytes")) {
		/* one read of the engine: a sector to 16 MiB (the incident's are 4 KiB) */
		if (parse_size_value(v, &n) < 0 || n < 512 || n > (16u << 20))
			return bad(s, line, section, key, "bad size (from 512 bytes to 16MiB, e.g. 4KiB) for");
		w->read_bytes = n;
		return 1;
	}
	return bad(s, line, section, key, "unknown key");
}

static int handler(void *user, const char *section, const char *key, const char *v)
{
	struct parse_state *s = user;
	struct profile *p = s->p;
	unsigned line = s->line;
	uint64_t n;

	if (s->err)
		return 0;
	if (!key) /* a section header alone */
		return 1;
	if ((streq(section, "backup") || streq(section, "refetch")) && !streq(key, "minutes")) {
		const char *why = path_bad(v);

		if (why && (streq(key, "path") || streq(key, "required") || streq(key, "fstab")))
			return bad_path(s, line, section, key, v, why);
	}
	if (streq(section, "backup")) {
		if (streq(key, "path"))
			list_key(&p->backup_paths, &s->replaced_backup, v);
		else if (streq(key, "required"))
			list_key(&p->required, &s->replaced_required, v);
		else if (streq(key, "fstab"))
			list_key(&p->fstab_files, &s->replaced_fstab, v);
		else
			return bad(s, line, section, key, "unknown key");
		return 1;
	}
	if (streq(section, "refetch")) {
		if (streq(key, "path"))
			list_key(&p->refetch_paths, &s->replaced_refetch, v);
		else if (streq(key, "minutes")) {
			if (parse_u64_value(v, &p->refetch_minutes) < 0)
				return bad(s, line, section, key, "not a whole number:");
		} else
			return bad(s, line, section, key, "unknown key");
		return 1;
	}
	if (streq(section, "accept")) {
		if (streq(key, "working_set") || streq(key, "seq_bytes")) {
			bool ws = streq(key, "working_set");

			if (parse_size_value(v, &n) < 0)
				return bad(s, line, section, key, "bad size (e.g. 98GiB) for");
			/* one 4 KiB random read; one 1 MiB sequential read */
			if (n < (ws ? 4096u : 1u << 20))
				return bad(s, line, section, key, ws ? "size below 4KiB for" : "size below 1MiB for");
			*(ws ? &p->working_set : &p->seq_bytes) = n;
		} else if (streq(key, "ramp"))
			return range_key(s, line, section, key, v, 0, PROFILE_MAX_SECONDS, &p->ramp_s);
		else if (streq(key, "sustain"))
			return range_key(s, line, section, key, v, 0, PROFILE_MAX_SECONDS, &p->sustain_s);
		else if (streq(key, "sustain_interval"))
			return range_key(s, line, section, key, v, 1, PROFILE_MAX_SECONDS, &p->sustain_interval_s);
		else if (streq(key, "busy_threshold_iops")) {
			if (parse_u64_value(v, &p->busy_threshold_iops) < 0)
				return bad(s, line, section, key, "not a whole number:");
		} else if (streq(key, "target_glob")) {
			const char *why = v[0] == '/' || v[0] == '~' ? path_bad(v) : "not an absolute or '~/' path";

			if (why)
				return bad_path(s, line, section, key, v, why);
			set_str(&p->target_glob, v);
		} else
			return bad(s, line, section, key, "unknown key");
		return 1;
	}
	if (streq(section, "commands")) {
		if (streq(key, "install_os"))
			set_str(&p->cmd_install_os, v);
		else if (streq(key, "agent_install"))
			set_str(&p->cmd_agent_install, v);
		else if (streq(key, "runtime_install"))
			set_str(&p->cmd_runtime_install, v);
		else if (streq(key, "refetch"))
			set_str(&p->cmd_refetch, v);
		else
			return bad(s, line, section, key, "unknown key");
		return 1;
	}
	if (streq(section, "limits"))
		return handle_limits(s, line, section, key, v);
	if (streq(section, "workload"))
		return handle_workload(s, line, section, key, v);
	if (startswith(section, "run ") && section[4])
		return handle_run(s, line, section, section + 4, key, v);
	if (startswith(section, "drive ") && section[6])
		return handle_drive(s, line, section, section + 6, key, v);
	if (startswith(section, "engine ") && section[7]) {
		struct engine_gate *g = NULL;

		for (size_t i = 0; i < p->nengine; i++)
			if (streq(p->engine[i].name, section + 7))
				g = &p->engine[i];
		if (!g) {
			p->engine = realloc(p->engine, (p->nengine + 1) * sizeof(*p->engine));
			if (!p->engine)
				abort();
			g = &p->engine[p->nengine++];
			*g = (struct engine_gate){ .name = xstrdup(section + 7), .timeout_s = 3600 };
		}
		if (streq(key, "command")) {
			/* an empty command is `sh -c ''`: exit 0, a gate that passes having run nothing */
			if (!*v)
				return bad(s, line, section, key, "empty");
			set_str(&g->command, v);
		} else if (streq(key, "timeout"))
			return range_key(s, line, section, key, v, 1, PROFILE_MAX_GATE_TIMEOUT, &g->timeout_s);
		else
			return bad(s, line, section, key, "unknown key");
		return 1;
	}
	if (!s->err)
		s->err = xasprintf("%s:%u: unknown section [%s] (key '%s')", s->file, line, section, key);
	return 0;
}

static bool blank(char c)
{
	return c == ' ' || c == '\t';
}

static char *trim(char *b, char *e)
{
	while (b < e && blank(*b))
		b++;
	while (e > b && blank(e[-1]))
		e--;
	*e = '\0';
	return b;
}

static int syntax(struct parse_state *s, unsigned line, const char *why)
{
	if (!s->err)
		s->err = xasprintf("%s:%u: %s", s->file, line, why);
	return -EINVAL;
}

/* A list is its key given again ([backup] path, required, fstab; [refetch] path); any other key
 * holds one value. */
static bool list_key_of(const char *section, const char *key)
{
	return (streq(section, "backup") && (streq(key, "path") || streq(key, "required") || streq(key, "fstab"))) ||
	       (streq(section, "refetch") && streq(key, "path"));
}

/* The line `name` was first seen on, from `seen` ("LINE NAME" entries), or 0; else it is added. */
static unsigned seen_before(struct strlist *seen, const char *name, unsigned line)
{
	for (size_t i = 0; i < seen->n; i++) {
		const char *sp = strchr(seen->v[i], ' ');

		if (sp && streq(sp + 1, name))
			return (unsigned)strtoul(seen->v[i], NULL, 10);
	}
	_cleanup_free_ char *entry = xasprintf("%u %s", line, name);

	strlist_add(seen, entry);
	return 0;
}

/*
 * The profile's INI dialect (swaptool-profile(5)): "[section]", "key = value" (split at the first
 * '='; spaces around key and value dropped), blank lines, and comments on lines of their own
 * starting with ';' or '#'. Nothing inside a value is a comment: "true ; /opt/bench" is one
 * command (libinih took " ;" for an inline comment and ran "true"). No length limit on a line
 * (libinih cut lines at 200 bytes and read the rest as a line of its own). A name is declared
 * once: a second [engine x] or [run x], or a key given twice in a section (but a list's), is
 * refused naming both lines; it used to replace the first silently, and two gates of one name
 * make two series of one name in metrics, where Prometheus keeps the first (issue 27).
 */
static int parse_profile(struct parse_state *s, char *text, size_t len)
{
	_cleanup_free_ char *section = xstrdup("");
	_cleanup_(strlist_clear) struct strlist sections = { 0 }, keys = { 0 };
	char *p = text, *end = text + len;
	unsigned first;

	if (len >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0) /* UTF-8 byte-order mark */
		p += 3;
	for (unsigned line = 1; p < end; line++) {
		char *nl = memchr(p, '\n', (size_t)(end - p)), *e = nl ? nl : end, *t, *eq;

		if (e > p && e[-1] == '\r')
			e--;
		for (char *c = p; c < e; c++)
			if (((unsigned char)*c < 0x20 && *c != '\t') || *c == 0x7f)
				return syntax(s, line, "control character in the line");
		t = trim(p, e);
		p = nl ? nl + 1 : end;
		if (!*t || *t == ';' || *t == '#')
			continue;
		if (*t == '[') {
			size_t n = strlen(t);

			if (t[n - 1] != ']')
				return syntax(s, line, "a section line is '[NAME]' with nothing after ']'");
			t[n - 1] = '\0';
			t = trim(t + 1, t + n - 1);
			if (!*t)
				return syntax(s, line, "empty section name '[]'");
			if ((first = seen_before(&sections, t, line))) {
				if (!s->err)
					s->err = xasprintf("%s:%u: section [%s] again (first at line %u): each name is "
							   "declared once; merge the two", s->file, line, t, first);
				return -EINVAL;
			}
			free(section);
			section = xstrdup(t);
			strlist_clear(&keys);
			continue;
		}
		eq = strchr(t, '=');
		if (!eq || eq == t)
			return syntax(s, line, "not a 'key = value' line");
		*eq = '\0';
		s->line = line;
		t = trim(t, eq);
		if (!list_key_of(section, t) && (first = seen_before(&keys, t, line))) {
			if (!s->err)
				s->err = xasprintf("%s:%u: '%s' again in [%s] (first at line %u): a key holds one "
						   "value; keep one of the two", s->file, line, t, section, first);
			return -EINVAL;
		}
		if (!handler(s, section, t, trim(eq + 1, eq + 1 + strlen(eq + 1))))
			return -EINVAL;
	}
	return 0;
}

/* The file through read_input (no blocking on a FIFO, no reading a device), at most 1 MiB of text. */
static int read_profile(const char *path, char **text, size_t *len, char **why)
{
	_cleanup_free_ char *w = NULL;
	int r = read_input(path, PROFILE_MAX_BYTES, 0, text, len, &w);

	if (r < 0)
		return set_why(why, r, "cannot read profile '%s': %s; give an INI file (swaptool-profile(5))", path, w);
	if (memchr(*text, '\0', *len)) {
		free(*text);
		*text = NULL;
		return set_why(why, -EINVAL, "profile '%s' holds a NUL byte: not a text file", path);
	}
	return 0;
}

/* What no single [workload] key shows: the spin limit's ends in order, and a chunk and the cold
 * prompt whose reads and bytes fit in 64 bits (read_bytes times a huge chunk may not). */
static int workload_check(const char *path, const struct predict_workload *w, char **why)
{
	uint64_t n;

	if (w->spin_low_s > w->spin_high_s)
		return set_why(why, -EINVAL, "%s: [workload] spin_limit_low (%" PRIu64 " s) is above spin_limit_high "
			       "(%" PRIu64 " s); give the low end first", path, w->spin_low_s, w->spin_high_s);
	if (predict_chunk_bytes(w, &n) < 0 || predict_cold_prompt_reads(w, &n) < 0)
		return set_why(why, -EINVAL, "%s: [workload] a chunk's or the cold prompt's reads do not fit in 64 bits; "
			       "lower measured_reads, chunk_tokens or read_bytes", path);
	return 0;
}

int profile_load(const char *path, struct profile **out, char **why)
{
	struct profile *p = xcalloc(1, sizeof(*p));
	struct parse_state s = { .p = p, .file = path };
	int r;

	profile_defaults(p);
	if (path) {
		_cleanup_free_ char *text = NULL;
		size_t len = 0;

		r = read_profile(path, &text, &len, why);
		if (r < 0) {
			profile_free(p);
			return r;
		}
		r = parse_profile(&s, text, len);
		if (s.err || r != 0) {
			_cleanup_free_ char *e = s.err;

			profile_free(p);
			return e ? set_why(why, -EINVAL, "%s", e) : set_why(why, -EINVAL, "%s: not a profile", path);
		}
		for (size_t i = 0; i < p->nengine; i++)
			if (!p->engine[i].command) {
				r = set_why(why, -EINVAL, "%s: [engine %s] has no 'command'", path, p->engine[i].name);
				profile_free(p);
				return r;
			}
		for (size_t i = 0; i < p->nruns; i++)
			if (!p->runs[i].inflight || (!p->runs[i].sequential && !p->runs[i].duration_s)) {
				r = set_why(why, -EINVAL, "%s: [run %s] needs 'inflight' and, for random reads, 'duration'",
					    path, p->runs[i].name);
				profile_free(p);
				return r;
			}
		for (size_t i = 0; i < p->ndrives; i++)
			if (!p->drives[i].match || !p->drives[i].verdict) {
				r = set_why(why, -EINVAL, "%s:%u: [drive %s] needs 'match' and 'verdict'", path,
					    p->drives[i].line, p->drives[i].name);
				profile_free(p);
				return r;
			}
		r = workload_check(path, &p->workload, why);
		if (r < 0) {
			profile_free(p);
			return r;
		}
		set_str(&p->source, path);
	}
	*out = p;
	return 0;
}

void profile_free(struct profile *p)
{
	if (!p)
		return;
	free(p->source);
	free(p->target_glob);
	strlist_clear(&p->backup_paths);
	strlist_clear(&p->required);
	strlist_clear(&p->fstab_files);
	strlist_clear(&p->refetch_paths);
	for (size_t i = 0; i < p->nruns; i++)
		free(p->runs[i].name);
	free(p->runs);
	for (size_t i = 0; i < p->nengine; i++) {
		free(p->engine[i].name);
		free(p->engine[i].command);
	}
	free(p->engine);
	for (size_t i = 0; i < p->ndrives; i++) {
		struct profile_drive *d = &p->drives[i];
		free(d->name), free(d->match), free(d->controller), free(d->dram);
		free(d->nand), free(d->verdict), free(d->reason);
	}
	free(p->drives);
	free(p->cmd_install_os);
	free(p->cmd_agent_install);
	free(p->cmd_runtime_install);
	free(p->cmd_refetch);
	free(p);
}

char *profile_expand(const char *path, const char *home)
{
	if (path[0] == '~' && (path[1] == '/' || path[1] == '\0'))
		return xasprintf("%s%s", home ? home : "", path + 1);
	return xstrdup(path);
}

#ifndef SWAPTOOL_SYSCONFDIR
#define SWAPTOOL_SYSCONFDIR "/etc"
#endif

void profile_locate(const char *opt, char **path, const char **from)
{
	const char *env = getenv("SWAPTOOL_PROFILE");
	const char *etc = getenv("SWAPTOOL_SYSCONFDIR");
	_cleanup_free_ char *site = NULL;
	struct stat st;

	*path = NULL;
	if (opt) {
		*path = xstrdup(opt), *from = "--profile";
		return;
	}
	if (env && *env) {
		*path = xstrdup(env), *from = "SWAPTOOL_PROFILE";
		return;
	}
	site = xasprintf("%s/swaptool/profile.ini", etc && *etc ? etc : SWAPTOOL_SYSCONFDIR);
	/* Only a missing site profile means "none": one that exists but cannot be read or parsed is
	 * an error profile_load reports, not a silent fall back to the built-in values. */
	if (lstat(site, &st) == 0 || (errno != ENOENT && errno != ENOTDIR)) {
		*path = TAKE_PTR(site), *from = "site";
		return;
	}
	*from = "built-in";
}

static json_object *strlist_json(const struct strlist *l)
{
	json_object *a = json_object_new_array();

	for (size_t i = 0; i < l->n; i++)
		json_object_array_add(a, json_object_new_string(l->v[i]));
	return a;
}

json_object *profile_to_json(const struct profile *p)
{
	json_object *o = json_object_new_object(), *sec, *a;

	sec = json_object_new_object();
	json_object_object_add(sec, "paths", strlist_json(&p->backup_paths));
	json_object_object_add(sec, "required", strlist_json(&p->required));
	json_object_object_add(sec, "fstab", strlist_json(&p->fstab_files));
	json_object_object_add(o, "backup", sec);
	sec = json_object_new_object();
	json_object_object_add(sec, "paths", strlist_json(&p->refetch_paths));
	jset_u64(sec, "minutes", p->refetch_minutes);
	json_object_object_add(o, "refetch", sec);
	sec = json_object_new_object();
	jset_u64(sec, "working_set_bytes", p->working_set);
	jset_u64(sec, "ramp_s", p->ramp_s);
	jset_u64(sec, "seq_bytes", p->seq_bytes);
	jset_u64(sec, "busy_threshold_iops", p->busy_threshold_iops);
	jset_u64(sec, "sustain_s", p->sustain_s);
	jset_u64(sec, "sustain_interval_s", p->sustain_interval_s);
	a = json_object_new_array();
	for (size_t i = 0; i < p->nruns; i++) {
		const struct accept_run *r = &p->runs[i];
		json_object *ro = json_object_new_object();

		jset_str(ro, "name", r->name);
		jset_str(ro, "mode", r->sequential ? "seqread" : "randread");
		jset_u64(ro, "inflight", r->inflight);
		jset_u64(ro, "duration_s", r->duration_s);
		jset_u64(ro, "min_iops", r->min_iops);
		jset_u64(ro, "max_p50_us", r->max_p50_us);
		jset_u64(ro, "max_p99_us", r->max_p99_us);
		jset_u64(ro, "max_p99_9_us", r->max_p99_9_us);
		jset_u64(ro, "min_mb_s", r->min_mb_s);
		json_object_array_add(a, ro);
	}
	json_object_object_add(sec, "runs", a);
	a = json_object_new_array();
	for (size_t i = 0; i < p->nengine; i++) {
		json_object *eo = json_object_new_object();

		jset_str(eo, "name", p->engine[i].name);
		jset_str(eo, "command", p->engine[i].command);
		jset_u64(eo, "timeout_s", p->engine[i].timeout_s);
		json_object_array_add(a, eo);
	}
	json_object_object_add(sec, "engine", a);
	json_object_object_add(o, "accept", sec);
	sec = json_object_new_object();
	jset_str(sec, "install_os", p->cmd_install_os);
	jset_str(sec, "agent_install", p->cmd_agent_install);
	jset_str(sec, "runtime_install", p->cmd_runtime_install);
	jset_str(sec, "refetch", p->cmd_refetch);
	json_object_object_add(o, "commands", sec);
	a = json_object_new_array();
	for (size_t i = 0; i < p->ndrives; i++) {
		const struct profile_drive *d = &p->drives[i];
		json_object *dobj = json_object_new_object();

		jset_str(dobj, "name", d->name);
		jset_str(dobj, "match", d->match);
		jset_str(dobj, "verdict", d->verdict);
		jset_str(dobj, "reason", d->reason);
		json_object_array_add(a, dobj);
	}
	json_object_object_add(o, "drives", a);
	sec = json_object_new_object();
	jset_u64(sec, "tarball_bytes", p->limits.tarball_bytes);
	jset_u64(sec, "expanded_bytes", p->limits.expanded_bytes);
	jset_u64(sec, "data_bytes", p->limits.data_bytes);
	jset_u64(sec, "entry_bytes", p->limits.entry_bytes);
	jset_u64(sec, "entries", p->limits.entries);
	jset_u64(sec, "state_records", p->limits.state_records);
	json_object_object_add(o, "limits", sec);
	sec = json_object_new_object();
	jset_u64(sec, "measured_reads", p->workload.measured_reads);
	jset_u64(sec, "measured_tokens", p->workload.measured_tokens);
	{
		/* derived, to two places as written ("41.34"), not as a binary double prints (41.340000000000003) */
		double rpt = round(predict_reads_per_token(&p->workload) * 100) / 100;
		_cleanup_free_ char *txt = xasprintf("%.2f", rpt);

		json_object_object_add(sec, "reads_per_token", json_object_new_double_s(rpt, txt));
	}
	jset_u64(sec, "chunk_tokens", p->workload.chunk_tokens);
	jset_u64(sec, "read_bytes", p->workload.read_bytes);
	jset_u64(sec, "spin_limit_low_s", p->workload.spin_low_s);
	jset_u64(sec, "spin_limit_high_s", p->workload.spin_high_s);
	jset_u64(sec, "cold_prompt_tokens", p->workload.cold_prompt_tokens);
	json_object_object_add(o, "workload", sec);
	return o;
}
