/* SPDX-License-Identifier: MIT */
/* The declared schema of step records: the keys other steps read, their check, and accessors. */
#include "util.h"
#include "json.h"
#include "schema.h"

#include <math.h>

const char *const schema_steps[SS_N] = {
	[SS_PREFLIGHT] = "preflight", [SS_BACKUP] = "backup", [SS_PLAN] = "plan",     [SS_CLONE] = "clone",
	[SS_RESTORE] = "restore",     [SS_VERIFY] = "verify", [SS_ACCEPT] = "accept", [SS_REPORT] = "report",
};

int schema_step_index(const char *step)
{
	for (size_t i = 0; i < SS_N; i++)
		if (streq(step, schema_steps[i]))
			return (int)i;
	return -1;
}

bool schema_clone_trap_check(const char *id)
{
	return streq(id, SCHEMA_CHECK_RAW_CLONE) || streq(id, SCHEMA_CHECK_GPT_BACKUP_HEADER) ||
	       streq(id, SCHEMA_CHECK_PARTITION_FIT) || streq(id, SCHEMA_CHECK_FS_FIT);
}

/* Who reads each key is said once per group; docs/design.md points here. */
const struct schema_key schema_keys[] = {
	/* every record: status, report, fleet and metrics show these */
	{ NULL, "version", SJ_STR },
	{ NULL, "host", SJ_STR },
	{ NULL, "started", SJ_STR },
	{ NULL, "finished", SJ_STR },
	{ NULL, "checks[].id", SJ_STR },
	{ NULL, "checks[].status", SJ_STR },
	{ NULL, "checks[].summary", SJ_STR },

	/* preflight: backup (the drive being replaced), status (the commands, the path), report
	 * (the drives, the clone trap), nodes, fleet and metrics */
	{ "preflight", "source", SJ_OBJ },
	{ "preflight", "source.path", SJ_STR },
	{ "preflight", "source.device", SJ_STR },
	{ "preflight", "source.disk", SJ_STR },
	{ "preflight", "source.size_bytes", SJ_INT },
	{ "preflight", "source.lba_size", SJ_INT },
	{ "preflight", "source.lba_count", SJ_INT },
	{ "preflight", "source.model", SJ_STR },
	{ "preflight", "source.firmware", SJ_STR },
	{ "preflight", "source.serial", SJ_STR },
	{ "preflight", "source.transport", SJ_STR },
	{ "preflight", "source.partition_table", SJ_OBJ },
	{ "preflight", "source.partition_table.backup_header_lba", SJ_INT },
	{ "preflight", "target", SJ_OBJ },
	{ "preflight", "target.spec", SJ_STR },
	{ "preflight", "target.path", SJ_STR },
	{ "preflight", "target.size_bytes", SJ_INT },
	{ "preflight", "target.lba_size", SJ_INT },
	{ "preflight", "target.lba_count", SJ_INT },
	{ "preflight", "target.disk", SJ_STR },
	{ "preflight", "target.model", SJ_STR },
	{ "preflight", "target.serial", SJ_STR },
	{ "preflight", "target.transport", SJ_STR },
	{ "preflight", "delta_bytes", SJ_INT },
	{ "preflight", "paths", SJ_OBJ },
	{ "preflight", "paths.recommended", SJ_STR },
	{ "preflight", "paths.raw_clone", SJ_OBJ },
	{ "preflight", "paths.raw_clone.possible", SJ_BOOL },
	{ "preflight", "paths.fs_clone", SJ_OBJ },
	{ "preflight", "paths.fs_clone.possible", SJ_BOOL },
	{ "preflight", "paths.fresh_install", SJ_OBJ },
	{ "preflight", "paths.fresh_install.possible", SJ_BOOL },
	{ "preflight", "paths.fresh_install.refetchable_bytes", SJ_INT },
	{ "preflight", "paths.fresh_install.irreplaceable_bytes", SJ_INT },
	{ "preflight", "source_identity", SJ_OBJ },
	{ "preflight", "source_identity.nvme", SJ_BOOL },
	{ "preflight", "source_identity.from", SJ_STR },
	{ "preflight", "source_identity.origin", SJ_STR },
	{ "preflight", "source_identity.controller", SJ_STR },
	{ "preflight", "source_identity.model", SJ_STR },
	{ "preflight", "source_identity.serial", SJ_STR },
	{ "preflight", "source_identity.firmware", SJ_STR },
	{ "preflight", "source_identity.read_through", SJ_STR },
	{ "preflight", "source_identity.class", SJ_OBJ },
	{ "preflight", "source_identity.bridge", SJ_OBJ },
	{ "preflight", "source_identity.bridge.vendor_id", SJ_STR },
	{ "preflight", "source_identity.bridge.product_id", SJ_STR },
	{ "preflight", "source_identity.bridge.speed_mbps", SJ_INT },
	{ "preflight", "target_identity.bridge", SJ_OBJ },
	{ "preflight", "target_identity.bridge.vendor_id", SJ_STR },
	{ "preflight", "target_identity.bridge.product_id", SJ_STR },
	{ "preflight", "target_identity.bridge.speed_mbps", SJ_INT },
	{ "preflight", "source_identity.class.name", SJ_STR },
	{ "preflight", "source_identity.class.verdict", SJ_STR },
	{ "preflight", "source_identity.class.reason", SJ_STR },
	{ "preflight", "source_identity.hmb_mb", SJ_NUM },
	{ "preflight", "source_identity.smart", SJ_OBJ },
	{ "preflight", "source_identity.error_log", SJ_OBJ },
	{ "preflight", "source_identity.error_log.entries", SJ_INT },
	{ "preflight", "source_identity.namespaces", SJ_ARR },
	{ "preflight", "source_identity.namespaces[]", SJ_OBJ },
	{ "preflight", "source_identity.namespaces[].judged", SJ_BOOL },
	{ "preflight", "source_identity.namespaces[].size_bytes", SJ_INT },
	{ "preflight", "source_identity.namespaces[].lba_size", SJ_INT },
	{ "preflight", "target_identity", SJ_OBJ },
	{ "preflight", "target_identity.nvme", SJ_BOOL },
	{ "preflight", "target_identity.controller", SJ_STR },
	{ "preflight", "target_identity.model", SJ_STR },
	{ "preflight", "target_identity.serial", SJ_STR },
	{ "preflight", "target_identity.firmware", SJ_STR },
	{ "preflight", "target_identity.read_through", SJ_STR },
	{ "preflight", "target_identity.class", SJ_OBJ },
	{ "preflight", "target_identity.class.name", SJ_STR },
	{ "preflight", "target_identity.class.verdict", SJ_STR },
	{ "preflight", "target_identity.class.reason", SJ_STR },
	{ "preflight", "target_identity.hmb_mb", SJ_NUM },
	{ "preflight", "target_identity.smart", SJ_OBJ },
	{ "preflight", "target_identity.error_log", SJ_OBJ },
	{ "preflight", "target_identity.error_log.entries", SJ_INT },
	{ "preflight", "target_identity.namespaces", SJ_ARR },
	{ "preflight", "target_identity.namespaces[]", SJ_OBJ },
	{ "preflight", "target_identity.namespaces[].judged", SJ_BOOL },
	{ "preflight", "target_identity.namespaces[].size_bytes", SJ_INT },
	{ "preflight", "target_identity.namespaces[].lba_size", SJ_INT },

	/* backup: status (the restore and verify commands), report (the tarball and its hash).
	 * An older backup record wrote `archive` as the path, sha256 and bytes beside it, and
	 * entries as the list. */
	{ "backup", "archive", SJ_OBJ | SJ_STR },
	{ "backup", "archive.path", SJ_STR },
	{ "backup", "archive.sha256", SJ_STR },
	{ "backup", "archive.bytes", SJ_INT },
	{ "backup", "archive.entries", SJ_INT | SJ_ARR },
	{ "backup", "entries", SJ_INT | SJ_ARR },
	{ "backup", "sha256", SJ_STR },
	{ "backup", "bytes", SJ_INT },
	{ "backup", "path", SJ_STR },

	/* plan: clone (the fingerprint and the target size bind it to the plan) */
	{ "plan", "plan", SJ_OBJ },
	{ "plan", "plan.fingerprint", SJ_STR },
	{ "plan", "plan.fingerprint_shrunk", SJ_STR },
	{ "plan", "plan.source", SJ_OBJ },
	{ "plan", "plan.source.path", SJ_STR },
	{ "plan", "plan.source.identity", SJ_STR },
	{ "plan", "plan.target", SJ_OBJ },
	{ "plan", "plan.target.size_bytes", SJ_INT },

	/* clone: import (the clone on a rescue stick follows the stick's plan) */
	{ "clone", "fingerprint", SJ_STR },

	/* restore and verify: report (the tarball they checked against backup's) */
	{ "restore", "archive", SJ_OBJ },
	{ "restore", "archive.path", SJ_STR },
	{ "restore", "archive.sha256", SJ_STR },
	{ "restore", "archive.bytes", SJ_INT },
	{ "restore", "archive.entries", SJ_INT },
	{ "verify", "archive", SJ_OBJ },
	{ "verify", "archive.path", SJ_STR },
	{ "verify", "archive.sha256", SJ_STR },
	{ "verify", "archive.bytes", SJ_INT },
	{ "verify", "archive.entries", SJ_INT },

	/* accept: report (tables, charts, the drives), compare, fleet, metrics, status */
	{ "accept", "target", SJ_OBJ },
	{ "accept", "target.path", SJ_STR },
	{ "accept", "target.device", SJ_STR },
	{ "accept", "target.kind", SJ_STR },
	{ "accept", "target.lba_size", SJ_INT },
	{ "accept", "target.size_bytes", SJ_INT },
	{ "accept", "target.working_set_bytes", SJ_INT },
	{ "accept", "drive", SJ_OBJ },
	{ "accept", "drive.disk", SJ_STR },
	{ "accept", "drive.under", SJ_STR },
	{ "accept", "drive.device", SJ_STR },
	{ "accept", "drive.transport", SJ_STR },
	{ "accept", "drive.controller", SJ_STR },
	{ "accept", "drive.model", SJ_STR },
	{ "accept", "drive.serial", SJ_STR },
	{ "accept", "drive.firmware", SJ_STR },
	{ "accept", "drive.size_bytes", SJ_INT },
	{ "accept", "drive.bridge", SJ_OBJ },
	{ "accept", "drive.bridge.vendor_id", SJ_STR },
	{ "accept", "drive.bridge.product_id", SJ_STR },
	{ "accept", "drive.bridge.speed_mbps", SJ_INT },
	{ "accept", "drive.bridge_limited", SJ_BOOL },
	{ "accept", "drive.read_through", SJ_STR },
	{ "accept", "runs", SJ_ARR },
	{ "accept", "runs[]", SJ_OBJ },
	{ "accept", "runs[].name", SJ_STR },
	{ "accept", "runs[].mode", SJ_STR },
	{ "accept", "runs[].inflight", SJ_INT },
	{ "accept", "runs[].iops", SJ_NUM },
	{ "accept", "runs[].mb_s", SJ_NUM },
	{ "accept", "runs[].ios", SJ_INT },
	{ "accept", "runs[].lat_us", SJ_OBJ },
	{ "accept", "runs[].lat_us.p50", SJ_NUM },
	{ "accept", "runs[].lat_us.p90", SJ_NUM },
	{ "accept", "runs[].lat_us.p99", SJ_NUM },
	{ "accept", "runs[].lat_us.p99_9", SJ_NUM },
	{ "accept", "runs[].lat_us.p99_99", SJ_NUM },
	{ "accept", "runs[].lat_us.max", SJ_NUM },
	{ "accept", "runs[].lat_us.mean", SJ_NUM },
	{ "accept", "runs[].lat_hist", SJ_OBJ },
	/* the engine predicted from the run (src/predict.h); the same in each point of the sweep */
	{ "accept", "runs[].engine_prediction", SJ_OBJ },
	{ "accept", "runs[].engine_prediction.reads_per_token", SJ_NUM },
	{ "accept", "runs[].engine_prediction.chunk_tokens", SJ_INT },
	{ "accept", "runs[].engine_prediction.reads_per_chunk", SJ_INT },
	{ "accept", "runs[].engine_prediction.cold_prompt_tokens", SJ_INT },
	{ "accept", "runs[].engine_prediction.cold_prompt_reads", SJ_INT },
	{ "accept", "runs[].engine_prediction.chunk_bytes", SJ_INT },
	{ "accept", "runs[].engine_prediction.iops", SJ_NUM },
	{ "accept", "runs[].engine_prediction.chunk_s", SJ_NUM },
	{ "accept", "runs[].engine_prediction.worst_chunk_s", SJ_NUM },
	{ "accept", "runs[].engine_prediction.cold_prompt_s", SJ_NUM },
	{ "accept", "runs[].engine_prediction.margin", SJ_NUM },
	{ "accept", "runs[].engine_prediction.status", SJ_STR },
	{ "accept", "runs[].engine_prediction.spin_limit_s", SJ_OBJ },
	{ "accept", "runs[].engine_prediction.spin_limit_s.low", SJ_INT },
	{ "accept", "runs[].engine_prediction.spin_limit_s.high", SJ_INT },
	{ "accept", "sweep", SJ_ARR },
	{ "accept", "sweep[]", SJ_OBJ },
	{ "accept", "sweep[].name", SJ_STR },
	{ "accept", "sweep[].working_set_bytes", SJ_INT },
	{ "accept", "sweep[].iops", SJ_NUM },
	{ "accept", "sweep[].engine_prediction", SJ_OBJ },
	{ "accept", "sweep[].engine_prediction.reads_per_token", SJ_NUM },
	{ "accept", "sweep[].engine_prediction.chunk_tokens", SJ_INT },
	{ "accept", "sweep[].engine_prediction.reads_per_chunk", SJ_INT },
	{ "accept", "sweep[].engine_prediction.cold_prompt_tokens", SJ_INT },
	{ "accept", "sweep[].engine_prediction.cold_prompt_reads", SJ_INT },
	{ "accept", "sweep[].engine_prediction.chunk_bytes", SJ_INT },
	{ "accept", "sweep[].engine_prediction.iops", SJ_NUM },
	{ "accept", "sweep[].engine_prediction.chunk_s", SJ_NUM },
	{ "accept", "sweep[].engine_prediction.worst_chunk_s", SJ_NUM },
	{ "accept", "sweep[].engine_prediction.cold_prompt_s", SJ_NUM },
	{ "accept", "sweep[].engine_prediction.margin", SJ_NUM },
	{ "accept", "sweep[].engine_prediction.status", SJ_STR },
	{ "accept", "sweep[].engine_prediction.spin_limit_s", SJ_OBJ },
	{ "accept", "sweep[].engine_prediction.spin_limit_s.low", SJ_INT },
	{ "accept", "sweep[].engine_prediction.spin_limit_s.high", SJ_INT },
	{ "accept", "sustain", SJ_OBJ },
	{ "accept", "sustain.run", SJ_STR },
	{ "accept", "sustain.inflight", SJ_INT },
	{ "accept", "sustain.duration_s", SJ_INT },
	{ "accept", "sustain.interval_s", SJ_INT },
	{ "accept", "sustain.complete", SJ_BOOL },
	{ "accept", "sustain.intervals", SJ_ARR },
	{ "accept", "sustain.intervals[]", SJ_OBJ },
	{ "accept", "sustain.intervals[].start_s", SJ_INT },
	{ "accept", "sustain.intervals[].iops", SJ_NUM },
	{ "accept", "sustain.intervals[].p99_9_us", SJ_NUM },
	{ "accept", "sustain.intervals[].complete", SJ_BOOL },
	{ "accept", "sustain.drift", SJ_OBJ },
	{ "accept", "sustain.drift.iops_ratio", SJ_NUM },
	{ "accept", "sustain.drift.p99_9_ratio", SJ_NUM },
	{ "accept", "sustain.drift.status", SJ_STR },
	{ "accept", "sustain.temperature", SJ_OBJ },
	{ "accept", "sustain.temperature.before_c", SJ_INT },
	{ "accept", "sustain.temperature.after_c", SJ_INT },
	{ "accept", "sustain.temperature.controller", SJ_STR },
	{ "accept", "sustain.temperature.reason", SJ_STR },
	{ "accept", "sustain.runs", SJ_ARR },
	{ "accept", "sustain.runs[]", SJ_OBJ },
	{ "accept", "sustain.runs[].name", SJ_STR },
	{ "accept", "sustain.runs[].iops", SJ_NUM },
	{ "accept", "sustain.runs[].lat_us", SJ_OBJ },
	{ "accept", "sustain.runs[].lat_us.p99_9", SJ_NUM },
	{ "accept", "sustain.runs[].engine_prediction", SJ_OBJ },
	{ "accept", "sustain.runs[].engine_prediction.worst_chunk_s", SJ_NUM },
	{ "accept", "gates", SJ_ARR },
	{ "accept", "gates[]", SJ_OBJ },
	{ "accept", "gates[].name", SJ_STR },
	{ "accept", "gates[].kind", SJ_STR },
	{ "accept", "gates[].run", SJ_STR },
	{ "accept", "gates[].status", SJ_STR },
	{ "accept", "gates[].threshold", SJ_NUM | SJ_STR },
	{ "accept", "gates[].measured", SJ_NUM },
	{ "accept", "gates[].unit", SJ_STR },
	{ "accept", "gates[].op", SJ_STR },
	{ "accept", "engine_gates_run", SJ_BOOL },
	/* the engine-prediction check names the run whose prediction it judged */
	{ "accept", "checks[].run", SJ_STR },

	/* report's own record: status (is the report current, its verdict), nodes */
	{ "report", "report_verdict", SJ_STR },
	{ "report", "why", SJ_STR },
	{ "report", "signer", SJ_OBJ },
};
const size_t schema_keys_n = ARRAY_SIZE(schema_keys);

static unsigned type_of(json_object *v)
{
	switch (json_object_get_type(v)) {
	case json_type_string: return SJ_STR;
	case json_type_int: return SJ_INT;
	case json_type_double: return SJ_DOUBLE;
	case json_type_boolean: return SJ_BOOL;
	case json_type_object: return SJ_OBJ;
	case json_type_array: return SJ_ARR;
	default: return 0;
	}
}

const char *schema_type_words(unsigned types, char buf[96])
{
	static const struct {
		unsigned t;
		const char *word;
	} words[] = {
		{ SJ_NUM, "a number" },	    { SJ_INT, "an integer" }, { SJ_DOUBLE, "a fraction" }, { SJ_STR, "a string" },
		{ SJ_BOOL, "a boolean" }, { SJ_OBJ, "an object" },  { SJ_ARR, "an array" },
	};
	size_t n = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(words); i++)
		if ((types & words[i].t) == words[i].t) {
			types &= ~words[i].t;
			n += (size_t)snprintf(buf + n, 96 - n, "%s%s", n ? " or " : "", words[i].word);
			if (n >= 96)
				break;
		}
	return buf[0] ? buf : "nothing";
}

/* Check `path` below o (shown: the path so far, as the why names it). A container of the wrong
 * type is skipped here: its own declared key reports it. */
static int walk(json_object *o, const char *path, unsigned types, const char *shown, char **why)
{
	size_t seglen = strcspn(path, ".");
	const char *rest = path[seglen] ? path + seglen + 1 : NULL;
	bool each = seglen > 2 && path[seglen - 2] == '[' && path[seglen - 1] == ']';
	_cleanup_free_ char *key = xasprintf("%.*s", (int)(each ? seglen - 2 : seglen), path);
	json_object *v = jget(o, key);

	if (!v) /* missing or null: an older record, or unknown */
		return 0;
	if (each) {
		if (!json_object_is_type(v, json_type_array))
			return 0;
		for (size_t i = 0; i < jarray_len(v); i++) {
			json_object *e = jarray_at(v, i);
			_cleanup_free_ char *name = xasprintf("%s%s%s[%zu]", shown, *shown ? "." : "", key, i);
			int r = !e ? 0 : rest ? (json_object_is_type(e, json_type_object) ? walk(e, rest, types, name, why) : 0)
			  : (type_of(e) & types) ? 0 : -EBADMSG;

			if (r == -EBADMSG && !rest) {
				char b[2][96];
				return set_why(why, -EBADMSG, "its '%s' is %s, not %s", name, schema_type_words(type_of(e), b[0]),
					       schema_type_words(types, b[1]));
			}
			if (r < 0)
				return r;
		}
		return 0;
	}
	_cleanup_free_ char *name = xasprintf("%s%s%s", shown, *shown ? "." : "", key);
	if (rest)
		return json_object_is_type(v, json_type_object) ? walk(v, rest, types, name, why) : 0;
	if (!(type_of(v) & types)) {
		char b[2][96];
		return set_why(why, -EBADMSG, "its '%s' is %s, not %s", name, schema_type_words(type_of(v), b[0]),
			       schema_type_words(types, b[1]));
	}
	return 0;
}

int schema_validate(const char *step, json_object *rec, char **why)
{
	if (!rec || !json_object_is_type(rec, json_type_object))
		return set_why(why, -EBADMSG, "it is not a JSON object");
	if (!step)
		step = jget_str(rec, "step");
	for (size_t i = 0; i < schema_keys_n; i++) {
		int r;

		if (schema_keys[i].step && !streq(schema_keys[i].step, step))
			continue;
		r = walk(rec, schema_keys[i].path, schema_keys[i].types, "", why);
		if (r < 0)
			return r;
	}
	return 0;
}

/* ---- accessors ---- */

const char *schema_host(json_object *rec)
{
	return jget_str(rec, "host");
}

const char *schema_finished(json_object *rec)
{
	return jget_str(rec, "finished");
}

const char *schema_verdict(json_object *rec)
{
	return jget_str(rec, "verdict");
}

const char *schema_preflight_source_path(json_object *pre)
{
	return jget_str(jget_object(pre, "source"), "path");
}

const char *schema_preflight_source_device(json_object *pre)
{
	return jget_str(jget_object(pre, "source"), "device") ?: schema_preflight_source_path(pre);
}

const char *schema_preflight_target_spec(json_object *pre)
{
	return jget_str(jget_object(pre, "target"), "spec");
}

uint64_t schema_preflight_source_bytes(json_object *pre)
{
	return jget_u64(jget_object(pre, "source"), "size_bytes");
}

uint64_t schema_preflight_target_bytes(json_object *pre)
{
	return jget_u64(jget_object(pre, "target"), "size_bytes");
}

json_object *schema_preflight_identity(json_object *pre, bool target)
{
	return jget_object(pre, target ? "target_identity" : "source_identity");
}

bool schema_preflight_target_drive(json_object *pre, struct schema_drive *d)
{
	json_object *t = jget_object(pre, "target"), *id = schema_preflight_identity(pre, true);
	bool read = jget_bool(id, "nvme");

	*d = (struct schema_drive){ 0 };
	if (!t)
		return false;
	d->device = jget_str(t, "path");
	d->disk = jget_str(t, "disk");
	d->transport = jget_str(t, "transport");
	d->size_bytes = jget_u64(t, "size_bytes");
	d->model = (read ? jget_str(id, "model") : NULL) ?: jget_str(t, "model");
	d->serial = (read ? jget_str(id, "serial") : NULL) ?: jget_str(t, "serial");
	if (!d->model && streq(jget_str(id, "from"), "model")) {
		d->model = jget_str(id, "model");
		d->model_typed = d->model != NULL;
	}
	return true;
}

json_object *schema_preflight_path(json_object *pre, const char *path)
{
	return jget_object(jget_object(pre, "paths"), path);
}

bool schema_preflight_path_known(json_object *pre, const char *path)
{
	return schema_preflight_path(pre, path) != NULL;
}

bool schema_preflight_path_possible(json_object *pre, const char *path)
{
	return jget_bool(schema_preflight_path(pre, path), "possible");
}

void schema_archive(json_object *rec, struct schema_archive *a)
{
	json_object *arc = jget_object(rec, "archive"), *e = jget(rec, "entries");

	*a = (struct schema_archive){ .sha256 = jget_str(rec, "sha256"), .bytes = jget_u64(rec, "bytes") };
	if (arc) {
		a->path = jget_str(arc, "path");
		a->sha256 = a->sha256 ?: jget_str(arc, "sha256");
		a->bytes = a->bytes ?: jget_u64(arc, "bytes");
		e = e ?: jget(arc, "entries");
	} else
		a->path = jget_str(rec, "archive") ?: jget_str(rec, "path");
	a->entries = json_object_is_type(e, json_type_array) ? jarray_len(e)
		     : json_object_is_type(e, json_type_int) ? json_object_get_uint64(e) : 0;
}

json_object *schema_plan_source(json_object *plan)
{
	return jget_object(jget_object(plan, "plan"), "source");
}

const char *schema_plan_source_identity(json_object *plan)
{
	return jget_str(schema_plan_source(plan), "identity");
}

const char *schema_plan_source_path(json_object *plan)
{
	return jget_str(schema_plan_source(plan), "path");
}

uint64_t schema_plan_target_bytes(json_object *plan)
{
	return jget_u64(jget_object(jget_object(plan, "plan"), "target"), "size_bytes");
}

const char *schema_plan_fingerprint(json_object *plan)
{
	return jget_str(jget_object(plan, "plan"), "fingerprint");
}

const char *schema_plan_fingerprint_shrunk(json_object *plan)
{
	return jget_str(jget_object(plan, "plan"), "fingerprint_shrunk");
}

const char *schema_clone_fingerprint(json_object *clone)
{
	return jget_str(clone, "fingerprint");
}

json_object *schema_accept_drive(json_object *acc)
{
	return jget_object(acc, "drive");
}

bool schema_accept_drive_of(json_object *acc, struct schema_drive *d)
{
	json_object *o = schema_accept_drive(acc);

	*d = (struct schema_drive){ 0 };
	if (!o)
		return false;
	d->disk = jget_str(o, "disk");
	d->device = jget_str(o, "device");
	d->transport = jget_str(o, "transport");
	d->model = jget_str(o, "model");
	d->serial = jget_str(o, "serial");
	d->size_bytes = jget_u64(o, "size_bytes");
	return true;
}

const char *schema_accept_target_path(json_object *acc)
{
	return jget_str(jget_object(acc, "target"), "path");
}

json_object *schema_accept_runs(json_object *acc)
{
	return jget_array(acc, "runs");
}

json_object *schema_accept_run(json_object *acc, const char *name)
{
	json_object *runs = schema_accept_runs(acc);

	for (size_t i = 0; name && i < jarray_len(runs); i++)
		if (streq(jget_str(jarray_at(runs, i), "name"), name))
			return jarray_at(runs, i);
	return NULL;
}

json_object *schema_accept_gates(json_object *acc)
{
	return jget_array(acc, "gates");
}

bool schema_run_lat_us(json_object *run, const char *key, double *us)
{
	json_object *v = jget(jget_object(run, "lat_us"), key);

	if (!v || !(type_of(v) & SJ_NUM))
		return false;
	*us = json_object_get_double(v);
	return true;
}

const char *schema_gate_name(json_object *gate)
{
	return jget_str(gate, "name");
}

const char *schema_gate_status(json_object *gate)
{
	return jget_str(gate, "status");
}

bool schema_gate_is_engine(json_object *gate)
{
	const char *name = schema_gate_name(gate), *kind = jget_str(gate, "kind");

	/* records before `kind` have only the name: "engine-NAME" */
	return streq(kind, SCHEMA_GATE_KIND_ENGINE) || (name && startswith(name, "engine"));
}

void schema_accept_engine_gates(json_object *acc, bool *run, bool *failed)
{
	json_object *gates = schema_accept_gates(acc), *flag = jget(acc, "engine_gates_run");
	size_t engine = 0;

	*failed = false;
	for (size_t i = 0; i < jarray_len(gates); i++) {
		json_object *g = jarray_at(gates, i);

		if (!schema_gate_is_engine(g))
			continue;
		engine++;
		if (streq(schema_gate_status(g), "fail"))
			*failed = true;
	}
	*run = (json_object_is_type(flag, json_type_boolean) ? json_object_get_boolean(flag) : true) && engine > 0;
}

json_object *schema_run_prediction(json_object *run)
{
	return jget_object(run, "engine_prediction");
}

json_object *schema_accept_prediction(json_object *acc, const char **run)
{
	json_object *checks = jget_array(acc, "checks");

	for (size_t i = 0; i < jarray_len(checks); i++) {
		json_object *c = jarray_at(checks, i);
		const char *name = jget_str(c, "run");

		if (!streq(jget_str(c, "id"), SCHEMA_CHECK_ENGINE_PREDICTION) || !name)
			continue;
		if (run)
			*run = name;
		return schema_run_prediction(schema_accept_run(acc, name));
	}
	return NULL;
}

double schema_prediction_s(json_object *pred, const char *key)
{
	json_object *v = jget(pred, key);
	double s = v && (type_of(v) & SJ_NUM) ? json_object_get_double(v) : INFINITY;

	/* NaN and negative values are no time a chunk takes: as slow as it gets, never faster */
	return s >= 0 ? s : INFINITY;
}

const char *schema_prediction_status(json_object *pred)
{
	const char *st = jget_str(pred, "status");

	return streq(st, "pass") || streq(st, "warn") || streq(st, "fail") ? st : NULL;
}

/* The first name that two entries of `arr` share (their `name`), or NULL. */
static const char *repeated_name(json_object *arr)
{
	for (size_t i = 0; i < jarray_len(arr); i++)
		for (size_t k = 0; k < i; k++) {
			const char *a = jget_str(jarray_at(arr, i), "name"), *b = jget_str(jarray_at(arr, k), "name");

			if (a && b && streq(a, b))
				return a;
		}
	return NULL;
}

const char *schema_accept_repeated(json_object *acc, const char **what)
{
	const char *dup;

	*what = "runs";
	if ((dup = repeated_name(schema_accept_runs(acc))))
		return dup;
	*what = "gates";
	return repeated_name(schema_accept_gates(acc));
}

char *schema_accept_evidence_gap(json_object *acc)
{
	json_object *runs = schema_accept_runs(acc), *gates = schema_accept_gates(acc);
	size_t harness = 0;
	const char *dup, *what;

	if ((dup = schema_accept_repeated(acc, &what)))
		return xasprintf("two %s are named '%s': one hides the other", what, dup);
	if (!jarray_len(runs))
		return xstrdup("no runs: a verdict without measurements");
	for (size_t i = 0; i < jarray_len(gates); i++) {
		json_object *g = jarray_at(gates, i);
		const char *st = schema_gate_status(g), *run = jget_str(g, "run");

		if (schema_gate_is_engine(g) || !(streq(st, "pass") || streq(st, "fail")))
			continue;
		if (run && !schema_accept_run(acc, run))
			return xasprintf("gate '%s' judges run '%s', which the record does not hold",
					 schema_gate_name(g) ?: "?", run);
		harness++;
	}
	if (!harness)
		return xstrdup("no harness gates judged its runs: a verdict without thresholds");
	return NULL;
}

void schema_accept_gate_counts(json_object *acc, size_t *passed, size_t *total)
{
	json_object *gates = schema_accept_gates(acc);

	*passed = *total = 0;
	for (size_t i = 0; i < jarray_len(gates); i++) {
		const char *st = schema_gate_status(jarray_at(gates, i));

		*total += streq(st, "pass") || streq(st, "fail");
		*passed += streq(st, "pass");
	}
}

const char *schema_report_verdict(json_object *rep)
{
	return jget_str(rep, "report_verdict");
}

const char *schema_report_why(json_object *rep)
{
	return jget_str(rep, "why");
}
