/* SPDX-License-Identifier: MIT */
/* The accept engine: the target, the harness runs judged against the incident's gates, the sweep and
 * the engine gates, written into the step's record (steps/accept.c parses options and renders). */
#pragma once

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include <json-c/json.h>

#include "io.h"
#include "profile.h"
#include "record.h"

/* The smallest working set: one 4 KiB read. */
#define ACCEPT_MIN_WS 4096
/* --inflight depths, --sweep sizes and --gate commands each take at most this many. */
#define ACCEPT_MAX_LIST 16
/* --sustain and [accept] sustain: at most a day, as a run's --duration. */
#define ACCEPT_MAX_SUSTAIN_S 86400u
/* sustain-drift (swaptool-accept(1)), first interval to last. IOPS: the engine's chunk time is its
 * reads over the IOPS, so a drop to 0.5 doubles it and eats the whole 2x margin under which the
 * engine-prediction check warns (fail); a drop past 0.8 is more than the 20 % range a steady run may
 * have (io_stability, warn). p99.9: 2x takes a drive that just meets the rand64 gate (2 ms) to
 * 4 ms, the XG7000's tail at 16 in flight (4.6 ms, docs/incident.md): warn; 4x to 8 ms, inside
 * the 4.6-18 ms tail the lane died with: fail. */
#define ACCEPT_DRIFT_IOPS_WARN 0.8
#define ACCEPT_DRIFT_IOPS_FAIL 0.5
#define ACCEPT_DRIFT_P99_9_WARN 2.0
#define ACCEPT_DRIFT_P99_9_FAIL 4.0

/* What the operator asked for (steps/accept.c parses it; the profile gives the defaults). */
struct accept_opts {
	uint64_t working_set, ramp_s, seq_bytes, seed, duration_s;
	uint64_t sustain_s, sustain_interval_s; /* --sustain (0: off) and [accept] sustain_interval */
	bool have_working_set, have_duration, have_ramp, have_seed, have_sustain, no_seq, force;
	unsigned threads;
	unsigned inflight[ACCEPT_MAX_LIST];
	size_t ninflight;
	uint64_t sweep[ACCEPT_MAX_LIST];
	size_t nsweep;
	struct engine_gate gates[ACCEPT_MAX_LIST];
	char gate_name[ACCEPT_MAX_LIST][64]; /* --gate names: no heap, so early usage errors leak nothing */
	size_t ngates;
};

/* One planned harness run. */
struct accept_plan_run {
	char name[32];
	bool sequential;
	unsigned inflight;
	uint64_t duration_s;
	const struct accept_run *thr; /* gate thresholds; NULL: measured only */
};

/* A harness run's progress as the step shows it: run k of n (the sweep included). */
struct accept_run_progress {
	const char *run;
	const char *label;  /* "working set 2 GiB" in a sweep, else NULL */
	unsigned k, n;
	uint64_t start_ns;  /* the run's start (mono_ns), for its time left */
	uint64_t seq_bytes; /* what a sequential run reads: its progress in bytes */
	const struct io_progress *io;
};

/* The sustained load's progress: interval k of n, the seconds of the whole hold. */
struct accept_sustain_progress {
	unsigned inflight;
	size_t k, n;
	uint64_t start_ns;       /* the hold's start (mono_ns), for its time left */
	uint64_t done_ns;        /* the intervals before this one */
	uint64_t total_s;
	const struct io_progress *io; /* this interval's */
};

/* What the step hears while accept runs; any may be NULL. */
struct accept_hooks {
	/* the runs about to start: how many, their timed seconds, and what else is untimed */
	void (*planned)(void *ud, unsigned nruns, uint64_t timed_s, bool seq, bool engine);
	/* the device's own I/O rate is sampled for 1 s (the busy check) */
	void (*sampling)(void *ud, const char *dev);
	void (*run)(void *ud, const struct accept_run_progress *p);
	void (*sustain)(void *ud, const struct accept_sustain_progress *p);
	/* an engine gate started (ticking false), then about every 200 ms while it runs */
	void (*gate)(void *ud, const char *name, bool ticking, uint64_t elapsed_ns);
	/* the progress line of the sampling, a run or a gate is over */
	void (*end)(void *ud);
	void *ud;
};

/* One accept, phase by phase. The step fills the inputs (accept_init sets the profile's defaults),
 * then calls the phases in order while each returns 0. A phase that fails returns a negative
 * errno with why set; usage is true when the failure is the operator's arguments. */
struct accept {
	/* inputs */
	struct record *rec;
	const struct profile *pf;
	struct accept_opts o;
	const char *home;             /* --home: the node user's home for '~' in the profile's glob */
	volatile sig_atomic_t *stop;  /* set on SIGINT, SIGTERM, SIGHUP: stop submitting, wait for in-flight reads */
	struct accept_hooks hooks;
	/* the target and why it was chosen ("argument", "profile-glob", "root-disk") */
	char *path;
	const char *chosen_by;
	char *reason;
	/* the plan, the opened target, the record's arrays, filled phase by phase */
	struct accept_plan_run plan[24];
	size_t nplan;
	struct io_target t;
	uint64_t ws, offset;
	json_object *runs, *gates;
	bool complete, harness_pass;
	size_t nengine;
	/* the failure */
	char *why;
	bool usage;
};

void accept_init(struct accept *a, const struct profile *pf, struct record *rec);
void accept_free(struct accept *a);
/* The target given on the command line. */
void accept_set_target(struct accept *a, const char *path);

/* No target given: the profile's glob, else the whole disk that holds '/'. -ENOENT when none. */
int accept_choose_target(struct accept *a);
/* The runs: the profile's random runs (or one per --inflight depth), then the sequential one. */
void accept_plan_runs(struct accept *a);
/* Open and size the target, describe it in the record, look for holes, refuse a busy node
 * (-EBUSY). Adds the record's runs and gates arrays when it returns 0. */
int accept_check_input(struct accept *a);
/* The planned runs in order into a->runs; stops after an interrupted one. -ENODEV when the drive
 * vanished during a run. */
int accept_run_harness(struct accept *a);
/* Every run that ran against its gates, in order. */
void accept_judge_harness(struct accept *a);
/* --sweep: run and judged. */
int accept_run_sweep(struct accept *a);
/* --sustain: the deepest random run held over the working set for o.sustain_s in intervals of
 * o.sustain_interval_s, then the random runs again, into the record's "sustain" and judged
 * (sustain-drift, sustain-prediction). -ENODEV when the drive vanished. */
int accept_run_sustain(struct accept *a);
/* The engine gates of the profile and --gate, run and judged. */
void accept_run_engine_gates(struct accept *a);
/* The record's conclusion: complete, harness_pass, the verdict (record_finish). a->complete false
 * afterwards means interrupted. */
void accept_finish(struct accept *a);

/* Pure parts (tests/unit/test-accept.c). */
/* "16,64": reads in flight from 1 to 4096. -EINVAL when malformed, empty or over max. */
int accept_parse_inflight(const char *arg, unsigned *out, size_t max, size_t *n);
/* "600", "90s", "10m", "1h": whole seconds from 1 to ACCEPT_MAX_SUSTAIN_S. -EINVAL otherwise. */
int accept_parse_duration(const char *arg, uint64_t *secs);
/* sustain-drift's status from the first interval to the last: IOPS last/first and p99.9
 * last/first against ACCEPT_DRIFT_*; a ratio that is NaN (no figure) is not judged. */
enum status accept_drift_status(double iops_ratio, double p99_9_ratio);
/* "2G,20G,98G": working sets of at least ACCEPT_MIN_WS. -EINVAL when malformed, empty or over max. */
int accept_parse_sweep(const char *arg, uint64_t *out, size_t max, size_t *n);
/* "NAME=COMMAND" into o->gates (the command points into arg). -EINVAL when malformed, the name
 * over 63 characters or ACCEPT_MAX_LIST gates already. */
int accept_add_gate(struct accept_opts *o, const char *arg, uint64_t timeout_s);
/* The working set for a target of `size` bytes, 4 KiB-aligned: one accept found on its own
 * (found) is clamped to the whole target when the profile's is larger (*clamped), one asked for
 * (o->have_working_set) or a target given never. -E2BIG when it does not fit. */
int accept_fit_working_set(const struct accept_opts *o, bool found, uint64_t size, uint64_t *ws, bool *clamped);
/* One run object (as the harness records it) against its gates into a->rec and a->gates: read
 * errors, no data, the thresholds, stability. False when the run was interrupted. */
bool accept_judge_run(struct accept *a, const struct accept_plan_run *p, json_object *run);
