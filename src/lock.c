/* SPDX-License-Identifier: MIT */
/* State-directory lock: two swaptools saving records, undo files or a report into one directory at
 * once would interleave their records; the second waits briefly, then refuses naming the first. */
#include "lock.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>

#include "trust.h"
#include "util.h"

/* The holder's "PID STEP" line; anything else (empty: it has not written yet) reads as unknown. */
static void read_holder(int fd, struct state_lock *l)
{
	char buf[64] = { 0 };
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	long pid;
	char *end;

	l->holder = 0;
	l->holder_step[0] = '\0';
	if (n <= 0)
		return;
	buf[n] = '\0';
	pid = strtol(buf, &end, 10);
	if (end == buf || pid <= 0 || pid > INT32_MAX || *end != ' ')
		return;
	l->holder = (pid_t)pid;
	end++;
	for (size_t i = 0; i + 1 < sizeof(l->holder_step) && end[i] && end[i] != '\n'; i++) {
		/* only what a step name can hold: the file is ours, but the message must stay one clean line */
		char c = end[i];
		if (!((c >= 'a' && c <= 'z') || c == '-'))
			break;
		l->holder_step[i] = c;
		l->holder_step[i + 1] = '\0';
	}
}

/* NAME.tmp.XXXXXX: the temporary of write_file_atomic (src/util.c), left by a process killed between
 * its mkstemp and its rename. */
static bool is_stale_temp(const char *name)
{
	const char *t = strstr(name, ".tmp.");

	while (t && strstr(t + 1, ".tmp."))
		t = strstr(t + 1, ".tmp.");
	return t && t != name && strlen(t + 5) == 6;
}

/* Remove the temporaries a killed step left in DIR (not recursive, regular files only, never through
 * a symlink). Safe only under the lock: no other swaptool can be writing them. */
static void remove_stale_temps(const char *dir)
{
	_cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d;
	struct dirent *de;

	if (dfd < 0)
		return;
	d = fdopendir(dfd);
	if (!d)
		return;
	dfd = -1; /* owned by d now */
	while ((de = readdir(d))) {
		struct stat st;

		if (!is_stale_temp(de->d_name) || fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISREG(st.st_mode))
			continue;
		unlinkat(dirfd(d), de->d_name, 0);
	}
	closedir(d);
}

int state_lock_take(struct state_lock *l, const char *dir, const char *step, unsigned wait_ms)
{
	_cleanup_free_ char *path = xasprintf("%s/.lock", dir);
	_cleanup_free_ char *line = NULL;
	_cleanup_close_ int fd = -1;
	uint64_t deadline = mono_ns() / 1000000 + wait_ms;
	int r;

	l->fd = -1;
	l->path = NULL;
	l->holder = 0;
	l->holder_step[0] = '\0';
	l->why = NULL;
	r = mkdir_p(dir, 0700);
	if (r < 0)
		return r;
	/* Judged again once made: between the caller's look and mkdir_p, another user could have made
	 * DIR in a sticky /tmp (src/trust.h). */
	if (geteuid() == 0) {
		_cleanup_free_ char *w = NULL;
		if (trust_check_path(dir, 0, &w) < 0) {
			l->why = xasprintf("state directory '%s' is not root's alone: %s; pass --state DIR with a "
					   "directory only root can write", dir, w);
			return -EPERM;
		}
	}
	for (;;) {
		struct stat st, now;

		/* O_NONBLOCK: a FIFO planted under the name must not hang the open; O_NOFOLLOW: nor may a
		 * symlink make us create or truncate a file elsewhere; no O_TRUNC: nothing is cut before
		 * the checks below. */
		fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
		if (fd < 0 && errno == ELOOP) {
			l->why = xasprintf("lock file '%s' is not a regular file (a symlink, FIFO or device was put "
					   "there); remove it", path);
			return -EINVAL;
		}
		if (fd < 0)
			return -errno;
		if (fstat(fd, &st) < 0)
			return -errno;
		if (!S_ISREG(st.st_mode)) {
			l->why = xasprintf("lock file '%s' is not a regular file (a symlink, FIFO or device was put "
					   "there); remove it", path);
			return -EINVAL;
		}
		/* The file is truncated and written below: a hard link planted as .lock would have that
		 * done to the file it names (another's, or /etc/shadow), so it must be ours alone. */
		if (st.st_nlink > 1) {
			l->why = xasprintf("lock file '%s' has %ju hard links: it is another name for a file that taking "
					   "the lock would overwrite; remove that name (rm '%s'), the file it names stays",
					   path, (uintmax_t)st.st_nlink, path);
			return -EPERM;
		}
		if (st.st_uid != geteuid()) {
			l->why = xasprintf("lock file '%s' is owned by uid %u, not by this process's uid %u: another "
					   "user put it there; remove it", path, (unsigned)st.st_uid, (unsigned)geteuid());
			return -EPERM;
		}
		if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
			/* A holder removes the file as it lets go: a lock on a file no longer at PATH
			 * locks nothing, so open it again. */
			if (lstat(path, &now) == 0 && now.st_ino == st.st_ino && now.st_dev == st.st_dev)
				break;
		} else if (errno != EWOULDBLOCK && errno != EINTR)
			return -errno;
		else if (mono_ns() / 1000000 >= deadline) {
			read_holder(fd, l);
			return -EBUSY;
		} else
			usleep(50 * 1000);
		close(fd);
		fd = -1;
	}
	line = xasprintf("%ld %s\n", (long)getpid(), step);
	if (ftruncate(fd, 0) < 0)
		return -errno;
	r = (int)pwrite(fd, line, strlen(line), 0);
	if (r != (int)strlen(line))
		return r < 0 ? -errno : -EIO;
	l->fd = fd;
	fd = -1;
	l->path = TAKE_PTR(path);
	/* records and the default report directory: what a killed run left half-written goes now */
	remove_stale_temps(dir);
	_cleanup_free_ char *report = xasprintf("%s/report", dir);
	remove_stale_temps(report);
	return 0;
}

void state_lock_release(struct state_lock *l)
{
	free(l->why);
	l->why = NULL;
	if (l->fd < 0)
		return;
	/* removed while still held, so that a finished step leaves the directory as it found it
	 * (a refused step writes nothing, not even this file); waiters see the file gone and retry */
	unlink(l->path);
	close(l->fd);
	l->fd = -1;
	free(l->path);
	l->path = NULL;
}
