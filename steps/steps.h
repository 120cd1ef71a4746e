/* SPDX-License-Identifier: MIT */
/* The step interface.
 *
 * How to add a step:
 *   1. Write steps/NAME.c. At its top: the option table, `static const struct step_option
 *      NAME_options[]` at file scope, one entry per option with its getopt fields, its value's name
 *      and its help line (the shared STEP_OPT_* entries below rather than copies), ended by
 *      STEP_OPTIONS_END; the operands' lines when there are any (struct step_operand); and
 *      `const struct step step_NAME` that holds them with the name, the one-line summary, the
 *      synopsis written by hand ("swaptool NAME SOURCE [--opt VALUE]\n"), the notes under the
 *      options if any ("exit: ..."), run, render and flags. The usage's options block is printed
 *      from the table (step_usage_print), so it cannot leave an option out. Then `int
 *      step_NAME_run(struct ctx *, int argc, char **argv, struct record *)` and, when the generic
 *      checks table is not enough, `void step_NAME_render(...)`. run() parses its options with
 *      `getopt_long(argc, argv, "", step_getopt(NAME_options), NULL)`, no short options (argv[0] is
 *      the step name; the global options, --help among them, are already taken out by cli/main.c,
 *      which answers `swaptool STEP --help` with the usage), gathers data into the record and
 *      never prints. It returns the exit code: record_exit_code(rec) when it produced a
 *      record, or ctx_error(ctx, code, ...) when it could not.
 *   2. Declare step_NAME and the functions here, and add &step_NAME to the table in steps/table.c.
 *   3. Add the file to step_files in meson.build; write docs/swaptool-NAME.1 with every option in its
 *      SYNOPSIS and OPTIONS, add it to install_man and to the list in docs/swaptool.1; add a CLI test
 *      (tests/cli/NN-NAME.sh) and a README row. tests/unit/test-steps.c fails while an entry of the
 *      table or the synopsis is wrong (a value name for a flag, an option the step does not take),
 *      and tests/cli/08-step-options.sh while the table and the man page disagree.
 */
#pragma once

#include <getopt.h>
#include <stdio.h>

#include "ctx.h"
#include "out.h"
#include "profile.h"
#include "record.h"
#include "util.h"

enum step_flags {
	STEP_SAVES_RECORD = 1 << 0, /* main writes the record to the state directory */
	STEP_READS_ONLY = 1 << 1,   /* changes nothing: its result is shown even when its record cannot be saved */
	STEP_READS_STATE = 1 << 2,  /* its result is the records in the state directory (status, report): a
				     * --state that is not a directory is refused before the lock would make it */
};

/* One option of a step, declared once: getopt_long parses it and the usage lists it from here
 * (git's parse-options style), so the two cannot disagree. */
struct step_option {
	struct option opt; /* for getopt_long: name, has_arg, flag NULL, the value run() switches on */
	const char *arg;   /* the value's name in the usage ("SIZE", "fresh|clone"); NULL for a flag */
	const char *help;  /* its line in the usage, a '\n' before each continuation line; NULL: no line of
			    * its own, another option's line or the synopsis names it (--no-seq, with --seq-bytes) */
};
/* The all-zero entry that ends a table of step_option. */
#define STEP_OPTIONS_END { { NULL, 0, NULL, 0 }, NULL, NULL }
/* An operand of a step ("SOURCE"): its line in the usage, above the options. */
struct step_operand {
	const char *name;
	const char *help;  /* as step_option's */
};

struct step {
	const char *name;
	const char *summary;  /* one line for `swaptool --help` */
	const char *synopsis; /* the usage's first lines, "swaptool NAME SOURCE [--opt VALUE]...\n", by hand */
	const struct step_operand *operands; /* NULL, or lines under the synopsis; ends with an all-zero entry */
	const struct step_option *options;   /* ends with an all-zero entry */
	const char *notes;    /* NULL, or lines under the options ("exit: ...\n") */
	int (*run)(struct ctx *ctx, int argc, char **argv, struct record *rec);
	void (*render)(const struct ctx *ctx, json_object *record); /* NULL: checks table + verdict */
	unsigned flags;
};

/* The getopt_long table of a step's options: `getopt_long(argc, argv, "", step_getopt(t), NULL)`.
 * It is copied into one static buffer, refilled by every call (swaptool runs one step, and getopt
 * is process-wide anyway); at most STEP_OPTIONS_MAX options. */
#define STEP_OPTIONS_MAX 32
const struct option *step_getopt(const struct step_option *t);
/* `swaptool help STEP`'s text after "usage: ": the synopsis, then the operands and options, each
 * with its help in one column (two spaces after the widest), then the notes. */
void step_usage_print(FILE *f, const struct step *s);
/* The options block alone (operands NULL: none), in that layout. */
void step_options_print(FILE *f, const struct step_operand *operands, const struct step_option *t);

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
/* --home DIR of any step: 0 when DIR is absolute, else the usage error (exit 2) saying so. A relative
 * one got the message for a missing home (backup) or resolved against the current directory. */
int step_home_option(struct ctx *ctx, const char *home);
/* Option `c` (what getopt_long returned) with its value `v` into *t: 0 when it is one of those,
 * -1 when it is none of them (the step's own or a bad one), else the exit code of a bad value. */
int step_target_option(struct ctx *ctx, int c, const char *v, struct step_target_opts *t);
/* After the operands: 0 when --target was given, else the usage error (exit 2). */
int step_target_given(struct ctx *ctx, const struct step_target_opts *t);
/* SOURCE: disk_open with the exit codes every step uses (directory, partition: 2; missing and the rest: 3). */
int step_open_source(struct ctx *ctx, const char *path, uint32_t image_lba_size, struct disk *src);
/* A whole disk a USB bridge can hold (a block device, not NVMe): its bridge and the drive read through
 * it (src/usbnvme.h) into *t; nothing for an image or an NVMe drive. Never fails: *t says what happened. */
struct usbnvme_through;
void step_read_through(const struct disk *d, struct usbnvme_through *t);
/* The line plan and clone show of how their drives are attached, from the plan's source and target
 * ({transport, bridge}, as plan_json writes them): "attached: source nvme; target usb behind USB bridge
 * 0bda:9210 Realtek RTL9210B-CG, 10 Gb/s, uas". Nothing when the record says neither. */
void step_attached_line(const struct ctx *ctx, json_object *src, json_object *tgt);
/* Option entries more than one step takes, with the values their parsers switch on: whole where
 * they mean the same in every step that takes them, with the step's help text where they do not. */
#define STEP_OPT_TARGET                                                                              \
	{ { "target", required_argument, NULL, 't' }, "SPEC",                                        \
	  "bytes (2000398934016), sectors (3907029168s), 2TB, or a device/image" }
#define STEP_OPT_TARGET_LBA_SIZE(help) { { "target-lba-size", required_argument, NULL, 'T' }, "N", help }
#define STEP_OPT_LBA_SIZE \
	{ { "lba-size", required_argument, NULL, 'I' }, "N", "LBA size of an image-file SOURCE (default 512)" }
#define STEP_OPT_HOME(help) { { "home", required_argument, NULL, 'H' }, "DIR", help }
#define STEP_OPT_ROOT(help) { { "root", required_argument, NULL, 'r' }, "DIR", help }
#define STEP_OPT_MAP_USER                                                                            \
	{ { "map-user", required_argument, NULL, 'm' }, "OLD=NEW",                                   \
	  "owner (user or group) OLD in the backup is NEW here (repeatable)" }

/* Every step, in the order an operator runs them (steps/table.c); NULL-terminated. */
extern const struct step *const step_table[];
const struct step *step_find(const char *name);
/* The step whose name is at most two edits from name (a typo), for "did you mean"; else NULL. */
const struct step *step_nearest(const char *name);

extern const struct step step_preflight, step_backup, step_plan, step_rescue, step_clone, step_import,
	step_restore, step_verify, step_accept, step_report, step_verify_report, step_status, step_compare,
	step_metrics, step_fleet, step_config;

/* Each step's functions, in the order of step_table. */
int step_preflight_run(struct ctx *ctx, int argc, char **argv, struct record *rec);
void step_preflight_render(const struct ctx *ctx, json_object *record);

/* preflight's drive part (steps/preflight_drive.c): identity, health and class of the source (and of
 * the target when known) into the preflight record: rec->root gets "source_identity" (and
 * "target_identity"), checks "drive-class", "health" (skip when the identity is unknown; never an
 * error) and "usb-bridge" when a drive is on USB. Returns 0, or a ctx_error() code: 3 for bad
 * --from-dumps files, 2 for a --target-model that disagrees with --target. Sets "model", "firmware",
 * "serial" of src_json when it learns them. A disk on USB comes with what its bridge let through
 * (src_through, tgt_through: src/usbnvme.h, read before the layout so that it knows the target's LBA
 * size in the slot); the drive read through it is taken from there. */
struct disk;
struct usbnvme_through;
int preflight_drive(struct ctx *ctx, struct record *rec, json_object *src_json, const struct disk *src,
		    const char *from_dumps, const struct disk *target_disk, const char *target_model,
		    uint64_t target_lba_count, struct usbnvme_through *src_through, struct usbnvme_through *tgt_through);
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
int step_rescue_run(struct ctx *ctx, int argc, char **argv, struct record *rec);
void step_rescue_render(const struct ctx *ctx, json_object *record);
int step_clone_run(struct ctx *ctx, int argc, char **argv, struct record *rec);
void step_clone_render(const struct ctx *ctx, json_object *record);
int step_import_run(struct ctx *ctx, int argc, char **argv, struct record *rec);
void step_import_render(const struct ctx *ctx, json_object *record);
int step_metrics_run(struct ctx *ctx, int argc, char **argv, struct record *rec);
void step_metrics_render(const struct ctx *ctx, json_object *record);
int step_fleet_run(struct ctx *ctx, int argc, char **argv, struct record *rec);
void step_fleet_render(const struct ctx *ctx, json_object *record);
int step_config_run(struct ctx *ctx, int argc, char **argv, struct record *rec);
void step_config_render(const struct ctx *ctx, json_object *record);
