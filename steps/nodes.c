/* SPDX-License-Identifier: MIT */
/* metrics and fleet: step records and reports of many nodes, read as hostile input: every field is
 * type-checked, a node is its host, and the newest record of a step wins when two name the same host. */
#include "nodes.h"

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

static struct node *node_of(struct node_set *set, const char *host)
{
	struct node *n;

	for (size_t i = 0; i < set->nnodes; i++)
		if (streq(set->nodes[i].host, host))
			return &set->nodes[i];
	set->nodes = realloc(set->nodes, (set->nnodes + 1) * sizeof(*set->nodes));
	if (!set->nodes)
		abort();
	n = &set->nodes[set->nnodes++];
	*n = (struct node){ .host = xstrdup(host) };
	return n;
}

/* Keep the newer of two records of one step (ISO 8601 UTC times compare as text). */
static void keep_newer(json_object **slot, json_object *rec)
{
	const char *a = *slot ? schema_finished(*slot) : NULL, *b = schema_finished(rec);

	if (!*slot || (b && (!a || strcmp(b, a) >= 0)))
		*slot = rec;
}

/* A step record embedded in a report or given alone: an object whose step is `step`. */
static json_object *record_of(json_object *o, const char *step)
{
	return o && json_object_is_type(o, json_type_object) && streq(jget_str(o, "step"), step) ? o : NULL;
}

static void add_input(struct node_set *set, const char *path, const char *kind, const char *host)
{
	json_object *o = json_object_new_object();

	jset_str(o, "file", path);
	jset_str(o, "kind", kind);
	jset_str(o, "host", host);
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

int nodes_add_file(struct ctx *ctx, struct node_set *set, const char *path)
{
	_cleanup_free_ char *text = NULL, *why = NULL;
	json_object *doc, *steps;
	const char *schema, *step, *host;
	struct node *n;
	/* a FIFO, a device or a directory is refused before a byte is read (no hang) */
	int r = read_input(path, INPUT_MAX, 0, &text, NULL, &why);

	if (!set->inputs)
		set->inputs = json_object_new_array();
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

	if (streq(schema, "swaptool-report/1")) {
		host = jget_str(doc, "node") ?: jget_str(doc, "host");
		if (!host || !*host || !utf8_valid(host))
			return ctx_error(ctx, EXIT_FAILED, "report '%s' names no node (or not in UTF-8); it is not one swaptool wrote",
					 path);
		steps = jget_object(doc, "steps");
		if ((r = accept_unique(ctx, path, record_of(jget(steps, "accept"), "accept"))))
			return r;
		n = node_of(set, host);
		if (record_of(jget(steps, "preflight"), "preflight"))
			keep_newer(&n->preflight, jget(steps, "preflight"));
		if (record_of(jget(steps, "accept"), "accept"))
			keep_newer(&n->accept, jget(steps, "accept"));
		n->report = doc;
		free(n->report_verdict);
		n->report_verdict = jget_str(doc, "verdict") ? xstrdup(jget_str(doc, "verdict")) : NULL;
		n->report_signed = jget_object(doc, "signer") != NULL;
		add_input(set, path, "report", host);
		return 0;
	}
	if (!streq(schema, "swaptool/1") || !step)
		return ctx_error(ctx, EXIT_FAILED,
				 "'%s' is neither a swaptool step record nor a report; pass STATE/STEP.json or report.json", path);
	host = jget_str(doc, "host");
	if (!host || !*host || !utf8_valid(host))
		return ctx_error(ctx, EXIT_FAILED, "record '%s' names no host (or not in UTF-8); it is not one swaptool wrote",
				 path);
	if (streq(step, "accept") && (r = accept_unique(ctx, path, doc)))
		return r;
	n = node_of(set, host);
	if (streq(step, "preflight"))
		keep_newer(&n->preflight, doc);
	else if (streq(step, "accept"))
		keep_newer(&n->accept, doc);
	else if (streq(step, "report")) {
		/* the report step's own record: its verdict, not the records (report.json has those) */
		if (!n->report_verdict && schema_report_verdict(doc)) {
			n->report_verdict = xstrdup(schema_report_verdict(doc));
			n->report_signed = jget_object(doc, "signer") != NULL;
		}
	} else {
		/* with its step, so that metrics can say which record holds no metrics */
		add_input(set, path, "ignored", host);
		jset_str(jarray_at(set->inputs, json_object_array_length(set->inputs) - 1), "step", step);
		return 0;
	}
	add_input(set, path, step, host);
	return 0;
}

void nodes_free(struct node_set *set)
{
	for (size_t i = 0; i < set->nnodes; i++) {
		free(set->nodes[i].host);
		free(set->nodes[i].report_verdict);
	}
	free(set->nodes);
	for (size_t i = 0; i < set->ndocs; i++)
		json_object_put(set->docs[i]);
	free(set->docs);
	json_object_put(set->inputs);
	*set = (struct node_set){ 0 };
}
