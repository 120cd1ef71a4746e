/* SPDX-License-Identifier: MIT */
/* ident.c against real files, loop devices (plain, over a hard link, at an offset), partx partitions and device-mapper. */
#include "ident.h"
#include "util.h"
#include "tap.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

static char dir[] = "/tmp/test-ident.XXXXXX";
static char loops[8][64];
static int nloops;
static char dm[64];

static int run(const char *cmd)
{
	int st = system(cmd);

	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void cleanup(void)
{
	_cleanup_free_ char *rm = xasprintf("rm -rf '%s'", dir);

	if (dm[0]) {
		_cleanup_free_ char *c = xasprintf("dmsetup remove %s 2>/dev/null", dm);
		(void)run(c);
	}
	for (int i = nloops - 1; i >= 0; i--) {
		_cleanup_free_ char *c = xasprintf("partx -d %s 2>/dev/null; losetup -d %s 2>/dev/null", loops[i], loops[i]);
		(void)run(c);
	}
	(void)run(rm);
}

/* losetup -f --show ARGS: the device, or NULL */
static const char *attach(const char *args)
{
	_cleanup_free_ char *c = xasprintf("losetup -f --show %s 2>/dev/null", args);
	FILE *p = popen(c, "r");
	char *s = loops[nloops];

	if (!p || nloops == (int)ARRAY_SIZE(loops))
		return NULL;
	if (!fgets(s, sizeof(loops[0]), p)) {
		pclose(p);
		return NULL;
	}
	pclose(p);
	s[strcspn(s, "\n")] = '\0';
	if (!startswith(s, "/dev/loop"))
		return NULL;
	nloops++;
	return s;
}

static int xopen(const char *path, int flags)
{
	int fd = open(path, flags | O_CLOEXEC);

	if (fd < 0)
		fprintf(stderr, "open %s: %m\n", path);
	return fd;
}

/* Overlap both ways: the relation is symmetric. */
static int both(int a, int b)
{
	_cleanup_free_ char *w1 = NULL, *w2 = NULL;
	int r1 = ident_overlap(a, b, &w1), r2 = ident_overlap(b, a, &w2);

	if (r1 != r2)
		fprintf(stderr, "asymmetric: %d (%s) vs %d (%s)\n", r1, w1 ? w1 : "", r2, w2 ? w2 : "");
	return r1 == r2 ? r1 : -100;
}

static int in_use(int fd)
{
	_cleanup_free_ char *w = NULL;
	int r = ident_in_use(fd, &w);

	if (w)
		printf("# in use: %s\n", w);
	return r;
}

static bool key_same_fd(int a, int b)
{
	_cleanup_free_ char *ka = NULL, *kb = NULL;

	return ident_key_fd(a, &ka) == 0 && ident_key_fd(b, &kb) == 0 && ident_key_same(ka, kb);
}

static char *A, *A2, *B;

static void files(void)
{
	_cleanup_close_ int a = -1, a2 = -1, b = -1, ap = -1, d = -1;
	_cleanup_free_ char *proc = NULL, *fifo = xasprintf("%s/fifo", dir);
	struct ident_hold h1 = IDENT_HOLD_INIT, h2 = IDENT_HOLD_INIT;

	a = xopen(A, O_RDONLY);
	a2 = xopen(A2, O_RDONLY);
	b = xopen(B, O_RDONLY);
	proc = xasprintf("/proc/self/fd/%d", a);
	ap = xopen(proc, O_RDONLY);
	d = xopen(dir, O_RDONLY | O_DIRECTORY);
	CHECK(a >= 0 && a2 >= 0 && b >= 0 && ap >= 0 && d >= 0);
	CHECK(both(a, a) == 1);
	CHECK(both(a, a2) == 1);  /* a hard link: another name, the same inode */
	CHECK(both(a, ap) == 1);  /* /proc/self/fd */
	CHECK(both(a, b) == 0);   /* two files of one filesystem */
	CHECK(both(d, a) == 0);   /* a new file in the directory is not the file */

	CHECK(key_same_fd(a, a2));
	CHECK(key_same_fd(a, ap));
	CHECK(!key_same_fd(a, b));
	CHECK(ident_key_same("file 8:1 12", "file 8:1 12"));
	CHECK(!ident_key_same("file 8:1 12", "file 8:2 12"));
	CHECK(ident_key_same("block 7:0 file 8:1 12", "file 8:1 12"));
	CHECK(ident_key_same("file 8:1 12", "block 7:0 file 8:1 12"));
	CHECK(!ident_key_same("block 7:0 file 8:1 13", "file 8:1 12"));
	CHECK(!ident_key_same("block 7:0 file 8:1 12", "block 7:0 file 8:1 13")); /* rebound to another file */
	CHECK(ident_key_same("block 259:0", "block 259:0"));
	CHECK(!ident_key_same("block 259:0", "block 259:1"));
	CHECK(!ident_key_same("disk.img", "./disk.img")); /* path text is no identity */
	CHECK(!ident_key_same(NULL, "block 7:0"));

	/* holds: an image is locked (flock), a second hold on another name of it is busy */
	CHECK(ident_hold_open(A, true, &h1) == 0);
	CHECK(ident_hold_claim(&h1) == 0);
	CHECK(ident_hold_open(A2, true, &h2) == 0);
	CHECK(ident_hold_claim(&h2) == -EBUSY);
	ident_hold_close(&h2);
	{
		/* the /proc name a child process is given reaches the held inode */
		_cleanup_close_ int x = xopen(h1.proc, O_RDONLY);
		CHECK(x >= 0 && both(x, a) == 1);
	}
	ident_hold_pause(&h1); /* an image keeps its lock through a tool's run */
	CHECK(h1.fd >= 0);
	CHECK(ident_hold_resume(&h1) == 0);
	ident_hold_close(&h1);
	CHECK(ident_hold_open(A2, true, &h2) == 0);
	CHECK(ident_hold_claim(&h2) == 0); /* released with the first */
	ident_hold_close(&h2);
	/* a FIFO is refused at once, not waited on */
	CHECK(mkfifo(fifo, 0600) == 0);
	CHECK(ident_hold_open(fifo, true, &h2) == -ENOTBLK);
	CHECK(ident_hold_open("/dev/null", true, &h2) == -ENOTBLK);
	CHECK(ident_in_use(a, NULL) == 0);
}

/* Wait for a partition node partx made. */
static int open_part(const char *loop, int n)
{
	_cleanup_free_ char *p = xasprintf("%sp%d", loop, n);

	for (int i = 0; i < 50; i++) {
		int fd = open(p, O_RDONLY | O_CLOEXEC);
		struct stat st;

		if (fd >= 0 && fstat(fd, &st) == 0 && S_ISBLK(st.st_mode))
			return fd;
		if (fd >= 0)
			close(fd);
		usleep(100000);
	}
	fprintf(stderr, "no %s\n", p);
	return -1;
}

static bool devices(void)
{
	_cleanup_close_ int a = -1, b = -1, l1 = -1, l2 = -1, l3 = -1, lb = -1, p1 = -1, p2 = -1, ex = -1;
	_cleanup_free_ char *args = NULL, *cmd = NULL;
	const char *L1, *L2, *L3, *LB;
	struct ident_hold h = IDENT_HOLD_INIT;
	pid_t child;

	if (geteuid() != 0 || access("/dev/loop-control", F_OK) != 0)
		return false;
	L1 = attach(A);
	if (!L1)
		return false;
	L2 = attach(A2);
	args = xasprintf("--offset 1048576 --sizelimit 4194304 '%s'", A);
	L3 = attach(args);
	LB = attach(B);
	CHECK(L2 && L3 && LB);
	if (!L2 || !L3 || !LB)
		return true;
	a = xopen(A, O_RDONLY);
	b = xopen(B, O_RDONLY);
	l1 = xopen(L1, O_RDONLY);
	l2 = xopen(L2, O_RDONLY);
	l3 = xopen(L3, O_RDONLY);
	lb = xopen(LB, O_RDONLY);

	CHECK(both(a, l1) == 1);   /* a loop device over the file */
	CHECK(both(a, l2) == 1);   /* over a hard link of it */
	CHECK(both(a, l3) == 1);   /* at an offset of it */
	CHECK(both(l1, l2) == 1);  /* two loop devices over one file */
	CHECK(both(l1, l3) == 1);
	CHECK(both(b, l1) == 0);   /* another file */
	CHECK(both(l1, lb) == 0);
	CHECK(both(a, lb) == 0);
	CHECK(key_same_fd(a, l1));
	CHECK(key_same_fd(a, l2));
	CHECK(!key_same_fd(b, l1));
	CHECK(!key_same_fd(l1, l2)); /* two devices: the plan names one of them */

	/* partitions (the kernel here does not scan tables: partx makes the nodes) */
	cmd = xasprintf("partx -a %s 2>/dev/null", L1);
	if (run(cmd) == 0 && (p1 = open_part(L1, 1)) >= 0) {
		p2 = open_part(L1, 2);
		CHECK(both(p1, a) == 1);  /* a partition of a loop over the file */
		CHECK(both(p1, l1) == 1); /* ... is in its whole disk */
		CHECK(both(p1, l2) == 1);
		CHECK(both(p1, b) == 0);
		CHECK(both(p1, lb) == 0);
		CHECK(p2 >= 0 && both(p1, p2) == 1); /* two partitions of one disk count as one */
		/* a partition claimed (as a mount claims it) makes the loop over the same file in use */
		CHECK(in_use(a) == 0);
		CHECK(in_use(l2) == 0);
		{
			_cleanup_free_ char *pp = xasprintf("%sp1", L1);
			ex = open(pp, O_RDONLY | O_EXCL | O_CLOEXEC);
			CHECK(ex >= 0);
			CHECK(in_use(a) == 1);
			CHECK(in_use(l2) == 1);  /* the target named by another loop device over the file */
			CHECK(in_use(b) == 0);
			close(ex);
			ex = -1;
		}
	} else
		printf("# partx could not add partitions of %s: partition checks skipped\n", L1);

	/* in use through another loop device: claimed (O_EXCL, as a mount), or open in a process */
	CHECK(in_use(a) == 0);
	CHECK(in_use(l1) == 0);
	ex = open(L3, O_RDONLY | O_EXCL | O_CLOEXEC);
	CHECK(ex >= 0);
	CHECK(in_use(a) == 1);  /* the image, with a loop device over it claimed */
	CHECK(in_use(l1) == 1); /* the loop device, with another over the same file claimed */
	CHECK(in_use(l3) == 0); /* the claimed one itself: its own claim is the caller's business */
	CHECK(in_use(b) == 0);
	close(ex);
	ex = -1;
	child = fork();
	if (child == 0) {
		int fd = open(L2, O_RDONLY);
		(void)fd;
		pause();
		_exit(0);
	}
	usleep(300000);
	CHECK(in_use(a) == 1);  /* L2 open in another process */
	CHECK(in_use(l1) == 1);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	CHECK(in_use(a) == 0);

	/* a hold on a loop device is O_EXCL: mount and other claimers are refused meanwhile */
	CHECK(ident_hold_open(L1, true, &h) == 0 && h.blk);
	CHECK(ident_hold_claim(&h) == 0);
	ex = open(L1, O_RDONLY | O_EXCL | O_CLOEXEC);
	CHECK(ex < 0 && errno == EBUSY);
	ident_hold_pause(&h); /* handed to a tool */
	ex = open(L1, O_RDONLY | O_EXCL | O_CLOEXEC);
	CHECK(ex >= 0);
	CHECK(ident_hold_resume(&h) == -EBUSY); /* taken meanwhile: refused, not shared */
	close(ex);
	ex = -1;
	CHECK(ident_hold_resume(&h) == 0);
	ident_hold_close(&h);

	/* device-mapper linear over the loop device: a holder, followed through slaves */
	if (access("/usr/sbin/dmsetup", X_OK) == 0 || access("/sbin/dmsetup", X_OK) == 0) {
		_cleanup_free_ char *dmc = NULL, *dmp = NULL;
		_cleanup_close_ int d = -1;

		snprintf(dm, sizeof(dm), "swaptool-ident-%d", (int)getpid());
		dmc = xasprintf("dmsetup create %s --table '0 8192 linear %s 0' 2>/dev/null", dm, LB);
		dmp = xasprintf("/dev/mapper/%s", dm);
		if (run(dmc) == 0 && (d = open(dmp, O_RDONLY | O_CLOEXEC)) >= 0) {
			CHECK(both(d, b) == 1);  /* dm -> loop -> file */
			CHECK(both(d, lb) == 1);
			CHECK(both(d, a) == 0);
			CHECK(both(d, l1) == 0);
			CHECK(in_use(b) == 1);   /* the loop over the file is held by dm */
			CHECK(in_use(d) == 0);   /* the dm device itself: nothing else over its file */
			close(d);
			d = -1;
			dmc = xasprintf("dmsetup remove %s 2>/dev/null", dm);
			(void)run(dmc);
			dm[0] = '\0';
			CHECK(in_use(b) == 0);
		} else {
			dm[0] = '\0';
			printf("# dmsetup create failed: device-mapper checks skipped\n");
		}
	} else
		printf("# no dmsetup: device-mapper checks skipped\n");

	/* an image on a filesystem that lies on a loop device lies in that device and its file: the
	 * target inside the source */
	{
		_cleanup_free_ char *C = xasprintf("%s/c.img", dir), *M = xasprintf("%s/m", dir), *c = NULL;
		_cleanup_free_ char *inner = xasprintf("%s/m/inner.img", dir);
		const char *LC;

		c = xasprintf("truncate -s 16M '%s' && mkfs.ext4 -q -F '%s' 2>/dev/null", C, C);
		if (run(c) == 0 && (LC = attach(C)) != NULL && mkdir(M, 0700) == 0) {
			free(c);
			c = xasprintf("mount '%s' '%s' 2>/dev/null && truncate -s 1M '%s'", LC, M, inner);
			if (run(c) == 0) {
				_cleanup_close_ int in = xopen(inner, O_RDONLY), lc = xopen(LC, O_RDONLY), cf = xopen(C, O_RDONLY);
				_cleanup_close_ int md = xopen(M, O_RDONLY | O_DIRECTORY);

				CHECK(both(in, lc) == 1); /* the file lies on the loop device */
				CHECK(both(in, cf) == 1); /* ... and so in the loop's file */
				CHECK(both(md, lc) == 1); /* a file created in that directory too */
				CHECK(both(in, a) == 0);
				CHECK(both(in, b) == 0);
				CHECK(in_use(cf) == 1);   /* its loop device is mounted */
			} else
				printf("# mount failed: file-on-a-loop checks skipped\n");
			free(c);
			c = xasprintf("umount '%s' 2>/dev/null", M);
			(void)run(c);
		}
	}

	{
		dev_t *v = NULL;
		size_t n = 0;
		struct stat st;

		CHECK(fstat(a, &st) == 0);
		CHECK(ident_loops_over(st.st_dev, st.st_ino, &v, &n) == 0);
		CHECK_U64(n, 3); /* L1, L2 (over the hard link) and L3 */
		free(v);
	}
	return true;
}

int main(void)
{
	_cleanup_free_ char *mk = NULL;
	bool dev;

	if (!mkdtemp(dir))
		return 99;
	atexit(cleanup);
	A = xasprintf("%s/a.img", dir);
	A2 = xasprintf("%s/a-link.img", dir);
	B = xasprintf("%s/b.img", dir);
	/* a 16 MiB disk with two partitions (sgdisk when present, else no table: partx is skipped) */
	mk = xasprintf("truncate -s 16M '%s' '%s' && (sgdisk -n1:2048:+4M -n2:0:0 '%s' >/dev/null 2>&1 || true)", A, B, A);
	if (run(mk) != 0 || link(A, A2) < 0)
		return 99;
	files();
	dev = devices();
	if (!dev)
		printf("# no loop devices (needs root and /dev/loop-control): device checks skipped\n");
	if (tap_failures)
		return tap_done();
	tap_done();
	return dev ? 0 : 77;
}
