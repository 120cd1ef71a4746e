/* SPDX-License-Identifier: MIT */
/* One writer per state directory: an flock on DIR/.lock that names its holder (pid and step). */
#pragma once

#include <sys/types.h>

/* How long a second writer waits for the holder before it refuses. */
#define STATE_LOCK_WAIT_MS 5000

struct state_lock {
	int fd;          /* -1: not held */
	char *path;      /* DIR/.lock while held */
	pid_t holder;    /* on -EBUSY: the holder's pid, 0 when it has not written it yet */
	char holder_step[32]; /* on -EBUSY: the holder's step, "" when unknown */
	char *why;       /* on -EINVAL and -EPERM: the message, what is wrong and what to do (release frees it) */
};

/* Take DIR/.lock (creating DIR, mode 0700, and the file, 0600) for STEP, waiting up to wait_ms for
 * another holder to finish; then write "PID STEP" into it. Release removes the file; one left by a
 * killed holder is stale and taken over. The lock lives as long as the process or
 * until state_lock_release (it is not inherited across exec). Once held, the temporaries a killed run
 * left in DIR and DIR/report (NAME.tmp.XXXXXX of write_file_atomic) are removed. Returns 0; -EBUSY when another process
 * still holds it (l->holder and l->holder_step say who); -ENOTDIR/-EACCES/...: the file cannot be
 * made or opened; -EINVAL when DIR/.lock is not a regular file; -EPERM when it has more than one
 * link or another owner (it is neither truncated nor written), or, as root, when DIR is not root's
 * alone (src/trust.h); l->why says which. */
int state_lock_take(struct state_lock *l, const char *dir, const char *step, unsigned wait_ms);
void state_lock_release(struct state_lock *l);
