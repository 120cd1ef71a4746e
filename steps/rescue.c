/* SPDX-License-Identifier: MIT */
/* rescue: write the rescue stick path 2 boots from (swaptool-rescue(1)): this machine's kernel, modules,
 * swaptool, the programs path 2 runs and the records so far, on a UEFI-bootable image or USB drive. */
#include "steps.h"

#include <fcntl.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <time.h>

#include "ident.h"
#include "rescue.h"
#include "schema.h"
#include "size.h"

#if defined(__x86_64__)
#define LOADER_DEFAULT "/usr/lib/systemd/boot/efi/systemd-bootx64.efi"
#elif defined(__aarch64__)
#define LOADER_DEFAULT "/usr/lib/systemd/boot/efi/systemd-bootaa64.efi"
#else
#define LOADER_DEFAULT "/usr/lib/systemd/boot/efi/systemd-boot.efi"
#endif
#define EFIVARS "/sys/firmware/efi/efivars"

static const struct step_option rescue_options[] = {
	{ { "out", required_argument, NULL, 'o' }, "FILE|DEVICE",
	  "the image file to write, or the USB drive (its whole disk) to overwrite" },
	{ { "yes", no_argument, NULL, 'y' }, NULL, "required for a DEVICE: the whole drive is overwritten" },
	{ { "force", no_argument, NULL, 'f' }, NULL, "replace an existing FILE" },
	{ { "kernel", required_argument, NULL, 'k' }, "FILE",
	  "the kernel (default: the running one, /boot/vmlinuz-$(uname -r))" },
	{ { "modules", required_argument, NULL, 'm' }, "DIR",
	  "its modules (default: /lib/modules/$(uname -r)); needs depmod's modules.dep" },
	{ { "loader", required_argument, NULL, 'L' }, "FILE", "the EFI loader (default: systemd-boot, " LOADER_DEFAULT ")" },
	{ { "append", required_argument, NULL, 'a' }, "ARGS",
	  "more kernel arguments for the stick (swaptool.auto=SOURCE,TARGET runs path 2\nunattended)" },
	STEP_OPTIONS_END,
};

const struct step step_rescue = {
	.name = "rescue",
	.summary = "write the rescue stick path 2 runs from: this machine's kernel, swaptool, its tools and records",
	.synopsis = "swaptool rescue --out FILE|DEVICE [--yes] [--force] [--kernel FILE --modules DIR] [--loader FILE]\n"
		    "                [--append ARGS]\n",
	.options = rescue_options,
	.notes = "exit: 0 written and read back, 1 what was read back differs, 3 refused or failed\n",
	.run = step_rescue_run,
	.render = step_rescue_render,
	.flags = STEP_SAVES_RECORD,
};

/* The records the stick carries: those made before the clone, in the order they are made. */
static const char *const carried[] = { "preflight", "backup", "plan" };

struct rescue_job {
	struct ctx *ctx;
	struct record *rec;
	const char *out;
	bool yes, force, device;
	char *kernel, *moddir, *self, *path_env, *built, *tmp;
	const char *loader, *append;
	struct ident_hold h;
	uint64_t disk_bytes, t0;
	int fd;
	struct rescue r;
	double secs[4]; /* gather, initramfs, write, verify */
};

static void job_free(struct rescue_job *j)
{
	if (j->tmp) {
		unlink(j->tmp);
		free(j->tmp);
	}
	if (j->fd >= 0)
		close(j->fd);
	ident_hold_close(&j->h);
	rescue_free(&j->r);
	free(j->kernel);
	free(j->moddir);
	free(j->self);
	free(j->path_env);
	free(j->built);
}

static int parse_args(struct rescue_job *j, int argc, char **argv)
{
	struct utsname u;
	int c;

	while ((c = getopt_long(argc, argv, "", step_getopt(rescue_options), NULL)) != -1) {
		switch (c) {
		case 'o': j->out = optarg; break;
		case 'y': j->yes = true; break;
		case 'f': j->force = true; break;
		case 'k': free(j->kernel); j->kernel = xstrdup(optarg); break;
		case 'm': free(j->moddir); j->moddir = xstrdup(optarg); break;
		case 'L': j->loader = optarg; break;
		case 'a': j->append = optarg; break;
		default: return step_bad_option(j->ctx, argc, argv);
		}
	}
	if (optind < argc)
		return ctx_error(j->ctx, EXIT_USAGE, "rescue takes no operand ('%s'); name the stick with --out FILE|DEVICE",
				 argv[optind]);
	if (!j->out || !*j->out)
		return ctx_error(j->ctx, EXIT_USAGE, "rescue needs --out FILE|DEVICE: the image to write, or the USB drive "
						     "(/dev/sdX) to overwrite");
	for (const char *p = j->append ? j->append : ""; *p; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p > 0x7e)
			return ctx_error(j->ctx, EXIT_USAGE, "--append holds a control or non-ASCII byte (0x%02x): the loader "
							     "entry takes one line of printable ASCII", (unsigned char)*p);
	if (!!j->kernel != !!j->moddir)
		return ctx_error(j->ctx, EXIT_USAGE, "--kernel and --modules go together: a kernel needs its own modules");
	if (uname(&u) < 0)
		return ctx_error(j->ctx, EXIT_FAILED, "cannot read the running kernel's release: %m");
	if (!j->kernel) {
		j->kernel = xasprintf("/boot/vmlinuz-%s", u.release);
		j->moddir = xasprintf("/lib/modules/%s", u.release);
		if (access(j->kernel, F_OK) != 0)
			return ctx_error(j->ctx, EXIT_FAILED,
					 "the running kernel's image '%s' is not there (a container, or a kernel not "
					 "installed from a package): name a kernel and its modules with --kernel FILE "
					 "--modules DIR", j->kernel);
	}
	j->loader = j->loader ? j->loader : LOADER_DEFAULT;
	return 0;
}

/* A whole disk, not a partition: /sys/dev/block/MAJ:MIN/partition is there only for a partition. */
static bool is_partition(dev_t rdev)
{
	_cleanup_free_ char *p = xasprintf("/sys/dev/block/%u:%u/partition", major(rdev), minor(rdev));

	return access(p, F_OK) == 0;
}

/* A DEVICE --out: --yes, a whole disk, not the running root's, not in use, held exclusively. */
static int claim_device(struct rescue_job *j)
{
	_cleanup_free_ char *w = NULL;
	_cleanup_close_ int root = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct stat st;
	int r;

	if (!j->yes)
		return ctx_error(j->ctx, EXIT_FAILED, "refusing to write '%s' without --yes: the whole drive is overwritten",
				 j->out);
	if ((r = ident_hold_open(j->out, true, &j->h)) < 0 || fstat(j->h.anchor, &st) < 0)
		return ctx_error(j->ctx, EXIT_FAILED, "cannot open '%s': %s", j->out, strerror(r < 0 ? -r : errno));
	if (is_partition(st.st_rdev))
		return ctx_error(j->ctx, EXIT_FAILED, "'%s' is a partition: name the whole drive (the stick gets a table "
						      "of its own)", j->out);
	r = root < 0 ? -errno : ident_overlap(j->h.anchor, root, &w);
	if (r != 0)
		return ctx_error(j->ctx, EXIT_FAILED, r > 0 ? "'%s' holds the running root filesystem (%s): name the USB "
							      "drive for the stick (lsblk shows which is which)"
							    : "cannot tell whether '%s' holds the running root filesystem: %s",
				 j->out, w ? w : strerror(-r));
	r = ident_in_use(j->h.anchor, &w);
	if (r != 0)
		return ctx_error(j->ctx, EXIT_FAILED, r > 0 ? "'%s' is in use: %s; unmount it and detach that loop device"
							    : "cannot tell whether '%s' is in use: %s",
				 j->out, w ? w : strerror(-r));
	r = ident_hold_claim(&j->h);
	if (r == -EBUSY)
		return ctx_error(j->ctx, EXIT_FAILED, "'%s' holds a mounted filesystem or is held by another program: "
						      "unmount its partitions (findmnt -S) and retry", j->out);
	if (r < 0)
		return ctx_error(j->ctx, EXIT_FAILED, "cannot open '%s' for writing: %s", j->out, strerror(-r));
	if (ioctl(j->h.fd, BLKGETSIZE64, &j->disk_bytes) < 0)
		return ctx_error(j->ctx, EXIT_FAILED, "cannot read the size of '%s': %m", j->out);
	j->fd = j->h.fd;
	return 0;
}

/* What --out names: a new or (with --force) replaced FILE, or a DEVICE; the refusals. */
static int check_out(struct rescue_job *j)
{
	struct stat st;

	if (stat(j->out, &st) < 0) {
		if (errno != ENOENT)
			return ctx_error(j->ctx, EXIT_FAILED, "cannot look at '%s': %m", j->out);
		return 0;
	}
	if (S_ISBLK(st.st_mode)) {
		j->device = true;
		return claim_device(j);
	}
	if (!S_ISREG(st.st_mode))
		return ctx_error(j->ctx, EXIT_FAILED, "'%s' is a %s: name a new image file or a USB drive", j->out,
				 file_kind(st.st_mode));
	if (!j->force)
		return ctx_error(j->ctx, EXIT_FAILED, "'%s' exists: name a new file, or add --force to replace it", j->out);
	/* replaced only once read back, but never when it is one of the stick's own inputs (by identity:
	 * another name of the kernel is the kernel) */
	const char *inputs[][2] = { { j->kernel, "the kernel" }, { j->loader, "the loader" },
				    { "/proc/self/exe", "this swaptool" }, { j->ctx->profile_path, "the profile" } };
	for (size_t i = 0; i < ARRAY_SIZE(inputs); i++) {
		struct stat in;

		if (inputs[i][0] && stat(inputs[i][0], &in) == 0 && in.st_dev == st.st_dev && in.st_ino == st.st_ino)
			return ctx_error(j->ctx, EXIT_FAILED, "'%s' is %s the stick is made from: name another file", j->out,
					 inputs[i][1]);
	}
	return 0;
}

/* The records so far (preflight, backup, plan), each checked as every reader checks one. */
static int load_records(struct rescue_job *j)
{
	for (size_t i = 0; i < ARRAY_SIZE(carried); i++) {
		_cleanup_free_ char *path = xasprintf("%s/%s.json", j->ctx->state_dir, carried[i]), *text = NULL, *w = NULL;
		json_object *o = NULL;
		size_t len = 0;
		int r = read_input(path, RECORD_MAX_BYTES, geteuid() == 0 ? INPUT_OURS : 0, &text, &len, &w);

		if (r == -ENOENT)
			continue;
		if (r == 0)
			r = record_parse(text, len, carried[i], &o, &w);
		if (r < 0)
			return ctx_error(j->ctx, EXIT_FAILED, "the record '%s' cannot go onto the stick: %s; run 'swaptool %s' "
							      "again", path, w, carried[i]);
		json_object_put(o);
		j->r.records[j->r.nrecords++] = (struct rescue_record){ carried[i], TAKE_PTR(text), len };
	}
	return 0;
}

static void initramfs_progress(void *ud, uint64_t done, uint64_t total)
{
	struct rescue_job *j = ud;

	out_progress_eta(j->ctx, j->t0, done, total, "rescue: initramfs, %s of %s", fmt_decimal(done, (char[32]){ 0 }),
			 fmt_decimal(total, (char[32]){ 0 }));
}

/* Everything the stick holds, found and made: the files, the initramfs, the ESP's files, the layout. */
static int prepare(struct rescue_job *j)
{
	_cleanup_free_ char *w = NULL;
	const char *path = getenv("PATH");
	char when[32];
	double t;
	int r;

	j->self = realpath("/proc/self/exe", NULL);
	/* the programs as root finds them (sudo's secure_path holds the sbin directories) */
	j->path_env = xstrdup(path && *path ? path : "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
	iso8601_utc(time(NULL), when);
	j->built = xasprintf("built %s on %s by swaptool %s", when, host_name(), SWAPTOOL_VERSION);
	j->r.kernel = j->kernel, j->r.moddir = j->moddir, j->r.loader = j->loader, j->r.self = j->self;
	j->r.profile = j->ctx->profile_path, j->r.path_env = j->path_env, j->r.hostname = host_name();
	j->r.append = j->append, j->r.built = j->built;
	if (!j->self)
		return ctx_error(j->ctx, EXIT_FAILED, "cannot find this swaptool's own binary: %m");
	t = mono_s();
	if ((r = load_records(j)) != 0)
		return r;
	if ((r = rescue_gather(&j->r, &w)) < 0)
		return ctx_error(j->ctx, EXIT_FAILED, "%s", w);
	j->secs[0] = mono_s() - t;
	t = mono_s();
	j->t0 = mono_ns();
	r = rescue_initramfs(&j->r, time(NULL), initramfs_progress, j, &w);
	out_progress_end(j->ctx);
	if (r < 0)
		return ctx_error(j->ctx, EXIT_FAILED, "%s", w);
	j->secs[1] = mono_s() - t;
	if ((r = rescue_esp(&j->r, &w)) < 0)
		return ctx_error(j->ctx, EXIT_FAILED, "%s", w);
	{
		int ssz = 512;

		if (j->device && ioctl(j->fd, BLKSSZGET, &ssz) < 0)
			return ctx_error(j->ctx, EXIT_FAILED, "cannot read the LBA size of '%s': %m", j->out);
		if ((r = rescue_layout(&j->r, (uint32_t)ssz, &w)) < 0)
			return ctx_error(j->ctx, EXIT_FAILED, "%s", w);
	}
	if (j->device && j->disk_bytes < j->r.bytes) {
		char b[3][32];

		return ctx_error(j->ctx, EXIT_FAILED, "the drive '%s' is %s bytes (%s); the stick needs %s bytes (%s): use "
						      "a USB drive of at least that", j->out, fmt_thousands(j->disk_bytes, b[0]),
				 fmt_decimal(j->disk_bytes, b[1]), fmt_thousands(j->r.bytes, b[2]),
				 fmt_decimal(j->r.bytes, (char[32]){ 0 }));
	}
	return 0;
}

/* A FILE --out: a temporary file beside it at the stick's size, renamed over it once read back. */
static int open_file(struct rescue_job *j)
{
	j->tmp = xasprintf("%s.tmp.XXXXXX", j->out);
	j->fd = mkostemp(j->tmp, O_CLOEXEC);
	if (j->fd < 0) {
		free(j->tmp);
		j->tmp = NULL;
		return ctx_error(j->ctx, EXIT_FAILED, "cannot create a file beside '%s': %m", j->out);
	}
	if (fchmod(j->fd, 0644) < 0 || ftruncate(j->fd, (off_t)j->r.bytes) < 0)
		return ctx_error(j->ctx, EXIT_FAILED, "cannot make '%s' %" PRIu64 " bytes: %m", j->tmp, j->r.bytes);
	j->disk_bytes = j->r.bytes;
	return 0;
}

/* The state partition by a name the tools open: the temporary file, or the held device's inode. */
static const char *tool_path(const struct rescue_job *j)
{
	return j->device ? j->h.proc : j->tmp;
}

/* Write the table, the ESP and the state partition, then read them back into `checks`. 0, -1 when
 * a part read back differs, else the exit code. */
static int write_and_verify(struct rescue_job *j, json_object *checks)
{
	_cleanup_free_ char *w = NULL;
	double t = mono_s();
	int r, failed;
	char b[2][32];

	out_line(j->ctx, "rescue: writing %s bytes (%s) to %s: GPT, ESP of %s (systemd-boot, Linux %s, initramfs %s), "
		 "state partition %s", fmt_thousands(j->r.bytes, b[0]), fmt_decimal(j->r.bytes, b[1]), j->out,
		 fmt_decimal((j->r.esp_last - j->r.esp_first + 1) * j->r.lba, (char[32]){ 0 }), j->r.release,
		 fmt_decimal(j->r.initrd_bytes, (char[32]){ 0 }), RESCUE_STATE_LABEL);
	out_progress(j->ctx, "rescue: writing the table and the ESP ...");
	r = rescue_write_table_esp(&j->r, j->fd, tool_path(j), j->disk_bytes, time(NULL), &w);
	if (r == 0) {
		out_progress(j->ctx, "rescue: writing the state partition ...");
		/* mke2fs opens a drive O_EXCL itself: the claim is handed to it for its run */
		if (j->device)
			ident_hold_pause(&j->h);
		r = rescue_write_state(&j->r, tool_path(j), &w);
		if (j->device && ident_hold_resume(&j->h) < 0 && r == 0)
			r = set_why(&w, -EBUSY, "another program took '%s' while mke2fs ran", j->out);
		if (j->device)
			j->fd = j->h.fd;
	}
	if (r == 0 && fsync(j->fd) < 0)
		r = set_why(&w, -errno, "cannot flush '%s': %m", j->out);
	out_progress_end(j->ctx);
	if (r < 0)
		return ctx_error(j->ctx, EXIT_FAILED, "%s%s", w, j->device ? "; the drive holds no usable stick" : "");
	j->secs[2] = mono_s() - t;
	t = mono_s();
	out_progress(j->ctx, "rescue: reading back ...");
	/* read back from the medium, not from the page cache's copy of what was just written */
	if (j->device)
		(void)ioctl(j->fd, BLKFLSBUF, 0);
	else
		(void)posix_fadvise(j->fd, 0, 0, POSIX_FADV_DONTNEED);
	failed = rescue_verify_table_esp(&j->r, j->fd, tool_path(j), j->disk_bytes, checks);
	if (j->device)
		ident_hold_pause(&j->h);
	failed += rescue_verify_state(&j->r, tool_path(j), checks);
	if (j->device)
		(void)ident_hold_resume(&j->h);
	out_progress_end(j->ctx);
	j->secs[3] = mono_s() - t;
	return failed ? -1 : 0;
}

/* The checks of what was found, before those of what was written. */
static void found_checks(struct rescue_job *j)
{
	struct rescue *r = &j->r;
	int sb = rescue_secure_boot(EFIVARS);
	char names[64] = "";

	record_check(j->rec, "programs", ST_PASS, "%zu programs and swaptool, %zu libraries: every DT_NEEDED resolves "
		     "inside the stick", r->programs.n, r->libraries.n);
	char builtin[128] = "", absent[160] = "";

	for (size_t i = 0; i < r->modules.builtin.n; i++)
		snprintf(builtin + strlen(builtin), sizeof(builtin) - strlen(builtin), "%s%s", i ? ", " : "; built in: ",
			 r->modules.builtin.v[i]);
	for (size_t i = 0; i < r->modules_missing.n; i++)
		snprintf(absent + strlen(absent), sizeof(absent) - strlen(absent), "%s%s", i ? ", " : "; not in this kernel: ",
			 r->modules_missing.v[i]);
	record_check(j->rec, "modules", ST_PASS, "Linux %s: %zu modules (NVMe, USB, UAS, SCSI disks, ext4, FUSE and what "
		     "they need)%s%s", r->release, r->modules.files.n, builtin, absent);
	for (size_t i = 0; i < r->nrecords; i++)
		snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s", i ? ", " : "", r->records[i].step);
	if (!r->nrecords || !streq(r->records[0].step, "preflight"))
		record_check(j->rec, "records", ST_WARN, "the stick carries %s%s: run 'swaptool preflight' (and plan) "
			     "before writing it, or on the stick, so that the report covers them",
			     r->nrecords ? "no preflight, only " : "no records", names);
	else
		record_check(j->rec, "records", ST_PASS, "the stick carries %s from '%s'", names, j->ctx->state_dir);
	if (sb == 1)
		record_check(j->rec, "secure-boot", ST_WARN, "Secure Boot is on here and the stick's loader, systemd-boot, "
			     "is not signed for it: switch Secure Boot off in the firmware setup to boot the stick, then on "
			     "again after the swap");
	else if (sb == 0)
		record_check(j->rec, "secure-boot", ST_PASS, "Secure Boot is off here: the firmware starts the stick's "
			     "unsigned loader");
	else
		record_check(j->rec, "secure-boot", ST_SKIP, "Secure Boot unknown: no %s/SecureBoot-* (no EFI here, or "
			     "efivarfs not mounted); the stick's loader is unsigned: Secure Boot must be off", EFIVARS);
}

static void record_result(struct rescue_job *j, json_object *checks)
{
	json_object *o = rescue_json(&j->r), *s = json_object_new_object();
	static const char *const names[] = { "gather", "initramfs", "write", "verify" };

	jset_str(o, "out", j->out);
	jset_str(o, "kind", j->device ? "device" : "file");
	jset_u64(o, "device_bytes", j->disk_bytes);
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		jset_double(s, names[i], j->secs[i]);
	json_object_object_add(o, "seconds", s);
	json_object_object_add(j->rec->root, "rescue", o);
	for (size_t i = 0; i < jarray_len(checks); i++) {
		json_object *c = jarray_at(checks, i);
		enum status st = ST_FAIL;

		status_parse(jget_str(c, "status"), &st);
		record_check(j->rec, jget_str(c, "id"), st, "%s", jget_str(c, "summary"));
	}
}

int step_rescue_run(struct ctx *ctx, int argc, char **argv, struct record *rec)
{
	struct rescue_job j = { .ctx = ctx, .rec = rec, .fd = -1, .h = IDENT_HOLD_INIT };
	_cleanup_json_ json_object *checks = json_object_new_array();
	int r;

	rescue_init_struct(&j.r);
	r = parse_args(&j, argc, argv);
	if (r == 0 && geteuid() != 0)
		r = ctx_error(ctx, EXIT_FAILED, "rescue runs as root: the stick's programs and records must be root's (its "
						"swaptool refuses records another user could change), and a drive is root's to write");
	if (r == 0)
		r = check_out(&j);
	if (r == 0)
		r = prepare(&j);
	if (r == 0 && !j.device)
		r = open_file(&j);
	if (r == 0)
		r = write_and_verify(&j, checks);
	/* a FILE that did not read back as written is not left under its name */
	if (r == 0 && !j.device && rename(j.tmp, j.out) < 0)
		r = ctx_error(ctx, EXIT_FAILED, "cannot rename '%s' to '%s': %m", j.tmp, j.out);
	if (r == 0 && !j.device) {
		(void)fsync_parent_dir(j.out);
		free(j.tmp);
		j.tmp = NULL;
	}
	if (r <= 0) {
		found_checks(&j);
		record_result(&j, checks);
		record_finish(rec);
		r = record_exit_code(rec);
	}
	job_free(&j);
	return r;
}

void step_rescue_render(const struct ctx *ctx, json_object *rec)
{
	json_object *o = jget(rec, "rescue"), *a;
	_cleanup_table_ struct table *t = table_new(5);
	char b[3][32];

	out_heading(ctx, "rescue: %s (%s, %s bytes)", jget_str(o, "out"), jget_str(o, "kind"),
		    fmt_thousands(jget_u64(o, "bytes"), b[0]));
	table_header(t, "part", "name", "fs", "LBAs", "size");
	table_align(t, 4, ALIGN_RIGHT);
	a = jget(o, "partitions");
	for (size_t i = 0; i < jarray_len(a); i++) {
		json_object *p = jarray_at(a, i);

		table_cellf(t, "p%" PRIu64, jget_u64(p, "number"));
		table_cellf(t, "%s", jget_str(p, "name"));
		table_cellf(t, "%s", jget_str(p, "fs"));
		table_cellf(t, "%" PRIu64 "-%" PRIu64, jget_u64(p, "start_lba"), jget_u64(p, "end_lba"));
		table_cellf(t, "%s", fmt_decimal(jget_u64(p, "bytes"), b[0]));
	}
	table_print(ctx, t);
	out_line(ctx, "%s", "");
	_cleanup_table_ struct table *f = table_new(3);
	table_header(f, "ESP file", "bytes", "sha256");
	table_align(f, 1, ALIGN_RIGHT);
	a = jget(o, "esp_files");
	for (size_t i = 0; i < jarray_len(a); i++) {
		json_object *x = jarray_at(a, i);

		table_cellf(f, "%s", jget_str(x, "path"));
		table_cellf(f, "%s", fmt_thousands(jget_u64(x, "bytes"), b[0]));
		table_cellf(f, "%.16s", jget_str(x, "sha256") ?: "");
	}
	table_print(ctx, f);
	out_line(ctx, "%s", "");
	out_line(ctx, "initramfs: %zu programs, %zu libraries, %zu modules, %zu records; %s of files in %s (gzip)",
		 jarray_len(jget(o, "programs")), jarray_len(jget(o, "libraries")), jarray_len(jget(o, "modules")),
		 jarray_len(jget(o, "records")), fmt_decimal(jget_u64(jget(o, "initramfs"), "content_bytes"), b[0]),
		 fmt_decimal(jget_u64(jget(o, "initramfs"), "bytes"), b[1]));
	out_line(ctx, "kernel: Linux %s (%s); loader: systemd-boot (%s)", jget_str(jget(o, "kernel"), "release"),
		 jget_str(jget(o, "kernel"), "path"), jget_str(jget(o, "loader"), "path"));
	a = jget(o, "seconds");
	out_line(ctx, "time: %.1f s gathering, %.1f s initramfs, %.1f s writing, %.1f s reading back",
		 jget_double(a, "gather"), jget_double(a, "initramfs"), jget_double(a, "write"), jget_double(a, "verify"));
	out_line(ctx, "%s", "");
	out_checks(ctx, rec);
	out_verdict(ctx, rec, "boot the node from it (UEFI, Secure Boot off); it shows the drives, its records and the "
			      "next command; after the swap: swaptool import DEVICE");
}
