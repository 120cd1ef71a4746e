/* SPDX-License-Identifier: MIT */
/* metrics and fleet: step records and reports of many nodes, read as hostile input: every field is
 * type-checked; a node is the NAME of --node NAME=FILE, else the host its record claims; the newest
 * record of a step wins when two of one node show the same drives, and two that show different
 * drives are refused. */
#include "nodes.h"

#include <inttypes.h>
#include <math.h>

#include "record.h"
#include "schema.h"
#include "util.h"

/* A record or report larger than this is not one swaptool wrote (real ones are under 1 MiB). */
#define INPUT_MAX (64u << 20)

bool jnum(json_object *o, const char *key, double *out)
{
	json_object *v = o && json_object_is_type(o, json_type_object) ? jget(o, key) : NULL;
	double d;

	if (!v || !(json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double)))
		return false;
	d = json_object_get_double(v);
	if (!isfinite(d))
		return false;
	*out = d;
	return true;
}

bool jint(json_object *o, const char *key, int64_t *out)
{
	json_object *v = o && json_object_is_type(o, json_type_object) ? jget(o, key) : NULL;

	if (!v || !json_object_is_type(v, json_type_int))
		return false;
	*out = json_object_get_int64(v);
	return true;
}

json_object *node_drive_class(json_object *preflight, const char *side)
{
	json_object *checks = jget_array(preflight, "checks");

	for (size_t i = 0; checks && i < json_object_array_length(checks); i++) {
		json_object *c = jarray_at(checks, i);
		if (streq(jget_str(c, "id"), SCHEMA_CHECK_DRIVE_CLASS) && jget_object(c, side))
			return jget_object(c, side);
	}
	return jget_object(schema_preflight_identity(preflight, !streq(side, "source")), "class");
}

static struct node *node_of(struct node_set *set, const char *key)
{
	struct node *n;

	for (size_t i = 0; i < set->nnodes; i++)
		if (streq(set->nodes[i].host, key))
			return &set->nodes[i];
	set->nodes = realloc(set->nodes, (set->nnodes + 1) * sizeof(*set->nodes));
	if (!set->nodes)
		abort();
	n = &set->nodes[set->nnodes++];
	*n = (struct node){ .host = xstrdup(key) };
	return n;
}

/* What a record says of one drive; NULL or 0 where it says nothing. */
struct drive_id {
	const char *role, *serial, *model;
	uint64_t size;
};

static const char *id_str(json_object *o, const char *key)
{
	const char *v = jget_str(o, key);

	return v && *v ? v : NULL;
}

static uint64_t id_size(json_object *o)
{
	int64_t v;

	return jint(o, "size_bytes", &v) && v > 0 ? (uint64_t)v : 0;
}

/* The drives a record shows: preflight's source and target (0 and 1), accept's measured drive. */
static size_t drives_of(json_object *rec, struct drive_id d[2])
{
	json_object *src = jget_object(rec, "source"), *sid = schema_preflight_identity(rec, false);
	json_object *tid = schema_preflight_identity(rec, true), *drv = schema_accept_drive(rec);

	if (streq(jget_str(rec, "step"), "accept")) {
		d[0] = (struct drive_id){ "measured", id_str(drv, "serial"), id_str(drv, "model"), id_size(drv) };
		return 1;
	}
	d[0] = (struct drive_id){ "source", id_str(src, "serial") ?: id_str(sid, "serial"),
				  id_str(src, "model") ?: id_str(sid, "model"), id_size(src) };
	d[1] = (struct drive_id){ "target", id_str(tid, "serial"), id_str(tid, "model"),
				  id_size(jget_object(rec, "target")) };
	return 2;
}

/* The first fact two descriptions of a drive both hold and disagree on, as words for a message
 * ("source serial 'A' against 'B'"), or NULL when they may be one drive. */
static char *drive_differs(const struct drive_id *a, const struct drive_id *b)
{
	if (a->serial && b->serial && !streq(a->serial, b->serial))
		return xasprintf("%s serial '%s' against '%s'", a->role, a->serial, b->serial);
	if (a->model && b->model && !streq(a->model, b->model))
		return xasprintf("%s model '%s' against '%s'", a->role, a->model, b->model);
	if (a->size && b->size && a->size != b->size)
		return xasprintf("%s size %" PRIu64 " against %" PRIu64 " bytes", a->role, a->size, b->size);
	return NULL;
}

/* Do two records given for one node show different drives? Records of one step are compared
 * drive by drive; an accept record beside a preflight must have measured the source or the target,
 * which only serials tell (accept may measure either). The difference as words, or NULL. */
static char *records_differ(json_object *a, json_object *b)
{
	struct drive_id da[2], db[2];
	size_t na = drives_of(a, da), nb = drives_of(b, db);
	const struct drive_id *m, *pf;

	if (na == nb) {
		for (size_t i = 0; i < na; i++) {
			char *why = drive_differs(&da[i], &db[i]);
			if (why)
				return why;
		}
		return NULL;
	}
	m = na == 1 ? &da[0] : &db[0];
	pf = na == 1 ? db : da;
	if (m->serial && pf[0].serial && pf[1].serial && !streq(m->serial, pf[0].serial) && !streq(m->serial, pf[1].serial))
		return xasprintf("accept measured serial '%s', preflight shows source '%s' and target '%s'", m->serial,
				 pf[0].serial, pf[1].serial);
	return NULL;
}

/* Keep the newer of two records of one step (ISO 8601 UTC times compare as text). */
static void keep_newer(json_object **slot, json_object *rec)
{
	const char *a = *slot ? schema_finished(*slot) : NULL, *b = schema_finished(rec);

	if (!*slot || (b && (!a || strcmp(b, a) >= 0)))
		*slot = rec;
}

/* A preflight or accept record joins node n: refused (exit 3) when it shows other drives than a
 * record n already holds. Two nodes installed from one image, with cloud-init's defaults, or with a
 * boot drive cloned into a spare (what this tool does) share a host name; merged, the newer record
 * would hide the other node's, a failed accept among them (issue 27). */
static int node_take(struct ctx *ctx, struct node *n, const char *file, bool named, json_object *rec)
{
	for (size_t i = 0; i < n->nseen; i++) {
		_cleanup_free_ char *why = records_differ(n->seen[i].rec, rec);

		if (!why)
			continue;
		if (named || n->seen[i].named)
			return ctx_error(ctx, EXIT_FAILED, "'%s' and '%s' are both given for node '%s' but show different "
					 "drives (%s): they are two nodes; give each its own --node NAME=FILE, or leave out "
					 "the record that is not current", n->seen[i].file, file, n->host, why);
		return ctx_error(ctx, EXIT_FAILED, "'%s' and '%s' both claim host '%s' but show different drives (%s): "
				 "two nodes share that host name; pass each node's records as --node NAME=FILE with a "
				 "NAME of its own (its inventory name), or leave out the record that is not current",
				 n->seen[i].file, file, n->host, why);
	}
	n->seen = realloc(n->seen, (n->nseen + 1) * sizeof(*n->seen));
	if (!n->seen)
		abort();
	n->seen[n->nseen++] = (struct node_seen){ rec, xstrdup(file), named };
	if (streq(jget_str(rec, "step"), "preflight"))
		keep_newer(&n->preflight, rec);
	else
		keep_newer(&n->accept, rec);
	return 0;
}

/* A host a --node record claims other than its NAME, kept once to be shown beside the name. */
static void node_claims(struct node *n, const char *host)
{
	if (streq(host, n->host))
		return;
	for (size_t i = 0; i < n->claimed.n; i++)
		if (streq(n->claimed.v[i], host))
			return;
	strlist_add(&n->claimed, host);
}

/* A step record embedded in a report or given alone: an object whose step is `step`. */
static json_object *record_of(json_object *o, const char *step)
{
	return o && json_object_is_type(o, json_type_object) && streq(jget_str(o, "step"), step) ? o : NULL;
}

static void add_input(struct node_set *set, const char *path, const char *kind, const char *host, const char *key)
{
	json_object *o = json_object_new_object();

	jset_str(o, "file", path);
	jset_str(o, "kind", kind);
	jset_str(o, "host", host);
	jset_str(o, "node", key);
	json_object_array_add(set->inputs, o);
}

/* An accept record (alone or in a report) whose runs or gates repeat a name is refused: metrics
 * would write two series of one name, of which Prometheus keeps the first, and a failing gate
 * behind a passing one of its name would vanish (issue 27). */
static int accept_unique(struct ctx *ctx, const char *path, json_object *acc)
{
	const char *what, *dup = acc ? schema_accept_repeated(acc, &what) : NULL;

	if (!dup)
		return 0;
	return ctx_error(ctx, EXIT_FAILED, "'%s': two of its accept %s are named '%s', so one would hide the other; "
			 "it is not a record swaptool wrote: run accept again on that node", path, what, dup);
}

/* report.json: its embedded preflight and accept records, its verdict. */
static int add_report(struct ctx *ctx, struct node_set *set, const char *path, const char *name, json_object *doc)
{
	const char *host = jget_str(doc, "node") ?: jget_str(doc, "host");
	json_object *steps = jget_object(doc, "steps"), *pf, *acc;
	struct node *n;
	int r;

	if (!host || !*host || !utf8_valid(host))
		return ctx_error(ctx, EXIT_FAILED, "report '%s' names no node (or not in UTF-8); it is not one swaptool wrote",
				 path);
	pf = record_of(jget(steps, "preflight"), "preflight");
	acc = record_of(jget(steps, "accept"), "accept");
	if ((r = accept_unique(ctx, path, acc)))
		return r;
	n = node_of(set, name ?: host);
	if (name)
		node_claims(n, host);
	if ((pf && (r = node_take(ctx, n, path, name, pf))) || (acc && (r = node_take(ctx, n, path, name, acc))))
		return r;
	n->report = doc;
	n->report_host = host;
	free(n->report_verdict);
	n->report_verdict = jget_str(doc, "verdict") ? xstrdup(jget_str(doc, "verdict")) : NULL;
	n->report_signed = jget_object(doc, "signer") != NULL;
	add_input(set, path, "report", host, n->host);
	return 0;
}

/* One input: `name` its --node NAME, or NULL for a RECORD operand (keyed by its host). */
static int add_file(struct ctx *ctx, struct node_set *set, const char *path, const char *name)
{
	_cleanup_free_ char *text = NULL, *why = NULL;
	json_object *doc;
	const char *schema, *step, *host;
	struct node *n;
	/* a FIFO, a device or a directory is refused before a byte is read (no hang) */
	int r = read_input(path, INPUT_MAX, 0, &text, NULL, &why);

	if (r < 0)
		return ctx_error(ctx, EXIT_FAILED, "cannot read '%s': %s", path, why);
	doc = json_tokener_parse(text);
	if (!doc || !json_object_is_type(doc, json_type_object)) {
		json_object_put(doc);
		return ctx_error(ctx, EXIT_FAILED, "'%s' is not a JSON object; pass step records (STATE/STEP.json) or report.json",
				 path);
	}
	set->docs = realloc(set->docs, (set->ndocs + 1) * sizeof(*set->docs));
	if (!set->docs)
		abort();
	set->docs[set->ndocs++] = doc;
	schema = jget_str(doc, "schema");
	step = jget_str(doc, "step");

	if (streq(schema, "swaptool-report/1"))
		return add_report(ctx, set, path, name, doc);
	if (!streq(schema, "swaptool/1") || !step)
		return ctx_error(ctx, EXIT_FAILED,
				 "'%s' is neither a swaptool step record nor a report; pass STATE/STEP.json or report.json", path);
	host = jget_str(doc, "host");
	if (!host || !*host || !utf8_valid(host))
		return ctx_error(ctx, EXIT_FAILED, "record '%s' names no host (or not in UTF-8); it is not one swaptool wrote",
				 path);
	if (streq(step, "accept") && (r = accept_unique(ctx, path, doc)))
		return r;
	if (!streq(step, "preflight") && !streq(step, "accept") && !streq(step, "report")) {
		/* with its step, so that metrics can say which record holds no metrics */
		add_input(set, path, "ignored", host, name ?: host);
		jset_str(jarray_at(set->inputs, json_object_array_length(set->inputs) - 1), "step", step);
		return 0;
	}
	n = node_of(set, name ?: host);
	if (name)
		node_claims(n, host);
	if (streq(step, "report")) {
		/* the report step's own record: its verdict, not the records (report.json has those) */
		if (!n->report_verdict && schema_report_verdict(doc)) {
			n->report_verdict = xstrdup(schema_report_verdict(doc));
			n->report_signed = jget_object(doc, "signer") != NULL;
			n->report_host = host;
		}
	} else if ((r = node_take(ctx, n, path, name, doc)))
		return r;
	add_input(set, path, step, host, n->host);
	return 0;
}

/* A node name as inventories and DNS write host names: letters, digits and . - _ (and : for an
 * IPv6 address), at most 253 bytes, not starting with '-' or '.'. Anything else (a space, a quote,
 * a control character, '=') would be a label or a table cell that reads as something else. */
static bool node_name_ok(const char *s, size_t n)
{
	if (!n || n > 253 || s[0] == '-' || s[0] == '.')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') ||
		      strchr(".-_:", s[i])))
			return false;
	return true;
}

static void input_push(struct node_inputs *in, char *name, const char *file)
{
	in->v = realloc(in->v, (in->n + 1) * sizeof(*in->v));
	if (!in->v)
		abort();
	in->v[in->n++] = (struct node_input){ name, file };
}

int nodes_input_option(struct ctx *ctx, struct node_inputs *in, const char *arg)
{
	const char *eq = strchr(arg, '=');

	if (!eq || !eq[1])
		return ctx_error(ctx, EXIT_USAGE, "--node '%s' is not NAME=FILE; pass the node's name and one of its records, "
				 "e.g. --node dgx4=records/dgx4/accept.json", arg);
	if (!node_name_ok(arg, (size_t)(eq - arg)))
		return ctx_error(ctx, EXIT_USAGE, "--node '%s': '%.*s' is not a host name (letters, digits, '.', '-', '_', "
				 "':', at most 253); pass the node's inventory name", arg, (int)(eq - arg), arg);
	input_push(in, xasprintf("%.*s", (int)(eq - arg), arg), eq + 1);
	return 0;
}

void nodes_input_record(struct node_inputs *in, const char *file)
{
	input_push(in, NULL, file);
}

void nodes_inputs_free(struct node_inputs *in)
{
	for (size_t i = 0; i < in->n; i++)
		free(in->v[i].name);
	free(in->v);
	*in = (struct node_inputs){ 0 };
}

int nodes_read(struct ctx *ctx, struct node_set *set, const struct node_inputs *in)
{
	int r = 0;

	if (!set->inputs)
		set->inputs = json_object_new_array();
	for (size_t i = 0; i < in->n && !r; i++)
		r = add_file(ctx, set, in->v[i].file, in->v[i].name);
	return r;
}

void nodes_free(struct node_set *set)
{
	for (size_t i = 0; i < set->nnodes; i++) {
		struct node *n = &set->nodes[i];
		free(n->host);
		free(n->report_verdict);
		strlist_clear(&n->claimed);
		for (size_t k = 0; k < n->nseen; k++)
			free(n->seen[k].file);
		free(n->seen);
	}
	free(set->nodes);
	for (size_t i = 0; i < set->ndocs; i++)
		json_object_put(set->docs[i]);
	free(set->docs);
	json_object_put(set->inputs);
	*set = (struct node_set){ 0 };
}
