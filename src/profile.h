/* SPDX-License-Identifier: MIT */
/* The site profile: backup set, re-fetchable paths, acceptance runs and gates, site commands,
 * extra drive-catalogue entries. Built-in defaults are the incident's values; --profile FILE
 * (INI, see swaptool-profile(5)) overrides them; every value is checked when the file loads. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include "predict.h" /* struct predict_workload: [workload] */

#include "util.h" /* struct strlist */

/* Limits a profile value is checked against when the profile loads (swaptool-profile(5)). */
#define PROFILE_MAX_BYTES (1 << 20)
#define PROFILE_MAX_SECONDS 86400u       /* a run's duration, the ramp: one day */
#define PROFILE_MAX_INFLIGHT 4096u
#define PROFILE_MAX_GATE_TIMEOUT 604800u /* an engine gate: one week */
/* [workload]: past these a value is a typo (the load also checks that a chunk's bytes fit in 64 bits) */
#define PROFILE_MAX_WORKLOAD_READS 1000000000000ULL /* measured_reads: 10^12 (the incident: 6.49 M) */
#define PROFILE_MAX_WORKLOAD_TOKENS 10000000u       /* a prompt, a measured prefill: 10 M tokens */
#define PROFILE_MAX_CHUNK_TOKENS 1048576u           /* a prefill chunk: 1 Mi tokens (the incident: 4096) */

/* One acceptance run and its gate thresholds (0 = no threshold of that kind). */
struct accept_run {
	char *name;            /* "rand16", "rand64", "seq" */
	bool sequential;       /* 1 MiB sequential reads instead of 4 KiB random */
	unsigned inflight;     /* reads in flight */
	uint64_t duration_s;   /* measured seconds after the ramp (random runs) */
	uint64_t min_iops;
	uint64_t max_p50_us;
	uint64_t max_p99_us;
	uint64_t max_p99_9_us;
	uint64_t min_mb_s;     /* MB/s, 10^6 bytes per second */
};

/* An external gate run with sh -c (the engine tests of docs/incident.md). */
struct engine_gate {
	char *name;
	char *command;
	uint64_t timeout_s;
};

/* A user-added drive-catalogue entry ([drive NAME] sections). */
struct profile_drive {
	char *name;       /* section name: display name */
	char *match;      /* case-insensitive substring of the model string */
	char *controller;
	char *dram;       /* "none", "DRAM", "1 GB DDR4"... */
	uint64_t hmb_mb;  /* 0 when none */
	char *nand;
	char *verdict;    /* avoid | measure | suited | reference */
	char *reason;
	unsigned line;    /* where it was defined, for messages */
};

/* ---- [limits]: what backup, restore and verify accept (swaptool-profile(5)) ---- */
struct arc_limits {
	uint64_t tarball_bytes;  /* a tarball file as stored (compressed) */
	uint64_t expanded_bytes; /* its tar stream once decompressed: caps a gzip bomb while streaming */
	uint64_t data_bytes;     /* file data of all entries together */
	uint64_t entry_bytes;    /* file data of one entry */
	uint64_t entries;        /* manifest entries */
	uint64_t state_records;  /* step records carried in swaptool-state/ */
};
/* The built-in limits (also what a NULL profile means). */
void arc_limits_defaults(struct arc_limits *l);

struct profile {
	char *source;                 /* "built-in" or the file's path */
	/* [backup] */
	struct strlist backup_paths;  /* "~/.config/flare/", "/etc/fstab"... ('~' = node user's home) */
	struct strlist required;      /* files that must be in the backup: "~/.config/flare/orbit/controller.key" */
	struct strlist fstab_files;   /* files whose identifiers restore checks: "/etc/fstab" */
	/* [refetch] */
	struct strlist refetch_paths; /* "~/flare-pkgs", "~/.cache/flare" */
	uint64_t refetch_minutes;     /* the incident's ~50 min download */
	/* [accept] */
	uint64_t working_set;         /* bytes: 98 GiB */
	uint64_t ramp_s;
	uint64_t seq_bytes;
	uint64_t busy_threshold_iops; /* the device's own I/O rate that means "may be serving" */
	uint64_t sustain_s;           /* accept --sustain's default: 0 = off */
	uint64_t sustain_interval_s;  /* the sustained load's figures per interval: 60 */
	char *target_glob;            /* what `accept` with no argument measures: the Engram shard ('~' = node user's home) */
	struct accept_run *runs;
	size_t nruns;
	struct engine_gate *engine;
	size_t nengine;
	/* [commands]: site-specific commands printed by `plan` */
	char *cmd_install_os;
	char *cmd_agent_install;
	char *cmd_runtime_install;
	char *cmd_refetch;
	/* [drive NAME] */
	struct profile_drive *drives;
	size_t ndrives;
	/* [limits] */
	struct arc_limits limits;
	/* [workload]: the engine's reads that accept predicts from (docs/incident.md) */
	struct predict_workload workload;
};

/* Load the built-in profile, then `path` over it when not NULL. On a bad file returns
 * -EINVAL (-errno when unreadable) and sets *why (when not NULL; the caller frees) to
 * "FILE:LINE: unknown key 'x' in [section]". */
int profile_load(const char *path, struct profile **out, char **why);
void profile_free(struct profile *p);
/* Expand a leading "~/" against `home`; other paths are returned as copies. */
char *profile_expand(const char *path, const char *home);

/* Which profile is in force, in this order: `opt` (--profile FILE), else $SWAPTOOL_PROFILE, else the
 * site profile SYSCONFDIR/swaptool/profile.ini when it exists ($SWAPTOOL_SYSCONFDIR replaces the
 * build's sysconfdir), else none (*path NULL: the built-in profile). *from names the source:
 * "--profile", "SWAPTOOL_PROFILE", "site" or "built-in". The caller frees *path. */
void profile_locate(const char *opt, char **path, const char **from);

/* The values of a loaded profile as one JSON object (swaptool config). */
struct json_object;
struct json_object *profile_to_json(const struct profile *p);
