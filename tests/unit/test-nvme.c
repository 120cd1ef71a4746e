/* SPDX-License-Identifier: MIT */
/* Unit tests for src/nvme.c: the committed dumps, unit conversions, page layout, bad dumps. */
#include "tap.h"
#include "util.h"
#include "nvme.h"
#include "size.h"

#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <linux/nvme_ioctl.h>
#include <nvme/types.h>

static char srcdir[2 * PATH_MAX + 2];

/* The source tree from this file's path: "<src>/tests/unit/test-nvme.c" (relative to the build dir). */
static void find_srcdir(void)
{
	const char *env = getenv("SRCDIR");
	char buf[PATH_MAX];
	char *cut;

	if (env && *env) {
		snprintf(srcdir, sizeof(srcdir), "%s", env);
		return;
	}
	snprintf(buf, sizeof(buf), "%s", __FILE__);
	cut = strstr(buf, "tests/unit/test-nvme.c");
	if (cut)
		*cut = '\0';
	if (buf[0] != '/') {
		/* Relative to the build directory, which holds this program as tests/test-nvme. */
		char exe[PATH_MAX];
		ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		char *slash;

		if (n > 0) {
			exe[n] = '\0';
			for (int up = 0; up < 2 && (slash = strrchr(exe, '/')); up++)
				*slash = '\0';
			snprintf(srcdir, sizeof(srcdir), "%s/%s", exe, buf);
			return;
		}
	}
	snprintf(srcdir, sizeof(srcdir), "%s", buf[0] ? buf : ".");
}

static int load(const char *drive, struct nvme_info *n, char **why)
{
	_cleanup_free_ char *dir = xasprintf("%s/fixtures/nvme/%s", srcdir, drive);

	return nvme_load_dumps(dir, n, why);
}

static void test_xg7000(void)
{
	_cleanup_nvme_info_ struct nvme_info n = { 0 };
	_cleanup_free_ char *why = NULL;
	uint64_t bytes = 0;
	char b[32];

	CHECK(load("xg7000", &n, &why) == 0);
	if (why)
		fprintf(stderr, "%s\n", why);
	/* The incident's identity table. */
	CHECK_STR(n.mn, "XG7000-2TB 2242");
	CHECK_STR(n.fr, "GT0d9d63");
	CHECK_U64(n.vid, 0x1e4b);
	CHECK_U64(n.hmpre, 10240);
	CHECK_U64(n.hmmin, 10240);
	CHECK_U64(nvme_hmb_mb(n.hmpre), 40);
	CHECK_U64(n.npss, 4);
	CHECK_U64(n.tnvmcap, 2048408248320ull);
	CHECK(n.nns == 1);
	if (n.nns == 1) {
		CHECK_U64(n.ns[0].nsze, 4000797360ull);
		CHECK_U64(n.ns[0].lba_size, 512);
		CHECK_U64(n.ns[0].size_bytes, 2048408248320ull);
		CHECK_STR(fmt_tib(n.ns[0].size_bytes, b), "1.863 TiB");
	}
	/* The incident's health line: 96 h, 54.9 TB read / 13.4 TB written, 0 media errors, 42 °C. */
	CHECK(n.have_smart);
	CHECK_U64(n.smart.power_on_hours, 96);
	CHECK(nvme_data_units_bytes(n.smart.data_units_read, &bytes) == 0);
	CHECK_STR(fmt_tb(bytes, b), "54.900 TB");
	CHECK(nvme_data_units_bytes(n.smart.data_units_written, &bytes) == 0);
	CHECK_U64(bytes, 13400000000000ull);
	CHECK_STR(fmt_tb(bytes, b), "13.400 TB");
	CHECK_U64(n.smart.media_errors, 0);
	CHECK_U64(n.smart.critical_warning, 0);
	CHECK(nvme_temp_c(n.smart.temperature_k) == 42);
	CHECK_U64(n.smart.thm_temp1_trans_count + n.smart.thm_temp2_trans_count, 0);
	CHECK(n.have_errlog);
	CHECK_U64(n.errlog.slots, 64);
	CHECK_U64(n.errlog.entries, 0);
}

static void test_others(void)
{
	_cleanup_nvme_info_ struct nvme_info esl = { 0 }, mini = { 0 }, sick = { 0 };
	_cleanup_free_ char *w1 = NULL, *w2 = NULL, *w3 = NULL;

	CHECK(load("esl01", &esl, &w1) == 0);
	CHECK_STR(esl.mn, "ESL01TBTLCZ-27J2-TYN");
	CHECK_STR(esl.fr, "ERFM12.0");
	CHECK_U64(nvme_hmb_mb(esl.hmpre), 64);
	CHECK(esl.nns == 1 && esl.ns[0].nsze == 1953525168ull && esl.ns[0].lba_size == 512);
	/* Two "Invalid Field in Command" entries: counted apart as benign. */
	CHECK_U64(esl.errlog.entries, 2);
	CHECK_U64(esl.errlog.benign, 2);
	CHECK_U64(esl.errlog.other, 0);

	CHECK(load("mp600-mini", &mini, &w2) == 0);
	CHECK_STR(mini.mn, "Corsair MP600 MINI");
	CHECK_U64(mini.vid, 0x1987);
	CHECK_U64(nvme_hmb_mb(mini.hmpre), 64);
	CHECK(mini.nns == 1 && mini.ns[0].nsze == 3907029168ull);
	CHECK(mini.nns == 1 && mini.ns[0].size_bytes == 2000398934016ull);

	CHECK(load("sick", &sick, &w3) == 0);
	CHECK_U64(sick.smart.media_errors, 12);
	CHECK(nvme_temp_c(sick.smart.temperature_k) == 81);
	CHECK(nvme_temp_c(sick.wctemp) == 80);
	CHECK(sick.smart.temperature_k >= sick.wctemp);
	CHECK_U64(sick.smart.thm_temp1_trans_count, 7);
	CHECK_U64(sick.errlog.entries, 3);
	CHECK_U64(sick.errlog.benign, 2);
	CHECK_U64(sick.errlog.other, 1);
	CHECK_U64(sick.errlog.first_other_status, 0x281); /* SCT 2 (media), SC 0x81: unrecovered read */
}

static void test_units(void)
{
	uint64_t bytes = 0;
	char b[32];

	CHECK(nvme_temp_c(315) == 42);
	CHECK(nvme_temp_c(273) == 0);
	CHECK(nvme_temp_c(263) == -10);
	CHECK(nvme_data_units_bytes(1, &bytes) == 0 && bytes == 512000);
	CHECK(nvme_data_units_bytes(26171875, &bytes) == 0 && bytes == 13400000000000ull);
	CHECK(nvme_data_units_bytes(UINT64_MAX / 1000, &bytes) == -EOVERFLOW);
	CHECK_U64(nvme_hmb_bytes(10240), 41943040);
	CHECK_STR(fmt_binary(nvme_hmb_bytes(10240), b), "40 MiB");
	CHECK_U64(nvme_hmb_mb(10240), 40);
	CHECK_U64(nvme_hmb_mb(16384), 64);
	CHECK_U64(nvme_hmb_mb(0), 0);
	CHECK_U64(nvme_hmb_bytes(UINT32_MAX), (uint64_t)UINT32_MAX * 4096);
	CHECK_U64(nvme_err_status(0x0002 << 1), 0x002);         /* Invalid Field in Command */
	CHECK_U64(nvme_err_status((2 << 9) | (0x81 << 1) | 1), 0x281); /* phase bit ignored */
	CHECK_U64(nvme_nsid_of("nvme0n1"), 1);
	CHECK_U64(nvme_nsid_of("/dev/nvme10n12"), 12);
	CHECK_U64(nvme_nsid_of("nvme0"), 0);
	CHECK_U64(nvme_nsid_of("nvme0n1p2"), 0);
	CHECK_U64(nvme_nsid_of("loop0"), 0);
	CHECK_U64(nvme_nsid_of(NULL), 0);
}

/* The generator writes the spec's offsets by hand; libnvme's structs must agree with them. */
static void test_layout(void)
{
	CHECK_U64(offsetof(struct nvme_id_ctrl, mn), 24);
	CHECK_U64(offsetof(struct nvme_id_ctrl, fr), 64);
	CHECK_U64(offsetof(struct nvme_id_ctrl, npss), 263);
	CHECK_U64(offsetof(struct nvme_id_ctrl, wctemp), 266);
	CHECK_U64(offsetof(struct nvme_id_ctrl, hmpre), 272);
	CHECK_U64(offsetof(struct nvme_id_ctrl, tnvmcap), 280);
	CHECK_U64(offsetof(struct nvme_id_ns, flbas), 26);
	CHECK_U64(offsetof(struct nvme_id_ns, lbaf), 128);
	CHECK_U64(offsetof(struct nvme_smart_log, data_units_read), 32);
	CHECK_U64(offsetof(struct nvme_smart_log, power_on_hours), 128);
	CHECK_U64(offsetof(struct nvme_smart_log, media_errors), 160);
	CHECK_U64(offsetof(struct nvme_smart_log, thm_temp1_trans_count), 216);
	CHECK_U64(offsetof(struct nvme_error_log_page, status_field), 12);
}

/* In-memory pages: what the parsers refuse. */
static void test_parsers(void)
{
	unsigned char page[4096] = { 0 };
	struct nvme_info n = { 0 };
	struct nvme_ns_info ns;
	struct nvme_smart s;
	struct nvme_errlog e;
	const char *why = NULL;

	CHECK(nvme_parse_id_ctrl(page, sizeof(page), &n, &why) == -EBADMSG);
	CHECK(why && strstr(why, "all zeros"));
	CHECK(nvme_parse_id_ctrl(page, 4095, &n, &why) == -EMSGSIZE);
	/* A model with a control byte in it is binary junk, not a model. */
	page[0] = 0x4b, page[1] = 0x1e;
	memcpy(page + 24, "XG7\x01" "000", 7);
	CHECK(nvme_parse_id_ctrl(page, sizeof(page), &n, &why) == -EBADMSG);
	memcpy(page + 24, "XG7000-2TB 2242", 15);
	CHECK(nvme_parse_id_ctrl(page, sizeof(page), &n, &why) == 0);
	CHECK_STR(n.mn, "XG7000-2TB 2242"); /* NUL padding accepted as well as spaces */
	/* tnvmcap beyond 2^64 */
	page[280 + 8] = 1;
	CHECK(nvme_parse_id_ctrl(page, sizeof(page), &n, &why) == -EBADMSG);

	memset(page, 0, sizeof(page));
	page[0] = 0x10;                 /* nsze 16 */
	page[8] = 0x20;                 /* ncap 32 > nsze */
	page[128 + 2] = 9;              /* 512 B */
	CHECK(nvme_parse_id_ns(page, sizeof(page), 1, &ns, &why) == -EBADMSG);
	page[8] = 0x10;
	CHECK(nvme_parse_id_ns(page, sizeof(page), 1, &ns, &why) == 0);
	CHECK_U64(ns.size_bytes, 16 * 512);
	page[26] = 1;                   /* flbas 1 but nlbaf 0: one format only */
	CHECK(nvme_parse_id_ns(page, sizeof(page), 1, &ns, &why) == -EBADMSG);
	page[26] = 0;
	page[128 + 2] = 20;             /* 1 MiB LBAs do not exist */
	CHECK(nvme_parse_id_ns(page, sizeof(page), 1, &ns, &why) == -EBADMSG);

	memset(page, 0, sizeof(page));
	CHECK(nvme_parse_smart(page, 512, &s, &why) == -EBADMSG);
	CHECK(nvme_parse_smart(page, 513, &s, &why) == -EMSGSIZE);
	page[0] = 0x04;                 /* reliability degraded */
	page[1] = 315 & 0xff, page[2] = 315 >> 8;
	page[3] = 100;
	page[160] = 5;                  /* media errors */
	CHECK(nvme_parse_smart(page, 512, &s, &why) == 0);
	CHECK_U64(s.critical_warning, 4);
	CHECK_U64(s.media_errors, 5);
	page[160 + 8] = 1;              /* media errors beyond 2^64 */
	CHECK(nvme_parse_smart(page, 512, &s, &why) == -EBADMSG);

	memset(page, 0, sizeof(page));
	CHECK(nvme_parse_error_log(page, 64, &e, &why) == 0 && e.entries == 0 && e.slots == 1);
	CHECK(nvme_parse_error_log(page, 100, &e, &why) == -EMSGSIZE);
	CHECK(nvme_parse_error_log(page, 0, &e, &why) == -EMSGSIZE);
}

static void write_bytes(const char *path, const void *buf, size_t len)
{
	FILE *f = fopen(path, "wb");

	CHECK(f != NULL);
	if (!f)
		return;
	CHECK(fwrite(buf, 1, len, f) == len);
	fclose(f);
}

/* A dumps directory with one file replaced: the error names the file and the size expected. */
static void bad_dump(const char *file, const void *buf, size_t len, int want_r, const char *want_text)
{
	char tmpl[] = "/tmp/test-nvme.XXXXXX";
	const char *dir = mkdtemp(tmpl);
	static const char *files[] = { "id-ctrl.bin", "id-ns.bin", "smart-log.bin", "error-log.bin" };
	_cleanup_nvme_info_ struct nvme_info n = { 0 };
	_cleanup_free_ char *why = NULL;
	int r;

	CHECK(dir != NULL);
	if (!dir)
		return;
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		_cleanup_free_ char *from = xasprintf("%s/fixtures/nvme/xg7000/%s", srcdir, files[i]);
		_cleanup_free_ char *to = xasprintf("%s/%s", dir, files[i]);
		_cleanup_free_ char *data = NULL;
		size_t dlen = 0;

		if (streq(files[i], file)) {
			if (buf)
				write_bytes(to, buf, len);
			continue;
		}
		CHECK(read_file_all(from, 1 << 20, &data, &dlen) == 0);
		write_bytes(to, data, dlen);
	}
	r = nvme_load_dumps(dir, &n, &why);
	CHECK(r == want_r);
	CHECK(why && strstr(why, file) && strstr(why, want_text));
	if (r != want_r || !why || !strstr(why, want_text))
		fprintf(stderr, "  %s: r=%d why=%s\n", file, r, why ? why : "(null)");
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		_cleanup_free_ char *p = xasprintf("%s/%s", dir, files[i]);

		unlink(p);
	}
	rmdir(dir);
}

static void test_bad_dumps(void)
{
	static unsigned char zeros[16448], idns[4096];
	_cleanup_free_ char *ns_path = xasprintf("%s/fixtures/nvme/xg7000/id-ns.bin", srcdir);
	_cleanup_free_ char *data = NULL;
	size_t len = 0;

	bad_dump("id-ctrl.bin", zeros, 4000, -EMSGSIZE, "is 4000 bytes, expected 4096");
	bad_dump("id-ctrl.bin", zeros, 4097, -EMSGSIZE, "is 4097 bytes, expected 4096");
	bad_dump("id-ctrl.bin", zeros, 0, -EMSGSIZE, "is 0 bytes, expected 4096");
	bad_dump("id-ctrl.bin", zeros, 4096, -EBADMSG, "all zeros");
	bad_dump("id-ctrl.bin", NULL, 0, -ENOENT, "nvme id-ctrl");
	/* A foreign page of the right size: the namespace page where the controller page belongs. */
	CHECK(read_file_all(ns_path, 8192, &data, &len) == 0 && len == sizeof(idns));
	bad_dump("id-ctrl.bin", data, len, -EBADMSG, "not an identify-controller page");
	bad_dump("id-ns.bin", zeros, 512, -EMSGSIZE, "is 512 bytes, expected 4096");
	bad_dump("id-ns.bin", zeros, 4096, -EBADMSG, "all zeros");
	bad_dump("smart-log.bin", zeros, 511, -EMSGSIZE, "is 511 bytes, expected 512");
	bad_dump("smart-log.bin", zeros, 4096, -EMSGSIZE, "expected 512");
	bad_dump("smart-log.bin", zeros, 512, -EBADMSG, "all zeros");
	bad_dump("error-log.bin", zeros, 100, -EMSGSIZE, "expected a multiple of 64");
	bad_dump("error-log.bin", zeros, 257 * 64, -EMSGSIZE, "expected a multiple of 64 up to 16384");
	(void)idns;
}

/* The PCIe link from a sysfs tree laid out like /sys/class/nvme/nvme0/device (Gen4 x4, as on dgx4). */
static void test_pcie(void)
{
	char root[] = "/tmp/test-nvme-sysfs.XXXXXX";
	static const char *attrs[][2] = { { "current_link_speed", "16.0 GT/s PCIe\n" },
					  { "max_link_speed", "16.0 GT/s PCIe\n" },
					  { "current_link_width", "4\n" },
					  { "max_link_width", "4\n" } };
	struct nvme_pcie p = { 0 };
	_cleanup_nvme_info_ struct nvme_info n = { 0 };
	_cleanup_free_ char *why = NULL;

	CHECK(mkdtemp(root) != NULL);
	{
		_cleanup_free_ char *dir = xasprintf("%s/class/nvme/nvme0/device", root);

		CHECK(mkdir_p(dir, 0755) == 0);
		CHECK(nvme_read_pcie("nvme0", root, &p) == -ENOENT);
		for (size_t i = 0; i < ARRAY_SIZE(attrs); i++) {
			_cleanup_free_ char *f = xasprintf("%s/%s", dir, attrs[i][0]);

			write_bytes(f, attrs[i][1], strlen(attrs[i][1]));
		}
		CHECK(nvme_read_pcie("nvme0", root, &p) == 0);
		CHECK_STR(p.current_speed, "16.0 GT/s PCIe");
		CHECK_STR(p.max_speed, "16.0 GT/s PCIe");
		CHECK_U64(p.current_width, 4);
		CHECK_U64(p.max_width, 4);
		free(p.current_speed);
		free(p.max_speed);
		for (size_t i = 0; i < ARRAY_SIZE(attrs); i++) {
			_cleanup_free_ char *f = xasprintf("%s/%s", dir, attrs[i][0]);

			unlink(f);
		}
	}
	{
		_cleanup_free_ char *cmd = xasprintf("rm -rf '%s'", root);

		CHECK(system(cmd) == 0);
	}
	/* No such controller: an error that says what to do, not a crash. */
	CHECK(nvme_read_device("nvme-does-not-exist", root, &n, &why) == -ENOENT);
	CHECK(why && strstr(why, "--from-dumps"));
}

/*
 * The libnvme path without an NVMe drive: this program defines ioctl(), which takes precedence
 * over libc's for libnvme too, and answers the admin commands sent to one fake controller file
 * with the committed XG7000 pages (plus the ESL01's namespace page as namespace 2). Every other
 * ioctl goes to the kernel. Where a real drive exists, tests/nvme-real.sh compares with nvme-cli.
 */
static struct {
	dev_t dev;
	ino_t ino;
	bool on;
	unsigned admin_cmds;
	char *ctrl, *ns1, *ns2, *smart, *errlog;
	size_t errlog_len;
} fake;

static int fake_admin(struct nvme_passthru_cmd *c)
{
	uint8_t cns = c->cdw10 & 0xff, lid = c->cdw10 & 0xff;
	uint64_t off = (uint64_t)c->cdw12 | (uint64_t)c->cdw13 << 32;
	void *buf = (void *)(uintptr_t)c->addr;
	const char *src = NULL;
	size_t len = 0;

	fake.admin_cmds++;
	if (c->opcode == 0x06) { /* Identify */
		if (cns == 0x01)
			src = fake.ctrl, len = 4096;
		else if (cns == 0x00 && c->nsid == 1)
			src = fake.ns1, len = 4096;
		else if (cns == 0x00 && c->nsid == 2)
			src = fake.ns2, len = 4096;
		else if (cns == 0x02) { /* active namespace list above c->nsid */
			uint32_t list[1024] = { 0 };
			unsigned n = 0;

			for (uint32_t id = 1; id <= 2; id++)
				if (id > c->nsid)
					list[n++] = htole32(id);
			memcpy(buf, list, c->data_len < sizeof(list) ? c->data_len : sizeof(list));
			return 0;
		} else
			return 0x4002; /* Invalid Field in Command, DNR */
	} else if (c->opcode == 0x02) { /* Get Log Page */
		if (lid == 0x02)
			src = fake.smart, len = 512;
		else if (lid == 0x01)
			src = fake.errlog, len = fake.errlog_len;
		else
			return 0x4002;
		if (off > len)
			return 0x4002;
		src += off;
		len -= off;
	} else
		return 0x4001; /* Invalid Command Opcode */
	memset(buf, 0, c->data_len);
	memcpy(buf, src, c->data_len < len ? c->data_len : len);
	return 0;
}

int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	void *arg;
	struct stat st;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (fake.on && (req == NVME_IOCTL_ADMIN_CMD || req == NVME_IOCTL_ADMIN64_CMD) && fstat(fd, &st) == 0 &&
	    st.st_dev == fake.dev && st.st_ino == fake.ino)
		return fake_admin(arg); /* the 64-bit command has the same layout up to the result */
	return (int)syscall(SYS_ioctl, fd, req, arg);
}

static char *slurp(const char *drive, const char *file, size_t *len)
{
	_cleanup_free_ char *p = xasprintf("%s/fixtures/nvme/%s/%s", srcdir, drive, file);
	char *data = NULL;

	CHECK(read_file_all(p, 1 << 20, &data, len) == 0);
	return data;
}

static void test_device(void)
{
	char path[] = "/tmp/test-nvme-ctrl.XXXXXX";
	int fd = mkstemp(path);
	_cleanup_nvme_info_ struct nvme_info n = { 0 };
	_cleanup_free_ char *why = NULL, *ctrl = NULL;
	struct stat st;
	size_t len;
	uint64_t bytes = 0;

	CHECK(fd >= 0 && fstat(fd, &st) == 0);
	if (fd < 0)
		return;
	close(fd);
	fake.dev = st.st_dev, fake.ino = st.st_ino;
	fake.ctrl = slurp("xg7000", "id-ctrl.bin", &len);
	fake.ns1 = slurp("xg7000", "id-ns.bin", &len);
	fake.ns2 = slurp("esl01", "id-ns.bin", &len);
	fake.smart = slurp("xg7000", "smart-log.bin", &len);
	fake.errlog = slurp("sick", "error-log.bin", &fake.errlog_len);
	fake.on = true;

	/* nvme_read_device opens "/dev/CTRL": "/dev/../tmp/..." reaches the fake controller file. */
	ctrl = xasprintf("..%s", path);
	CHECK(nvme_read_device(ctrl, "/nonexistent", &n, &why) == 0);
	if (why)
		fprintf(stderr, "%s\n", why);
	CHECK(fake.admin_cmds >= 6); /* identify ctrl, ns list, 2 x ns, smart, error log */
	CHECK(!n.from_dumps);
	CHECK_STR(n.mn, "XG7000-2TB 2242");
	CHECK_STR(n.fr, "GT0d9d63");
	CHECK_U64(n.vid, 0x1e4b);
	CHECK_U64(n.hmpre, 10240);
	CHECK_U64(n.npss, 4);
	CHECK(n.nns == 2);
	if (n.nns == 2) {
		CHECK_U64(n.ns[0].nsid, 1);
		CHECK_U64(n.ns[0].nsze, 4000797360ull);
		CHECK_U64(n.ns[1].nsid, 2);
		CHECK_U64(n.ns[1].nsze, 1953525168ull);
		CHECK(nvme_find_ns(&n, 2) == &n.ns[1]);
	}
	CHECK(nvme_find_ns(&n, 3) == NULL);
	CHECK(n.have_smart);
	CHECK_U64(n.smart.power_on_hours, 96);
	CHECK(nvme_temp_c(n.smart.temperature_k) == 42);
	CHECK(nvme_data_units_bytes(n.smart.data_units_read, &bytes) == 0 && bytes == 54900000256000ull);
	/* elpe 63: 64 entries = 4096 bytes, read in one page. */
	CHECK(n.have_errlog);
	CHECK_U64(n.errlog.slots, 64);
	CHECK_U64(n.errlog.entries, 3);
	CHECK_U64(n.errlog.benign, 2);
	CHECK(!n.have_pcie); /* no sysfs for it */

	fake.on = false;
	free(fake.ctrl), free(fake.ns1), free(fake.ns2), free(fake.smart), free(fake.errlog);
	unlink(path);
}

int main(void)
{
	find_srcdir();
	test_xg7000();
	test_others();
	test_units();
	test_layout();
	test_parsers();
	test_bad_dumps();
	test_pcie();
	test_device();
	return tap_done();
}
