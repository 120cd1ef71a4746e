/* SPDX-License-Identifier: MIT */
/* util.c's stream helpers: the output tail kept from a child, whole reads and writes over a pipe. */
#include "util.h"
#include "tap.h"

#include <sys/wait.h>

static void tail(void)
{
	char t[8], big[20];
	size_t len = 0;

	tail_append(t, sizeof(t), &len, "abc", 3);
	CHECK_U64(len, 3);
	CHECK(memcmp(t, "abc", 3) == 0);
	tail_append(t, sizeof(t), &len, "defgh", 5); /* exactly full */
	CHECK_U64(len, 8);
	CHECK(memcmp(t, "abcdefgh", 8) == 0);
	tail_append(t, sizeof(t), &len, "ij", 2); /* drops the two oldest */
	CHECK_U64(len, 8);
	CHECK(memcmp(t, "cdefghij", 8) == 0);
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (char)('A' + i);
	tail_append(t, sizeof(t), &len, big, sizeof(big)); /* one append longer than the tail */
	CHECK_U64(len, 8);
	CHECK(memcmp(t, big + sizeof(big) - 8, 8) == 0);
	tail_append(t, sizeof(t), &len, "", 0);
	CHECK_U64(len, 8);
}

static void whole_transfers(void)
{
	char out[100000], in[sizeof(out)];
	int p[2], status = -1;
	pid_t pid;

	for (size_t i = 0; i < sizeof(out); i++)
		out[i] = (char)(i * 7);
	/* a pipe holds 64 KiB: the writer must loop, the reader must gather several reads */
	CHECK(pipe(p) == 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		close(p[0]);
		_exit(write_all(p[1], out, sizeof(out)) == 0 ? 0 : 1);
	}
	close(p[1]);
	CHECK(read_all(p[0], in, sizeof(in)) == 0);
	CHECK(memcmp(in, out, sizeof(out)) == 0);
	CHECK(read_all(p[0], in, 1) == -EIO); /* the writer is done: end of file */
	close(p[0]);
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int main(void)
{
	tail();
	whole_transfers();
	return tap_done();
}
