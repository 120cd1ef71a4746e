/* SPDX-License-Identifier: MIT */
/* metrics: step records and reports as node_exporter textfile metrics (the Prometheus text exposition
 * format), so a fleet's drive classes, clone-trap deltas, health and acceptance figures can be watched
 * and alerted on where the operators already look. */
#include "steps.h"
#include "nodes.h"
#include "report.h"
#include "schema.h"

#include <inttypes.h>
#include <math.h>
#include <sys/stat.h>
#include <time.h>

static const struct step_operand metrics_operands[] = {
	{ "RECORD",
	  "preflight or accept records (STATE/STEP.json), report records or report.json, of any nodes" },
	{ 0 },
};

static const struct step_option metrics_options[] = {
	{ { "node", required_argument, NULL, 'N' }, "NAME=FILE",
	  "FILE is a record or report of node NAME (e.g. the inventory's name),\n"
	  "whatever host it claims; repeatable" },
	{ { "out", required_argument, NULL, 'o' }, "FILE",
	  "write FILE atomically, mode 0644 (e.g. in node_exporter's textfile directory)" },
	STEP_OPTIONS_END,
};

const struct step step_metrics = {
	.name = "metrics",
	.summary = "records and reports as node_exporter textfile metrics (Prometheus text format)",
	.synopsis = "swaptool metrics [RECORD...] [--node NAME=FILE]... [--out FILE]\n",
	.operands = metrics_operands,
	.options = metrics_options,
	.run = step_metrics_run,
	.render = step_metrics_render,
	.flags = 0,
};

/* One metric family: its samples are kept together, as the format requires, in the order below. */
struct family {
	const char *name, *type, *help;
	char *buf;
	size_t len;
	FILE *f;
	unsigned samples;
};

enum {
	F_RECORD_FINISHED,
	F_PF_VERDICT,
	F_PF_DELTA,
	F_PF_SOURCE_BYTES,
	F_PF_TARGET_BYTES,
	F_PF_PATH_POSSIBLE,
	F_PF_PATH_RECOMMENDED,
	F_CLASS_INFO,
	F_CLASS_HMB,
	F_HMB,
	F_HMB_MIN,
	F_SMART_CRIT,
	F_SMART_TEMP,
	F_SMART_SPARE,
	F_SMART_SPARE_TH,
	F_SMART_USED,
	F_SMART_READ,
	F_SMART_WRITTEN,
	F_SMART_POH,
	F_SMART_CYCLES,
	F_SMART_UNSAFE,
	F_SMART_MEDIA,
	F_SMART_ERRLOG,
	F_ACC_VERDICT,
	F_ACC_WS,
	F_ACC_IOPS,
	F_ACC_BPS,
	F_ACC_LAT,
	F_ACC_LAT_MAX,
	F_ACC_GATE,
	F_ACC_ENGINE,
	F_ACC_PRED_CHUNK,
	F_ACC_PRED_STATUS,
	F_ACC_PRED_SPIN,
	F_DRIVE_INFO,
	F_REP_VERDICT,
	F_REP_SIGNED,
	F_COUNT,
};

static const struct family family_defs[F_COUNT] = {
	[F_RECORD_FINISHED] = { "swaptool_record_finished_timestamp_seconds", "gauge", "When the step's record was finished (Unix time)." },
	[F_PF_VERDICT] = { "swaptool_preflight_verdict", "gauge", "Verdict of preflight: 1 for the record's verdict, 0 for the others." },
	[F_PF_DELTA] = { "swaptool_preflight_delta_bytes", "gauge", "Target size minus source size; negative when the target is smaller (the clone trap)." },
	[F_PF_SOURCE_BYTES] = { "swaptool_preflight_source_bytes", "gauge", "Size of the source drive." },
	[F_PF_TARGET_BYTES] = { "swaptool_preflight_target_bytes", "gauge", "Size of the target." },
	[F_PF_PATH_POSSIBLE] = { "swaptool_preflight_path_possible", "gauge", "Whether a migration path is possible (raw_clone, fs_clone, fresh_install)." },
	[F_PF_PATH_RECOMMENDED] = { "swaptool_preflight_path_recommended", "gauge", "The migration path preflight recommends (1)." },
	[F_CLASS_INFO] = { "swaptool_drive_class_info", "gauge", "The drive's class in the drive catalogue (role source or target; verdict avoid, measure, suited, reference or unknown)." },
	[F_CLASS_HMB] = { "swaptool_drive_class_hmb_bytes", "gauge", "Host memory buffer of the drive's class in the catalogue (0: the class has DRAM)." },
	[F_HMB] = { "swaptool_drive_hmb_bytes", "gauge", "Preferred host memory buffer the drive reports (id-ctrl HMPRE)." },
	[F_HMB_MIN] = { "swaptool_drive_hmb_min_bytes", "gauge", "Minimum host memory buffer the drive reports (id-ctrl HMMIN)." },
	[F_SMART_CRIT] = { "swaptool_smart_critical_warning", "gauge", "SMART critical warning bits (0: none)." },
	[F_SMART_TEMP] = { "swaptool_smart_temperature_celsius", "gauge", "SMART composite temperature." },
	[F_SMART_SPARE] = { "swaptool_smart_available_spare_ratio", "gauge", "SMART available spare (1 = 100 %)." },
	[F_SMART_SPARE_TH] = { "swaptool_smart_available_spare_threshold_ratio", "gauge", "SMART available spare threshold (1 = 100 %)." },
	[F_SMART_USED] = { "swaptool_smart_percentage_used_ratio", "gauge", "SMART endurance used (1 = 100 %, may exceed 1)." },
	/* the drive's lifetime counts: counters, named _total, as node_exporter's nvme textfile collector
	 * has them (nvme_data_units_read_total, nvme_power_cycles_total, ...) */
	[F_SMART_READ] = { "swaptool_smart_data_read_bytes_total", "counter", "SMART data units read, in bytes, over the drive's life." },
	[F_SMART_WRITTEN] = { "swaptool_smart_data_written_bytes_total", "counter", "SMART data units written, in bytes, over the drive's life." },
	[F_SMART_POH] = { "swaptool_smart_power_on_seconds_total", "counter", "SMART power-on time over the drive's life." },
	[F_SMART_CYCLES] = { "swaptool_smart_power_cycles_total", "counter", "SMART power cycles over the drive's life." },
	[F_SMART_UNSAFE] = { "swaptool_smart_unsafe_shutdowns_total", "counter", "SMART unsafe shutdowns over the drive's life." },
	[F_SMART_MEDIA] = { "swaptool_smart_media_errors_total", "counter", "SMART media and data integrity errors over the drive's life." },
	[F_SMART_ERRLOG] = { "swaptool_smart_error_log_entries_total", "counter", "SMART error information log entries over the drive's life." },
	[F_ACC_VERDICT] = { "swaptool_accept_verdict", "gauge", "Verdict of accept: 1 for the record's verdict, 0 for the others." },
	[F_ACC_WS] = { "swaptool_accept_working_set_bytes", "gauge", "Working set of accept's random reads." },
	[F_ACC_IOPS] = { "swaptool_accept_iops", "gauge", "Reads per second of an accept run." },
	[F_ACC_BPS] = { "swaptool_accept_read_bytes_per_second", "gauge", "Bytes read per second of an accept run." },
	[F_ACC_LAT] = { "swaptool_accept_read_latency_seconds", "summary", "Read latency percentiles of an accept run." },
	[F_ACC_LAT_MAX] = { "swaptool_accept_read_latency_max_seconds", "gauge", "Slowest read of an accept run." },
	[F_ACC_GATE] = { "swaptool_accept_gate_passed", "gauge", "Whether an accept gate passed (1) or failed (0)." },
	[F_ACC_ENGINE] = { "swaptool_accept_engine_gates_run", "gauge", "Whether accept ran the engine gates." },
	[F_ACC_PRED_CHUNK] = { "swaptool_accept_predicted_chunk_seconds", "gauge", "Worst time one prefill chunk's reads take at an accept run's IOPS, predicted (+Inf: no read completed)." },
	[F_ACC_PRED_STATUS] = { "swaptool_accept_predicted_status", "gauge", "Status of an accept run's engine prediction: 1 for its status, 0 for the others." },
	[F_ACC_PRED_SPIN] = { "swaptool_accept_predicted_spin_limit_seconds", "gauge", "The collective's spin limit the prediction was judged against (bound low or high)." },
	[F_DRIVE_INFO] = { "swaptool_drive_info", "gauge", "A drive a record names (role source or target of preflight, measured by accept): its model, serial and firmware (1)." },
	[F_REP_VERDICT] = { "swaptool_report_verdict", "gauge", "Verdict of the signed report: 1 for its verdict, 0 for the others." },
	[F_REP_SIGNED] = { "swaptool_report_signed", "gauge", "Whether the report is signed." },
};

/* The labels every sample carries: the node, and the drive by the kernel's name (nvme0n1, sda: the
 * device label of node_exporter's node_disk_* series, so that the two join), left out where there
 * is no block device (an image file); claimed_host too when the record's own host is not the
 * node's --node NAME. Model, serial and firmware are in one swaptool_drive_info series per drive. */
struct ids {
	const char *host, *claimed, *device;
};

/* The kernel's name of a disk: DISK as a record names it ("nvme0n1"), else the NAME of a /dev/NAME
 * PATH (the device path an older record holds) unless it names an NVMe controller (nvme0: a
 * character device, no disk); NULL for an image file or any other path. */
static const char *kernel_name(const char *disk, const char *path)
{
	const char *name = path && startswith(path, "/dev/") ? path + 5 : NULL;

	if (disk && *disk && !strchr(disk, '/'))
		return disk;
	if (!name || !*name || strchr(name, '/') ||
	    (startswith(name, "nvme") && name[4] && strspn(name + 4, "0123456789") == strlen(name + 4)))
		return NULL;
	return name;
}

/* The host a record claims when it is not the node's name, else NULL. */
static const char *claimed(const char *node, const char *host)
{
	return host && !streq(host, node) ? host : NULL;
}

/* A label value per the exposition format: backslash, double quote and newline escaped. Bytes that
 * are not UTF-8 (records are hostile input) become '?', which the format then accepts. */
static void put_label(FILE *f, const char *k, const char *v)
{
	fprintf(f, "%s=\"", k);
	for (const unsigned char *p = (const unsigned char *)(v ?: ""); *p; p++) {
		char one[5] = { 0 };
		unsigned n = *p < 0x80 ? 1 : (*p & 0xe0) == 0xc0 ? 2 : (*p & 0xf0) == 0xe0 ? 3 : (*p & 0xf8) == 0xf0 ? 4 : 0;

		if (*p == '\\')
			fputs("\\\\", f);
		else if (*p == '"')
			fputs("\\\"", f);
		else if (*p == '\n')
			fputs("\\n", f);
		else if (*p < 0x20 || *p == 0x7f)
			fputc('?', f); /* ESC, BEL, CR: the exposition goes to terminals too (out_block) */
		else if (n == 1)
			fputc(*p, f);
		else if (n > 1 && strnlen((const char *)p, n) == n) {
			memcpy(one, p, n);
			if (utf8_valid(one)) {
				fputs(one, f);
				p += n - 1;
			} else
				fputc('?', f);
		} else
			fputc('?', f);
	}
	fputc('"', f);
}

static void put_value(FILE *f, double v)
{
	if (isnan(v))
		fputs("NaN", f);
	else if (isinf(v))
		fputs(v > 0 ? "+Inf" : "-Inf", f);
	else
		fprintf(f, "%.15g", v);
}

/* One sample: `name{host[,claimed_host][,device][,k=v]...} value`; extra labels are NULL-terminated
 * key/value pairs. `suffix` names a summary's _sum or _count. */
static void sample(struct family *fams, int fam, const char *suffix, const struct ids *id, double v, ...)
{
	struct family *F = &fams[fam];
	va_list ap;
	const char *k;

	if (!F->f) {
		F->f = open_memstream(&F->buf, &F->len);
		if (!F->f)
			abort();
	}
	fprintf(F->f, "%s%s{", F->name, suffix ?: "");
	put_label(F->f, "host", id->host);
	if (id->claimed) {
		fputc(',', F->f);
		put_label(F->f, "claimed_host", id->claimed);
	}
	if (id->device) {
		fputc(',', F->f);
		put_label(F->f, "device", id->device);
	}
	va_start(ap, v);
	while ((k = va_arg(ap, const char *))) {
		fputc(',', F->f);
		put_label(F->f, k, va_arg(ap, const char *));
	}
	va_end(ap);
	fputs("} ", F->f);
	put_value(F->f, v);
	fputc('\n', F->f);
	F->samples++;
}

/* A drive's identity, once: swaptool_drive_info{role,model,serial,firmware} 1 (empty where the
 * record does not know), the usual Prometheus _info series, joined to the others on host and
 * device. Nothing when the record knows none of them and no device. */
static void drive_info(struct family *fams, const struct ids *id, const char *role, const char *model,
		       const char *serial, const char *firmware)
{
	if (id->device || model || serial || firmware)
		sample(fams, F_DRIVE_INFO, NULL, id, 1, "role", role, "model", model ?: "", "serial", serial ?: "",
		       "firmware", firmware ?: "", NULL);
}

/* A number from the record, scaled, when it is one. */
static void sample_num(struct family *fams, int fam, const struct ids *id, json_object *o, const char *key, double scale)
{
	double v;

	if (jnum(o, key, &v))
		sample(fams, fam, NULL, id, v * scale, NULL);
}

/* A state set: 1 for the value the record holds, 0 for the other known ones; nothing when the record
 * holds none of them (an unknown verdict is not guessed). */
static void stateset(struct family *fams, int fam, const struct ids *id, const char *label, const char *value,
		     const char *const *states)
{
	bool known = false;

	for (size_t i = 0; states[i]; i++)
		known = known || streq(states[i], value);
	if (!known)
		return;
	for (size_t i = 0; states[i]; i++)
		sample(fams, fam, NULL, id, streq(states[i], value), label, states[i], NULL);
}

static void finished(struct family *fams, const struct ids *id, json_object *rec, const char *step)
{
	const char *t = jget_str(rec, "finished");
	struct tm tm = { 0 };
	const char *end = t ? strptime(t, "%Y-%m-%dT%H:%M:%SZ", &tm) : NULL;

	if (end && !*end)
		sample(fams, F_RECORD_FINISHED, NULL, id, (double)timegm(&tm), "step", step, NULL);
}

static const char *const verdicts[] = { "pass", "warn", "trap", "fail", NULL }; /* trap: preflight only */

static void drive(struct family *fams, const struct ids *id, const char *role, json_object *cls, json_object *ident)
{
	json_object *smart = jget_object(ident, "smart");
	double v;

	if (cls) {
		const char *verdict = jget_str(cls, "verdict");
		sample(fams, F_CLASS_INFO, NULL, id, 1, "role", role, "class", jget_str(cls, "name") ?: "",
		       "verdict", verdict ?: "unknown", NULL);
		if (jnum(cls, "hmb_mb", &v))
			sample(fams, F_CLASS_HMB, NULL, id, v * 1048576, "role", role, NULL);
	}
	if (jnum(ident, "hmb_bytes", &v))
		sample(fams, F_HMB, NULL, id, v, "role", role, NULL);
	if (jnum(ident, "hmb_min_bytes", &v))
		sample(fams, F_HMB_MIN, NULL, id, v, "role", role, NULL);
	if (!smart)
		return;
	{
		/* SMART samples carry the role too: the same node may report both drives */
		static const struct { int fam; const char *key; double scale; } m[] = {
			{ F_SMART_CRIT, "critical_warning", 1 },
			{ F_SMART_TEMP, "temperature_c", 1 },
			{ F_SMART_SPARE, "avail_spare", 0.01 },
			{ F_SMART_SPARE_TH, "spare_thresh", 0.01 },
			{ F_SMART_USED, "percent_used", 0.01 },
			{ F_SMART_READ, "data_read_bytes", 1 },
			{ F_SMART_WRITTEN, "data_written_bytes", 1 },
			{ F_SMART_POH, "power_on_hours", 3600 },
			{ F_SMART_CYCLES, "power_cycles", 1 },
			{ F_SMART_UNSAFE, "unsafe_shutdowns", 1 },
			{ F_SMART_MEDIA, "media_errors", 1 },
			{ F_SMART_ERRLOG, "num_err_log_entries", 1 },
		};
		for (size_t i = 0; i < ARRAY_SIZE(m); i++)
			if (jnum(smart, m[i].key, &v))
				sample(fams, m[i].fam, NULL, id, v * m[i].scale, "role", role, NULL);
	}
}

static void preflight(struct family *fams, const char *host, json_object *pf)
{
	json_object *src = jget_object(pf, "source"), *paths = jget_object(pf, "paths");
	json_object *sid = schema_preflight_identity(pf, false), *tid = schema_preflight_identity(pf, true);
	const char *c = claimed(host, schema_host(pf));
	struct schema_drive td;
	bool has_target = schema_preflight_target_drive(pf, &td);
	struct ids s = { host, c, kernel_name(jget_str(src, "disk"), schema_preflight_source_device(pf)) };
	struct ids t = { host, c, kernel_name(td.disk, td.device) };
	static const char *const path_names[] = { SCHEMA_PATH_RAW_CLONE, SCHEMA_PATH_FS_CLONE, SCHEMA_PATH_FRESH_INSTALL };

	finished(fams, &s, pf, "preflight");
	stateset(fams, F_PF_VERDICT, &s, "verdict", jget_str(pf, "verdict"), verdicts);
	sample_num(fams, F_PF_DELTA, &s, pf, "delta_bytes", 1);
	sample_num(fams, F_PF_SOURCE_BYTES, &s, src, "size_bytes", 1);
	sample_num(fams, F_PF_TARGET_BYTES, &s, jget_object(pf, "target"), "size_bytes", 1);
	for (size_t i = 0; i < ARRAY_SIZE(path_names); i++) {
		json_object *p = jget_object(paths, path_names[i]), *possible = jget(p, "possible");
		if (possible && json_object_is_type(possible, json_type_boolean))
			sample(fams, F_PF_PATH_POSSIBLE, NULL, &s, json_object_get_boolean(possible), "path", path_names[i], NULL);
	}
	for (size_t i = 0; i < ARRAY_SIZE(path_names); i++)
		if (streq(jget_str(paths, "recommended"), path_names[i]))
			sample(fams, F_PF_PATH_RECOMMENDED, NULL, &s, 1, "path", path_names[i], NULL);
	drive_info(fams, &s, "source", jget_str(src, "model") ?: jget_str(sid, "model"),
		   jget_str(src, "serial") ?: jget_str(sid, "serial"), jget_str(src, "firmware") ?: jget_str(sid, "firmware"));
	drive(fams, &s, "source", node_drive_class(pf, "source"), sid);
	if (has_target)
		drive_info(fams, &t, "target", td.model, td.serial, jget_str(tid, "firmware"));
	if (node_drive_class(pf, "target") || tid)
		drive(fams, &t, "target", node_drive_class(pf, "target"), tid);
}

static void accept_ids(const char *host, json_object *acc, struct ids *id)
{
	json_object *d = schema_accept_drive(acc), *t = jget_object(acc, "target");

	*id = (struct ids){ host, claimed(host, schema_host(acc)),
			    kernel_name(jget_str(d, "disk") ?: jget_str(t, "disk"), jget_str(t, "device") ?: jget_str(t, "path")) };
}

static const char *const prediction_states[] = { "pass", "warn", "fail", NULL };

/* A run's engine prediction (src/predict.h): its worst chunk, +Inf when it never completes, and
 * its status; nothing for a run without one or with a status that is none of the three. */
static void prediction(struct family *fams, const struct ids *id, const char *run, json_object *pred)
{
	const char *st = schema_prediction_status(pred);

	if (!st)
		return;
	sample(fams, F_ACC_PRED_CHUNK, NULL, id, schema_prediction_s(pred, "worst_chunk_s"), "run", run, NULL);
	for (size_t i = 0; prediction_states[i]; i++)
		sample(fams, F_ACC_PRED_STATUS, NULL, id, streq(prediction_states[i], st), "run", run, "status",
		       prediction_states[i], NULL);
}

/* The spin limit the judged prediction was held against, for alerts on the chunk time. */
static void prediction_spin(struct family *fams, const struct ids *id, json_object *pred)
{
	json_object *spin = jget_object(pred, "spin_limit_s");
	int64_t low, high;

	if (jint(spin, "low", &low) && jint(spin, "high", &high) && low > 0 && low <= high) {
		sample(fams, F_ACC_PRED_SPIN, NULL, id, (double)low, "bound", "low", NULL);
		sample(fams, F_ACC_PRED_SPIN, NULL, id, (double)high, "bound", "high", NULL);
	}
}

static void accept(struct family *fams, const char *host, json_object *acc)
{
	json_object *runs = schema_accept_runs(acc), *gates = schema_accept_gates(acc), *eg = jget(acc, "engine_gates_run");
	static const struct { const char *key, *q; } pct[] = {
		{ SCHEMA_LAT_P50, "0.5" }, { SCHEMA_LAT_P90, "0.9" }, { SCHEMA_LAT_P99, "0.99" }, { SCHEMA_LAT_P99_9, "0.999" },
	};
	struct ids id;

	accept_ids(host, acc, &id);
	drive_info(fams, &id, "measured", jget_str(schema_accept_drive(acc), "model"),
		   jget_str(schema_accept_drive(acc), "serial"), jget_str(schema_accept_drive(acc), "firmware"));
	finished(fams, &id, acc, "accept");
	stateset(fams, F_ACC_VERDICT, &id, "verdict", jget_str(acc, "verdict"), verdicts);
	sample_num(fams, F_ACC_WS, &id, jget_object(acc, "target"), "working_set_bytes", 1);
	for (size_t i = 0; runs && i < json_object_array_length(runs); i++) {
		json_object *r = jarray_at(runs, i), *lat = jget_object(r, "lat_us");
		const char *name = jget_str(r, "name"), *mode = jget_str(r, "mode") ?: "";
		char inflight[24] = "";
		int64_t n;
		double v, mean;

		if (!name)
			continue;
		if (jint(r, "inflight", &n))
			snprintf(inflight, sizeof(inflight), "%" PRId64, n);
		if (jnum(r, "iops", &v))
			sample(fams, F_ACC_IOPS, NULL, &id, v, "run", name, "mode", mode, "inflight", inflight, NULL);
		if (jnum(r, "mb_s", &v))
			sample(fams, F_ACC_BPS, NULL, &id, v * 1e6, "run", name, "mode", mode, "inflight", inflight, NULL);
		for (size_t k = 0; k < ARRAY_SIZE(pct); k++)
			if (jnum(lat, pct[k].key, &v))
				sample(fams, F_ACC_LAT, NULL, &id, v / 1e6, "run", name, "quantile", pct[k].q, NULL);
		if (jint(r, "ios", &n) && n >= 0) {
			if (jnum(lat, "mean", &mean))
				sample(fams, F_ACC_LAT, "_sum", &id, mean * (double)n / 1e6, "run", name, NULL);
			sample(fams, F_ACC_LAT, "_count", &id, (double)n, "run", name, NULL);
		}
		if (jnum(lat, "max", &v))
			sample(fams, F_ACC_LAT_MAX, NULL, &id, v / 1e6, "run", name, NULL);
		prediction(fams, &id, name, schema_run_prediction(r));
	}
	prediction_spin(fams, &id, schema_accept_prediction(acc, NULL));
	for (size_t i = 0; gates && i < json_object_array_length(gates); i++) {
		json_object *g = jarray_at(gates, i);
		const char *name = schema_gate_name(g), *st = schema_gate_status(g);

		if (name && (streq(st, "pass") || streq(st, "fail")))
			sample(fams, F_ACC_GATE, NULL, &id, streq(st, "pass"), "gate", name, NULL);
	}
	if (eg && json_object_is_type(eg, json_type_boolean))
		sample(fams, F_ACC_ENGINE, NULL, &id, json_object_get_boolean(eg), NULL);
}

static void report(struct family *fams, const struct node *n)
{
	static const char *const rv[] = { "accepted", "rejected", "incomplete", NULL };
	struct ids id = { n->host, NULL, NULL };

	if (!n->report_verdict)
		return;
	if (n->accept)
		accept_ids(n->host, n->accept, &id);
	id.claimed = claimed(n->host, n->report_host);
	stateset(fams, F_REP_VERDICT, &id, "verdict", n->report_verdict, rv);
	sample(fams, F_REP_SIGNED, NULL, &id, n->report_signed, NULL);
}

/* The inputs of steps that hold no metrics (plan, backup, ...) each get a warning, shown on stderr:
 * they used to add nothing without a word, and a file of them alone wrote 0 bytes with exit 0. When
 * no input holds metrics, exit 2 and nothing is written, so an --out that node_exporter scrapes keeps
 * its last figures. 0, or the exit code. */
static int inputs_without_metrics(struct ctx *ctx, struct record *rec, const struct node_set *set)
{
	const char *first = NULL, *first_step = NULL;
	size_t n = 0, ninputs = json_object_array_length(set->inputs);

	for (size_t i = 0; i < ninputs; i++) {
		json_object *in = jarray_at(set->inputs, i);

		if (!streq(jget_str(in, "kind"), "ignored"))
			continue;
		if (!n++)
			first = jget_str(in, "file"), first_step = jget_str(in, "step");
		record_check(rec, "ignored-input", ST_WARN, "'%s' is a %s record, which holds no metrics (preflight "
			     "and accept records and reports do); it is left out", jget_str(in, "file"),
			     jget_str(in, "step"));
	}
	if (n < ninputs)
		return 0;
	if (n > 1)
		return ctx_error(ctx, EXIT_USAGE, "none of the %zu inputs holds metrics ('%s' is a %s record); give "
				 "preflight or accept records or reports (STATE/preflight.json, STATE/accept.json, "
				 "report.json)", n, first, first_step);
	return ctx_error(ctx, EXIT_USAGE, "'%s' is a %s record, which holds no metrics; give preflight or accept "
			 "records or reports (STATE/preflight.json, STATE/accept.json, report.json)", first, first_step);
}

/* --out must not be one of the inputs by another name (the same path, a symlink, a hard link):
 * the rename would replace the record it was made from. By identity, as backup, restore and report
 * judge their outputs (docs/swaptool-safety.7, another name for an output); exit 2 before anything
 * is read or written. */
static int out_not_input(struct ctx *ctx, const char *out, const struct node_inputs *in)
{
	struct stat o, i;

	if (stat(out, &o) < 0)
		return 0;
	for (size_t k = 0; k < in->n; k++)
		if (stat(in->v[k].file, &i) == 0 && i.st_dev == o.st_dev && i.st_ino == o.st_ino)
			return ctx_error(ctx, EXIT_USAGE, "--out '%s' is '%s', one of the inputs, so writing would replace it; "
					 "name a new file, e.g. in node_exporter's textfile directory", out, in->v[k].file);
	return 0;
}

int step_metrics_run(struct ctx *ctx, int argc, char **argv, struct record *rec)
{
	struct family fams[F_COUNT];
	struct node_set set = { 0 };
	struct node_inputs in = { 0 };
	const char *out = NULL;
	_cleanup_free_ char *text = NULL;
	size_t text_len = 0;
	unsigned samples = 0;
	FILE *f;
	int c, r = 0;

	/* "-": operands come back as 1 in their place among the --node options (fleet.c) */
	while (!r && (c = getopt_long(argc, argv, "-", step_getopt(metrics_options), NULL)) != -1) {
		if (c == 1)
			nodes_input_record(&in, optarg);
		else if (c == 'N')
			r = nodes_input_option(ctx, &in, optarg);
		else if (c == 'o' && *optarg)
			out = optarg;
		else
			r = step_bad_option(ctx, argc, argv);
	}
	for (int i = optind; !r && i < argc; i++)
		nodes_input_record(&in, argv[i]);
	if (!r && !in.n)
		r = ctx_error(ctx, EXIT_USAGE, "metrics takes one or more records or reports (STATE/preflight.json, "
					       "STATE/accept.json, report.json); see 'swaptool help metrics'");
	if (!r && out)
		r = out_not_input(ctx, out, &in);
	if (!r)
		r = nodes_read(ctx, &set, &in);
	nodes_inputs_free(&in);
	if (r) {
		nodes_free(&set);
		return r;
	}

	r = inputs_without_metrics(ctx, rec, &set);
	if (r) {
		nodes_free(&set);
		return r;
	}
	memcpy(fams, family_defs, sizeof(fams));
	for (size_t i = 0; i < set.nnodes; i++) {
		const struct node *n = &set.nodes[i];
		if (n->preflight)
			preflight(fams, n->host, n->preflight);
		if (n->accept)
			accept(fams, n->host, n->accept);
		report(fams, n);
	}
	f = open_memstream(&text, &text_len);
	if (!f)
		abort();
	for (int i = 0; i < F_COUNT; i++) {
		if (!fams[i].f)
			continue;
		fclose(fams[i].f);
		fprintf(f, "# HELP %s %s\n# TYPE %s %s\n%s", fams[i].name, fams[i].help, fams[i].name, fams[i].type,
			fams[i].buf);
		samples += fams[i].samples;
		free(fams[i].buf);
	}
	fclose(f);

	if (out) {
		/* 0644: node_exporter's textfile collector reads it as another user; atomic, so it never
		 * scrapes half a file */
		r = write_file_atomic(out, text, text_len, 0644);
		if (r < 0) {
			nodes_free(&set);
			return ctx_error(ctx, EXIT_FAILED, "cannot write '%s': %s; pass --out in a writable directory", out,
					 strerror(-r));
		}
	}
	json_object_object_add(rec->root, "inputs", json_object_get(set.inputs));
	jset_u64(rec->root, "nodes", set.nnodes);
	jset_u64(rec->root, "samples", samples);
	jset_str(rec->root, "out", out);
	jset_str(rec->root, "text", text);
	record_check(rec, "metrics", ST_PASS, "%u samples for %zu node%s%s%s", samples, set.nnodes,
		     set.nnodes == 1 ? "" : "s", out ? " written to " : "", out ?: "");
	nodes_free(&set);
	record_finish(rec);
	return record_exit_code(rec);
}

void step_metrics_render(const struct ctx *ctx, json_object *record)
{
	json_object *checks = jget_array(record, "checks");

	for (size_t i = 0; i < json_object_array_length(checks); i++)
		if (streq(jget_str(jarray_at(checks, i), "status"), "warn"))
			out_warning(ctx, "%s", jget_str(jarray_at(checks, i), "summary"));
	if (jget_str(record, "out"))
		out_line(ctx, "wrote %" PRIu64 " samples for %" PRIu64 " nodes to %s", jget_u64(record, "samples"),
			 jget_u64(record, "nodes"), jget_str(record, "out"));
	else
		out_block(jget_str(record, "text"));
}
