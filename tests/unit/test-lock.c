/* SPDX-License-Identifier: MIT */
/* lock (src/lock.c): a real flock on DIR/.lock: the holder's "PID STEP", a second writer refused
 * with -EBUSY after its wait, flock(1) refused too while held, a killed holder's file taken over,
 * the stale temporaries removed, and what may not stand at DIR/.lock. */
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>

#include "lock.h"
#include "tap.h"
#include "testsh.h"

/* In a child (a process of its own, as a second swaptool): take the lock with `wait_ms`; its
 * result, the holder it saw and how long it waited come back through a pipe. */
struct attempt {
	int r;
	pid_t holder;
	char step[32];
	uint64_t waited_ms;
};

static struct attempt attempt(const char *dir, unsigned wait_ms)
{
	struct attempt a = { .r = -999 };
	int pfd[2];
	pid_t pid;

	if (pipe(pfd) < 0)
		abort();
	pid = fork();
	if (pid == 0) {
		struct state_lock l;
		uint64_t t0 = mono_ns();

		close(pfd[0]);
		a.r = state_lock_take(&l, dir, "restore", wait_ms);
		a.waited_ms = (mono_ns() - t0) / 1000000;
		a.holder = l.holder;
		memcpy(a.step, l.holder_step, sizeof(a.step));
		if (a.r == 0)
			state_lock_release(&l);
		if (write(pfd[1], &a, sizeof(a)) != sizeof(a))
			_exit(2);
		_exit(0);
	}
	close(pfd[1]);
	if (read(pfd[0], &a, sizeof(a)) != sizeof(a))
		a.r = -999;
	close(pfd[0]);
	waitpid(pid, NULL, 0);
	return a;
}

int main(void)
{
	struct state_lock l;
	struct attempt a;
	_cleanup_free_ char *dir = NULL, *lockp = NULL, *line = NULL, *want = NULL;
	struct stat st;

	tdir_make("test-lock");
	dir = tpath("state/sub");  /* made by the take, with its parent */
	lockp = tpath("state/sub/.lock");

	/* stale temporaries of a killed write_file_atomic, beside files that only look like them */
	CHECK(sh("mkdir -p state/sub/report && : > state/sub/preflight.json.tmp.AbC123 && "
		 ": > state/sub/report/report.html.tmp.x1y2z3 && : > state/sub/keep.tmp.12345 && "
		 ": > state/sub/plan.json && mkdir state/sub/dir.tmp.abcdef && "
		 "ln -s plan.json state/sub/link.tmp.qwerty") == 0);

	CHECK(state_lock_take(&l, dir, "backup", 1000) == 0);
	CHECK(l.fd >= 0);
	CHECK_STR(l.path, lockp);
	/* the file names its holder, mode 0600, the directory 0700 */
	want = xasprintf("%ld backup", (long)getpid());
	line = sh_str("cat state/sub/.lock");
	CHECK_STR(line, want);
	CHECK(stat(lockp, &st) == 0 && (st.st_mode & 07777) == 0600);
	{
		/* a directory the take makes is 0700 (with its parents) */
		_cleanup_free_ char *fresh = tpath("fresh/state");
		struct state_lock f;

		CHECK(state_lock_take(&f, fresh, "plan", 0) == 0);
		CHECK(stat(fresh, &st) == 0 && (st.st_mode & 07777) == 0700);
		state_lock_release(&f);
		CHECK(sh("[ -z \"$(ls -A fresh/state)\" ]") == 0); /* released: the directory as it was */
	}
	/* the temporaries went; the look-alikes (5 characters, a directory, a symlink) stayed */
	CHECK(sh("[ ! -e state/sub/preflight.json.tmp.AbC123 ] && [ ! -e state/sub/report/report.html.tmp.x1y2z3 ]") == 0);
	CHECK(sh("[ -e state/sub/keep.tmp.12345 ] && [ -d state/sub/dir.tmp.abcdef ] && [ -L state/sub/link.tmp.qwerty ] && "
		 "[ -e state/sub/plan.json ]") == 0);

	/* an independent flock(1) cannot have it either */
	CHECK(sh("flock -n state/sub/.lock true") == 1);

	/* a second writer waits its time, then is refused naming the holder */
	a = attempt(dir, 300);
	CHECK(a.r == -EBUSY);
	CHECK_U64((uint64_t)a.holder, (uint64_t)getpid());
	CHECK_STR(a.step, "backup");
	CHECK(a.waited_ms >= 300 && a.waited_ms < 5000);
	a = attempt(dir, 0);
	CHECK(a.r == -EBUSY);

	/* release removes the file; the next writer gets it at once */
	state_lock_release(&l);
	CHECK(l.fd == -1 && l.path == NULL);
	CHECK(access(lockp, F_OK) < 0 && errno == ENOENT);
	state_lock_release(&l); /* twice: nothing */
	a = attempt(dir, 0);
	CHECK(a.r == 0);
	CHECK(access(lockp, F_OK) < 0);

	/* a holder killed with the lock held leaves its file: stale, taken over, renamed as ours */
	{
		pid_t pid = fork();

		if (pid == 0) {
			struct state_lock k;

			if (state_lock_take(&k, dir, "clone", 0) != 0)
				_exit(1);
			raise(SIGKILL);
			_exit(2);
		}
		waitpid(pid, NULL, 0);
		CHECK(access(lockp, F_OK) == 0);
		CHECK(state_lock_take(&l, dir, "verify", 0) == 0);
		free(line);
		free(want);
		line = sh_str("cat state/sub/.lock");
		want = xasprintf("%ld verify", (long)getpid());
		CHECK_STR(line, want);
		state_lock_release(&l);
	}

	/* a holder that has not written its line yet (or wrote garbage) is unknown, not misread */
	{
		int fd = open(lockp, O_RDWR | O_CREAT, 0600);
		pid_t pid;
		int pfd[2];
		char c;

		CHECK(fd >= 0);
		CHECK(write(fd, "12x; rm -rf /\n", 14) == 14);
		close(fd);
		CHECK(pipe(pfd) == 0);
		pid = fork();
		if (pid == 0) {
			/* flock(2) on the file, as another holder would, then wait for the parent */
			int f = open(lockp, O_RDWR);
			close(pfd[0]);
			if (f < 0 || flock(f, LOCK_EX) < 0 || write(pfd[1], "x", 1) != 1)
				_exit(1);
			pause();
			_exit(0);
		}
		close(pfd[1]);
		CHECK(read(pfd[0], &c, 1) == 1);
		a = attempt(dir, 0);
		CHECK(a.r == -EBUSY);
		CHECK_U64((uint64_t)a.holder, 0);
		CHECK_STR(a.step, "");
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		close(pfd[0]);
		unlink(lockp);
	}

	/* what may not stand at DIR/.lock: a FIFO (no hang), a symlink (not followed), a directory */
	CHECK(mkfifo(lockp, 0600) == 0);
	CHECK(state_lock_take(&l, dir, "backup", 0) == -EINVAL);
	CHECK(l.fd == -1 && l.why != NULL);
	state_lock_release(&l); /* frees the refusal's message */
	unlink(lockp);
	CHECK(symlink("../../elsewhere", lockp) == 0);
	CHECK(state_lock_take(&l, dir, "backup", 0) == -EINVAL);
	state_lock_release(&l);
	CHECK(sh("[ ! -e elsewhere ]") == 0);
	unlink(lockp);
	CHECK(mkdir(lockp, 0700) == 0);
	CHECK(state_lock_take(&l, dir, "backup", 0) < 0);
	state_lock_release(&l);
	rmdir(lockp);
	/* DIR under a regular file cannot be made */
	CHECK(sh(": > plain") == 0);
	{
		_cleanup_free_ char *bad = tpath("plain/state");
		CHECK(state_lock_take(&l, bad, "backup", 0) == -ENOTDIR);
		state_lock_release(&l);
	}
	return tap_done();
}
