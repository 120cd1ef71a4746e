/* SPDX-License-Identifier: MIT */
/* Identity by kernel facts: what storage an open file or device lies in, overlap, use through other loop devices, exclusive holds. */
#include "ident.h"

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/loop.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "util.h"

/* One piece of storage: a regular file (dev, ino) or a block device (dev = its rdev). */
struct node {
	bool blk;
	dev_t dev;
	ino_t ino;
};

/* A closure is small (a disk, its partition, a loop, a file, a filesystem's disk); 256 is far
 * above any real stack and stops a cycle a hostile sysfs could not make anyway. */
#define MAX_NODES 256

struct nodes {
	struct node v[MAX_NODES];
	size_t n;
};

static bool node_eq(const struct node *a, const struct node *b)
{
	return a->blk == b->blk && a->dev == b->dev && (a->blk || a->ino == b->ino);
}

static bool nodes_has(const struct nodes *s, const struct node *x)
{
	for (size_t i = 0; i < s->n; i++)
		if (node_eq(&s->v[i], x))
			return true;
	return false;
}

static int nodes_add(struct nodes *s, struct node x)
{
	if (nodes_has(s, &x))
		return 0;
	if (s->n == MAX_NODES)
		return -ELOOP;
	s->v[s->n++] = x;
	return 0;
}

static char *sys_path(dev_t d, const char *rest)
{
	return xasprintf("/sys/dev/block/%u:%u%s%s", major(d), minor(d), *rest ? "/" : "", rest);
}

/* A "MAJ:MIN" sysfs attribute. */
static int read_devt(const char *path, dev_t *out)
{
	_cleanup_free_ char *v = NULL;
	unsigned ma, mi;
	int r = read_attr(path, &v);

	if (r < 0)
		return r;
	if (sscanf(v, "%u:%u", &ma, &mi) != 2)
		return -EINVAL;
	*out = makedev(ma, mi);
	return 0;
}

static bool sys_has(dev_t d, const char *rest)
{
	_cleanup_free_ char *p = sys_path(d, rest);

	return access(p, F_OK) == 0;
}

/* The kernel's name of a block device ("loop3", "nvme0n1p2"), for messages. */
static char *dev_name(dev_t d)
{
	_cleanup_free_ char *p = sys_path(d, "uevent"), *v = NULL;
	char *s;

	if (read_file_all(p, 4096, &v, NULL) == 0 && (s = strstr(v, "DEVNAME=")) != NULL) {
		s += strlen("DEVNAME=");
		s[strcspn(s, "\n")] = '\0';
		return xasprintf("/dev/%s (%u:%u)", s, major(d), minor(d));
	}
	return xasprintf("block device %u:%u", major(d), minor(d));
}

static char *node_name(const struct node *x)
{
	if (x->blk)
		return dev_name(x->dev);
	return xasprintf("the file with inode %" PRIu64 " on device %u:%u", (uint64_t)x->ino, major(x->dev),
			 minor(x->dev));
}

/* Open the block device with this number, by a node whose rdev is checked after the open (a
 * name proves nothing): /dev/block/M:m, then /dev/DEVNAME from sysfs. */
static int open_devnum(dev_t d, int flags)
{
	_cleanup_free_ char *p1 = xasprintf("/dev/block/%u:%u", major(d), minor(d));
	_cleanup_free_ char *ue = sys_path(d, "uevent"), *v = NULL, *p2 = NULL;
	const char *cands[2] = { p1, NULL };
	int last = -ENOENT;
	char *s;

	if (read_file_all(ue, 4096, &v, NULL) == 0 && (s = strstr(v, "DEVNAME=")) != NULL) {
		s += strlen("DEVNAME=");
		s[strcspn(s, "\n")] = '\0';
		if (!strstr(s, ".."))
			cands[1] = p2 = xasprintf("/dev/%s", s);
	}
	for (size_t i = 0; i < ARRAY_SIZE(cands); i++) {
		struct stat st;
		int fd;

		if (!cands[i])
			continue;
		fd = open(cands[i], flags | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
		if (fd < 0) {
			if (errno == EBUSY)
				return -EBUSY; /* the right device (EBUSY comes from the block layer), claimed */
			last = -errno;
			continue;
		}
		if (fstat(fd, &st) == 0 && S_ISBLK(st.st_mode) && st.st_rdev == d)
			return fd;
		close(fd);
		last = -ENODEV;
	}
	return last;
}

/* What a bound loop device reads and writes: its backing file, or the block device it is
 * over. 0 with *bound false when the loop device has no backing file. */
static int loop_backing(dev_t d, struct node *out, bool *bound)
{
	struct loop_info64 li = { 0 }; /* valgrind 3.19 does not model LOOP_GET_STATUS64: it sees the reply as unset */
	_cleanup_close_ int fd = open_devnum(d, O_RDONLY);

	*bound = false;
	if (fd < 0)
		return fd;
	if (ioctl(fd, LOOP_GET_STATUS64, &li) < 0)
		return errno == ENXIO ? 0 : -errno;
	*bound = true;
	/* lo_rdevice is the backing inode's rdev: not 0 when the loop device is over a device node */
	if (li.lo_rdevice)
		*out = (struct node){ .blk = true, .dev = (dev_t)li.lo_rdevice };
	else
		*out = (struct node){ .blk = false, .dev = (dev_t)li.lo_device, .ino = (ino_t)li.lo_inode };
	return 0;
}

/* The block devices listed in /sys/dev/block/M:m/<sub> ("slaves", "holders"). */
static int sys_list(dev_t d, const char *sub, struct nodes *out)
{
	_cleanup_free_ char *dir = sys_path(d, sub);
	DIR *D = opendir(dir);
	struct dirent *e;
	int r = 0;

	if (!D)
		return 0; /* no such directory: none */
	while (r == 0 && (e = readdir(D))) {
		_cleanup_free_ char *p = NULL;
		dev_t x;

		if (e->d_name[0] == '.')
			continue;
		p = xasprintf("%s/%s/dev", dir, e->d_name);
		if (read_devt(p, &x) == 0)
			r = nodes_add(out, (struct node){ .blk = true, .dev = x });
	}
	closedir(D);
	return r;
}

/* The partitions of a whole disk (the subdirectories of its sysfs directory with a "partition"
 * attribute). */
static int sys_partitions(dev_t d, struct nodes *out)
{
	_cleanup_free_ char *dir = sys_path(d, "");
	DIR *D = opendir(dir);
	struct dirent *e;
	int r = 0;

	if (!D)
		return 0;
	while (r == 0 && (e = readdir(D))) {
		_cleanup_free_ char *pp = NULL, *dp = NULL;
		dev_t x;

		if (e->d_name[0] == '.')
			continue;
		pp = xasprintf("%s/%s/partition", dir, e->d_name);
		dp = xasprintf("%s/%s/dev", dir, e->d_name);
		if (access(pp, F_OK) == 0 && read_devt(dp, &x) == 0)
			r = nodes_add(out, (struct node){ .blk = true, .dev = x });
	}
	closedir(D);
	return r;
}

static dev_t whole_disk(dev_t d)
{
	_cleanup_free_ char *p = sys_path(d, "../dev");
	dev_t w;

	if (sys_has(d, "partition") && read_devt(p, &w) == 0)
		return w;
	return d;
}

/*
 * Everything s->v[0..] lies in, added to s: the whole disk of a partition, the slaves of a
 * holder, the backing of a loop device and, with `fs`, the block device of a file's filesystem.
 */
static int closure(struct nodes *s, bool fs, char **why)
{
	int r = 0;

	for (size_t i = 0; r == 0 && i < s->n; i++) {
		struct node x = s->v[i];

		if (!x.blk) {
			if (fs && major(x.dev) != 0 && sys_has(x.dev, "dev"))
				r = nodes_add(s, (struct node){ .blk = true, .dev = x.dev });
			continue;
		}
		if (sys_has(x.dev, "partition")) {
			dev_t w = whole_disk(x.dev);

			if (w != x.dev)
				r = nodes_add(s, (struct node){ .blk = true, .dev = w });
		}
		if (r == 0)
			r = sys_list(x.dev, "slaves", s);
		if (r == 0 && sys_has(x.dev, "loop")) {
			struct node b;
			bool bound;

			r = loop_backing(x.dev, &b, &bound);
			if (r < 0) {
				_cleanup_free_ char *n = dev_name(x.dev);
				return set_why(why, r, "cannot tell which file the loop device %s is over: %s", n, strerror(-r));
			}
			if (bound)
				r = nodes_add(s, b);
		}
	}
	if (r == -ELOOP)
		return set_why(why, r, "the devices under a disk nest deeper than %d; refusing to guess", MAX_NODES);
	return r;
}

static int fd_node(int fd, struct node *x)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	/* a directory stands for the files that will be created in it: they lie in its filesystem */
	if (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))
		*x = (struct node){ .blk = false, .dev = st.st_dev, .ino = st.st_ino };
	else if (S_ISBLK(st.st_mode))
		*x = (struct node){ .blk = true, .dev = st.st_rdev };
	else
		return -ENOTBLK;
	return 0;
}

/* First element of a that is in b, or NULL. */
static const struct node *meet(const struct nodes *a, const struct nodes *b)
{
	for (size_t i = 0; i < a->n; i++)
		if (nodes_has(b, &a->v[i]))
			return &a->v[i];
	return NULL;
}

static int node_overlap(struct node a, struct node b, char **why)
{
	_cleanup_free_ struct nodes *da = xcalloc(1, sizeof(*da)), *ua = xcalloc(1, sizeof(*ua));
	_cleanup_free_ struct nodes *db = xcalloc(1, sizeof(*db)), *ub = xcalloc(1, sizeof(*ub));
	const struct node *m;
	int r;

	da->v[da->n++] = a;
	ua->v[ua->n++] = a;
	db->v[db->n++] = b;
	ub->v[ub->n++] = b;
	if ((r = closure(da, false, why)) < 0 || (r = closure(ua, true, why)) < 0 || (r = closure(db, false, why)) < 0 ||
	    (r = closure(ub, true, why)) < 0)
		return r;
	/* D(a) against U(b) and U(a) against D(b): storage both lie in, except that two files of one
	 * filesystem only share that filesystem's disk (the filesystem keeps them apart). */
	m = meet(da, ub);
	if (!m)
		m = meet(db, ua);
	if (!m)
		return 0;
	if (why) {
		_cleanup_free_ char *n = node_name(m);

		if (node_eq(&a, &b))
			set_why(why, 1, "both are %s", n);
		else
			set_why(why, 1, "both reach %s", n);
	}
	return 1;
}

int ident_overlap(int afd, int bfd, char **why)
{
	struct node a, b;
	int r;

	if ((r = fd_node(afd, &a)) < 0 || (r = fd_node(bfd, &b)) < 0)
		return set_why(why, r, "not a block device or a regular file: %s", strerror(-r));
	return node_overlap(a, b, why);
}

/* The bound loop devices, each with what it is over. */
static int each_loop(int (*fn)(dev_t loop, const struct node *backing, void *ud), void *ud, char **why)
{
	DIR *D = opendir("/sys/block");
	struct dirent *e;
	int r = 0;

	if (!D)
		return errno == ENOENT ? 0 : set_why(why, -errno, "cannot list /sys/block: %m");
	while (r == 0 && (e = readdir(D))) {
		_cleanup_free_ char *lp = NULL, *dp = NULL;
		struct node b;
		bool bound;
		dev_t d;

		if (!startswith(e->d_name, "loop"))
			continue;
		lp = xasprintf("/sys/block/%s/loop", e->d_name);
		dp = xasprintf("/sys/block/%s/dev", e->d_name);
		if (access(lp, F_OK) != 0 || read_devt(dp, &d) < 0)
			continue; /* not bound (no backing file), or gone */
		r = loop_backing(d, &b, &bound);
		if (r < 0 && access(lp, F_OK) != 0) {
			r = 0; /* detached (or removed) meanwhile: over nothing */
			continue;
		}
		if (r < 0) {
			r = set_why(why, r, "cannot tell which file the loop device /dev/%s is over: %s", e->d_name,
				    strerror(-r));
			break;
		}
		if (bound)
			r = fn(d, &b, ud);
	}
	closedir(D);
	return r;
}

struct over {
	struct node file;
	dev_t *v;
	size_t n;
};

static int over_one(dev_t loop, const struct node *b, void *ud)
{
	struct over *o = ud;

	if (node_eq(b, &o->file)) {
		o->v = realloc(o->v, (o->n + 1) * sizeof(*o->v));
		if (!o->v)
			abort();
		o->v[o->n++] = loop;
	}
	return 0;
}

int ident_loops_over(dev_t dev, ino_t ino, dev_t **out, size_t *n)
{
	struct over o = { .file = { .blk = false, .dev = dev, .ino = ino } };
	int r = each_loop(over_one, &o, NULL);

	if (r < 0) {
		free(o.v);
		return r;
	}
	*out = o.v;
	*n = o.n;
	return 0;
}

/* A process other than this one holding one of `devs` open: its pid, or 0. Each descriptor is
 * stat()ed through /proc/PID/fd (the inode itself, whatever name it was opened by). */
static pid_t opened_by(const struct nodes *devs)
{
	DIR *P = opendir("/proc");
	struct dirent *e;
	pid_t self = getpid(), found = 0;

	if (!P)
		return 0;
	while (!found && (e = readdir(P))) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);
		_cleanup_free_ char *fdd = NULL;
		DIR *F;
		struct dirent *f;

		if (*end || pid <= 0 || pid == self)
			continue;
		fdd = xasprintf("/proc/%ld/fd", pid);
		F = opendir(fdd);
		if (!F)
			continue;
		while (!found && (f = readdir(F))) {
			struct stat st;

			if (f->d_name[0] == '.' || fstatat(dirfd(F), f->d_name, &st, 0) < 0 || !S_ISBLK(st.st_mode))
				continue;
			if (nodes_has(devs, &(struct node){ .blk = true, .dev = st.st_rdev }))
				found = (pid_t)pid;
		}
		closedir(F);
	}
	closedir(P);
	return found;
}

struct use {
	const struct nodes *mine; /* what the held file or device lies in */
	dev_t self_whole;         /* the held device's whole disk (not "another" loop device) */
	char *why;
	int found;
};

/* Is this loop device another name of the held bytes, and is it in use? */
static int use_one(dev_t loop, const struct node *b, void *ud)
{
	struct use *u = ud;
	_cleanup_free_ struct nodes *parts = xcalloc(1, sizeof(*parts)), *held = xcalloc(1, sizeof(*held));
	_cleanup_free_ char *name = NULL;
	struct node ln = { .blk = true, .dev = loop };
	int fd, r;
	pid_t pid;

	if (loop == u->self_whole || nodes_has(u->mine, &ln) || !nodes_has(u->mine, b))
		return 0; /* the held device itself, one it is built on, or over something else */
	name = dev_name(loop);
	parts->v[parts->n++] = ln;
	if ((r = sys_partitions(loop, parts)) < 0)
		return r;
	for (size_t i = 0; i < parts->n; i++)
		if ((r = sys_list(parts->v[i].dev, "holders", held)) < 0)
			return r;
	if (held->n) {
		_cleanup_free_ char *h = dev_name(held->v[0].dev);

		u->why = xasprintf("%s is over the same file and is held by %s", name, h);
		return u->found = 1;
	}
	/* O_EXCL fails with EBUSY while the loop device or one of its partitions is mounted or
	 * claimed: the same test the clone's own claim makes, here on the other name. */
	fd = open_devnum(loop, O_RDONLY | O_EXCL);
	if (fd == -EBUSY) {
		u->why = xasprintf("%s is over the same file and is mounted or claimed (it or a partition of it)", name);
		return u->found = 1;
	}
	if (fd >= 0)
		close(fd);
	pid = opened_by(parts);
	if (pid) {
		_cleanup_free_ char *cp = xasprintf("/proc/%d/comm", (int)pid), *comm = NULL;

		(void)read_attr(cp, &comm);
		u->why = xasprintf("%s is over the same file and is open in process %d (%s)", name, (int)pid,
				   comm ? comm : "?");
		return u->found = 1;
	}
	return 0;
}

int ident_in_use(int fd, char **why)
{
	_cleanup_free_ struct nodes *mine = xcalloc(1, sizeof(*mine));
	struct use u = { .mine = mine };
	struct node x;
	int r;

	if ((r = fd_node(fd, &x)) < 0)
		return set_why(why, r, "not a block device or a regular file: %s", strerror(-r));
	mine->v[mine->n++] = x;
	u.self_whole = x.blk ? whole_disk(x.dev) : 0;
	if ((r = closure(mine, false, why)) < 0)
		return r;
	/* writing a whole disk writes its partitions: a loop device over one of them is another
	 * name of these bytes too */
	for (size_t i = 0, n = mine->n; r == 0 && i < n; i++)
		if (mine->v[i].blk && !sys_has(mine->v[i].dev, "partition"))
			r = sys_partitions(mine->v[i].dev, mine);
	if (r < 0)
		return set_why(why, r, "the devices under a disk nest deeper than %d; refusing to guess", MAX_NODES);
	r = each_loop(use_one, &u, why);
	if (r < 0) {
		free(u.why);
		return r;
	}
	if (u.found) {
		set_why(why, 1, "%s", u.why);
		free(u.why);
		return 1;
	}
	return 0;
}

int ident_key_fd(int fd, char **key)
{
	struct node x, b;
	bool bound = false;
	struct stat st;
	int r = fd_node(fd, &x);

	if (r < 0)
		return r;
	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode))
		return -EISDIR;
	if (!x.blk) {
		*key = xasprintf("file %u:%u %" PRIu64, major(x.dev), minor(x.dev), (uint64_t)x.ino);
		return 0;
	}
	if (sys_has(x.dev, "loop") && loop_backing(x.dev, &b, &bound) == 0 && bound && !b.blk) {
		*key = xasprintf("block %u:%u file %u:%u %" PRIu64, major(x.dev), minor(x.dev), major(b.dev), minor(b.dev),
				 (uint64_t)b.ino);
		return 0;
	}
	*key = xasprintf("block %u:%u", major(x.dev), minor(x.dev));
	return 0;
}

struct key {
	bool blk, backed;
	unsigned ma, mi, bma, bmi;
	unsigned long long ino;
};

static bool key_parse(const char *s, struct key *k)
{
	int n = 0;

	*k = (struct key){ 0 };
	if (!s)
		return false;
	if (sscanf(s, "file %u:%u %llu%n", &k->ma, &k->mi, &k->ino, &n) == 3 && !s[n])
		return true;
	k->blk = true;
	if (sscanf(s, "block %u:%u file %u:%u %llu%n", &k->ma, &k->mi, &k->bma, &k->bmi, &k->ino, &n) == 5 && !s[n]) {
		k->backed = true;
		return true;
	}
	return sscanf(s, "block %u:%u%n", &k->ma, &k->mi, &n) == 2 && !s[n];
}

bool ident_key_same(const char *a, const char *b)
{
	struct key x, y;

	if (!key_parse(a, &x) || !key_parse(b, &y))
		return false;
	if (x.blk && y.blk)
		return x.ma == y.ma && x.mi == y.mi && (!x.backed || !y.backed ||
							(x.bma == y.bma && x.bmi == y.bmi && x.ino == y.ino));
	if (!x.blk && !y.blk)
		return x.ma == y.ma && x.mi == y.mi && x.ino == y.ino;
	if (x.blk) {
		struct key t = x;
		x = y;
		y = t;
	}
	/* x a file, y a block device: the same bytes when y is a loop device over x */
	return y.backed && y.bma == x.ma && y.bmi == x.mi && y.ino == x.ino;
}

int ident_hold_open(const char *path, bool write, struct ident_hold *h)
{
	struct stat st;

	*h = (struct ident_hold)IDENT_HOLD_INIT;
	/* O_NONBLOCK: a FIFO or a terminal named by mistake must not hang the open */
	h->anchor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (h->anchor < 0)
		return -errno;
	if (fstat(h->anchor, &st) < 0) {
		int r = -errno;

		ident_hold_close(h);
		return r;
	}
	if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)) {
		ident_hold_close(h);
		return -ENOTBLK;
	}
	h->blk = S_ISBLK(st.st_mode);
	h->write = write;
	snprintf(h->proc, sizeof(h->proc), "/proc/%d/fd/%d", (int)getpid(), h->anchor);
	return 0;
}

int ident_hold_claim(struct ident_hold *h)
{
	char p[48];
	struct stat a, b;

	if (h->fd >= 0)
		return 0;
	/* through the anchor, so the claim is on the inode that was checked, whatever the path
	 * names now */
	snprintf(p, sizeof(p), "/proc/self/fd/%d", h->anchor);
	h->fd = open(p, (h->write ? O_RDWR : O_RDONLY) | O_CLOEXEC | O_NOCTTY | (h->blk ? O_EXCL : 0));
	if (h->fd < 0)
		return -errno;
	if (fstat(h->anchor, &a) < 0 || fstat(h->fd, &b) < 0 || a.st_dev != b.st_dev || a.st_ino != b.st_ino ||
	    a.st_rdev != b.st_rdev) {
		close(h->fd);
		h->fd = -1;
		return -ESTALE;
	}
	if (!h->blk && flock(h->fd, LOCK_EX | LOCK_NB) < 0) {
		int r = errno == EWOULDBLOCK ? -EBUSY : -errno;

		close(h->fd);
		h->fd = -1;
		return r;
	}
	return 0;
}

void ident_hold_pause(struct ident_hold *h)
{
	if (h->blk && h->fd >= 0) {
		close(h->fd);
		h->fd = -1;
	}
}

int ident_hold_resume(struct ident_hold *h)
{
	return h->anchor < 0 ? -EBADF : ident_hold_claim(h);
}

void ident_hold_close(struct ident_hold *h)
{
	if (h->fd >= 0)
		close(h->fd);
	if (h->anchor >= 0)
		close(h->anchor);
	h->fd = h->anchor = -1;
}
