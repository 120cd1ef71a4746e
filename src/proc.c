/* SPDX-License-Identifier: MIT */
/* Child processes in their own process group, with a deadline on both the process and its output. */
#include "util.h"
#include "proc.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>

#define TICK_MS 50
#define ESCAPED_ROUNDS 64

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { 0, (long)ms * 1000000L };

	nanosleep(&ts, NULL);
}

/* The child: own group, stdin /dev/null, output into the pipe; an exec failure goes back as errno. */
static _Noreturn void child(const struct proc_opts *o, int out_fd, int err_fd, pid_t parent)
{
	sigset_t all;
	int null, e;

	setpgid(0, 0);
	/* the check after it: a parent that died before the flag was set sent nothing */
	if (o->die_with_parent && (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent))
		_exit(127);
	sigemptyset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (null < 0 || dup2(null, STDIN_FILENO) < 0 || dup2(out_fd, STDOUT_FILENO) < 0 ||
	    dup2(out_fd, STDERR_FILENO) < 0)
		goto fail;
	for (char *const *v = o->setenv; v && *v; v++)
		if (putenv(*v) != 0)
			goto fail;
	if (o->argv)
		execvp(o->argv[0], o->argv);
	else
		execl("/bin/sh", "sh", "-c", o->shell, (char *)NULL);
fail:
	e = errno;
	(void)!write(err_fd, &e, sizeof(e));
	_exit(127);
}

/* The parent pid of `pid` from /proc/PID/stat (the comm field may hold spaces and parentheses). */
static pid_t parent_of(pid_t pid)
{
	_cleanup_free_ char *path = xasprintf("/proc/%d/stat", (int)pid), *text = NULL;
	const char *p;
	int ppid;

	if (read_file_all(path, 4096, &text, NULL) < 0 || !(p = strrchr(text, ')')))
		return -1;
	if (sscanf(p + 1, " %*c %d", &ppid) != 1)
		return -1;
	return (pid_t)ppid;
}

/* Our children now: with the subreaper flag, what escaped the group and lost its parent. */
static size_t children(pid_t *out, size_t max)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	pid_t self = getpid();
	size_t n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d)) && n < max) {
		char *end;
		long v = strtol(de->d_name, &end, 10);

		if (*end || v <= 0 || v == self)
			continue;
		if (parent_of((pid_t)v) == self)
			out[n++] = (pid_t)v;
	}
	closedir(d);
	return n;
}

/* Kill every child left (SIGTERM, a moment, then SIGKILL) and reap it, until none is left. */
static unsigned kill_escaped(uint64_t grace_ns)
{
	pid_t pids[256];
	unsigned killed = 0;

	for (unsigned round = 0; round < ESCAPED_ROUNDS; round++) {
		size_t n = children(pids, ARRAY_SIZE(pids));
		uint64_t until = mono_ns() + (round == 0 ? grace_ns : 0);
		size_t left = n;

		if (!n)
			break;
		for (size_t i = 0; i < n; i++)
			kill(pids[i], round == 0 ? SIGTERM : SIGKILL);
		killed += (unsigned)n;
		while (left) {
			left = 0;
			for (size_t i = 0; i < n; i++) {
				if (!pids[i])
					continue;
				if (waitpid(pids[i], NULL, WNOHANG) != 0)
					pids[i] = 0;
				else
					left++;
			}
			if (!left)
				break;
			if (mono_ns() >= until) {
				for (size_t i = 0; i < n; i++)
					if (pids[i])
						kill(pids[i], SIGKILL);
				for (size_t i = 0; i < n; i++)
					if (pids[i])
						while (waitpid(pids[i], NULL, 0) < 0 && errno == EINTR)
							;
				break;
			}
			sleep_ms(TICK_MS);
		}
	}
	return killed;
}

/* What proc_run keeps while the command runs, from the fork to the last read. */
struct run {
	const struct proc_opts *o;
	struct proc_result *res;
	uint64_t grace, drain, t0, kill_at, read_until, last_tick, last_reap;
	size_t cap, tlen;
	int pfd[2], efd[2], was_subreaper;
	bool reading, leader_done, term_sent, kill_sent;
	char *tail;
	pid_t pid;
};

/* The pipes, the subreaper flag, the fork; the child never returns. */
static int run_start(struct run *w)
{
	const struct proc_opts *o = w->o;
	pid_t self = getpid();
	int e = 0;

	if (pipe2(w->pfd, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(w->efd, O_CLOEXEC) < 0) {
		e = -errno;
		close(w->pfd[0]), close(w->pfd[1]);
		return e;
	}
	if (o->reap_escaped) {
		prctl(PR_GET_CHILD_SUBREAPER, &w->was_subreaper);
		prctl(PR_SET_CHILD_SUBREAPER, 1);
	}
	w->pid = fork();
	if (w->pid < 0) {
		e = -errno;
		close(w->pfd[0]), close(w->pfd[1]), close(w->efd[0]), close(w->efd[1]);
		if (o->reap_escaped)
			prctl(PR_SET_CHILD_SUBREAPER, w->was_subreaper);
		return e;
	}
	if (w->pid == 0)
		child(o, w->pfd[1], w->efd[1], self);
	setpgid(w->pid, w->pid); /* also here: no signal can reach the group before it exists */
	close(w->pfd[1]);
	close(w->efd[1]);
	w->tail = xcalloc(1, w->cap + 1);
	return 0;
}

/* The timeout or *stop (SIGTERM to the group), the grace after it (SIGKILL), the end of reading. */
static void run_deadlines(struct run *w, uint64_t now)
{
	const struct proc_opts *o = w->o;
	bool stop = o->stop && *o->stop;

	if (!w->term_sent && !w->leader_done && ((o->timeout_ns && now - w->t0 >= o->timeout_ns) || stop)) {
		w->res->timed_out = !stop;
		w->res->stopped = stop;
		kill(-w->pid, SIGTERM);
		w->term_sent = true;
		w->kill_at = now + w->grace;
	}
	if (w->term_sent && !w->kill_sent && now >= w->kill_at) {
		kill(-w->pid, SIGKILL);
		w->kill_sent = true;
		if (now + w->drain < w->read_until)
			w->read_until = now + w->drain;
	}
	if (w->reading && now >= w->read_until) {
		/* what holds the pipe now escaped the group: stop reading, do not wait for it */
		w->res->output_cut = true;
		w->reading = false;
	}
}

/* Once a second the orphans that ended (reap_escaped); every 200 ms the caller's tick. */
static void run_reap_tick(struct run *w, uint64_t now)
{
	const struct proc_opts *o = w->o;

	if (o->reap_escaped && now - w->last_reap >= 1000000000ULL) {
		/* orphans re-parented to us that ended: reap them as init would, or a long gate that
		 * leaves many behind would fill the process table with our zombies */
		pid_t kids[256];
		size_t nk = children(kids, ARRAY_SIZE(kids));

		for (size_t i = 0; i < nk; i++)
			if (kids[i] != w->pid)
				waitpid(kids[i], NULL, WNOHANG);
		w->last_reap = now;
	}
	if (o->tick && now - w->last_tick >= 200000000ULL) {
		o->tick(o->tick_arg, now - w->t0);
		w->last_tick = now;
	}
}

/* One tick's output into the tail (or, reading done, a tick's sleep while the leader runs). */
static void run_read(struct run *w)
{
	if (w->reading) {
		struct pollfd p = { .fd = w->pfd[0], .events = POLLIN };
		char buf[4096];

		if (poll(&p, 1, TICK_MS) > 0) {
			ssize_t n = read(w->pfd[0], buf, sizeof(buf));

			if (n > 0)
				tail_append(w->tail, w->cap, &w->tlen, buf, (size_t)n);
			else if (n == 0 || (errno != EINTR && errno != EAGAIN))
				w->reading = false;
		}
	} else if (!w->leader_done)
		sleep_ms(TICK_MS);
}

/* Has the command itself exited? Then its group gets SIGTERM, and reading ends after the drain. */
static void run_leader(struct run *w)
{
	siginfo_t si = { 0 };

	if (w->leader_done)
		return;
	/* WNOWAIT: the zombie keeps the group's id reserved until the group is killed */
	if (waitid(P_PID, (id_t)w->pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == w->pid) {
		w->leader_done = true;
		if (!w->term_sent) {
			/* what it left running in its group gets SIGTERM now, SIGKILL after the drain */
			kill(-w->pid, SIGTERM);
			w->term_sent = true;
			w->kill_at = mono_ns() + w->drain;
		}
		if (mono_ns() + w->drain < w->read_until)
			w->read_until = mono_ns() + w->drain;
	}
}

/* The group killed, the command reaped, exec's errno read, what escaped killed; *res filled. */
static void run_finish(struct run *w)
{
	struct proc_result *res = w->res;
	int status = 0, e = 0;

	close(w->pfd[0]);
	kill(-w->pid, SIGKILL);
	while (waitpid(w->pid, &status, 0) < 0 && errno == EINTR)
		;
	if (read(w->efd[0], &e, sizeof(e)) == (ssize_t)sizeof(e))
		res->exec_errno = e;
	close(w->efd[0]);
	if (w->o->reap_escaped) {
		res->escaped = kill_escaped(w->drain);
		prctl(PR_SET_CHILD_SUBREAPER, w->was_subreaper);
	}
	res->status = status;
	res->elapsed_ns = mono_ns() - w->t0;
	res->tail = w->tail;
	res->tail_len = w->tlen;
}

int proc_run(const struct proc_opts *o, struct proc_result *res)
{
	uint64_t t0 = mono_ns();
	struct run w = {
		.o = o,
		.res = res,
		.grace = o->grace_ns ? o->grace_ns : PROC_GRACE_NS,
		.drain = o->drain_ns ? o->drain_ns : PROC_DRAIN_NS,
		.cap = o->tail_cap ? o->tail_cap : 4096,
		.pfd = { -1, -1 },
		.efd = { -1, -1 },
		.t0 = t0,
		.read_until = UINT64_MAX,
		.last_tick = t0,
		.last_reap = t0,
		.reading = true,
	};
	int r;

	*res = (struct proc_result){ 0 };
	if (!o->argv && !o->shell)
		return -EINVAL;
	r = run_start(&w);
	if (r < 0)
		return r;
	while (!w.leader_done || w.reading) {
		uint64_t now = mono_ns();

		run_deadlines(&w, now);
		run_reap_tick(&w, now);
		run_read(&w);
		run_leader(&w);
	}
	run_finish(&w);
	return 0;
}

void proc_result_free(struct proc_result *res)
{
	free(res->tail);
	res->tail = NULL;
	res->tail_len = 0;
}

int proc_exit_code(const struct proc_result *res)
{
	if (WIFEXITED(res->status))
		return WEXITSTATUS(res->status);
	return 128 + (WIFSIGNALED(res->status) ? WTERMSIG(res->status) : 0);
}
