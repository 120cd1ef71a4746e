/* SPDX-License-Identifier: MIT */
/* util.c's stream helpers: the output tail kept from a child, whole reads and writes over a pipe. */
#include "util.h"
#include "tap.h"

#include <fcntl.h>
#include <sys/stat.h>
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

/* open_input / read_input: what is not a regular file is refused at once (a FIFO without a writer
 * would block a plain open forever), caps hold, and a regular file reads whole. */
static void inputs(void)
{
	char dir[] = "/tmp/test-util.XXXXXX", path[128], fifo[128], link[128];
	_cleanup_free_ char *text = NULL, *why = NULL;
	size_t len = 0;
	int fd;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/f", dir);
	snprintf(fifo, sizeof(fifo), "%s/p", dir);
	snprintf(link, sizeof(link), "%s/l", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0 && write_all(fd, "0123456789", 10) == 0);
	close(fd);
	CHECK(mkfifo(fifo, 0600) == 0);
	CHECK(symlink(path, link) == 0);

	CHECK(read_input(path, 10, 0, &text, &len, &why) == 0); /* exactly the cap */
	CHECK_U64(len, 10);
	CHECK_STR(text, "0123456789");
	free(TAKE_PTR(text));
	CHECK(read_input(path, 9, 0, &text, &len, &why) == -EFBIG);
	CHECK(why && strstr(why, "10 bytes"));
	CHECK(read_input(path, 0, 0, &text, &len, NULL) == 0); /* no cap */
	CHECK_U64(len, 10);
	free(TAKE_PTR(text));
	CHECK(read_input(fifo, 100, 0, &text, &len, &why) == -ENODEV);
	CHECK(why && strstr(why, "a FIFO"));
	CHECK(read_input("/dev/zero", 100, 0, &text, &len, &why) == -ENODEV);
	CHECK(why && strstr(why, "a character device"));
	CHECK(read_input("/dev/zero", 0, INPUT_ALLOW_BLOCK, &text, &len, NULL) == -ENODEV);
	CHECK(read_input(dir, 100, 0, &text, &len, &why) == -EISDIR);
	CHECK(read_input("/nonexistent/x", 100, 0, &text, &len, &why) == -ENOENT);
	CHECK(why && strstr(why, "No such file"));
	CHECK(read_input(link, 100, INPUT_NOFOLLOW, &text, &len, &why) == -ELOOP);
	CHECK(read_input(link, 100, 0, &text, &len, NULL) == 0);
	free(TAKE_PTR(text));
	/* the fd comes back blocking, at offset 0 */
	fd = open_input(path, 0, 0, NULL);
	CHECK(fd >= 0 && !(fcntl(fd, F_GETFL) & O_NONBLOCK) && lseek(fd, 0, SEEK_CUR) == 0);
	close(fd);
	unlink(path), unlink(fifo), unlink(link), rmdir(dir);
}

/* UTF-8 as JSON needs it: valid text untouched, each bad byte one U+FFFD. */
static void utf8(void)
{
	_cleanup_free_ char *a = NULL, *b = NULL, *c = NULL, *d = NULL;

	CHECK(utf8_valid("plain ascii"));
	CHECK(utf8_valid("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x92\xbe")); /* é € 💾 */
	CHECK(!utf8_valid("\xff"));
	CHECK(!utf8_valid("\xc3"));                 /* cut short */
	CHECK(!utf8_valid("\xc0\xaf"));            /* overlong '/' */
	CHECK(!utf8_valid("\xe0\x80\xaf"));        /* overlong, 3 bytes */
	CHECK(!utf8_valid("\xed\xa0\x80"));        /* surrogate U+D800 */
	CHECK(!utf8_valid("\xf4\x90\x80\x80"));    /* past U+10FFFF */
	CHECK(!utf8_valid("\x80"));                 /* stray continuation */
	a = utf8_sanitize("ok\xffok");
	CHECK_STR(a, "ok\xef\xbf\xbdok");
	b = utf8_sanitize("caf\xc3\xa9");
	CHECK_STR(b, "caf\xc3\xa9");
	c = utf8_sanitize("\xc3");
	CHECK_STR(c, "\xef\xbf\xbd");
	d = utf8_sanitize("\xed\xa0\x80x");
	CHECK_STR(d, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbdx");
	CHECK(utf8_valid(d));
}

/* A name in a message: one line, no escape sequence, every byte still told apart. */
static void escape(void)
{
	_cleanup_free_ char *a = str_escape("a\nb\tc\x1b[31m"), *b = str_escape("caf\xc3\xa9\xff"), *c = str_escape("back\\slash");
	_cleanup_free_ char *d = str_escape("\x01\x7f"), *e = str_escape("");

	CHECK_STR(a, "a\\nb\\tc\\e[31m");
	CHECK_STR(b, "caf\xc3\xa9\\xff");
	CHECK_STR(c, "back\\\\slash");
	CHECK_STR(d, "\\x01\\x7f");
	CHECK_STR(e, "");
}

/* What clone's messages go through: the /proc/PID/fd name of a held drive back to the operator's. */
static void replace(void)
{
	_cleanup_free_ char *a = str_replace_all("copying '/proc/7/fd/4' failed: '/proc/7/fd/4' gone", "/proc/7/fd/4",
						 "/dev/nvme1n1");
	_cleanup_free_ char *b = str_replace_all("/proc/7/fd/41", "/proc/7/fd/4", "/dev/x");
	_cleanup_free_ char *c = str_replace_all("nothing here", "/proc/7/fd/4", "/dev/x");
	_cleanup_free_ char *d = str_replace_all("aaa", "a", "bb");
	_cleanup_free_ char *e = str_replace_all("abc", "", "x");

	CHECK_STR(a, "copying '/dev/nvme1n1' failed: '/dev/nvme1n1' gone");
	CHECK_STR(b, "/dev/x1");
	CHECK_STR(c, "nothing here");
	CHECK_STR(d, "bbbbbb");
	CHECK_STR(e, "abc");
}

int main(void)
{
	replace();
	utf8();
	escape();
	tail();
	whole_transfers();
	inputs();
	return tap_done();
}
