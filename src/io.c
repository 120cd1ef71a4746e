/* SPDX-License-Identifier: MIT */
/* The io_uring harness: one ring per thread, registered buffers, file and ring, reads submitted
 * in small groups and reaped in batches. */
#include "io.h"
#include "disk.h"
#include "schema.h"

#include <dirent.h>
#include <fcntl.h>
#include <glob.h>
#include <libgen.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <liburing.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <time.h>

#include "json.h"
#include "util.h"

#ifndef FUSE_SUPER_MAGIC
#define FUSE_SUPER_MAGIC 0x65735546
#endif

/* user + system time of the whole process: the harness threads and the io-wq workers io_uring
 * starts for files it cannot read inline (FUSE), which a per-thread clock would miss */
static uint64_t process_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

uint64_t io_rate(uint64_t count, uint64_t elapsed_ns)
{
	if (!elapsed_ns)
		return 0;
	return (uint64_t)((unsigned __int128)count * 1000000000u / elapsed_ns);
}

/* ---- target ---- */

static void fs_name(long type, char out[16])
{
	const char *n;

	switch ((unsigned long)type) {
	case EXT4_SUPER_MAGIC: n = "ext4"; break; /* ext2/3/4 share the magic */
	case XFS_SUPER_MAGIC: n = "xfs"; break;
	case BTRFS_SUPER_MAGIC: n = "btrfs"; break;
	case FUSE_SUPER_MAGIC: n = "fuse"; break;
	case TMPFS_MAGIC: n = "tmpfs"; break;
	case RAMFS_MAGIC: n = "ramfs"; break;
	case OVERLAYFS_SUPER_MAGIC: n = "overlay"; break;
	default: snprintf(out, 16, "0x%lx", (unsigned long)type); return;
	}
	snprintf(out, 16, "%s", n);
}

static void copy_name(char dst[64], const char *src)
{
	size_t n = strnlen(src, 63);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* The diskstats name and the whole disk of MAJ:MIN, from /sys/dev/block. */
static void sys_names(unsigned maj, unsigned min, char dev[64], char disk[64])
{
	char link[64], buf[512], *base;
	ssize_t n;
	_cleanup_free_ char *part = NULL;

	dev[0] = disk[0] = '\0';
	snprintf(link, sizeof(link), "/sys/dev/block/%u:%u", maj, min);
	n = readlink(link, buf, sizeof(buf) - 1);
	if (n <= 0)
		return;
	buf[n] = '\0';
	base = strrchr(buf, '/');
	copy_name(dev, base ? base + 1 : buf);
	part = xasprintf("%s/partition", link);
	if (access(part, F_OK) == 0 && base) {
		*base = '\0'; /* the parent directory is the whole disk */
		base = strrchr(buf, '/');
		copy_name(disk, base ? base + 1 : buf);
	} else
		copy_name(disk, dev);
}

int io_target_open(const char *path, struct io_target *t, char **why)
{
	struct stat st;
	struct statfs sfs;
	void *probe = NULL;
	ssize_t n;
	int fd;

	*t = (struct io_target){ .fd = -1 };
	if (stat(path, &st) < 0)
		return set_why(why, -errno, "cannot stat");
	if (S_ISBLK(st.st_mode)) {
		t->block_device = true;
		t->major = major(st.st_rdev);
		t->minor = minor(st.st_rdev);
	} else if (S_ISREG(st.st_mode)) {
		if (statfs(path, &sfs) == 0) {
			fs_name(sfs.f_type, t->fs_type);
			/* tmpfs accepts O_DIRECT since Linux 6.6, but its reads come from memory: no drive
			 * is measured, so it is treated as a filesystem without O_DIRECT */
			if ((unsigned long)sfs.f_type == TMPFS_MAGIC || (unsigned long)sfs.f_type == RAMFS_MAGIC)
				return set_why(why, -EOPNOTSUPP, "the file is on tmpfs/ramfs: no O_DIRECT to a drive, "
					       "its reads come from memory");
		}
		t->major = major(st.st_dev);
		t->minor = minor(st.st_dev);
		t->size = (uint64_t)st.st_size;
		t->lba_size = 4096;
	} else
		return set_why(why, -EINVAL, "neither a regular file nor a block device");
	if (t->major)
		sys_names(t->major, t->minor, t->dev, t->disk);

	fd = open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		return set_why(why, e == EINVAL ? -EOPNOTSUPP : -e, "%s",
			       e == EINVAL ? "the filesystem refuses O_DIRECT" : "cannot open read-only with O_DIRECT");
	}
	if (t->block_device) {
		int lbs = 0;
		if (ioctl(fd, BLKGETSIZE64, &t->size) < 0 || ioctl(fd, BLKSSZGET, &lbs) < 0) {
			int e = errno;
			close(fd);
			return set_why(why, -e, "cannot read the device size");
		}
		t->lba_size = (uint32_t)lbs;
	}
	/* some filesystems accept the open and refuse the read: probe one aligned block */
	if (t->size >= 4096) {
		if (posix_memalign(&probe, 4096, 4096) != 0) {
			close(fd);
			return -ENOMEM;
		}
		n = pread(fd, probe, 4096, 0);
		free(probe);
		if (n < 0 && errno == EINVAL) {
			close(fd);
			return set_why(why, -EOPNOTSUPP, "the filesystem refuses O_DIRECT reads");
		}
	}
	t->fd = fd;
	t->path = xstrdup(path);
	return 0;
}

int io_find_shard(const char *pattern, char **path, size_t *nmatch)
{
	glob_t g = { 0 };
	uint64_t best = 0;
	int r;

	*path = NULL;
	*nmatch = 0;
	r = glob(pattern, GLOB_NOSORT, NULL, &g);
	if (r == GLOB_NOMATCH)
		return -ENOENT;
	if (r != 0)
		return r == GLOB_NOSPACE ? -ENOMEM : -EIO;
	/* several revisions of a package may sit in the cache: the largest shard is the one the
	 * gates were written for (98 GB), and the choice does not depend on directory order */
	for (size_t i = 0; i < g.gl_pathc; i++) {
		struct stat st;

		if (stat(g.gl_pathv[i], &st) < 0 || !S_ISREG(st.st_mode))
			continue;
		(*nmatch)++;
		if (!*path || (uint64_t)st.st_size > best ||
		    ((uint64_t)st.st_size == best && strcmp(g.gl_pathv[i], *path) < 0)) {
			free(*path);
			*path = xstrdup(g.gl_pathv[i]);
			best = (uint64_t)st.st_size;
		}
	}
	globfree(&g);
	return *path ? 0 : -ENOENT;
}

int io_mount_disk(const char *mnt, char **devpath, char **how)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/mountinfo", "re");
	_cleanup_free_ char *line = NULL, *src = NULL;
	size_t cap = 0;
	unsigned maj = 0, min = 0;
	char dev[64], disk[64], link[64];
	bool found = false;
	struct stat st;

	*devpath = *how = NULL;
	if (!f)
		return -errno;
	/* "36 25 259:2 / / rw,relatime shared:1 - ext4 /dev/nvme0n1p2 rw": the last mount on `mnt`
	 * is the one in effect (an over-mount hides those before it) */
	while (getline(&line, &cap, f) > 0) {
		char mp[4096], fsrc[4096];
		unsigned ma, mi;
		const char *dash = strstr(line, " - ");

		if (sscanf(line, "%*u %*u %u:%u %*s %4095s", &ma, &mi, mp) != 3 || !streq(mp, mnt) || !dash ||
		    sscanf(dash + 3, "%*s %4095s", fsrc) != 1)
			continue;
		maj = ma, min = mi, found = true;
		free(src);
		src = xstrdup(fsrc);
	}
	if (!found)
		return -ENOENT;
	snprintf(link, sizeof(link), "/sys/dev/block/%u:%u", maj, min);
	/* btrfs and some others report an anonymous device number: the mount's source names the device */
	if (access(link, F_OK) < 0) {
		if (src[0] != '/' || stat(src, &st) < 0 || !S_ISBLK(st.st_mode))
			return -ENOENT;
		maj = major(st.st_rdev), min = minor(st.st_rdev);
	}
	sys_names(maj, min, dev, disk);
	if (!disk[0])
		return -ENOENT;
	*devpath = xasprintf("/dev/%s", disk);
	if (stat(*devpath, &st) < 0 || !S_ISBLK(st.st_mode)) { /* a container without the device node */
		free(*devpath);
		*devpath = NULL;
		return -ENOENT;
	}
	*how = streq(dev, disk) ? xasprintf("'%s' is mounted from %s (%u:%u), a whole disk", mnt, src, maj, min)
				: xasprintf("'%s' is mounted from %s (%u:%u), a partition of disk %s", mnt, src, maj, min,
					    disk);
	return 0;
}

void io_target_close(struct io_target *t)
{
	if (t->fd >= 0)
		close(t->fd);
	t->fd = -1;
	free(t->path);
	t->path = NULL;
}

int io_working_set(const struct io_target *t, uint64_t ws, uint64_t *offset)
{
	if (ws < 4096 || ws > t->size)
		return -E2BIG;
	*offset = ((t->size - ws) / 2) & ~4095ULL;
	return 0;
}

int io_fiemap_unbacked(int fd, uint64_t off, uint64_t len, uint64_t *unbacked)
{
	enum { NEXT = 256 };
	_cleanup_free_ struct fiemap *fm = NULL;
	uint64_t pos = off, end, missing = 0;

	if (u64_add(off, len, &end) < 0)
		return -EOVERFLOW;
	fm = xcalloc(1, sizeof(*fm) + NEXT * sizeof(struct fiemap_extent));
	while (pos < end) {
		bool last = false;

		memset(fm, 0, sizeof(*fm));
		fm->fm_start = pos;
		fm->fm_length = end - pos;
		fm->fm_flags = FIEMAP_FLAG_SYNC; /* delayed allocations get their real extents first */
		fm->fm_extent_count = NEXT;
		if (ioctl(fd, FS_IOC_FIEMAP, fm) < 0)
			return errno == ENOTTY || errno == EOPNOTSUPP ? -EOPNOTSUPP : -errno;
		if (fm->fm_mapped_extents == 0) {
			missing += end - pos; /* no extent up to the end: a hole */
			break;
		}
		for (unsigned i = 0; i < fm->fm_mapped_extents; i++) {
			const struct fiemap_extent *e = &fm->fm_extents[i];
			uint64_t s = e->fe_logical, x = e->fe_logical + e->fe_length;

			if (s > pos)
				missing += (s < end ? s : end) - pos; /* the gap before it is a hole */
			if (s < pos)
				s = pos;
			if (x > end)
				x = end;
			if (x > s && (e->fe_flags & FIEMAP_EXTENT_UNWRITTEN))
				missing += x - s;
			if (x > pos)
				pos = x;
			if (e->fe_flags & FIEMAP_EXTENT_LAST)
				last = true;
			if (pos >= end)
				break;
		}
		if (last && pos < end) {
			missing += end - pos;
			break;
		}
	}
	*unbacked = missing;
	return 0;
}

static uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

int io_zero_sample(int fd, uint64_t off, uint64_t len, unsigned samples, uint64_t seed, unsigned *zero,
		   unsigned *read_ok)
{
	_cleanup_free_ void *buf = NULL;
	uint64_t nblocks = len / 4096, s = seed ^ 0x5a5a5a5a5a5a5a5aULL;

	*zero = *read_ok = 0;
	if (!nblocks)
		return -EINVAL;
	if (posix_memalign(&buf, 4096, 4096) != 0)
		return -ENOMEM;
	for (unsigned i = 0; i < samples; i++) {
		uint64_t b = (uint64_t)(((unsigned __int128)splitmix64(&s) * nblocks) >> 64);
		const uint64_t *w = buf;
		bool allzero = true;

		if (pread(fd, buf, 4096, (off_t)(off + b * 4096)) != 4096)
			continue; /* errors are the run's business; the sample only looks at data */
		(*read_ok)++;
		for (unsigned k = 0; k < 4096 / 8; k++)
			if (w[k]) {
				allzero = false;
				break;
			}
		*zero += allzero;
	}
	return 0;
}

int io_diskstats_ios(const char *dev, uint64_t *ios)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/diskstats", "re");
	char line[512], name[64];
	unsigned long long rd, rdm, rds, rdt, wr;
	unsigned ma, mi;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%u %u %63s %llu %llu %llu %llu %llu", &ma, &mi, name, &rd, &rdm, &rds, &rdt,
			   &wr) == 8 &&
		    streq(name, dev)) {
			*ios = rd + wr;
			return 0;
		}
	return -ENOENT;
}

void io_drive_identity(const struct io_target *t, char **model, char **firmware, char **serial)
{
	_cleanup_free_ char *dir = NULL;

	*model = *firmware = *serial = NULL;
	if (!t->disk[0])
		return;
	dir = xasprintf("/sys/block/%s/device", t->disk);
	disk_sysfs_identity(dir, model, firmware, serial);
}

void io_drive_sysfs(const struct io_target *t, char **controller, uint64_t *size_bytes)
{
	_cleanup_free_ char *link = NULL, *sz = NULL, *szp = NULL;
	char buf[PATH_MAX], *end = NULL;
	unsigned long long sectors;
	ssize_t n;

	*controller = NULL;
	*size_bytes = 0;
	if (!t->disk[0])
		return;
	/* /sys/block/nvme0n1/device links to the controller (.../nvme/nvme0); other disks link to
	 * their SCSI or virtio device, loop devices have no link */
	link = xasprintf("/sys/block/%s/device", t->disk);
	n = readlink(link, buf, sizeof(buf) - 1);
	if (n > 0) {
		buf[n] = '\0';
		if (startswith(basename(buf), "nvme"))
			*controller = xstrdup(basename(buf));
	}
	/* the size attribute counts 512-byte sectors whatever the LBA size; anything but a number
	 * that fits, times 512, in 64 bits is no size */
	szp = xasprintf("/sys/block/%s/size", t->disk);
	if (read_attr(szp, &sz) == 0 && sz[0] >= '0' && sz[0] <= '9') {
		errno = 0;
		sectors = strtoull(sz, &end, 10);
		if (!errno && !*end && u64_mul(sectors, 512, size_bytes))
			*size_bytes = 0;
	}
}

/* ---- the harness ---- */

struct slot {
	uint64_t start_ns;
	uint64_t off;
};

struct worker {
	pthread_t tid;
	const struct io_spec *s;
	struct shared *sh;
	int fd;
	unsigned depth;
	uint64_t rng[4];
	int err;
	unsigned ring_flags;
	bool fixed_buffers, fixed_files;
	/* results */
	struct hist hist;
	uint64_t ios, bytes, errors, last_ns;
	uint64_t err_offset[IO_ERR_KEEP];
	int err_code[IO_ERR_KEEP];
	unsigned nerr_kept;
	uint64_t *per_second;
	size_t nseconds;
	uint64_t live_bytes, live_done; /* relaxed atomics: read by the progress loop */
};

struct shared {
	unsigned ready; /* workers set up (atomic) */
	unsigned go;    /* set by the main thread once all are ready, after t0 */
	uint64_t t0;
	unsigned done; /* workers finished (atomic) */
	int cpu0_set;  /* the first worker to start measuring takes the process CPU time */
	uint64_t cpu0_ns;
};

/* xoshiro256**: 4 integer ops per 64 random bits, one stream per thread. */
static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
static inline uint64_t xoshiro(uint64_t s[4])
{
	uint64_t r = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

	s[2] ^= s[0], s[3] ^= s[1], s[1] ^= s[2], s[0] ^= s[3], s[2] ^= t, s[3] = rotl(s[3], 45);
	return r;
}

static int ring_setup(struct io_uring *ring, unsigned depth, unsigned *flags)
{
	/* SINGLE_ISSUER + DEFER_TASKRUN (6.1) run completions only when this thread reaps: no
	 * interrupts into the task; COOP_TASKRUN (5.19) at least avoids IPIs. Older kernels
	 * refuse unknown flags with -EINVAL: fall back step by step. */
	static const unsigned tries[] = {
		IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN,
		IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_COOP_TASKRUN,
		IORING_SETUP_COOP_TASKRUN,
		0,
	};
	int r = -EINVAL;

	for (size_t i = 0; i < ARRAY_SIZE(tries); i++) {
		struct io_uring_params p = { .flags = tries[i] | IORING_SETUP_CQSIZE, .cq_entries = depth };

		r = io_uring_queue_init_params(depth, ring, &p);
		if (r == 0) {
			*flags = tries[i];
			return 0;
		}
		if (r != -EINVAL)
			return r;
	}
	return r;
}

/* Reads go to the kernel at most this many at a time. A whole refill in one submission reaches
 * the device as one batch and tends to come back as one: the reads travel as a convoy and wait
 * for each other. At 16 in flight on a virtio disk: one submission per refill 71 K IOPS, p50
 * 220 us; groups of 4 88 K, 160 us; one read per submission 91 K for a quarter more CPU.
 * Measured again on a loaded machine (groups of 1 against 4, three rounds each): at 16 in
 * flight a refill rarely exceeds 4 reads, so groups of 1 only add system calls, about 15 % more
 * CPU per read (task-clock), with IOPS inside the noise; at 64 no gain either.
 * At 64 in flight a refill is larger (8 to 10 reads per pass) and the groups can grow with the
 * depth: groups of 16 against 4, ten alternating pairs on the loaded 2-core machine, took the
 * system calls per read from 0.30 to 0.10-0.14 and gave on the RAM loop a median 1.26x the IOPS
 * (7 of 10 pairs ahead), 0.88x the CPU per read and 1.12x the p50 (still well under fio's:
 * the mean fell, IOPS x mean latency being the depth), on the local disk the same IOPS (1.00x)
 * and p50 (1.03x, inside the noise). So a group is a quarter of the ring's depth, at least 4: 4 at
 * 16 in flight, 16 at 64. Tried again on an idle machine, 7 to 9 rounds alternating with fio:
 * groups of 1, 2 and 4 at 16 in flight, and 4, 8 and 16 at 64, differ by less than the rounds'
 * spread in IOPS and p50 on the disk and the RAM loop (groups of 2 stay under io_uring's block plug,
 * which starts at three reads, and gain nothing measurable); 4 at 16 costs the least CPU per read.
 * Handing a pass's last group to the kernel with the wait instead of just before it (one
 * io_uring_enter less per pass) changed nothing measurable at 16 in flight either (two pairs of
 * runs, 7 rounds each: IOPS, CPU per read and p50 inside the rounds' spread). */
#ifndef SUBMIT_GROUP_MIN
#define SUBMIT_GROUP_MIN 4
#endif
static unsigned submit_group(unsigned depth)
{
	return depth / 4 > SUBMIT_GROUP_MIN ? depth / 4 : SUBMIT_GROUP_MIN;
}

/* Hand the queued reads to the kernel, waiting for wait_nr completions; a transient refusal
 * leaves them queued for the next call. */
static int submit_reads(struct io_uring *ring, unsigned wait_nr)
{
	int r = wait_nr ? io_uring_submit_and_wait(ring, wait_nr) : io_uring_submit(ring);

	if (r == -EINTR || r == -EAGAIN || r == -EBUSY || r == -ETIME)
		return 0;
	return r < 0 ? r : 0;
}

static void note_error(struct worker *w, uint64_t off, int code)
{
	if (w->nerr_kept < IO_ERR_KEEP) {
		w->err_offset[w->nerr_kept] = off;
		w->err_code[w->nerr_kept++] = code;
	}
	w->errors++;
}

/* A worker's buffers: one slot, iovec and buffer per read in flight, and the free list of slots. */
struct wbufs {
	void *mem;
	struct slot *slots;
	struct iovec *iov;
	unsigned *freelist;
};

/* Set up a worker: its buffers, its ring (*ring_ok), registered buffers and file where the kernel
 * allows them. Returns 0 or a negative errno. */
static int worker_setup(struct worker *w, struct io_uring *ring, struct wbufs *b, bool *ring_ok)
{
	unsigned bs = w->s->block_size;
	int r;

	b->slots = calloc(w->depth, sizeof(*b->slots));
	b->iov = calloc(w->depth, sizeof(*b->iov));
	b->freelist = calloc(w->depth, sizeof(*b->freelist));
	if (!b->slots || !b->iov || !b->freelist || posix_memalign(&b->mem, 4096, (size_t)w->depth * bs) != 0)
		return -ENOMEM;
	memset(b->mem, 0, (size_t)w->depth * bs);
	r = ring_setup(ring, w->depth, &w->ring_flags);
	if (r < 0)
		return r;
	*ring_ok = true;
	for (unsigned i = 0; i < w->depth; i++)
		b->iov[i] = (struct iovec){ .iov_base = (char *)b->mem + (size_t)i * bs, .iov_len = bs };
	/* registered buffers skip the per-read page pinning, a registered file the fd lookup;
	 * either may be refused (memlock limits): plain reads still measure correctly */
	w->fixed_buffers = io_uring_register_buffers(ring, b->iov, w->depth) == 0;
	w->fixed_files = io_uring_register_files(ring, &w->fd, 1) == 0;
	/* a registered ring spares io_uring_enter the lookup of the ring's own fd (Linux 5.18); the
	 * reads are the same without it, so a refusal is ignored */
	(void)io_uring_register_ring_fd(ring);
	return 0;
}

/* Start together: the main thread stamps t0 once every ring is set up. */
static void worker_wait_go(struct worker *w)
{
	__atomic_add_fetch(&w->sh->ready, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&w->sh->go, __ATOMIC_ACQUIRE)) {
		struct timespec ts = { 0, 100000 };
		nanosleep(&ts, NULL);
	}
}

/* The state of a worker's loop. Its helpers are static inline and called once each, so after
 * inlining this lives in registers as the locals it was: no work per read is added by the split. */
struct wloop {
	const struct io_spec *s;
	struct slot *slots;
	struct iovec *iov;
	unsigned *freelist;
	uint64_t nblocks, seq_next, seq_left;
	uint64_t mstart, end, next_sec, sec, done_all;
	unsigned nfree, ngroup, group, inflight, bs;
	bool measuring, stopping;
};

/* Reap the completed reads. Per read: the slot back on the free list, the error check, the
 * histogram; every read of the batch completed by `now`, so the counters, bytes and the
 * per-second count are updated once per batch. */
static inline void reap_batch(struct worker *w, struct io_uring *ring, struct wloop *l, uint64_t now)
{
	struct io_uring_cqe *cqe;
	unsigned head, seen = 0, good = 0;

	io_uring_for_each_cqe(ring, head, cqe) {
		unsigned i = (unsigned)cqe->user_data;

		seen++;
		l->freelist[l->nfree++] = i;
		if (__builtin_expect(cqe->res != (int)l->bs, 0)) {
			note_error(w, l->slots[i].off, cqe->res < 0 ? cqe->res : -EIO);
			continue;
		}
		if (l->measuring) {
			hist_add(&w->hist, now - l->slots[i].start_ns);
			good++;
		}
	}
	l->inflight -= seen;
	if (good) {
		w->ios += good;
		w->bytes += (uint64_t)good * l->bs;
		w->last_ns = now;
		/* per-second counts without a division: advance the second */
		while (now >= l->next_sec) {
			l->sec++;
			l->next_sec += 1000000000ULL;
		}
		if (l->sec < w->nseconds)
			w->per_second[l->sec] += good;
	}
	io_uring_cq_advance(ring, seen);
	l->done_all += seen;
	/* once per batch, for the progress line: all reads (ramp too) and the measured bytes */
	__atomic_store_n(&w->live_done, l->done_all, __ATOMIC_RELAXED);
	__atomic_store_n(&w->live_bytes, w->bytes, __ATOMIC_RELAXED);
}

/* The next read's offset: the sequential stream (wrapping at the working set's end; false when
 * it has read seq_bytes), else a uniform 4 KiB-aligned block of the working set. */
static inline bool next_offset(struct worker *w, struct wloop *l, uint64_t *off)
{
	const struct io_spec *s = l->s;

	if (s->sequential) {
		if (!l->seq_left)
			return false;
		if (l->seq_next + l->bs > s->offset + s->length)
			l->seq_next = s->offset;
		*off = l->seq_next;
		l->seq_next += l->bs;
		l->seq_left--;
	} else
		*off = s->offset + (uint64_t)(((unsigned __int128)xoshiro(w->rng) * l->nblocks) >> 64) * l->bs;
	return true;
}

/* Refill every free slot (the first pass fills them all), handing the reads to the kernel a small
 * group at a time. All reads of the pass start at `now`, the instant the completions that freed
 * their slots were stamped: the time a read waits for the reaping and for the groups before it to
 * be submitted is part of its latency, and a slot is never counted idle, so IOPS x mean latency
 * stays the number in flight (Little's law), with one clock read per pass instead of two.
 * Returns 0 or the negative errno of a failed submission. */
static inline int refill(struct worker *w, struct io_uring *ring, struct wloop *l, uint64_t now)
{
	while (!l->stopping && l->nfree > 0) {
		struct io_uring_sqe *sqe;
		unsigned i;
		uint64_t off;

		if (!next_offset(w, l, &off))
			break;
		sqe = io_uring_get_sqe(ring);
		if (!sqe)
			break;
		i = l->freelist[--l->nfree];
		if (w->fixed_buffers)
			io_uring_prep_read_fixed(sqe, w->fixed_files ? 0 : w->fd, l->iov[i].iov_base, l->bs, off, (int)i);
		else
			io_uring_prep_read(sqe, w->fixed_files ? 0 : w->fd, l->iov[i].iov_base, l->bs, off);
		if (w->fixed_files)
			sqe->flags |= IOSQE_FIXED_FILE;
		sqe->user_data = i;
		l->slots[i].start_ns = now;
		l->slots[i].off = off;
		l->inflight++;
		if (++l->ngroup == l->group) {
			int r = submit_reads(ring, 0);

			l->ngroup = 0;
			if (r < 0)
				return r;
		}
	}
	return 0;
}

/* The reads, from t0 to the last completion: one clock read per pass, reap, refill, wait. */
static void worker_loop(struct worker *w, struct io_uring *ring, const struct wbufs *b)
{
	const struct io_spec *s = w->s;
	uint64_t t0 = __atomic_load_n(&w->sh->t0, __ATOMIC_ACQUIRE);
	struct wloop l = {
		.s = s,
		.slots = b->slots,
		.iov = b->iov,
		.freelist = b->freelist,
		.nblocks = s->length / s->block_size,
		.seq_next = s->offset,
		.seq_left = s->sequential ? (s->seq_bytes + s->block_size - 1) / s->block_size : 0,
		.mstart = t0 + s->ramp_ns,
		.end = t0 + s->ramp_ns + s->duration_ns,
		.next_sec = t0 + s->ramp_ns + 1000000000ULL,
		.group = submit_group(w->depth),
		.bs = s->block_size,
	};

	for (unsigned i = 0; i < w->depth; i++)
		l.freelist[l.nfree++] = w->depth - 1 - i;
	for (;;) {
		uint64_t now = mono_ns();
		int r;

		if (!l.measuring && now >= l.mstart) {
			l.measuring = true;
			if (!__atomic_exchange_n(&w->sh->cpu0_set, 1, __ATOMIC_ACQ_REL))
				w->sh->cpu0_ns = process_cpu_ns(); /* read by the main thread after join */
		}
		if (!l.stopping && ((!s->sequential && now >= l.end) || (s->stop && *s->stop) ||
				    w->errors >= s->max_errors || (s->sequential && !l.seq_left && l.inflight == 0)))
			l.stopping = true;
		reap_batch(w, ring, &l, now);
		if (!l.stopping && (s->stop && *s->stop))
			l.stopping = true;
		r = refill(w, ring, &l, now);
		if (r < 0) {
			w->err = r;
			return;
		}
		if (l.inflight == 0)
			return;
		l.ngroup = 0;
		r = submit_reads(ring, 1);
		if (r < 0) {
			w->err = r;
			return;
		}
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct io_uring ring;
	struct wbufs b = { 0 };
	bool ring_ok = false;

	w->err = worker_setup(w, &ring, &b, &ring_ok);
	worker_wait_go(w);
	if (w->err >= 0)
		worker_loop(w, &ring, &b);
	if (ring_ok)
		io_uring_queue_exit(&ring);
	free(b.mem);
	free(b.slots);
	free(b.iov);
	free(b.freelist);
	__atomic_add_fetch(&w->sh->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void progress_tick(const struct io_spec *s, struct worker *w, unsigned n, uint64_t t0, uint64_t *last_ios,
			  uint64_t *last_t, struct hist *tmp)
{
	struct io_progress p = { 0 };
	uint64_t now = mono_ns(), bytes = 0, done = 0;

	memset(tmp->b, 0, sizeof(tmp->b));
	tmp->count = 0;
	for (unsigned i = 0; i < n; i++) {
		bytes += __atomic_load_n(&w[i].live_bytes, __ATOMIC_RELAXED);
		done += __atomic_load_n(&w[i].live_done, __ATOMIC_RELAXED);
		for (unsigned b = 0; b < HIST_BUCKETS; b++)
			tmp->b[b] += __atomic_load_n(&w[i].hist.b[b], __ATOMIC_RELAXED);
	}
	for (unsigned b = 0; b < HIST_BUCKETS; b++)
		tmp->count += tmp->b[b];
	tmp->min_ns = 0;
	tmp->max_ns = UINT64_MAX;
	p.elapsed_ns = now - t0;
	p.total_ns = s->sequential ? 0 : s->ramp_ns + s->duration_ns;
	p.ramping = p.elapsed_ns < s->ramp_ns;
	p.ios = bytes / s->block_size;
	p.bytes = bytes;
	p.iops_now = now > *last_t ? io_rate(done - *last_ios, now - *last_t) : 0;
	p.p50_ns = hist_quantile_live(tmp, 500000);
	*last_ios = done;
	*last_t = now;
	s->progress(s->progress_arg, &p);
}

/* The workers of a run: the reads in flight dealt over n rings, one PRNG stream and per-second
 * array each. Returns 0 or -ENOMEM (what was allocated is freed by the caller). */
static int workers_init(struct worker *w, unsigned n, int fd, const struct io_spec *s, struct shared *sh,
			size_t nsec)
{
	uint64_t seed = s->seed;

	for (unsigned i = 0; i < n; i++) {
		w[i].s = s;
		w[i].sh = sh;
		w[i].fd = fd;
		w[i].depth = s->inflight / n + (i < s->inflight % n);
		for (int k = 0; k < 4; k++)
			w[i].rng[k] = splitmix64(&seed);
		hist_init(&w[i].hist);
		w[i].nseconds = nsec;
		w[i].per_second = nsec ? calloc(nsec, sizeof(uint64_t)) : NULL;
		if (nsec && !w[i].per_second)
			return -ENOMEM;
	}
	return 0;
}

/* Start the threads (none when r is already an error) and wait until each has set up its ring.
 * Returns how many started; when a thread could not start, the others finish at once with the
 * error (*r). */
static unsigned workers_start(struct worker *w, unsigned n, struct shared *sh, int *r)
{
	unsigned started = 0;

	if (*r == 0)
		for (; started < n; started++)
			if (pthread_create(&w[started].tid, NULL, worker_main, &w[started]) != 0) {
				*r = -EAGAIN;
				break;
			}
	while (__atomic_load_n(&sh->ready, __ATOMIC_ACQUIRE) < started) {
		struct timespec ts = { 0, 100000 };
		nanosleep(&ts, NULL);
	}
	if (started < n)
		for (unsigned i = 0; i < n; i++)
			w[i].err = *r;
	return started;
}

/* One worker's results into the run's; the ring's features are those every ring got. */
static void merge_worker(struct io_result *res, const struct worker *x, bool first, uint64_t mstart, size_t nsec)
{
	hist_merge(&res->hist, &x->hist);
	res->ios += x->ios;
	res->bytes += x->bytes;
	res->errors += x->errors;
	if (x->last_ns > mstart && x->last_ns - mstart > res->elapsed_ns)
		res->elapsed_ns = x->last_ns - mstart;
	for (unsigned k = 0; k < x->nerr_kept && res->nerr_kept < IO_ERR_KEEP; k++) {
		res->err_offset[res->nerr_kept] = x->err_offset[k];
		res->err_code[res->nerr_kept++] = x->err_code[k];
	}
	for (size_t k = 0; k < nsec && res->per_second; k++)
		res->per_second[k] += x->per_second[k];
	if (first) {
		res->ring_flags = x->ring_flags;
		res->fixed_buffers = x->fixed_buffers;
		res->fixed_files = x->fixed_files;
	} else {
		res->fixed_buffers &= x->fixed_buffers;
		res->fixed_files &= x->fixed_files;
	}
}

/* The workers' results into *res; returns the first worker's error, else r. */
static int merge_results(const struct io_spec *s, struct worker *w, unsigned n, uint64_t t0, size_t nsec,
			 struct io_result *res, int r)
{
	size_t whole;

	res->threads = n;
	res->nseconds = nsec;
	res->per_second = nsec ? calloc(nsec, sizeof(uint64_t)) : NULL;
	for (unsigned i = 0; i < n; i++) {
		if (w[i].err < 0 && r == 0)
			r = w[i].err;
		merge_worker(res, &w[i], i == 0, t0 + s->ramp_ns, nsec);
	}
	/* a sequential run keeps only the whole seconds it lasted; an interrupted one drops the
	 * seconds it did not reach, which are not zeros */
	whole = (size_t)(res->elapsed_ns / 1000000000ULL);
	if (res->per_second && whole < res->nseconds)
		res->nseconds = whole;
	res->interrupted = s->stop && *s->stop;
	res->error_limit = res->errors >= s->max_errors;
	return r;
}

int io_run(int fd, const struct io_spec *s, struct io_result *res)
{
	struct shared sh = { 0 };
	_cleanup_free_ struct worker *w = NULL;
	_cleanup_free_ struct hist *tmp = NULL;
	unsigned n = s->threads, nall, started;
	uint64_t last_ios = 0, last_t, t0;
	size_t nsec;
	int r;

	memset(res, 0, sizeof(*res));
	hist_init(&res->hist);
	if (!s->block_size || !s->inflight || s->length < s->block_size || s->block_size % 512)
		return -EINVAL;
	if (s->sequential)
		n = 1; /* one stream: the order of the reads is the point */
	if (!n) {
		long c = sysconf(_SC_NPROCESSORS_ONLN);
		n = c > 0 ? (unsigned)c : 1;
	}
	if (n > s->inflight)
		n = s->inflight;
	/* whole seconds of the window; a sequential run has no fixed length: 1 h of seconds */
	nsec = s->sequential ? 3600 : (size_t)(s->duration_ns / 1000000000ULL);

	nall = n;
	w = calloc(n, sizeof(*w));
	tmp = malloc(sizeof(*tmp));
	if (!w || !tmp)
		return -ENOMEM;
	r = workers_init(w, n, fd, s, &sh, nsec);
	started = workers_start(w, n, &sh, &r);
	n = started < n ? started : n;
	t0 = mono_ns();
	__atomic_store_n(&sh.t0, t0, __ATOMIC_RELEASE);
	__atomic_store_n(&sh.go, 1, __ATOMIC_RELEASE);
	last_t = t0;

	while (__atomic_load_n(&sh.done, __ATOMIC_ACQUIRE) < n) {
		struct timespec ts = { 0, 250000000 }; /* four progress lines a second */
		nanosleep(&ts, NULL);
		if (s->progress)
			progress_tick(s, w, started, t0, &last_ios, &last_t, tmp);
	}
	for (unsigned i = 0; i < started; i++)
		pthread_join(w[i].tid, NULL);
	if (sh.cpu0_set)
		res->cpu_ns = process_cpu_ns() - sh.cpu0_ns;
	r = merge_results(s, w, n, t0, nsec, res, r);
	for (unsigned i = 0; i < nall; i++)
		free(w[i].per_second);
	return r;
}

void io_result_free(struct io_result *res)
{
	free(res->per_second);
	res->per_second = NULL;
}

static double lat_field(json_object *run, const char *key)
{
	return jget_double(jget(run, "lat_us"), key);
}

size_t io_gates_eval(const struct accept_run *thr, const char *run_name, json_object *run,
		     struct io_gate out[IO_MAX_GATES])
{
	size_t n = 0;

#define GATE(cond, suffix, whatv, unitv, atleast, thrv, measv)                                    \
	if (cond) {                                                                              \
		struct io_gate *g = &out[n++];                                                   \
		snprintf(g->name, sizeof(g->name), "%.40s-%s", run_name, suffix);                \
		g->what = whatv, g->unit = unitv, g->at_least = atleast;                         \
		g->threshold = (double)(thrv), g->measured = (measv);                            \
		g->pass = atleast ? g->measured >= g->threshold : g->measured <= g->threshold;   \
	}
	GATE(thr->min_iops, SCHEMA_GATE_IOPS, "IOPS", "IOPS", true, thr->min_iops, (double)jget_u64(run, "iops"));
	GATE(thr->max_p50_us, SCHEMA_GATE_P50, "p50", "us", false, thr->max_p50_us, lat_field(run, SCHEMA_LAT_P50));
	GATE(thr->max_p99_us, SCHEMA_GATE_P99, "p99", "us", false, thr->max_p99_us, lat_field(run, SCHEMA_LAT_P99));
	GATE(thr->max_p99_9_us, SCHEMA_GATE_P99_9, "p99.9", "us", false, thr->max_p99_9_us, lat_field(run, SCHEMA_LAT_P99_9));
	GATE(thr->min_mb_s, SCHEMA_GATE_MB_S, "MB/s", "MB/s", true, thr->min_mb_s, jget_double(run, "mb_s"));
#undef GATE
	return n;
}

void io_stability(const uint64_t *v, size_t n, struct io_stability *st)
{
	double sum = 0, mn, mx, sx = 0, sxx = 0, sxy = 0, slope;

	memset(st, 0, sizeof(*st));
	if (n < 3)
		return;
	mn = mx = (double)v[0];
	for (size_t i = 0; i < n; i++) {
		double y = (double)v[i], x = (double)i;
		sum += y;
		if (y < mn)
			mn = y;
		if (y > mx)
			mx = y;
		sx += x;
		sxx += x * x;
		sxy += x * y;
	}
	st->evaluated = true;
	st->mean = sum / (double)n;
	if (st->mean <= 0)
		return;
	slope = ((double)n * sxy - sx * sum) / ((double)n * sxx - sx * sx);
	st->range_pct = (mx - mn) / st->mean * 100.0;
	/* the fitted line's excursion over the window, relative to the mean */
	st->slope_pct = slope * (double)(n - 1) / st->mean * 100.0;
	st->steady = st->range_pct <= 20.0 && st->slope_pct >= -10.0 && st->slope_pct <= 10.0;
}
