/* SPDX-License-Identifier: MIT */
/* The io_uring acceptance harness: O_DIRECT reads over a working set, timed into histograms. */
#pragma once

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <json-c/json.h>

#include "hist.h"
#include "profile.h"

/* What is read: a regular file (the Engram shard of docs/incident.md) or a block device. */
struct io_target {
	char *path;
	int fd;                /* O_RDONLY | O_DIRECT: nothing is ever written */
	bool block_device;
	uint64_t size;
	uint32_t lba_size;     /* the device's logical block size (4096 for files) */
	unsigned major, minor; /* the block device under it (diskstats); 0:0 when none (FUSE) */
	char disk[64];         /* whole-disk name in /sys/block ("nvme0n1", "vda"); "" when none */
	char dev[64];          /* the node diskstats counts ("vda1" for a file on a partition) */
	char fs_type[16];      /* "ext4", "fuse", "xfs", ... for files; "" for devices */
};

/*
 * Open a target read-only with O_DIRECT. -ENOENT: missing; -EOPNOTSUPP: no O_DIRECT (tmpfs,
 * ramfs: the reads would come from memory; or a filesystem that refuses O_DIRECT); -EINVAL:
 * neither a regular file nor a block device. *why (when not NULL; the caller frees) says why.
 */
int io_target_open(const char *path, struct io_target *t, char **why);
void io_target_close(struct io_target *t);

/* What `accept` measures when given no target. io_find_shard: the largest regular file that
 * matches `pattern` (glob(3), already expanded against the home); *nmatch counts the matches.
 * -ENOENT when none. io_mount_disk: the whole disk that holds the filesystem mounted at `mnt`,
 * found from /proc/self/mountinfo (the mount's MAJ:MIN, else its source device) and /sys (a
 * partition's parent); *devpath "/dev/nvme0n1", *how "'/' is /dev/nvme0n1p2 (259:2) on disk
 * nvme0n1". -ENOENT when the mount has no block device (overlay, tmpfs, NFS). */
int io_find_shard(const char *pattern, char **path, size_t *nmatch);
int io_mount_disk(const char *mnt, char **devpath, char **how);

/* The working set centered in the target, 4 KiB-aligned (as the incident's harness centered it).
 * -E2BIG when the target is smaller than the working set. */
int io_working_set(const struct io_target *t, uint64_t ws, uint64_t *offset);

/* Bytes of [off, off+len) that are holes or unwritten extents (FIEMAP): reads that never touch
 * flash. -EOPNOTSUPP when the filesystem has no FIEMAP (FUSE, tmpfs). */
int io_fiemap_unbacked(int fd, uint64_t off, uint64_t len, uint64_t *unbacked);
/* Read `samples` random 4 KiB blocks of [off, off+len) and count the all-zero ones. */
int io_zero_sample(int fd, uint64_t off, uint64_t len, unsigned samples, uint64_t seed, unsigned *zero,
		   unsigned *read_ok);
/* Reads + writes completed on a /proc/diskstats device so far. -ENOENT when it is not listed. */
int io_diskstats_ios(const char *dev, uint64_t *ios);
/* Drive identity from sysfs (NVMe: model, firmware_rev, serial); NULL where unknown. */
void io_drive_identity(const struct io_target *t, char **model, char **firmware, char **serial);
/* The NVMe controller ("nvme0") of the whole disk under the target (NULL when not NVMe) and the
 * disk's size in bytes (0 when unknown), from sysfs. */
void io_drive_sysfs(const struct io_target *t, char **controller, uint64_t *size_bytes);

struct io_progress {
	uint64_t elapsed_ns, total_ns; /* since the start, ramp included; total 0 = unknown */
	bool ramping;
	uint64_t ios;                  /* measured reads so far */
	uint64_t iops_now;             /* all reads (ramp too) over the last progress interval */
	uint64_t p50_ns;               /* so far */
	uint64_t bytes;
};

struct io_spec {
	bool sequential;       /* 1 MiB sequential reads for seq_bytes; else 4 KiB random for duration */
	uint32_t block_size;
	unsigned inflight;     /* reads in flight over all threads */
	unsigned threads;      /* rings; 0 = one per online CPU (at most inflight) */
	uint64_t offset, length; /* the working set */
	uint64_t ramp_ns, duration_ns;
	uint64_t seq_bytes;
	uint64_t seed;
	unsigned max_errors;   /* stop the run after this many failed reads */
	const volatile sig_atomic_t *stop; /* SIGINT: stop submitting, wait for in-flight reads */
	void (*progress)(void *arg, const struct io_progress *p);
	void *progress_arg;
};

#define IO_ERR_KEEP 16

struct io_result {
	struct hist hist;      /* latency of every measured read, submission to completion */
	uint64_t ios, bytes;
	uint64_t elapsed_ns;   /* measurement start to the last completion (drained reads included) */
	uint64_t *per_second;  /* measured reads completed in each whole second of the window */
	size_t nseconds;
	uint64_t cpu_ns;       /* user+sys of the process from the end of the ramp to the last completion */
	uint64_t errors;
	uint64_t err_offset[IO_ERR_KEEP];
	int err_code[IO_ERR_KEEP]; /* negative errno; -EIO for a short read */
	unsigned nerr_kept;
	unsigned threads;
	unsigned ring_flags;   /* the io_uring setup flags the kernel accepted */
	bool fixed_buffers, fixed_files;
	bool interrupted, error_limit;
};

/* Run one pass. Returns 0 (also when interrupted or stopped at the error limit: see the flags)
 * or a negative errno when the harness itself could not run (ring setup, memory). */
int io_run(int fd, const struct io_spec *s, struct io_result *res);
void io_result_free(struct io_result *res);

/* Helpers for the step and the tests (the clock: mono_ns, util.h). */
/* Reads per second over the window: ios * 1e9 / elapsed_ns, exact integer arithmetic. */
uint64_t io_rate(uint64_t count, uint64_t elapsed_ns);

/* One gate of a run, evaluated from the run's record object (so that it can be checked on
 * synthetic records): iops >= min_iops, lat_us.p50/p99/p99_9 <= max, mb_s >= min_mb_s. */
struct io_gate {
	char name[64];     /* "rand16-iops", "rand64-p99.9", "seq-mb_s" */
	const char *what;  /* "IOPS", "p50", "MB/s" */
	const char *unit;  /* "IOPS", "us", "MB/s" */
	bool at_least;     /* threshold is a minimum (else a maximum) */
	double threshold, measured;
	bool pass;
};
#define IO_MAX_GATES 5
size_t io_gates_eval(const struct accept_run *thr, const char *run_name, json_object *run,
		     struct io_gate out[IO_MAX_GATES]);

/* SNIA-style steady state over per-second IOPS: range within 20 % of the mean, and the
 * least-squares slope over the window within 10 % of the mean. Needs 3 or more seconds. */
struct io_stability {
	bool evaluated, steady;
	double mean, range_pct, slope_pct;
};
void io_stability(const uint64_t *per_second, size_t n, struct io_stability *st);
