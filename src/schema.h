/* SPDX-License-Identifier: MIT */
/*
 * The one declaration of what a step's record holds that another step reads (docs/design.md,
 * "Record contracts"): the steps that save records, the check ids and gate names readers look
 * for, the keys they read with their types (schema_keys, checked by schema_validate when a record
 * is loaded), and one accessor per fact. A reader of another step's record goes through an
 * accessor here rather than spelling the key where it reads it; a writer uses the names here.
 * (The renderers of report.txt and report.html read through these where one exists and spell only
 * what they alone show, such as a run's mode and MB/s, the sweep and the drives' LBA counts; the
 * per-field readers of metrics and fleet still spell some keys of their own. Both go through
 * typed lookups that read a wrong type as absent.)
 *
 * Adding a key is free; changing what a key holds (its type or meaning) needs a new RECORD_SCHEMA
 * (src/record.h), and records of the old schema must stay readable.
 */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The steps whose records are saved in the state directory and read by others (status, report,
 * compare, fleet, nodes, metrics), in the order an operator meets them. */
enum schema_step {
	SS_PREFLIGHT,
	SS_BACKUP,
	SS_PLAN,
	SS_CLONE,
	SS_RESTORE,
	SS_VERIFY,
	SS_ACCEPT,
	SS_REPORT, /* report's own record: status reads it; a report does not embed it */
	SS_N,
};
extern const char *const schema_steps[SS_N];
/* The steps a report embeds (STATE/STEP.json for each): every one before SS_REPORT. */
#define SCHEMA_REPORTED_N ((size_t)SS_REPORT)
/* The step's index, or -1 for a step that saves no record others read. */
int schema_step_index(const char *step);

/* Check ids readers look for. The clone trap is the failure of these alone (report, status). */
#define SCHEMA_CHECK_RAW_CLONE "raw-clone"
#define SCHEMA_CHECK_GPT_BACKUP_HEADER "gpt-backup-header"
#define SCHEMA_CHECK_PARTITION_FIT "partition-fit"
#define SCHEMA_CHECK_FS_FIT "fs-fit"
#define SCHEMA_CHECK_FRESH_INSTALL_FIT "fresh-install-fit"
/* preflight's drive class check: its `source`/`target` objects hold the class (nodes, fleet) */
#define SCHEMA_CHECK_DRIVE_CLASS "drive-class"
/* accept's judgement of the engine predicted from its random runs: its `run` names the run whose
 * prediction (the slowest worst chunk) it took */
#define SCHEMA_CHECK_ENGINE_PREDICTION "engine-prediction"
/* Is `id` one of the clone-trap checks (raw-clone, gpt-backup-header, partition-fit, fs-fit)? A
 * filesystem that cannot be shrunk closes path 2 only: the fresh install remains. */
bool schema_clone_trap_check(const char *id);

/* preflight's `paths` (also plan's): the three ways from the old drive to the new one. */
#define SCHEMA_PATH_RAW_CLONE "raw_clone"
#define SCHEMA_PATH_FS_CLONE "fs_clone"
#define SCHEMA_PATH_FRESH_INSTALL "fresh_install"

/* accept's gates. A harness gate is named RUN-SUFFIX ("rand64-p99.9"), an engine gate
 * "engine-NAME"; `kind` says which (records before `kind` have only the name). */
#define SCHEMA_GATE_IOPS "iops"
#define SCHEMA_GATE_P50 "p50"
#define SCHEMA_GATE_P99 "p99"
#define SCHEMA_GATE_P99_9 "p99.9"
#define SCHEMA_GATE_MB_S "mb_s"
#define SCHEMA_GATE_ENGINE_PREFIX "engine-"
#define SCHEMA_GATE_KIND_HARNESS "harness"
#define SCHEMA_GATE_KIND_ENGINE "engine"
/* A run's latency percentiles: keys of runs[].lat_us, in microseconds. Note the underscore: the
 * key is "p99_9", the gate suffix "p99.9". */
#define SCHEMA_LAT_P50 "p50"
#define SCHEMA_LAT_P90 "p90"
#define SCHEMA_LAT_P99 "p99"
#define SCHEMA_LAT_P99_9 "p99_9"
#define SCHEMA_LAT_P99_99 "p99_99"
#define SCHEMA_LAT_MAX "max"

/* The types a declared key may hold (a set: "a number or a string"). null counts as absent:
 * jset_str writes null for a missing value. */
enum schema_type {
	SJ_STR = 1 << 0,
	SJ_INT = 1 << 1,
	SJ_DOUBLE = 1 << 2,
	SJ_NUM = SJ_INT | SJ_DOUBLE,
	SJ_BOOL = 1 << 3,
	SJ_OBJ = 1 << 4,
	SJ_ARR = 1 << 5,
};

/* A key another step reads. path: dot-separated; "name[]" is each element of an array
 * ("runs[].lat_us.p99_9"). step: NULL for a key of every record. Every key is optional: an older
 * swaptool's record may lack it, and readers take a missing key as unknown. */
struct schema_key {
	const char *step;
	const char *path;
	unsigned types;
};
extern const struct schema_key schema_keys[];
extern const size_t schema_keys_n;

/* Does rec (whose envelope record_check_envelope accepted) hold every declared key of `step`
 * (NULL: rec's own step) with a declared type? 0, or -EBADMSG with *why (when not NULL) naming
 * the key and the type expected: "its 'runs[1].lat_us.p99_9' is a string, not a number". */
int schema_validate(const char *step, json_object *rec, char **why);

/* The type set as words: "an integer", "a number or a string". */
const char *schema_type_words(unsigned types, char buf[96]);

/* ---- Accessors: one per fact a reader needs; NULL / 0 / false when the record lacks it. ---- */

/* Every record: its envelope. */
const char *schema_host(json_object *rec);
const char *schema_finished(json_object *rec);
const char *schema_verdict(json_object *rec);

/* preflight */
const char *schema_preflight_source_path(json_object *pre);
/* The block device of the source: source.device (the namespace when preflight was given the
 * controller), else source.path. */
const char *schema_preflight_source_device(json_object *pre);
const char *schema_preflight_target_spec(json_object *pre);
uint64_t schema_preflight_source_bytes(json_object *pre);
uint64_t schema_preflight_target_bytes(json_object *pre);
/* What preflight read of a drive's identity (source_identity, or target_identity when target):
 * nvme, from, controller, model, serial, firmware, class {name, verdict, reason}, hmb_mb, smart,
 * error_log {entries}, namespaces [{judged, size_bytes, lba_size}]; NULL when not an object. */
json_object *schema_preflight_identity(json_object *pre, bool target);
/* A drive as a step's record names it; NULL / 0 where the record does not know. */
struct schema_drive {
	const char *device;    /* the path: "/dev/nvme1n1" */
	const char *disk;      /* the kernel's name: "nvme1n1" */
	const char *transport; /* "nvme", "usb", "loop", ... (src/disk.h, disk_transport) */
	const char *model, *serial;
	uint64_t size_bytes;
	bool model_typed;      /* the model is preflight's --target-model, typed by hand */
};
/* The target preflight planned for: target {path, disk, transport, model, serial, size_bytes}, the
 * model and serial of target_identity where preflight read the drive's NVMe identity, and the
 * --target-model when nothing was read. false when the record has no target. */
bool schema_preflight_target_drive(json_object *pre, struct schema_drive *d);
/* paths.PATH (SCHEMA_PATH_*): possible, and for the fresh install refetchable_bytes and
 * irreplaceable_bytes; NULL when the record lacks it. */
json_object *schema_preflight_path(json_object *pre, const char *path);
/* Does `paths` name this path at all (an older record may lack one)? */
bool schema_preflight_path_known(json_object *pre, const char *path);
/* paths.PATH.possible */
bool schema_preflight_path_possible(json_object *pre, const char *path);

/* backup, restore and verify: the tarball. Older backup records kept sha256 and bytes beside
 * `archive`, or `archive` as the path string; entries as a count or as the list. */
struct schema_archive {
	const char *path, *sha256;
	uint64_t bytes, entries;
};
void schema_archive(json_object *rec, struct schema_archive *a);

/* plan: what binds clone to it */
json_object *schema_plan_source(json_object *plan); /* plan.source {path, identity, ...} */
const char *schema_plan_source_identity(json_object *plan);
const char *schema_plan_source_path(json_object *plan);
uint64_t schema_plan_target_bytes(json_object *plan);
const char *schema_plan_fingerprint(json_object *plan);
const char *schema_plan_fingerprint_shrunk(json_object *plan);
/* clone: the fingerprint of the plan it carried out */
const char *schema_clone_fingerprint(json_object *clone);

/* accept */
/* The drive under what accept read: disk (the kernel's name), device (/dev/DISK), under (the path
 * it read), transport, controller, model, serial, firmware, size_bytes. */
json_object *schema_accept_drive(json_object *acc);
/* The same as a struct; false when the record has no `drive`. */
bool schema_accept_drive_of(json_object *acc, struct schema_drive *d);
const char *schema_accept_target_path(json_object *acc);
json_object *schema_accept_runs(json_object *acc);          /* an array, or NULL */
json_object *schema_accept_run(json_object *acc, const char *name);
json_object *schema_accept_gates(json_object *acc);         /* an array, or NULL */
/* runs[].lat_us.KEY (SCHEMA_LAT_*) in microseconds; false when the run lacks it. */
bool schema_run_lat_us(json_object *run, const char *key, double *us);
const char *schema_gate_name(json_object *gate);
const char *schema_gate_status(json_object *gate);
/* Is this gate an engine gate (kind "engine", or a name starting "engine" in older records)? */
bool schema_gate_is_engine(json_object *gate);
/* Engine gates: run when engine gates exist and `engine_gates_run` is not false (a record that
 * says they ran and holds none has no evidence of them); failed when any of them failed. */
void schema_accept_engine_gates(json_object *acc, bool *run, bool *failed);
/* The engine predicted from a run or a sweep point (src/predict.h's prediction_to_json), or NULL. */
json_object *schema_run_prediction(json_object *run);
/* The prediction the engine-prediction check judged, and the name of its run (*run, when not
 * NULL); NULL when the record has no such check or the run it names holds no prediction. */
json_object *schema_accept_prediction(json_object *acc, const char **run);
/* A prediction's time in seconds, KEY one of worst_chunk_s, chunk_s, cold_prompt_s: +inf when it
 * never ends (the key null or missing: no read completed) or the value is not a number of 0 or more. */
double schema_prediction_s(json_object *pred, const char *key);
/* Its status, "pass", "warn" or "fail"; NULL for anything else (a hostile record's word). */
const char *schema_prediction_status(json_object *pred);
/* Gates passed and gates with a pass/fail status. */
void schema_accept_gate_counts(json_object *acc, size_t *passed, size_t *total);
/* What a passing accept record lacks to be evidence, as an allocated sentence, or NULL when it has
 * it: a verdict needs runs, and harness gates judged on them (pass or fail), each gate's `run` one
 * of the runs; a name given to two runs or two gates is refused, as a reader would take one for
 * the other (metrics' series, report's rows). */
char *schema_accept_evidence_gap(json_object *acc);
/* A name two runs or two gates of the record share (*what: "runs" or "gates"), or NULL: a reader
 * keyed by name (metrics' series, fleet's columns) would take one for the other. */
const char *schema_accept_repeated(json_object *acc, const char **what);

/* report's own record */
const char *schema_report_verdict(json_object *rep);
const char *schema_report_why(json_object *rep);
