/* SPDX-License-Identifier: MIT */
/* The invocation context every step gets: output mode, state directory, profile, error slot. */
#pragma once

#include <stdbool.h>

struct profile;

/* Exit codes (docs/design.md). */
enum {
	EXIT_PASS = 0,        /* pass, warnings allowed */
	EXIT_FINDING = 1,     /* a check or gate failed: the finding is the result */
	EXIT_USAGE = 2,       /* bad option or value */
	EXIT_FAILED = 3,      /* could not do the job: unreadable, corrupt, hostile, refused for safety */
	EXIT_INTERRUPTED = 130,
};

struct ctx {
	const char *step;        /* name of the step being run */
	bool json;               /* one JSON document on stdout */
	bool quiet;              /* no progress lines, verdict only */
	bool color;              /* ANSI colours on stdout (TTY, no NO_COLOR, no --no-color) */
	bool progress;           /* stderr is a TTY and not quiet */
	bool no_record;          /* --no-record: save no record in the state directory */
	char *state_dir;         /* where step records live */
	bool state_given;        /* state_dir came from --state, not the default */
	const char *profile_path;/* NULL: the built-in profile */
	const char *profile_from;/* where profile_path came from: "--profile", "SWAPTOOL_PROFILE", ... */
	struct profile *profile;
	bool trust_unsafe_profile; /* --trust-unsafe-profile: root uses a profile another user can change */
	char *profile_distrust;  /* why the profile is not trusted (src/trust.h); NULL: trusted or built-in */
	int err_code;            /* set by ctx_error; 0 when the step produced a record */
	char *err_msg;
};

/* Record an error for the renderer and return its exit code: `return ctx_error(ctx, EXIT_USAGE, ...)`. */
int ctx_error(struct ctx *ctx, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
