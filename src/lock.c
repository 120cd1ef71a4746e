/* SPDX-License-Identifier: MIT */
/* State-directory lock: two swaptools saving records, undo files or a report into one directory at
 * once would interleave their records; the second waits briefly, then refuses naming the first. */
#include "lock.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>

#include "util.h"

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

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

int state_lock_take(struct state_lock *l, const char *dir, const char *step, unsigned wait_ms)
{
	_cleanup_free_ char *path = xasprintf("%s/.lock", dir);
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *line = NULL;
	uint64_t deadline = now_ms() + wait_ms;
	struct stat st;
	int r;

	l->fd = -1;
	l->holder = 0;
	l->holder_step[0] = '\0';
	r = mkdir_p(dir, 0700);
	if (r < 0)
		return r;
	/* O_NONBLOCK: a FIFO planted under the name must not hang the open; O_NOFOLLOW: nor may a
	 * symlink make us create or truncate a file elsewhere. */
	fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
	if (fd < 0)
		return errno == ELOOP ? -EINVAL : -errno;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	for (;;) {
		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			break;
		if (errno != EWOULDBLOCK && errno != EINTR)
			return -errno;
		if (now_ms() >= deadline) {
			read_holder(fd, l);
			return -EBUSY;
		}
		usleep(50 * 1000);
	}
	line = xasprintf("%ld %s\n", (long)getpid(), step);
	if (ftruncate(fd, 0) < 0)
		return -errno;
	r = (int)pwrite(fd, line, strlen(line), 0);
	if (r != (int)strlen(line))
		return r < 0 ? -errno : -EIO;
	l->fd = fd;
	fd = -1;
	return 0;
}

void state_lock_release(struct state_lock *l)
{
	if (l->fd < 0)
		return;
	/* emptied before the unlock, so the file never names a process that no longer holds it */
	(void)!ftruncate(l->fd, 0);
	flock(l->fd, LOCK_UN);
	close(l->fd);
	l->fd = -1;
}
