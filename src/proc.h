/* SPDX-License-Identifier: MIT */
/* Child processes: one helper that runs a command in its own process group with a deadline, keeps
 * the tail of its output, and leaves nothing of it running when it returns. */
#pragma once

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* After SIGTERM, the seconds a command has to exit before SIGKILL. */
#define PROC_GRACE_NS (5ULL * 1000000000ULL)
/* After the command itself exited, how long the output of what it left behind is still read. */
#define PROC_DRAIN_NS (1ULL * 1000000000ULL)

struct proc_opts {
	char *const *argv;     /* run with execvp when set ... */
	const char *shell;     /* ... else with /bin/sh -c SHELL */
	char *const *setenv;   /* "NAME=VALUE" entries set in the child; NULL-terminated, may be NULL */
	uint64_t timeout_ns;   /* 0: none */
	uint64_t grace_ns;     /* SIGTERM to SIGKILL; 0: PROC_GRACE_NS */
	uint64_t drain_ns;     /* 0: PROC_DRAIN_NS */
	size_t tail_cap;       /* bytes of output kept (stdout and stderr together); 0: 4096 */
	volatile sig_atomic_t *stop; /* stop the command when *stop turns nonzero (SIGINT) */
	/* Kill the processes that escaped the group (setsid, daemons): the caller becomes a child
	 * subreaper during the run, so they are re-parented to it (and reaped when they end), and
	 * every child of the caller left at the end is killed. Only for callers that have no other
	 * child processes. */
	bool reap_escaped;
	/* The command gets SIGKILL when the caller dies (PR_SET_PDEATHSIG): a tool working on
	 * something the caller holds (a composite file, a held target) never outlives it. */
	bool die_with_parent;
	/* Called about every 200 ms while the command runs (a progress line), may be NULL. */
	void (*tick)(void *arg, uint64_t elapsed_ns);
	void *tick_arg;
};

struct proc_result {
	int status;          /* waitpid status of the command */
	int exec_errno;      /* the command could not be started: errno of exec (status then is 127) */
	bool timed_out;      /* killed at the timeout */
	bool stopped;        /* killed because *stop was set */
	bool output_cut;     /* reading stopped while something still held the output open */
	unsigned escaped;    /* processes outside the group killed at the end (reap_escaped) */
	uint64_t elapsed_ns;
	char *tail;          /* NUL-terminated; the last tail_cap bytes of output */
	size_t tail_len;
};

/*
 * Run a command with stdin from /dev/null and stdout + stderr into a pipe, in a process group of
 * its own. At the timeout (or *stop) the whole group gets SIGTERM, then SIGKILL after grace_ns;
 * when the command exits, what it left in its group gets SIGTERM at once and SIGKILL once the
 * drain time is over. Reading stops at those deadlines even when something outside the group
 * (a setsid grandchild) still holds the pipe, so no child can hold the caller. Returns 0 with
 * *res filled (free with proc_result_free), or a negative errno when no child could be started.
 */
int proc_run(const struct proc_opts *o, struct proc_result *res);
void proc_result_free(struct proc_result *res);
/* Exit code of the command, or 128 + signal, as a shell reports it. */
int proc_exit_code(const struct proc_result *res);
