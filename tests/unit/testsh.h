/* SPDX-License-Identifier: MIT */
/* Shell helpers for the unit tests that build real images and ask independent tools (mke2fs, sgdisk,
 * blkid, dumpe2fs, debugfs): a private directory per test (parallel runs never share a path),
 * commands run in it through bash, their output captured. */
#pragma once

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util.h"

static char tdir[64];

static void tdir_remove(void)
{
	_cleanup_free_ char *cmd = NULL;

	if (!tdir[0])
		return;
	cmd = xasprintf("rm -rf '%s'", tdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tdir);
}

/* mkdtemp under $TMPDIR (else /tmp), removed at exit; /usr/sbin and /sbin on $PATH (sgdisk, mke2fs,
 * blkid live there and a user's $PATH may lack them). */
static void tdir_make(const char *name)
{
	const char *tmp = getenv("TMPDIR"), *path = getenv("PATH");
	_cleanup_free_ char *newpath = xasprintf("%s:/usr/sbin:/sbin", path && *path ? path : "/usr/bin:/bin");

	setenv("PATH", newpath, 1);

	snprintf(tdir, sizeof(tdir), "%s/%s.XXXXXX", tmp && *tmp && strlen(tmp) < 32 ? tmp : "/tmp", name);
	if (!mkdtemp(tdir)) {
		perror("mkdtemp");
		exit(99);
	}
	atexit(tdir_remove);
}

/* The path of NAME in the test's directory (allocated). */
__attribute__((unused)) static char *tpath(const char *name)
{
	return xasprintf("%s/%s", tdir, name);
}

/* Run the command in the test's directory through bash; its stdout into *out when out is not
 * NULL (allocated, trailing newline kept). Returns its exit status, -1 when it could not run. */
static int vshout(char **out, const char *fmt, va_list ap)
{
	_cleanup_free_ char *cmd = NULL, *full = NULL;
	int pfd[2] = { -1, -1 }, status = -1;
	pid_t pid;

	if (vasprintf(&cmd, fmt, ap) < 0)
		abort();
	full = xasprintf("cd '%s' && { %s\n}", tdir, cmd);
	if (out && pipe(pfd) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		if (out) {
			dup2(pfd[1], 1);
			close(pfd[0]);
			close(pfd[1]);
		}
		execlp("bash", "bash", "-c", full, (char *)NULL);
		_exit(127);
	}
	if (out) {
		size_t len = 0, cap = 4096;
		char *buf = xcalloc(1, cap);
		ssize_t n;

		close(pfd[1]);
		while ((n = read(pfd[0], buf + len, cap - len - 1)) > 0) {
			len += (size_t)n;
			if (len + 1 == cap) {
				buf = realloc(buf, cap *= 2);
				if (!buf)
					abort();
			}
		}
		buf[len] = '\0';
		close(pfd[0]);
		*out = buf;
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2), unused));
static int sh(const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vshout(NULL, fmt, ap);
	va_end(ap);
	return r;
}

static int shout(char **out, const char *fmt, ...) __attribute__((format(printf, 2, 3), unused));
static int shout(char **out, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vshout(out, fmt, ap);
	va_end(ap);
	return r;
}

/* The command's output as an unsigned number (its first line); UINT64_MAX when it failed. */
static uint64_t sh_u64(const char *fmt, ...) __attribute__((format(printf, 1, 2), unused));
static uint64_t sh_u64(const char *fmt, ...)
{
	_cleanup_free_ char *o = NULL;
	va_list ap;
	int r;
	char *end;
	unsigned long long v;

	va_start(ap, fmt);
	r = vshout(&o, fmt, ap);
	va_end(ap);
	if (r != 0 || !o[0])
		return UINT64_MAX;
	v = strtoull(o, &end, 10);
	return end == o ? UINT64_MAX : (uint64_t)v;
}

/* The command's output, its trailing newline cut (allocated; "" when it failed). */
static char *sh_str(const char *fmt, ...) __attribute__((format(printf, 1, 2), unused));
static char *sh_str(const char *fmt, ...)
{
	char *o = NULL;
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	if (vshout(&o, fmt, ap) != 0)
		o[0] = '\0';
	va_end(ap);
	n = strlen(o);
	while (n && o[n - 1] == '\n')
		o[--n] = '\0';
	return o;
}

/* Skip (77) unless every named program is on $PATH. */
static void __attribute__((unused)) need_tools(const char *tools)
{
	if (sh("for t in %s; do command -v $t >/dev/null || { echo \"SKIP: no $t\" >&2; exit 1; }; done", tools) != 0)
		exit(77);
}
