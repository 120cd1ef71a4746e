/* SPDX-License-Identifier: MIT */
/* The io_uring harness on a real file with written data, FIEMAP holes, gates on synthetic records. */
#include <fcntl.h>
#include <linux/magic.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#include "io.h"
#include "record.h"
#include "tap.h"
#include "util.h"

static char dir[256];

static void fill_file(const char *path, uint64_t size, uint64_t data_bytes)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	static char buf[1 << 20];
	uint64_t s = 0x1234;

	CHECK(fd >= 0);
	CHECK(ftruncate(fd, (off_t)size) == 0);
	for (uint64_t off = 0; off < data_bytes; off += sizeof(buf)) {
		for (size_t i = 0; i < sizeof(buf); i += 8) {
			s = s * 6364136223846793005ULL + 1442695040888963407ULL;
			memcpy(buf + i, &s, 8);
		}
		CHECK(pwrite(fd, buf, sizeof(buf), (off_t)off) == (ssize_t)sizeof(buf));
	}
	CHECK(fsync(fd) == 0);
	close(fd);
}

static void check_run_consistent(const struct io_result *r, uint32_t bs)
{
	uint64_t p50 = hist_quantile(&r->hist, 500000), p90 = hist_quantile(&r->hist, 900000);
	uint64_t p99 = hist_quantile(&r->hist, 990000), p999 = hist_quantile(&r->hist, 999000);
	uint64_t p9999 = hist_quantile(&r->hist, 999900), sum = 0;

	CHECK(r->ios > 0);
	CHECK_U64(r->bytes, r->ios * bs);
	CHECK_U64(r->hist.count, r->ios);
	CHECK_U64(r->errors, 0);
	CHECK(r->elapsed_ns > 0);
	/* percentiles monotonic and inside [min, max] */
	CHECK(r->hist.min_ns <= p50 && p50 <= p90 && p90 <= p99 && p99 <= p999 && p999 <= p9999 &&
	      p9999 <= r->hist.max_ns);
	CHECK(hist_mean(&r->hist) >= r->hist.min_ns && hist_mean(&r->hist) <= r->hist.max_ns);
	/* IOPS = ios / window; MB/s = IOPS * block size */
	{
		/* integer rates: the byte rate is the read rate times the block size, to one block */
		uint64_t by_ios = io_rate(r->ios, r->elapsed_ns) * bs, by_bytes = io_rate(r->bytes, r->elapsed_ns);
		CHECK(by_bytes >= by_ios && by_bytes - by_ios < bs);
		fprintf(stderr, "# %" PRIu64 " reads of %u B in %.3f s: %" PRIu64 " IOPS, p50 %" PRIu64 " ns\n", r->ios,
			bs, (double)r->elapsed_ns / 1e9, io_rate(r->ios, r->elapsed_ns), hist_quantile(&r->hist, 500000));
	}
	for (size_t i = 0; i < r->nseconds; i++)
		sum += r->per_second[i];
	CHECK(sum <= r->ios);
	CHECK(r->cpu_ns > 0);
}

/* Little's law: with no ramp every read lies inside the window, so the summed latency over the
 * window is the mean number of reads in flight. It cannot exceed the depth; well below it, a
 * read's clock started late (time a slot waited in the harness not counted as latency). */
static void little_law(const struct io_result *r, unsigned depth)
{
	double in_flight = (double)r->ios * (double)hist_mean(&r->hist) / (double)r->elapsed_ns;

	fprintf(stderr, "# IOPS x mean latency: %.2f in flight of %u\n", in_flight, depth);
	CHECK(in_flight <= depth * 1.001);
	CHECK(in_flight >= depth * 0.97);
}

static void synthetic_gates(void)
{
	struct accept_run rand16 = { .name = "rand16", .inflight = 16, .min_iops = 60000, .max_p50_us = 250 };
	struct accept_run rand64 = { .name = "rand64", .inflight = 64, .min_iops = 120000, .max_p99_9_us = 2000 };
	struct accept_run seq = { .name = "seq", .sequential = true, .min_mb_s = 2500 };
	struct io_gate g[IO_MAX_GATES];
	json_object *run;
	size_t n;

	/* the incident's dgx4 at 98 GB: 12.9 K IOPS, p50 1,183 us: both gates fail */
	run = json_tokener_parse("{\"iops\": 12900, \"lat_us\": {\"p50\": 1183.0, \"p99_9\": 4600.0}}");
	n = io_gates_eval(&rand16, "rand16", run, g);
	CHECK_U64(n, 2);
	CHECK_STR(g[0].name, "rand16-iops");
	CHECK(!g[0].pass && !g[1].pass);
	CHECK_STR(g[1].name, "rand16-p50");
	json_object_put(run);
	/* exactly at the thresholds: pass (>= and <=) */
	run = json_tokener_parse("{\"iops\": 60000, \"lat_us\": {\"p50\": 250.0}}");
	n = io_gates_eval(&rand16, "rand16", run, g);
	CHECK(g[0].pass && g[1].pass);
	json_object_put(run);
	/* one read short / 1 ns over: fail */
	run = json_tokener_parse("{\"iops\": 59999, \"lat_us\": {\"p50\": 250.001}}");
	n = io_gates_eval(&rand16, "rand16", run, g);
	CHECK(!g[0].pass && !g[1].pass);
	json_object_put(run);
	/* dgx5 at 64 in flight: 204 K IOPS, p99.9 under 2 ms: pass; dgx4: 24.8 K, p99.9 10.5 ms: fail */
	run = json_tokener_parse("{\"iops\": 204000, \"lat_us\": {\"p50\": 283.0, \"p99_9\": 1900.0}}");
	n = io_gates_eval(&rand64, "rand64", run, g);
	CHECK_U64(n, 2);
	CHECK_STR(g[1].name, "rand64-p99.9");
	CHECK(g[0].pass && g[1].pass);
	json_object_put(run);
	run = json_tokener_parse("{\"iops\": 24800, \"lat_us\": {\"p50\": 2450.0, \"p99_9\": 10500.0}}");
	io_gates_eval(&rand64, "rand64", run, g);
	CHECK(!g[0].pass && !g[1].pass);
	json_object_put(run);
	/* sequential: dgx4 1.9 GB/s fails 2.5 GB/s, dgx5 3.0 GB/s passes */
	run = json_tokener_parse("{\"mb_s\": 1900.0}");
	n = io_gates_eval(&seq, "seq", run, g);
	CHECK_U64(n, 1);
	CHECK_STR(g[0].name, "seq-mb_s");
	CHECK(!g[0].pass);
	json_object_put(run);
	run = json_tokener_parse("{\"mb_s\": 3000.0}");
	io_gates_eval(&seq, "seq", run, g);
	CHECK(g[0].pass);
	json_object_put(run);
}

static void stability(void)
{
	uint64_t flat[] = { 100, 101, 99, 100, 100 }, ramp[] = { 50, 70, 90, 110, 130 }, two[] = { 1, 2 };
	struct io_stability st;

	io_stability(flat, 5, &st);
	CHECK(st.evaluated && st.steady);
	io_stability(ramp, 5, &st);
	CHECK(st.evaluated && !st.steady);
	CHECK(st.slope_pct > 10);
	io_stability(two, 2, &st);
	CHECK(!st.evaluated);
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");
	struct statfs sfs;
	struct io_target t;
	struct io_result res;
	volatile sig_atomic_t stop = 0;
	uint64_t off, unbacked;
	unsigned zero, got;
	char path[300], sparse[300];

	synthetic_gates();
	stability();

	/* the harness needs a filesystem with O_DIRECT to a drive: not tmpfs */
	snprintf(dir, sizeof(dir), "%s/swaptool-io.XXXXXX", tmp && *tmp ? tmp : "/var/tmp");
	if (!mkdtemp(dir) || statfs(dir, &sfs) < 0 || sfs.f_type == TMPFS_MAGIC) {
		snprintf(dir, sizeof(dir), "/var/tmp/swaptool-io.XXXXXX");
		if (!mkdtemp(dir) || statfs(dir, &sfs) < 0 || sfs.f_type == TMPFS_MAGIC) {
			fprintf(stderr, "SKIP: no disk-backed temporary directory\n");
			return 77;
		}
	}
	snprintf(path, sizeof(path), "%s/data", dir);
	snprintf(sparse, sizeof(sparse), "%s/sparse", dir);
	fill_file(path, 32 << 20, 32 << 20);
	/* 16 MiB file of which only the first 4 MiB are written: 12 MiB of hole */
	fill_file(sparse, 16 << 20, 4 << 20);

	CHECK(io_target_open(path, &t, NULL) == 0);
	CHECK(!t.block_device);
	CHECK_U64(t.size, 32 << 20);
	CHECK(io_working_set(&t, 16 << 20, &off) == 0);
	CHECK_U64(off, 8 << 20); /* centered */
	CHECK(io_working_set(&t, 64 << 20, &off) == -E2BIG);
	CHECK(io_fiemap_unbacked(t.fd, 0, 32 << 20, &unbacked) == 0);
	CHECK_U64(unbacked, 0);
	CHECK(io_zero_sample(t.fd, 0, 32 << 20, 64, 1, &zero, &got) == 0);
	CHECK_U64(got, 64);
	CHECK_U64(zero, 0);

	/* random: 1 s, 32 in flight over 2 rings (several submission groups each), no ramp */
	{
		struct io_spec s = { .block_size = 4096, .inflight = 32, .threads = 2, .offset = off = 8 << 20,
				     .length = 16 << 20, .duration_ns = 1000000000ULL, .seed = 42, .max_errors = 64,
				     .stop = &stop };
		CHECK(io_run(t.fd, &s, &res) == 0);
		check_run_consistent(&res, 4096);
		CHECK_U64(res.threads, 2);
		CHECK(res.fixed_buffers && res.fixed_files);
		CHECK(res.elapsed_ns >= 1000000000ULL);
		CHECK(!res.interrupted);
		little_law(&res, 32);
		io_result_free(&res);
	}
	/* sequential: exactly seq_bytes in 1 MiB reads */
	{
		struct io_spec s = { .sequential = true, .block_size = 1 << 20, .inflight = 4, .offset = 0,
				     .length = 32 << 20, .seq_bytes = 48 << 20, .seed = 1, .max_errors = 64,
				     .stop = &stop };
		CHECK(io_run(t.fd, &s, &res) == 0);
		check_run_consistent(&res, 1 << 20);
		CHECK_U64(res.bytes, 48 << 20); /* wraps over the 32 MiB working set */
		CHECK_U64(res.threads, 1);
		io_result_free(&res);
	}
	/* stop flag (SIGINT) set: returns at once, marked interrupted */
	{
		struct io_spec s = { .block_size = 4096, .inflight = 4, .threads = 1, .offset = 0, .length = 32 << 20,
				     .duration_ns = 30000000000ULL, .seed = 3, .max_errors = 64, .stop = &stop };
		uint64_t t0 = mono_ns();
		stop = 1;
		CHECK(io_run(t.fd, &s, &res) == 0);
		CHECK(res.interrupted);
		CHECK(mono_ns() - t0 < 2000000000ULL);
		io_result_free(&res);
		stop = 0;
	}
	io_target_close(&t);

	/* holes: FIEMAP sees the 12 MiB never written; zero sampling sees them too */
	CHECK(io_target_open(sparse, &t, NULL) == 0);
	CHECK(io_fiemap_unbacked(t.fd, 0, 16 << 20, &unbacked) == 0);
	CHECK_U64(unbacked, 12 << 20);
	CHECK(io_fiemap_unbacked(t.fd, 0, 4 << 20, &unbacked) == 0);
	CHECK_U64(unbacked, 0);
	CHECK(io_fiemap_unbacked(t.fd, 2 << 20, 4 << 20, &unbacked) == 0);
	CHECK_U64(unbacked, 2 << 20);
	CHECK(io_zero_sample(t.fd, 4 << 20, 12 << 20, 32, 7, &zero, &got) == 0);
	CHECK_U64(zero, 32);
	io_target_close(&t);

	/* missing file; tmpfs refused as "no O_DIRECT" (when /dev/shm is tmpfs) */
	{
		_cleanup_free_ char *why = NULL;

		CHECK(io_target_open("/nonexistent/swaptool", &t, &why) == -ENOENT);
		CHECK(streq(why, "cannot stat"));
	}
	if (statfs("/dev/shm", &sfs) == 0 && sfs.f_type == TMPFS_MAGIC) {
		char shm[64];
		int fd;
		snprintf(shm, sizeof(shm), "/dev/shm/swaptool-io-%d", (int)getpid());
		fd = open(shm, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		CHECK(fd >= 0 && ftruncate(fd, 1 << 20) == 0);
		close(fd);
		_cleanup_free_ char *why = NULL;

		CHECK(io_target_open(shm, &t, &why) == -EOPNOTSUPP);
		CHECK(why && strstr(why, "tmpfs"));
		unlink(shm);
	}

	/* the shard glob: the largest regular file matching, directories skipped, none is -ENOENT;
	 * sizes set with ftruncate, written by no code under test */
	{
		char a[320], b[320], d[320], pat[320];
		_cleanup_free_ char *got_path = NULL;
		size_t n = 0;
		int fd;

		snprintf(a, sizeof(a), "%s/engram-a-weights.safetensors", dir);
		snprintf(b, sizeof(b), "%s/engram-b-weights.safetensors", dir);
		snprintf(d, sizeof(d), "%s/engram-dir-weights.safetensors", dir);
		snprintf(pat, sizeof(pat), "%s/engram-*-weights.safetensors", dir);
		CHECK(io_find_shard(pat, &got_path, &n) == -ENOENT);
		CHECK(mkdir(d, 0700) == 0);
		CHECK(io_find_shard(pat, &got_path, &n) == -ENOENT); /* a directory is no shard */
		CHECK((fd = open(a, O_WRONLY | O_CREAT, 0600)) >= 0 && ftruncate(fd, 3 << 20) == 0);
		close(fd);
		CHECK((fd = open(b, O_WRONLY | O_CREAT, 0600)) >= 0 && ftruncate(fd, 5 << 20) == 0);
		close(fd);
		CHECK(io_find_shard(pat, &got_path, &n) == 0);
		CHECK(got_path && streq(got_path, b));
		CHECK_U64(n, 2);
		unlink(a);
		unlink(b);
		rmdir(d);
	}
	/* the disk under '/': a /dev node that is a block device, or -ENOENT (overlay, tmpfs roots) */
	{
		_cleanup_free_ char *dev = NULL, *how = NULL, *dev2 = NULL, *how2 = NULL;
		struct stat st;
		int r = io_mount_disk("/", &dev, &how);

		CHECK(r == 0 || r == -ENOENT);
		if (r == 0)
			CHECK(stat(dev, &st) == 0 && S_ISBLK(st.st_mode) && strstr(how, "'/' is mounted from"));
		CHECK(io_mount_disk("/no/such/mount/point", &dev2, &how2) == -ENOENT && !dev2);
	}

	unlink(path);
	unlink(sparse);
	rmdir(dir);
	return tap_done();
}
