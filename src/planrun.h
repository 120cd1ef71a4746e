/* SPDX-License-Identifier: MIT */
/* Executing path 2 (src/planrun.c): the one executor for `clone` and `plan --rehearse`, the target
 * read back against the plan, and the rehearsal on scratch copies. */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

#include "fscopy.h"
#include "plan.h"

struct plan_env {
	const char *src;             /* source device or image */
	const char *tgt;             /* target device or image (exists, exact size) */
	const char *scratch;         /* where the shrink mounts its composite file (NULL: $TMPDIR or /tmp) */
	bool rehearsal;              /* scratch copies: skip the serial checks */
	struct copy_opts copy;       /* progress and stop flag */
	/* Called after each action with its outcome; detail is one line of evidence. */
	void (*done)(void *ud, size_t index, const struct plan_action *a, int r, double seconds, const char *detail);
	void *ud;
	/* Called when an action starts (for a progress line). */
	void (*start)(void *ud, size_t index, const struct plan_action *a);
	char *why;                   /* set on failure */
	int refusal;                 /* 1 when the failure is a refusal before anything was written */
	bool target_touched;         /* something was written to the target */
};
int plan_apply(const struct plan *p, struct plan_env *env);
/* 1 when writing `tgt` could touch `src` (the same file or disk by identity, a partition or
 * holder of it, a loop device over it: ident.h), 0 when not or when one cannot be opened,
 * negative errno when it cannot be told; *why says how. plan_apply checks again on the
 * descriptors it writes; clone asks first, before any other finding. */
int plan_overlaps(const char *src, const char *tgt, char **why);

/* The target read back against the plan: table valid with the backup header at the last LBA,
 * sgdisk -v, partitions and GUIDs, filesystem UUIDs and block counts. Appends {id, status,
 * summary} objects to `checks` (status "skip" for one that cannot be made: sgdisk not installed);
 * *ok false when one failed. */
int plan_verify_target(const struct plan *p, const char *tgt, json_object *checks, bool *ok);

/* --rehearse: metadata-only sparse copies of the source and a sparse target of the exact size
 * under `scratch`, plan_apply on them, then independent checks; copy->phase, when set, hears each
 * part of it start, copy->progress how far it is. Results go into `checks` (an
 * array of {id, status, summary, seconds}); returns 0 when every check passed, 1 when one
 * failed, negative errno when it could not run (with *why). */
struct rehearse_result {
	json_object *actions;        /* [{n, action, partition, seconds, status, detail}] */
	json_object *checks;         /* [{id, status, summary}] */
	uint64_t scratch_peak_bytes; /* real disk the scratch files used, at their largest */
	uint64_t scratch_free_bytes; /* room that was there */
	double seconds;
	bool ok;
	bool not_run;                /* a check said why it did not run (a feature the copy does not know) */
};
int plan_rehearse(const struct plan *p, const char *scratch, struct copy_opts *copy, struct rehearse_result *res,
		  char **why);
