/* SPDX-License-Identifier: MIT */
/* The step interface.
 *
 * How to add a step:
 *   1. Write steps/NAME.c. At its top, side by side: the option table (static, at file scope; the
 *      shared entries below rather than copies), the usage text that lists every one of those options
 *      and nothing else, and `const struct step step_NAME` that holds both with the name, the one-line
 *      summary, run, render and flags. Then `int step_NAME_run(struct ctx *, int argc, char **argv,
 *      struct record *)` and, when the generic checks table is not enough, `void step_NAME_render(...)`.
 *      run() parses its options with getopt_long over that table and no short options (argv[0] is
 *      the step name; the global options, --help among them, are already taken out by cli/main.c,
 *      which answers `swaptool STEP --help` with the usage text), gathers data into the record and
 *      never prints. It returns the exit code: record_exit_code(rec) when it produced a
 *      record, or ctx_error(ctx, code, ...) when it could not.
 *   2. Declare step_NAME and the functions here, and add &step_NAME to the table in steps/table.c.
 *   3. Add the file to step_files in meson.build; write docs/swaptool-NAME.1 with every option in its
 *      SYNOPSIS and OPTIONS, add it to install_man and to the list in docs/swaptool.1; add a CLI test
 *      (tests/cli/NN-NAME.sh) and a README row. tests/unit/test-steps.c and tests/cli/08-step-options.sh
 *      fail while the option table, the usage text and the man page disagree.
 */
#pragma once

#include <getopt.h>

#include "ctx.h"
#include "out.h"
#include "profile.h"
#include "record.h"
#include "util.h"

enum step_flags {
	STEP_SAVES_RECORD = 1 << 0, /* main writes the record to the state directory */
	STEP_READS_ONLY = 1 << 1,   /* changes nothing: its result is shown even when its record cannot be saved */
};

struct step {
	const char *name;
	const char *summary; /* one line for `swaptool --help` */
	const char *usage;   /* the step's synopsis and options for `swaptool help STEP` and `STEP --help` */
	const struct option *options; /* what run() gives getopt_long; ends with an all-zero entry */
	int (*run)(struct ctx *ctx, int argc, char **argv, struct record *rec);
	void (*render)(const struct ctx *ctx, json_object *record); /* NULL: checks table + verdict */
	unsigned flags;
};

/* Shared option handling for steps: call after getopt_long returned '?' or ':'. */
int step_bad_option(struct ctx *ctx, int argc, char **argv);
/* --lba-size and friends: a power of two from 512 to 65536, else a usage error (exit 2). */
int step_parse_lba_size(struct ctx *ctx, const char *opt, const char *v, uint32_t *out);
struct name_map;
/* restore and verify: --map-user OLD=NEW into map, and --root DIR, which must be a directory.
 * Return 0 or a usage error (exit 2). */
int step_parse_map_user(struct ctx *ctx, const char *v, struct name_map *map);
int step_check_root(struct ctx *ctx, const char *root);

struct disk;
/* --target SPEC: a device or image (opened read-only into *tgt, its size and LBA size read) or a
 * size (*tgt untouched). *lba starts as lba_size. Bad values exit 2, unreadable disks 3; a target
 * too small to hold a GPT is a usage error. Returns 0 or the ctx_error exit code. */
int step_target(struct ctx *ctx, const char *spec, uint32_t lba_size, struct disk *tgt, uint64_t *bytes,
		uint32_t *lba);
struct layout;
struct plan;
/* plan and clone (steps/plan.c): SOURCE and --target opened with the steps' exit codes, then plan_for
 * (src/plan.h) with `opts` (enum plan_opts): the source's layout against the target and the plan built
 * from it. Returns 0 or the ctx_error exit code. */
int step_plan_for(struct ctx *ctx, const char *source, uint32_t image_lba, const char *tgt_spec,
		  uint32_t tgt_lba_size, const char *home, unsigned opts, struct disk *src, struct layout *l,
		  struct plan *p);
/* The options plan and preflight share (STEP_OPT_TARGET, STEP_OPT_TARGET_LBA_SIZE, STEP_OPT_LBA_SIZE,
 * STEP_OPT_HOME), parsed in one place. */
struct step_target_opts {
	const char *spec;        /* --target SPEC; NULL until given */
	uint32_t lba_size;       /* --target-lba-size N: of a bare --target count */
	uint32_t image_lba_size; /* --lba-size N: of an image-file SOURCE */
	const char *home;        /* --home DIR; NULL: not given */
};
#define STEP_TARGET_OPTS_INIT { .lba_size = 512, .image_lba_size = 512 }
/* Option `c` (what getopt_long returned) with its value `v` into *t: 0 when it is one of those,
 * -1 when it is none of them (the step's own or a bad one), else the exit code of a bad value. */
int step_target_option(struct ctx *ctx, int c, const char *v, struct step_target_opts *t);
/* After the operands: 0 when --target was given, else the usage error (exit 2). */
int step_target_given(struct ctx *ctx, const struct step_target_opts *t);
/* SOURCE: disk_open with the exit codes every step uses (missing, directory, partition: 2; else 3). */
int step_open_source(struct ctx *ctx, const char *path, uint32_t image_lba_size, struct disk *src);
/* Option entries more than one step takes, with the values their parsers switch on. */
#define STEP_OPT_TARGET { "target", required_argument, NULL, 't' }
#define STEP_OPT_TARGET_LBA_SIZE { "target-lba-size", required_argument, NULL, 'T' }
#define STEP_OPT_LBA_SIZE { "lba-size", required_argument, NULL, 'I' }
#define STEP_OPT_HOME { "home", required_argument, NULL, 'H' }
#define STEP_OPT_ROOT { "root", required_argument, NULL, 'r' }
#define STEP_OPT_MAP_USER { "map-user", required_argument, NULL, 'm' }
/* Their usage lines, where they mean the same in every step that takes them. */
#define STEP_USAGE_TARGET \
	"  --target SPEC           bytes (2000398934016), sectors (3907029168s), 2TB, or a device/image\n"
#define STEP_USAGE_LBA_SIZE "  --lba-size N            LBA size of an image-file SOURCE (default 512)\n"
#define STEP_USAGE_MAP_USER "  --map-user OLD=NEW  owner (user or group) OLD in the backup is NEW here (repeatable)\n"

/* Every step, in the order an operator runs them (steps/table.c); NULL-terminated. */
extern const struct step *const step_table[];
const struct step *step_find(const char *name);

extern const struct step step_preflight, step_backup, step_plan, step_clone, step_restore, step_verify,
	step_accept, step_report, step_verify_report, step_status, step_compare, step_metrics, step_fleet,
	step_config;

/* Each step's functions, in the order of step_table. */
int step_preflight_run(struct ctx *ctx, int argc, char **argv, struct record *rec);
void step_preflight_render(const struct ctx *ctx, json_object *record);

/* preflight's drive part (steps/preflight_drive.c): identity, health and class of the source (and of
 * the target when known) into the preflight record: rec->root gets "source_identity" (and
 * "target_identity"), checks "drive-class" and "health" (skip when the identity is unknown; never an
 * error). Returns 0, or a ctx_error() code: 3 for bad --from-dumps files, 2 for a --target-model that
 * disagrees with --target. Sets "model", "firmware", "serial" of src_json when it learns them. */
struct disk;
int preflight_drive(struct ctx *ctx, struct record *rec, json_object *src_json, const struct disk *src,
		    const char *from_dumps, const struct disk *target_disk, const char *target_model,
		    uint64_t target_lba_count);
void preflight_drive_render(const struct ctx *ctx, json_object *record); /* identity/health table */
int step_accept_run(struct ctx *ctx, int argc, char **argv, struct record *rec);
void step_accept_render(const struct ctx *ctx, json_object *record);
int step_report_run(struct ctx *ctx, int argc, char **argv, struct record *rec);
void step_report_render(const struct ctx *ctx, json_object *record);
int step_verify_report_run(struct ctx *ctx, int argc, char **argv, struct record *rec);
void step_verify_report_render(const struct ctx *ctx, json_object *record);
int step_status_run(struct ctx *ctx, int argc, char **argv, struct record *rec);
void step_status_render(const struct ctx *ctx, json_object *record);
int step_compare_run(struct ctx *ctx, int argc, char **argv, struct record *rec);
void step_compare_render(const struct ctx *ctx, json_object *record);
int step_backup_run(struct ctx *ctx, int argc, char **argv, struct record *rec);
void step_backup_render(const struct ctx *ctx, json_object *record);
int step_restore_run(struct ctx *ctx, int argc, char **argv, struct record *rec);
void step_restore_render(const struct ctx *ctx, json_object *record);
int step_verify_run(struct ctx *ctx, int argc, char **argv, struct record *rec);
int step_plan_run(struct ctx *ctx, int argc, char **argv, struct record *rec);
void step_plan_render(const struct ctx *ctx, json_object *record);
int step_clone_run(struct ctx *ctx, int argc, char **argv, struct record *rec);
void step_clone_render(const struct ctx *ctx, json_object *record);
int step_metrics_run(struct ctx *ctx, int argc, char **argv, struct record *rec);
void step_metrics_render(const struct ctx *ctx, json_object *record);
int step_fleet_run(struct ctx *ctx, int argc, char **argv, struct record *rec);
void step_fleet_render(const struct ctx *ctx, json_object *record);
int step_config_run(struct ctx *ctx, int argc, char **argv, struct record *rec);
void step_config_render(const struct ctx *ctx, json_object *record);
