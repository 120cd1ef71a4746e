/* SPDX-License-Identifier: MIT */
/* The signed report's data: judging step records, the report verdict, record hashes, and the
 * txt / self-contained html renderings (built in memory; the step writes the files). */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>

#include "record.h"
#include "schema.h"

struct profile;

/* The steps a report knows: schema_steps[0 .. SCHEMA_REPORTED_N) (src/schema.h). The steps that must have passed for "accepted". */
bool report_step_required(const char *step);

/*
 * The verdict vocabulary of preflight, the same word in its table, its --json, status, report.txt
 * and report.html, with one exit code each so that a fleet script needs only the exit code:
 *   pass  (0)  a raw clone fits (warn: the same, with warnings; also 0)
 *   trap  (4)  the clone trap: a raw clone cannot fit, but a path exists (fresh install + restore,
 *              or a filesystem-aware clone). The incident's outcome: a finding, not a failed swap.
 *   fail  (1)  no path: neither a raw clone nor any other path
 *   (3)        could not judge (unreadable or hostile input): no verdict, an error record
 * 4 is free: 0/1/2/3/130 are taken (steps/ctx.h).
 */
#define REPORT_EXIT_TRAP 4
#define REPORT_VERDICT_TRAP "trap"
/* Does a preflight record (verdict "fail" from its checks, or already "trap") show the clone trap
 * with a path: every failing check a clone-trap check (raw-clone, gpt-backup-header, partition-fit)
 * and `paths` has fs_clone or fresh_install possible? */
bool report_preflight_trap(json_object *rec);
/* The word for a judged step: "trap" for preflight's trap, else pass|warn|fail|skip. */
const char *report_step_word(const char *step, json_object *rec, enum status st);

/*
 * Judge one step record for the report and for status:
 *   ST_SKIP  not run (rec NULL)
 *   ST_PASS  passed, or preflight's clone-trap finding (see below)
 *   ST_WARN  done with warnings
 *   ST_FAIL  failed
 * Preflight exits 1 with verdict "fail" on the incident's geometry because the raw-clone trap is
 * found: that is the finding, not a failed swap. It counts as done when every failing check is a
 * clone-trap check (raw-clone, gpt-backup-header, partition-fit) and `paths` shows fs_clone or
 * fresh_install possible. *why is a one-line reason (caller frees).
 */
enum status report_judge_step(const char *step, json_object *rec, char **why);

/* Is the drive accept measured (its `drive`) the target preflight planned for? The same serial when
 * both know one decides; else a size or (measured) model that differs tells them apart; else the
 * same size and model, or at last the same kernel name, make them one drive. Anything less is
 * RDM_UNKNOWN. *why (caller frees) names both drives and, unless the same, what to do. */
enum report_drive_match { RDM_SAME, RDM_DIFFERENT, RDM_UNKNOWN };
enum report_drive_match report_target_match(json_object *pre, json_object *acc, char **why);
const char *report_drive_match_name(enum report_drive_match m);

enum report_verdict { RV_ACCEPTED, RV_INCOMPLETE, RV_REJECTED };
const char *report_verdict_name(enum report_verdict v);
/* The verdict from `steps` ({step: record}); `missing` (an array, may be NULL) gets the names of
 * what is missing; *why (caller frees) one line. An accept record of another drive than
 * preflight's target (report_target_match not RDM_SAME) is missing evidence: "incomplete". */
enum report_verdict report_verdict(json_object *steps, json_object *missing, char **why);

/* How report.json's `record_hash` names the hash of records[].sha256 (a report without the field
 * predates it: json-c's plain text of the record). */
#define REPORT_RECORD_HASH "sha256-rfc8785"
/* The canonical text of a JSON value (RFC 8785, JCS): object keys sorted (by their UTF-8 bytes),
 * no whitespace, minimal string escapes, numbers as the shortest text of their IEEE double. Any
 * JSON tool's re-serialisation of the same value (jq ., Python, json-c) gives the same text.
 * Caller frees. */
char *report_canonical_json(json_object *v);
/* SHA-256 of a record's canonical text: what records[].sha256 holds, so a report re-serialised by
 * another tool (then re-signed, as the signature covers bytes) still matches its records. */
int report_record_sha256(json_object *rec, char hex[65]);

/* Assemble report.json's object from the records in state_dir. A record that cannot be read (or
 * has the wrong shape, src/schema.h) fails it: *failed_step (when not NULL) names the step and
 * *why (when not NULL; caller frees) says what is wrong, as record_load_why does. */
int report_build(const char *state_dir, json_object **out, const char **failed_step, char **why);
/* Check `records[].sha256` against the embedded `steps`: 0 good, -EBADMSG mismatch or no record
 * at all (why set). */
int report_check_hashes(json_object *report, char **why);
/* Does the report's `verdict` follow from its embedded records (report_verdict, as report made
 * it), and each record's verdict from its checks? 0 yes; -EBADMSG no, or no record (why set). */
int report_check_verdict(json_object *report, char **why);

/* report.json's `drives` {old, new}: the old and the new drive side by side from what the steps
 * measured (preflight's source, accept's device; preflight's target_identity only when it read that
 * same drive), null where unknown. p judges the new drive's class from the catalogue (may be NULL). */
void report_add_drives(json_object *rep, const struct profile *p);
/* A reference node's accept record (from an accept record or a report) into `reference`; -EINVAL
 * when doc is neither. */
int report_add_reference(json_object *rep, json_object *doc, const char *file);

/* Human summary (report.txt) and one self-contained HTML file with inline SVG; caller frees. */
char *report_text(json_object *report);
char *report_html(json_object *report, const struct profile *p);

/* An accept record from an accept record or a report (its steps.accept); NULL when neither. */
json_object *report_accept_of(json_object *doc);
/* The engine predicted at each working set an accept record measured (src/predict.h): each
 * random run's at the record's working set, then each sweep point's at its own, as an array of
 * {name, working_set_bytes, sweep (bool), prediction}, in that order; the ones without a prediction
 * left out. The caller puts it. */
json_object *report_predictions(json_object *acc);
/* A JSON value for a table cell: strings as they are, doubles with one decimal (integral ones
 * without), others as JSON; NULL as "-". Caller frees. */
char *report_value_text(json_object *v);
/* A gate's threshold as people read it: ">= 60000 IOPS" (op and unit when the gate has them). */
char *report_gate_threshold(json_object *gate);
/* The gates of an accept record that belong to a run ("rand16-p50" belongs to "rand16"). */
bool report_gate_of_run(const char *gate, const char *run);

/* ---- the drives, side by side (src/report.c), for both renderings: report.json's
 * drives.{old,new}, row by row ---- */
enum dkind { DK_STR, DK_BYTES, DK_TB, DK_MB, DK_NUM, DK_C, DK_B };
struct report_drive_row {
	const char *key, *label;
	enum dkind kind;
};
extern const struct report_drive_row report_drive_rows[];
extern const size_t report_drive_nrows;
/* One cell of the drives table: "unknown" where the steps did not measure it. Caller frees. */
char *report_drive_cell(json_object *side, size_t row);
/* The drives of a report: its `drives`, or (a report made before it) derived from its records;
 * *owned: the caller puts it. */
json_object *report_drives_of(json_object *rep, bool *owned);
/* One row of the comparison with a reference node's run: IOPS, p50 and p99.9 of A (the
 * reference) and B (this node) with the B/A ratios, as text for report.txt and report.html. */
void report_compare_cells(json_object *a, json_object *b, char c[9][32]);
/* accept --sustain as one sentence (what was held, the drift, the temperature), allocated. */
char *report_sustain_summary(json_object *sus);
/* One random run before the sustained load (`before`, NULL when the record lacks it) and after:
 * IOPS, p99.9 and the engine prediction's worst chunk, each before and after. */
void report_sustain_cells(json_object *before, json_object *after, char c[6][32]);
