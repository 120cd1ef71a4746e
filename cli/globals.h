/* SPDX-License-Identifier: MIT */
/* The global options, declared once: cli/main.c parses argv from this table and prints the usage
 * line and the "global options:" texts from it; tests/unit/test-steps.c lists it for
 * tests/cli/08-step-options.sh, which holds it against the steps' help and docs/swaptool.1. */
#pragma once

#include <stddef.h>
#include <stdio.h>

enum global_id { G_JSON, G_STATE, G_PROFILE, G_TRUST_UNSAFE_PROFILE, G_NO_RECORD, G_QUIET, G_COLOR, G_NO_COLOR, G_HELP, G_VERSION, G_VERBOSE };

enum global_arg {
	GLOBAL_FLAG,     /* --json */
	GLOBAL_VALUE,    /* --state DIR or --state=DIR */
	GLOBAL_OPTIONAL, /* --color or --color=WHEN */
};

/* Where the usage texts show an option (the table lists every one in `swaptool --help`). */
#define GLOBAL_IN_USAGE (1u << 0)  /* in the usage line of `swaptool --help` */
#define GLOBAL_IN_STEP (1u << 1)   /* in the "global options:" line of `swaptool help STEP` */
#define GLOBAL_NESTED (1u << 2)    /* in the usage line, inside the previous option's brackets */

struct global_option {
	enum global_id id;
	const char *name; /* without "--" */
	char short_name;  /* 0: none */
	enum global_arg arg;
	const char *metavar; /* the value's name: "DIR" */
	const char *choices; /* the usage line's words for the value instead ("auto|always|never"), or NULL */
	unsigned shown;
	const char *help; /* one line for `swaptool --help` */
};
extern const struct global_option global_options[];
extern const size_t global_options_n;

/* The global option argument `a` names ("--json", "-j", "--state=DIR", "--color=never"), with
 * *value pointing after its '=' (NULL without one); NULL when `a` is none of them. */
const struct global_option *global_match(const char *a, const char **value);

/* "usage: swaptool [-j|--json] ... STEP [ARGS]\n", wrapped as a terminal would want it. */
void globals_usage_line(FILE *f);
/* "global options: -j|--json --state DIR ...\n" for a step's help. */
void globals_step_line(FILE *f);
/* The "global options:" block of `swaptool --help`: each option with its help line. */
void globals_help(FILE *f);
