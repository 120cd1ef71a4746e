/* SPDX-License-Identifier: MIT */
/* The composite file: target below the cut, read-only source above it, writes above it in memory. */
#define FUSE_USE_VERSION 31

#include "composite.h"

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <fuse.h>
#include <linux/falloc.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "proc.h"
#include "util.h"

#define BLK 4096u
#define NAME "disk"

struct composite {
	struct composite_opts o;
	bool tgt_file;        /* an image file: an all-zero block becomes a hole, not written data */
	char *dir, *path;
	bool cut_below_size;  /* a source is read above the cut */
	pid_t pid;            /* the server process (serve) */
	int fd;               /* the parent's end of the server's pipe */
	/* the server's own, from here on */
	struct fuse *fuse;
	uint8_t *overlay;     /* size - cut bytes, anonymous, touched only where written */
	uint8_t *have;        /* one bit per 4 KiB block of the overlay */
	uint64_t olen;
	uint8_t *hole;        /* image target: one bit per 4 KiB block below the cut known to be a hole */
	uint64_t hlen;
	struct composite_stats st;
	int err;
};

static struct composite *me(void)
{
	return fuse_get_context()->private_data;
}

static int fail(struct composite *c, int r)
{
	if (!c->err)
		c->err = r;
	return -EIO;
}

static void *co_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	/* every read and write reaches us (no page cache copy of a disk), in 1 MiB requests */
	cfg->direct_io = 1;
	cfg->attr_timeout = 3600;
	cfg->entry_timeout = 3600;
	conn->max_write = 1u << 20;
	conn->max_readahead = 0;
	return fuse_get_context()->private_data;
}

static int co_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	struct composite *c = me();

	(void)fi;
	memset(st, 0, sizeof(*st));
	if (streq(path, "/")) {
		st->st_mode = S_IFDIR | 0700;
		st->st_nlink = 2;
		return 0;
	}
	if (!streq(path, "/" NAME))
		return -ENOENT;
	st->st_mode = S_IFREG | 0600;
	st->st_nlink = 1;
	st->st_size = (off_t)c->o.size;
	st->st_blksize = BLK;
	st->st_blocks = (blkcnt_t)(c->o.size / 512);
	return 0;
}

static int co_open(const char *path, struct fuse_file_info *fi)
{
	if (!streq(path, "/" NAME))
		return -ENOENT;
	fi->direct_io = 1;
	return 0;
}

/* resize2fs cuts an image file to the new size; the composite keeps its size, nothing to do. */
static int co_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	(void)fi, (void)size;
	return streq(path, "/" NAME) ? 0 : -ENOENT;
}

static int co_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	struct composite *c = me();

	(void)path, (void)fi;
	if ((datasync ? fdatasync(c->o.tgt_fd) : fsync(c->o.tgt_fd)) < 0)
		return fail(c, -errno);
	return 0;
}

static int co_flush(const char *path, struct fuse_file_info *fi)
{
	(void)path, (void)fi;
	return 0;
}

static int pread_full(int fd, char *buf, size_t n, uint64_t off)
{
	while (n) {
		ssize_t r = pread(fd, buf, n, (off_t)off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0) { /* past the end of an image: reads as zeros */
			memset(buf, 0, n);
			return 0;
		}
		buf += r;
		n -= (size_t)r;
		off += (uint64_t)r;
	}
	return 0;
}

static bool overlay_has(const struct composite *c, uint64_t b)
{
	return c->have[b / 8] & (1u << (b % 8));
}

/* Whether the source's byte `off` holds something (metadata or file data), and where that
 * answer ends; without a list every byte counts. */
static bool wanted(const struct composite *c, uint64_t off, uint64_t *until)
{
	size_t lo = 0, hi = c->o.nruns;

	*until = UINT64_MAX;
	if (!c->o.runs)
		return true;
	/* the first run that ends after off */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (c->o.runs[mid][0] + c->o.runs[mid][1] <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == c->o.nruns)
		return false;
	if (c->o.runs[lo][0] <= off) {
		*until = c->o.runs[lo][0] + c->o.runs[lo][1];
		return true;
	}
	*until = c->o.runs[lo][0];
	return false;
}

/* Bytes [off, off+n) above the cut: the overlay's blocks where written, the source's elsewhere. */
static int read_high(struct composite *c, char *buf, size_t n, uint64_t off)
{
	while (n) {
		uint64_t rel = off - c->o.cut, b = rel / BLK, in = rel % BLK;
		size_t k = BLK - in < n ? BLK - in : n;
		int r;

		if (overlay_has(c, b))
			memcpy(buf, c->overlay + rel, k);
		else {
			uint64_t until;
			bool care;

			/* as many blocks as are not in the overlay, in one read */
			while (k < n && !overlay_has(c, (rel + k) / BLK))
				k += BLK < n - k ? BLK : n - k;
			care = wanted(c, off, &until);
			if (until - off < k)
				k = (size_t)(until - off);
			if (care) {
				r = pread_full(c->o.src_fd, buf, k, c->o.src_off + off);
				if (r < 0)
					return r;
				c->st.src_read_bytes += k;
			} else
				memset(buf, 0, k); /* free, or an unwritten extent's: its bytes mean nothing */
		}
		buf += k;
		n -= k;
		off += k;
	}
	return 0;
}

static int co_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
	struct composite *c = me();
	uint64_t o = (uint64_t)off, n;
	int r;

	(void)path, (void)fi;
	if (o >= c->o.size)
		return 0;
	n = size < c->o.size - o ? size : c->o.size - o;
	if (o < c->o.cut) {
		uint64_t k = n < c->o.cut - o ? n : c->o.cut - o;

		r = pread_full(c->o.tgt_fd, buf, k, c->o.tgt_off + o);
		if (r < 0)
			return fail(c, r);
		c->st.tgt_read_bytes += k;
		if (k < n) {
			r = read_high(c, buf + k, n - k, c->o.cut);
			if (r < 0)
				return fail(c, r);
		}
	} else {
		r = read_high(c, buf, n, o);
		if (r < 0)
			return fail(c, r);
	}
	return (int)n;
}

/* Below the cut: the target. On an image target an all-zero whole block becomes a hole (it reads
 * as zeros all the same), which is what keeps a rehearsal's scratch target as sparse as its
 * source: the blocks resize2fs moves there hold no file data. */
static bool hole_has(const struct composite *c, uint64_t b)
{
	return c->hole[b / 8] & (1u << (b % 8));
}

/* Set or clear bits [b0, b1) of a map, whole bytes at a time in the middle. */
static void bits(uint8_t *map, uint64_t b0, uint64_t b1, bool v)
{
	while (b0 < b1 && b0 % 8) {
		if (v)
			map[b0 / 8] |= 1u << (b0 % 8);
		else
			map[b0 / 8] &= ~(1u << (b0 % 8));
		b0++;
	}
	if (b1 - b0 >= 8) {
		memset(map + b0 / 8, v ? 0xff : 0, (b1 - b0) / 8);
		b0 += (b1 - b0) / 8 * 8;
	}
	while (b0 < b1) {
		if (v)
			map[b0 / 8] |= 1u << (b0 % 8);
		else
			map[b0 / 8] &= ~(1u << (b0 % 8));
		b0++;
	}
}

static void hole_set(struct composite *c, uint64_t off, uint64_t n, bool v)
{
	/* a hole is known only for whole blocks; data makes every block it touches data */
	if (v)
		bits(c->hole, (off + BLK - 1) / BLK, (off + n) / BLK, true);
	else
		bits(c->hole, off / BLK, (off + n + BLK - 1) / BLK, false);
}

/* True when every block of [off, off+n) is a hole of the image target (reads as zeros). */
static bool all_holes(const struct composite *c, uint64_t off, uint64_t n)
{
	for (uint64_t b = off / BLK; b < (off + n + BLK - 1) / BLK; b++)
		if (!hole_has(c, b))
			return false;
	return true;
}

/* Below the cut: the target. On an image target an all-zero block becomes a hole (it reads as
 * zeros all the same), and over a hole nothing is done at all: that is what keeps a rehearsal's
 * scratch target as sparse as its source and the move of unwritten extents' blocks cheap (the
 * blocks resize2fs moves there hold no file data). The hole map costs no system call per write,
 * where one fallocate per MiB moved would cost minutes at the incident's size. */
static int write_low(struct composite *c, const char *buf, size_t n, uint64_t off)
{
	while (n) {
		size_t k = n;
		bool z = false;
		int r;

		if (c->hole) {
			/* a piece up to the next block boundary, then whole blocks grouped by zero or not
			 * (the kernel splits a request at the page boundaries of resize2fs's buffer) */
			if (off % BLK)
				k = BLK - off % BLK < n ? BLK - off % BLK : n;
			else if (n >= BLK) {
				k = BLK;
				while (k + BLK <= n && buf_is_zero(buf + k, BLK) == buf_is_zero(buf, BLK))
					k += BLK;
			} else
				k = n;
			z = buf_is_zero(buf, k);
		}
		if (z && all_holes(c, off, k))
			c->st.tgt_zero_bytes += k;
		else if (z && k % BLK == 0 && off % BLK == 0 &&
			 fallocate(c->o.tgt_fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)(c->o.tgt_off + off),
				   (off_t)k) == 0) {
			c->st.tgt_zero_bytes += k;
			hole_set(c, off, k, true);
		} else {
			r = pwrite_all(c->o.tgt_fd, buf, k, c->o.tgt_off + off);
			if (r < 0)
				return r;
			c->st.tgt_write_bytes += k;
			if (c->hole)
				hole_set(c, off, k, false);
		}
		buf += k;
		n -= k;
		off += k;
	}
	return 0;
}

static int write_high(struct composite *c, const char *buf, size_t n, uint64_t off)
{
	while (n) {
		uint64_t rel = off - c->o.cut, b = rel / BLK, in = rel % BLK;
		size_t k = BLK - in < n ? BLK - in : n;

		if (!overlay_has(c, b)) {
			/* a partial block starts from the source's bytes */
			if (k < BLK) {
				uint64_t bs = c->o.cut + b * BLK;
				size_t len = bs + BLK <= c->o.size ? BLK : (size_t)(c->o.size - bs);
				int r = pread_full(c->o.src_fd, (char *)c->overlay + b * BLK, len, c->o.src_off + bs);

				if (r < 0)
					return r;
			}
			c->have[b / 8] |= 1u << (b % 8);
			c->st.overlay_bytes += BLK;
		}
		memcpy(c->overlay + rel, buf, k);
		buf += k;
		n -= k;
		off += k;
	}
	return 0;
}

static int co_write(const char *path, const char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
	struct composite *c = me();
	uint64_t o = (uint64_t)off;
	int r = 0;

	(void)path, (void)fi;
	if (o >= c->o.size || size > c->o.size - o)
		return -ENOSPC;
	if (o < c->o.cut) {
		uint64_t k = size < c->o.cut - o ? size : c->o.cut - o;

		r = write_low(c, buf, k, o);
		if (r == 0 && k < size)
			r = write_high(c, buf + k, size - k, c->o.cut);
	} else
		r = write_high(c, buf, size, o);
	if (r < 0)
		return fail(c, r);
	return (int)size;
}

static int co_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off, struct fuse_file_info *fi,
		      enum fuse_readdir_flags flags)
{
	(void)off, (void)fi, (void)flags;
	if (!streq(path, "/"))
		return -ENOENT;
	fill(buf, ".", NULL, 0, 0);
	fill(buf, "..", NULL, 0, 0);
	fill(buf, NAME, NULL, 0, 0);
	return 0;
}

static void free_composite(struct composite *c);
static int map_holes(struct composite *c);

static const struct fuse_operations ops = {
	.init = co_init,
	.getattr = co_getattr,
	.open = co_open,
	.read = co_read,
	.write = co_write,
	.truncate = co_truncate,
	.fsync = co_fsync,
	.flush = co_flush,
	.readdir = co_readdir,
};

/* The server's side of a teardown it did not ask for: the parent died (PR_SET_PDEATHSIG) or was
 * killed with its group. The loop stops; a lazy unmount here ends a read already waiting on
 * /dev/fuse (umount2 is one system call, safe in a handler; without root it fails and
 * fuse_unmount after the loop asks fusermount3). */
static struct fuse *volatile g_fuse;
static volatile sig_atomic_t g_dying;
static char g_mnt[PATH_MAX];

static void on_term(int sig)
{
	(void)sig;
	g_dying = 1;
	if (g_fuse)
		fuse_exit(g_fuse);
	(void)umount2(g_mnt, MNT_DETACH);
}

/* What the server sends its parent: once when it is mounted (or why not), once when it ends. */
struct msg {
	int err;
	struct composite_stats st;
	char why[PATH_MAX]; /* the mount point when mounted, why not when not */
};

static void send_msg(int fd, int err, const struct composite_stats *st, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void send_msg(int fd, int err, const struct composite_stats *st, const char *fmt, ...)
{
	struct msg m = { .err = err };
	va_list ap;

	if (st)
		m.st = *st;
	va_start(ap, fmt);
	vsnprintf(m.why, sizeof(m.why), fmt, ap);
	va_end(ap);
	(void)write_all(fd, &m, sizeof(m));
}

static int read_msg(int fd, struct msg *m, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	size_t got = 0;

	while (got < sizeof(*m)) {
		int r = poll(&p, 1, timeout_ms);
		ssize_t n;

		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0)
			return -ETIMEDOUT;
		if (r < 0)
			return -errno;
		n = read(fd, (char *)m + got, sizeof(*m) - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EPIPE;
		got += (size_t)n;
	}
	return 0;
}

/* A descriptor of our own on what `fd` is open on: a new open file description, so neither the
 * image's flock nor the position is shared, and the parent's hold ends with the parent. */
static int reopen(int fd, int flags)
{
	char p[48];

	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	return open(p, flags | O_CLOEXEC);
}

/* Every descriptor but stdin/out/err (then /dev/null) and `keep`: the parent's state lock, pipes
 * and holds must not live on in a server that outlives it by a moment. Below the soft limit only
 * (valgrind keeps its own descriptors above it). */
static void close_others(const int *keep, size_t n)
{
	struct rlimit rl = { .rlim_cur = RLIM_INFINITY };
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	DIR *d;
	struct dirent *e;

	if (null >= 0) {
		dup2(null, STDIN_FILENO);
		dup2(null, STDOUT_FILENO);
		dup2(null, STDERR_FILENO);
		close(null);
	}
	getrlimit(RLIMIT_NOFILE, &rl);
	d = opendir("/proc/self/fd");
	if (!d)
		return;
	while ((e = readdir(d))) {
		char *end;
		long fd = strtol(e->d_name, &end, 10);
		bool k = *end || fd < 3 || fd == dirfd(d) || (rlim_t)fd >= rl.rlim_cur;

		for (size_t i = 0; i < n; i++)
			k = k || keep[i] == fd;
		if (!k)
			close((int)fd);
	}
	closedir(d);
}

/* The server's setup; on failure the message for the parent. */
static int serve_setup(struct composite *c, char *why, size_t wlen)
{
	char *argv[] = { "swaptool", "-o", "fsname=swaptool-composite,subtype=swaptool", NULL };
	struct fuse_args args = FUSE_ARGS_INIT(3, argv);
	int r;

	c->olen = c->o.size - c->o.cut + BLK;
	/* Address space only: pages exist where resize2fs wrote above the cut (a few MB). */
	c->overlay = mmap(NULL, c->olen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	c->have = mmap(NULL, c->olen / BLK / 8 + 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		       -1, 0);
	if (c->overlay == MAP_FAILED || c->have == MAP_FAILED) {
		r = -errno;
		snprintf(why, wlen, "cannot map %" PRIu64 " bytes of address space for the overlay: %s", c->o.size - c->o.cut,
			 strerror(-r));
		return r;
	}
	if (c->tgt_file && (r = map_holes(c)) < 0) {
		snprintf(why, wlen, "cannot map the holes of the target: %s", strerror(-r));
		return r;
	}
	c->fuse = fuse_new(&args, &ops, sizeof(ops), c);
	fuse_opt_free_args(&args);
	if (!c->fuse) {
		snprintf(why, wlen, "cannot start a FUSE file system (libfuse3)");
		return -ENOTSUP;
	}
	g_fuse = c->fuse;
	if (fuse_mount(c->fuse, c->dir) != 0) {
		snprintf(why, wlen, "cannot mount a FUSE file system on '%s': is /dev/fuse there (modprobe fuse)?", c->dir);
		return -ENOTSUP;
	}
	return 0;
}

/* The server process: own process group (a terminal's SIGINT is the parent's to act on), gone
 * with its parent, no descriptor of the parent's but the two disks (reopened) and its pipe. It
 * answers requests until the parent unmounts the file (the read on /dev/fuse then ends), then
 * sends the figures of its life and exits. Single-threaded, and the parent runs no thread: the
 * parent forks resize2fs safely, under valgrind too. */
static _Noreturn void serve(struct composite *c, int wfd, pid_t parent)
{
	struct sigaction sa = { .sa_handler = on_term }; /* no SA_RESTART: the read on /dev/fuse ends */
	sigset_t none;
	char why[PATH_MAX] = "";
	int keep[3], r;

	setpgid(0, 0);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGINT, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid() != parent)
		_exit(1); /* the parent is gone already: nothing was made */
	c->o.tgt_fd = reopen(c->o.tgt_fd, O_RDWR);
	c->o.src_fd = c->o.src_fd >= 0 ? reopen(c->o.src_fd, O_RDONLY) : -1;
	keep[0] = wfd, keep[1] = c->o.tgt_fd, keep[2] = c->o.src_fd;
	close_others(keep, ARRAY_SIZE(keep));
	if (c->o.tgt_fd < 0 || (c->o.src_fd < 0 && c->cut_below_size)) {
		r = -errno;
		snprintf(why, sizeof(why), "cannot reopen the disks: %s", strerror(errno));
	} else if (!mkdtemp(c->dir)) {
		/* made here, not by the parent: a parent killed before the fork leaves no directory,
		 * one killed after it leaves this process to remove it */
		r = -errno;
		snprintf(why, sizeof(why), "cannot create a mount point '%s': %s", c->dir, strerror(errno));
		c->dir[0] = '\0';
	} else {
		snprintf(g_mnt, sizeof(g_mnt), "%s", c->dir);
		r = serve_setup(c, why, sizeof(why));
	}
	if (r < 0) {
		if (c->dir[0])
			(void)rmdir(c->dir);
		send_msg(wfd, r, NULL, "%s", why);
		_exit(1);
	}
	send_msg(wfd, 0, NULL, "%s", c->dir);
	if (!g_dying)
		fuse_loop(c->fuse);
	/* after the parent's unmount this finds the connection gone and returns; after the parent's
	 * death it unmounts (fusermount3 -u without root). The directory goes either way, before the
	 * parent hears "done": a parent killed after that (waiting for this process) leaves none. */
	fuse_unmount(c->fuse);
	(void)rmdir(c->dir);
	send_msg(wfd, c->err, &c->st, "done");
	g_fuse = NULL;
	fuse_destroy(c->fuse);
	close(wfd);
	close(c->o.tgt_fd);
	if (c->o.src_fd >= 0)
		close(c->o.src_fd);
	free_composite(c);
	_exit(0);
}

static void free_composite(struct composite *c)
{
	if (c->overlay && c->overlay != MAP_FAILED)
		munmap(c->overlay, c->olen);
	if (c->have && c->have != MAP_FAILED)
		munmap(c->have, c->olen / BLK / 8 + 1);
	if (c->hole)
		munmap(c->hole, c->hlen);
	if (c->fd >= 0)
		close(c->fd);
	free(c->dir);
	free(c->path);
	free(c);
}

/* The holes of an image target below the cut, from SEEK_DATA/SEEK_HOLE, as whole 4 KiB blocks. */
static int map_holes(struct composite *c)
{
	uint64_t pos = 0, end = c->o.cut;

	c->hlen = c->o.cut / BLK / 8 + 1;
	c->hole = mmap(NULL, c->hlen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (c->hole == MAP_FAILED) {
		c->hole = NULL;
		return -errno;
	}
	while (pos < end) {
		off_t d = lseek(c->o.tgt_fd, (off_t)(c->o.tgt_off + pos), SEEK_DATA), h;
		uint64_t ds, he;

		if (d < 0 && errno != ENXIO)
			return -errno;
		ds = d < 0 ? end : (uint64_t)d - c->o.tgt_off;
		if (ds > end)
			ds = end;
		/* [pos, ds) is a hole: its whole blocks */
		hole_set(c, pos, ds - pos, true);
		if (ds >= end)
			break;
		h = lseek(c->o.tgt_fd, (off_t)(c->o.tgt_off + ds), SEEK_HOLE);
		if (h < 0)
			return -errno;
		he = (uint64_t)h - c->o.tgt_off;
		pos = he > ds ? he : ds + BLK;
	}
	return 0;
}

/* Unmount from this side: the server's read on /dev/fuse then ends. */
static void unmount_dir(const char *dir)
{
	if (umount2(dir, MNT_DETACH) < 0 && errno == EPERM) {
		/* without root the mount is fusermount3's to undo */
		char *argv[] = { "fusermount3", "-u", "-q", "-z", (char *)dir, NULL };
		struct proc_opts o = { .argv = argv, .die_with_parent = true, .timeout_ns = 30ULL * 1000000000ULL };
		struct proc_result res;

		if (proc_run(&o, &res) == 0)
			proc_result_free(&res);
	}
}

int composite_mount(const char *dir, const struct composite_opts *o, struct composite **out, char **why)
{
	struct composite *c = xcalloc(1, sizeof(*c));
	struct stat st;
	struct msg m;
	int pfd[2], r;
	pid_t self = getpid();

	*out = NULL;
	c->o = *o;
	c->fd = -1;
	c->cut_below_size = o->cut < o->size;
	if (o->cut > o->size || o->cut % BLK)
		return free_composite(c), set_why(why, -EINVAL, "a cut at byte %" PRIu64 " of %" PRIu64 " bytes", o->cut,
						  o->size);
	if (fstat(o->tgt_fd, &st) < 0)
		return free_composite(c), set_why(why, -errno, "cannot stat the target: %m");
	c->tgt_file = S_ISREG(st.st_mode);
	c->dir = xasprintf("%s/swaptool-composite.XXXXXX", dir);
	if (strlen(c->dir) >= sizeof(m.why) - 1) {
		free_composite(c);
		return set_why(why, -ENAMETOOLONG, "the directory '%s' has too long a name for a mount point", dir);
	}
	if (pipe2(pfd, O_CLOEXEC) < 0) {
		r = -errno;
		free_composite(c);
		return set_why(why, r, "cannot start the composite's server: %s", strerror(-r));
	}
	c->pid = fork();
	if (c->pid == 0) {
		close(pfd[0]);
		serve(c, pfd[1], self);
	}
	close(pfd[1]);
	c->fd = pfd[0];
	if (c->pid < 0) {
		r = -errno;
		free_composite(c);
		return set_why(why, r, "cannot start the composite's server: %s", strerror(-r));
	}
	/* mounted (the mount exists now: requests wait for the server's loop), or why not */
	r = read_msg(c->fd, &m, 120000);
	if (r == 0 && m.err < 0)
		r = set_why(why, m.err, "%s", m.why);
	else if (r < 0)
		r = set_why(why, r == -EPIPE ? -EIO : r, "the composite's server ended before it was mounted: %s",
			    strerror(-r));
	if (r < 0) {
		/* the server removed what it made before it said why */
		kill(c->pid, SIGKILL);
		while (waitpid(c->pid, NULL, 0) < 0 && errno == EINTR)
			;
		free_composite(c);
		return r;
	}
	/* the name the server gave its directory */
	free(c->dir);
	c->dir = xstrdup(m.why);
	free(c->path);
	c->path = xasprintf("%s/" NAME, c->dir);
	*out = c;
	return 0;
}

const char *composite_path(const struct composite *c)
{
	return c->path;
}

int composite_unmount(struct composite *c, struct composite_stats *st)
{
	struct msg m = { 0 };
	int r, status = 0;

	if (!c)
		return 0;
	unmount_dir(c->dir);
	r = read_msg(c->fd, &m, 120000);
	if (r < 0)
		kill(c->pid, SIGKILL); /* a server that does not end: what it had is lost, say so */
	while (waitpid(c->pid, &status, 0) < 0 && errno == EINTR)
		;
	if (r == 0 && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
		r = -EIO;
	if (r == 0)
		r = m.err;
	else {
		unmount_dir(c->dir);
		r = r == -EPIPE ? -EIO : r;
	}
	(void)rmdir(c->dir);
	if (st)
		*st = m.st;
	free_composite(c);
	return r;
}
