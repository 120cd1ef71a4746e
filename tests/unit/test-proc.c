/* SPDX-License-Identifier: MIT */
/* proc_run: exit codes and output tails, the timeout over the whole group, no wait on a setsid child
 * that holds the output, escaped processes killed, exec failures reported, the environment set, and
 * no command outliving a caller that asked for it. */
#include "util.h"
#include "proc.h"
#include "tap.h"

#include <dirent.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Is a process running whose command line is exactly "sleep SECONDS"? */
static bool alive(const char *marker)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	bool found = false;

	CHECK(d != NULL);
	while (d && (de = readdir(d)) && !found) {
		_cleanup_free_ char *path = xasprintf("/proc/%s/cmdline", de->d_name), *text = NULL;
		size_t len = 0;

		if (de->d_name[0] < '0' || de->d_name[0] > '9' || read_file_all(path, 4096, &text, &len) < 0)
			continue;
		for (size_t i = 0; i < len; i++)
			if (!text[i])
				text[i] = ' ';
		while (len && text[len - 1] == ' ')
			text[--len] = '\0';
		found = streq(text, marker);
	}
	if (d)
		closedir(d);
	return found;
}

int main(void)
{
	struct proc_result res;
	uint64_t t0;
	char marker[64];

	/* exit code and output, stdout and stderr together */
	struct proc_opts sh = { .shell = "echo out; echo err >&2; exit 3" };
	CHECK(proc_run(&sh, &res) == 0);
	CHECK_U64(proc_exit_code(&res), 3);
	CHECK_STR(res.tail, "out\nerr\n");
	CHECK(!res.timed_out && !res.output_cut);
	proc_result_free(&res);

	/* argv form; the tail keeps the end */
	char *argv[] = { "sh", "-c", "seq 1 2000", NULL };
	struct proc_opts av = { .argv = argv, .tail_cap = 10 };
	CHECK(proc_run(&av, &res) == 0);
	CHECK_U64(proc_exit_code(&res), 0);
	CHECK_STR(res.tail, "1999\n2000\n");
	proc_result_free(&res);

	/* a command that cannot be started */
	char *none[] = { "/nonexistent/swaptool-test", NULL };
	struct proc_opts ne = { .argv = none };
	CHECK(proc_run(&ne, &res) == 0);
	CHECK_U64(res.exec_errno, ENOENT);
	CHECK_U64(proc_exit_code(&res), 127);
	proc_result_free(&res);

	/* the timeout stops the whole group, background members too */
	snprintf(marker, sizeof(marker), "sleep 61%05d", (int)getpid() % 100000);
	_cleanup_free_ char *grp = xasprintf("%s & %s; echo never", marker, marker);
	struct proc_opts to = { .shell = grp, .timeout_ns = 500000000ULL };
	t0 = now_ns();
	CHECK(proc_run(&to, &res) == 0);
	CHECK(now_ns() - t0 < 3000000000ULL);
	CHECK(res.timed_out);
	CHECK(WIFSIGNALED(res.status) && WTERMSIG(res.status) == SIGTERM);
	CHECK(!strstr(res.tail, "never"));
	proc_result_free(&res);
	usleep(200000);
	CHECK(!alive(marker));

	/* a setsid child holding the output does not hold the caller; with reap_escaped it dies too */
	snprintf(marker, sizeof(marker), "sleep 62%05d", (int)getpid() % 100000);
	_cleanup_free_ char *esc = xasprintf("setsid %s & sleep 0.3; echo started", marker);
	struct proc_opts es = { .shell = esc, .timeout_ns = 60000000000ULL, .drain_ns = 300000000ULL, .reap_escaped = true };
	t0 = now_ns();
	CHECK(proc_run(&es, &res) == 0);
	CHECK(now_ns() - t0 < 3000000000ULL);
	CHECK_U64(proc_exit_code(&res), 0);
	CHECK(!res.timed_out);
	CHECK(res.output_cut);
	CHECK(res.escaped >= 1);
	CHECK_STR(res.tail, "started\n");
	proc_result_free(&res);
	CHECK(!alive(marker));

	/* orphans that end while the command runs are reaped as they go, not kept as zombies */
	struct proc_opts zo = { .shell = "for i in 1 2 3 4 5 6 7 8 9 10; do sh -c 'sleep 0 &'; done; sleep 2.5",
				.reap_escaped = true };
	CHECK(proc_run(&zo, &res) == 0);
	CHECK_U64(proc_exit_code(&res), 0);
	CHECK_U64(res.escaped, 0);
	proc_result_free(&res);

	/* *stop ends it like a timeout, marked as stopped */
	volatile sig_atomic_t stop = 1;
	struct proc_opts st = { .shell = "sleep 30", .stop = &stop };
	t0 = now_ns();
	CHECK(proc_run(&st, &res) == 0);
	CHECK(now_ns() - t0 < 3000000000ULL);
	CHECK(res.stopped && !res.timed_out);
	proc_result_free(&res);

	/* SIGTERM ignored: SIGKILL after the grace time */
	struct proc_opts tr = { .shell = "trap '' TERM; sleep 30", .timeout_ns = 200000000ULL, .grace_ns = 300000000ULL };
	t0 = now_ns();
	CHECK(proc_run(&tr, &res) == 0);
	CHECK(now_ns() - t0 < 3000000000ULL);
	CHECK(res.timed_out);
	CHECK(WIFSIGNALED(res.status) && WTERMSIG(res.status) == SIGKILL);
	proc_result_free(&res);

	/* setenv reaches the command */
	static char var[] = "SWAPTOOL_TEST_VAR=seen";
	char *vars[] = { var, NULL };
	struct proc_opts ev = { .shell = "echo $SWAPTOOL_TEST_VAR", .setenv = vars };
	CHECK(proc_run(&ev, &res) == 0);
	CHECK_STR(res.tail, "seen\n");
	proc_result_free(&res);

	/* die_with_parent: a caller killed with SIGKILL (no cleanup of its own) takes the command along */
	snprintf(marker, sizeof(marker), "sleep 63%05d", (int)getpid() % 100000);
	pid_t mid = fork();
	if (mid == 0) {
		char *sl[] = { "sleep", marker + 6, NULL };
		struct proc_opts dp = { .argv = sl, .die_with_parent = true };

		proc_run(&dp, &res);
		_exit(0);
	}
	for (int i = 0; i < 200 && !alive(marker); i++)
		usleep(10000);
	CHECK(alive(marker));
	kill(mid, SIGKILL);
	waitpid(mid, NULL, 0);
	for (int i = 0; i < 300 && alive(marker); i++)
		usleep(10000);
	CHECK(!alive(marker));
	return tap_done();
}
