/* SPDX-License-Identifier: MIT */
/* The rescue stick: its contents found on this machine, its initramfs, layout, writing and read-back. */
#include "util.h"
#include "rescue.h"

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <zlib.h>

#include "cpio.h"
#include "elfdeps.h"
#include "extfs.h"
#include "gpt.h"
#include "gptwrite.h"
#include "json.h"
#include "probe.h"
#include "proc.h"
#include "record.h"

const struct rescue_program rescue_programs[] = {
	/* the stick's /init and the operator's shell */
	{ "bash", "bash" }, { "sh", "dash" }, { "cat", "coreutils" }, { "ls", "coreutils" }, { "cp", "coreutils" },
	{ "mv", "coreutils" }, { "rm", "coreutils" }, { "mkdir", "coreutils" }, { "ln", "coreutils" },
	{ "head", "coreutils" }, { "tail", "coreutils" }, { "tee", "coreutils" }, { "seq", "coreutils" },
	{ "sleep", "coreutils" }, { "sync", "coreutils" }, { "uname", "coreutils" }, { "date", "coreutils" },
	{ "sha256sum", "coreutils" }, { "dd", "coreutils" }, { "df", "coreutils" }, { "stty", "coreutils" },
	{ "tr", "coreutils" }, { "cut", "coreutils" }, { "wc", "coreutils" }, { "sort", "coreutils" },
	{ "stat", "coreutils" }, { "touch", "coreutils" }, { "chmod", "coreutils" }, { "readlink", "coreutils" },
	{ "env", "coreutils" }, { "timeout", "coreutils" }, { "find", "findutils" }, { "xargs", "findutils" },
	{ "ps", "procps" }, { "kill", "procps" },
	{ "sed", "sed" }, { "grep", "grep" }, { "awk", "mawk (or gawk)" }, { "mount", "mount" }, { "umount", "mount" },
	{ "setsid", "util-linux" }, { "dmesg", "util-linux" }, { "insmod", "kmod" },
	/* the drives, what path 2 runs, and the independent checkers */
	{ "lsblk", "util-linux" }, { "blkid", "util-linux" }, { "partx", "util-linux" }, { "blockdev", "util-linux" },
	{ "wipefs", "util-linux" }, { "e2fsck", "e2fsprogs" }, { "resize2fs", "e2fsprogs" }, { "mke2fs", "e2fsprogs" },
	{ "tune2fs", "e2fsprogs" }, { "dumpe2fs", "e2fsprogs" }, { "debugfs", "e2fsprogs" }, { "sgdisk", "gdisk" },
	{ "sfdisk", "fdisk" }, { "fsck.vfat", "dosfstools" }, { "nvme", "nvme-cli" },
};
const size_t rescue_programs_n = ARRAY_SIZE(rescue_programs);

/* NVMe, the USB host controller and disks (Bulk-Only and UAS), SCSI disks, the state partition's
 * ext4 with the crc32c its metadata checksums need (the kernel asks for it by alias, and the stick
 * has no modprobe index), and FUSE for clone's shrink. */
const char *const rescue_modules_needed[] = { "nvme", "xhci_pci", "usb_storage", "uas", "sd_mod", "ext4",
					      "crc32c_generic", "fuse" };
const size_t rescue_modules_needed_n = ARRAY_SIZE(rescue_modules_needed);
/* USB 2 hosts, a USB keyboard, FAT for looking at an ESP, xHCI on SoC platforms */
const char *const rescue_modules_wanted[] = { "ehci_pci", "xhci_plat_hcd", "usbhid", "hid_generic", "vfat",
					      "nls_cp437", "nls_iso8859_1" };
const size_t rescue_modules_wanted_n = ARRAY_SIZE(rescue_modules_wanted);

#define ESP_TYPE "C12A7328-F81F-11D2-BA4B-00A0C93EC93B"
#define LINUX_FS_TYPE "0FC63DAF-8483-4772-8E79-3D69D8477DE4"
#define SECURE_BOOT_VAR "SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c"
/* a kernel is at most this large once decompressed (Debian's arm64 Image: ~35 MB) */
#define KERNEL_MAX (256u << 20)

void rescue_init_struct(struct rescue *r)
{
	*r = (struct rescue){ .initrd_fd = -1 };
	for (size_t i = 0; i < ARRAY_SIZE(r->esp); i++)
		r->esp[i].fd = -1;
}

void rescue_free(struct rescue *r)
{
	free(r->release);
	free(r->arch);
	free(r->efi_name);
	strlist_clear(&r->programs);
	strlist_clear(&r->libraries);
	kmod_set_free(&r->modules);
	strlist_clear(&r->modules_missing);
	for (size_t i = 0; i < r->nentries; i++)
		free(r->entries[i].dst), free(r->entries[i].src), free(r->entries[i].link);
	free(r->entries);
	free(r->modules_list);
	for (size_t i = 0; i < ARRAY_SIZE(r->generated); i++)
		free(r->generated[i]);
	for (size_t i = 0; i < r->nrecords; i++)
		free(r->records[i].text);
	free(r->loader_conf);
	free(r->entry_conf);
	if (r->initrd_fd >= 0)
		close(r->initrd_fd);
	/* the ESP's fds: the loader's and the kernel's are ours, the initramfs's is initrd_fd, the
	 * two configuration files are memfds of ours */
	for (size_t i = 0; i < r->nesp; i++)
		if (r->esp[i].fd >= 0 && r->esp[i].fd != r->initrd_fd)
			close(r->esp[i].fd);
	r->initrd_fd = -1;
	r->nesp = 0;
}

/* ---- finding what the stick needs ---- */

/* `name` on the colon-separated `path` as execvp would find it: the first executable regular file. */
static char *which(const char *name, const char *path)
{
	_cleanup_free_ char *copy = xstrdup(path ? path : "/usr/sbin:/usr/bin:/sbin:/bin");
	char *save = NULL;

	for (char *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		_cleanup_free_ char *p = xasprintf("%s/%s", d, name);
		struct stat st;

		if (d[0] == '/' && stat(p, &st) == 0 && S_ISREG(st.st_mode) && access(p, X_OK) == 0)
			return TAKE_PTR(p);
	}
	return NULL;
}

/* The path inside the stick of a host path: /bin, /sbin, /lib and /lib64 are links into /usr there
 * (merged /usr), so what lies under them goes under /usr. No leading '/'. */
static char *inside(const char *host)
{
	static const char *const merged[] = { "/bin/", "/sbin/", "/lib/", "/lib64/" };

	for (size_t i = 0; i < ARRAY_SIZE(merged); i++)
		if (startswith(host, merged[i]))
			return xasprintf("usr%s", host);
	return xstrdup(host + 1);
}

static struct rescue_entry *entry_find(struct rescue *r, const char *dst)
{
	for (size_t i = 0; i < r->nentries; i++)
		if (streq(r->entries[i].dst, dst))
			return &r->entries[i];
	return NULL;
}

/* An entry, once per path inside (the first one kept). */
static void entry_add(struct rescue *r, char *dst, const char *src, const char *link, const char *data, uint64_t bytes,
		      unsigned mode)
{
	struct rescue_entry *e;

	if (entry_find(r, dst)) {
		free(dst);
		return;
	}
	r->entries = realloc(r->entries, (r->nentries + 1) * sizeof(*r->entries));
	if (!r->entries)
		abort();
	e = &r->entries[r->nentries++];
	*e = (struct rescue_entry){ .dst = dst, .src = src ? xstrdup(src) : NULL, .link = link ? xstrdup(link) : NULL,
				    .data = data, .bytes = bytes, .mode = mode };
	if (!link)
		r->content_bytes += bytes;
}

/* A file of the host at `p`: its content at the path inside of where it really is, and the name it
 * was found by as a symlink to that (e2fsck's fsck.ext4, awk's alternative, the loader's /lib64 name). */
static int add_host_file(struct rescue *r, const char *p, char **why)
{
	_cleanup_free_ char *real = realpath(p, NULL), *in_p = inside(p), *in_real = NULL, *target = NULL;
	struct stat st;

	if (!real || stat(real, &st) < 0)
		return set_why(why, -errno, "cannot resolve '%s': %m", p);
	if (!S_ISREG(st.st_mode))
		return set_why(why, -ENODEV, "'%s' is a %s, not a regular file", real, file_kind(st.st_mode));
	in_real = inside(real);
	if (!streq(in_p, in_real)) {
		target = xasprintf("/%s", in_real);
		entry_add(r, TAKE_PTR(in_p), NULL, target, NULL, 0, 0777);
	}
	entry_add(r, TAKE_PTR(in_real), real, NULL, NULL, (uint64_t)st.st_size, st.st_mode & 0755);
	return 0;
}

/* The host's file `src` (followed) at `dst` inside. */
static int add_as(struct rescue *r, const char *dst, const char *src, unsigned mode, char **why)
{
	_cleanup_free_ char *real = realpath(src, NULL);
	struct stat st;

	if (!real || stat(real, &st) < 0)
		return set_why(why, -errno, "cannot resolve '%s': %m", src);
	if (!S_ISREG(st.st_mode))
		return set_why(why, -ENODEV, "'%s' is a %s, not a regular file", real, file_kind(st.st_mode));
	entry_add(r, xstrdup(dst), real, NULL, NULL, (uint64_t)st.st_size, mode);
	return 0;
}

/* The architecture from this swaptool's own ELF header: the stick is for the machine that builds it. */
static int find_arch(struct rescue *r, char **why)
{
	_cleanup_close_ int fd = open(r->self, O_RDONLY | O_CLOEXEC);
	struct elf_info e;
	int rc;

	if (fd < 0 || (rc = elf_read(fd, &e, NULL)) < 0)
		return set_why(why, -ENOEXEC, "cannot read this swaptool's own ELF header ('%s')", r->self);
	if (e.machine == 62)
		r->arch = xstrdup("x86_64"), r->efi_name = xstrdup("BOOTX64.EFI");
	else if (e.machine == 183)
		r->arch = xstrdup("aarch64"), r->efi_name = xstrdup("BOOTAA64.EFI");
	elf_info_free(&e);
	if (!r->arch)
		return set_why(why, -ENOTSUP, "this swaptool is built for ELF machine %u: the stick is made for x86_64 "
				"and aarch64 only", e.machine);
	return 0;
}

static int find_programs(struct rescue *r, char **why)
{
	struct strlist dirs = { 0 };
	int rc;

	for (size_t i = 0; i < rescue_programs_n; i++) {
		_cleanup_free_ char *p = which(rescue_programs[i].name, r->path_env);

		if (!p)
			return set_why(why, -ENOENT, "the program '%s' is not on this machine's PATH; the stick needs it: "
					"install the package %s", rescue_programs[i].name, rescue_programs[i].package);
		strlist_add(&r->programs, p);
	}
	strlist_add(&r->programs, r->self);
	elf_libdirs("/etc/ld.so.conf", &dirs);
	rc = elf_closure(&r->programs, &dirs, &r->libraries, why);
	strlist_clear(&dirs);
	r->programs.n--; /* swaptool's own entry is added under its own name below */
	free(r->programs.v[r->programs.n]);
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < r->programs.n; i++)
		if ((rc = add_host_file(r, r->programs.v[i], why)) < 0)
			return rc;
	for (size_t i = 0; i < r->libraries.n; i++)
		if ((rc = add_host_file(r, r->libraries.v[i], why)) < 0)
			return rc;
	return 0;
}

static int find_modules(struct rescue *r, char **why)
{
	_cleanup_free_ char *real = realpath(r->moddir, NULL);
	struct kmod_set wanted = { 0 };
	size_t len = 0;
	int rc;

	if (!real)
		return set_why(why, -errno, "cannot open the modules directory '%s': %m; name the kernel's with --modules "
				"DIR (/lib/modules/RELEASE)", r->moddir);
	r->release = xstrdup(strrchr(real, '/') ? strrchr(real, '/') + 1 : real);
	rc = kmod_resolve(real, rescue_modules_needed, rescue_modules_needed_n, &r->modules, why);
	if (rc < 0)
		return rc;
	if (r->modules.missing.n)
		return set_why(why, -ENOENT, "the kernel %s has no module '%s' and does not have it built in; the stick "
				"cannot see its drives without it: use a distribution kernel (--kernel, --modules)",
			       r->release, r->modules.missing.v[0]);
	rc = kmod_resolve(real, rescue_modules_wanted, rescue_modules_wanted_n, &wanted, why);
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < wanted.files.n; i++) {
		bool have = false;

		for (size_t j = 0; j < r->modules.files.n && !have; j++)
			have = streq(r->modules.files.v[j], wanted.files.v[i]);
		if (!have)
			strlist_add(&r->modules.files, wanted.files.v[i]);
	}
	for (size_t i = 0; i < wanted.missing.n; i++)
		strlist_add(&r->modules_missing, wanted.missing.v[i]);
	kmod_set_free(&wanted);
	for (size_t i = 0; i < r->modules.files.n; i++) {
		_cleanup_free_ char *src = xasprintf("%s/%s", real, r->modules.files.v[i]);
		struct stat st;

		if (stat(src, &st) < 0 || !S_ISREG(st.st_mode))
			return set_why(why, -ENOENT, "modules.dep names '%s', which is not a file: run depmod for %s",
				       src, r->release);
		entry_add(r, xasprintf("usr/lib/modules/%s/%s", r->release, r->modules.files.v[i]), src, NULL, NULL,
			  (uint64_t)st.st_size, 0644);
		len += strlen(r->modules.files.v[i]) + 1;
	}
	r->modules_list = xcalloc(1, len + 1);
	for (size_t i = 0; i < r->modules.files.n; i++)
		strcat(strcat(r->modules_list, r->modules.files.v[i]), "\n");
	return 0;
}

/* A generated file of the initramfs (kept in r->generated for the archive's life). */
static void add_generated(struct rescue *r, const char *dst, char *text, unsigned mode)
{
	size_t i = 0;

	while (i < ARRAY_SIZE(r->generated) - 1 && r->generated[i])
		i++;
	r->generated[i] = text;
	entry_add(r, xstrdup(dst), NULL, NULL, text, strlen(text), mode);
}

int rescue_gather(struct rescue *r, char **why)
{
	int rc;

	if ((rc = find_arch(r, why)) < 0 || (rc = find_programs(r, why)) < 0 || (rc = find_modules(r, why)) < 0)
		return rc;
	/* swaptool itself, where the stick's shell finds it */
	if ((rc = add_as(r, "usr/bin/swaptool", r->self, 0755, why)) < 0)
		return rc;
	entry_add(r, xstrdup("init"), NULL, NULL, rescue_init, rescue_init_len, 0755);
	add_generated(r, "etc/passwd", xstrdup("root:x:0:0:root:/root:/bin/bash\n"), 0644);
	add_generated(r, "etc/group", xstrdup("root:x:0:\n"), 0644);
	add_generated(r, "etc/hostname", xasprintf("%s\n", r->hostname), 0644);
	add_generated(r, "etc/swaptool/built", xasprintf("%s\n", r->built), 0644);
	entry_add(r, xstrdup("etc/swaptool/modules"), NULL, NULL, r->modules_list, strlen(r->modules_list), 0644);
	/* the profile in force, where the stick's swaptool looks by default */
	if (r->profile && (rc = add_as(r, "etc/swaptool/profile.ini", r->profile, 0644, why)) < 0)
		return rc;
	if (access("/etc/mke2fs.conf", R_OK) == 0 && (rc = add_as(r, "etc/mke2fs.conf", "/etc/mke2fs.conf", 0644, why)) < 0)
		return rc;
	for (size_t i = 0; i < r->nrecords; i++)
		entry_add(r, xasprintf("usr/share/swaptool/records/%s.json", r->records[i].step), NULL, NULL,
			  r->records[i].text, r->records[i].len, 0600);
	return 0;
}

/* ---- the initramfs ---- */

/* Every directory above `dst` not made yet, outermost first. */
static int add_parents(struct cpio *c, struct strlist *made, const char *dst)
{
	_cleanup_free_ char *p = xstrdup(dst);
	int rc;

	for (char *s = strchr(p, '/'); s; s = strchr(s + 1, '/')) {
		bool have = false;

		*s = 0;
		for (size_t i = 0; i < made->n && !have; i++)
			have = streq(made->v[i], p);
		if (!have) {
			if ((rc = cpio_add_dir(c, p, 0755)) < 0)
				return rc;
			strlist_add(made, p);
		}
		*s = '/';
	}
	return 0;
}

struct cpio_progress {
	void (*fn)(void *ud, uint64_t done, uint64_t total);
	void *ud;
	uint64_t total;
};

static void cpio_tick(void *ud, uint64_t done)
{
	struct cpio_progress *p = ud;

	p->fn(p->ud, done, p->total);
}

static int write_entry(struct cpio *c, const struct rescue_entry *e, char **why)
{
	_cleanup_close_ int fd = -1;
	struct stat st;

	if (e->link)
		return cpio_add_symlink(c, e->dst, e->link);
	if (e->data)
		return cpio_add_data(c, e->dst, e->mode, e->data, (size_t)e->bytes);
	fd = open(e->src, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 || fstat(fd, &st) < 0)
		return set_why(why, -errno, "cannot read '%s': %m", e->src);
	if ((uint64_t)st.st_size != e->bytes)
		return set_why(why, -ESTALE, "'%s' changed size while the stick was built (%" PRIu64 " bytes, now %jd); "
				"build it again", e->src, e->bytes, (intmax_t)st.st_size);
	return cpio_add_fd(c, e->dst, e->mode, fd, e->bytes);
}

int rescue_initramfs(struct rescue *r, time_t t, void (*progress)(void *ud, uint64_t done, uint64_t total), void *ud,
		     char **why)
{
	static const char *const top[] = { "proc", "sys", "dev", "run", "tmp", "root", "state", "mnt", "etc", "usr",
					   "usr/bin", "usr/sbin", "usr/lib", "usr/lib64" };
	static const char *const links[][2] = { { "bin", "usr/bin" }, { "sbin", "usr/sbin" }, { "lib", "usr/lib" },
						{ "lib64", "usr/lib64" } };
	struct cpio_progress pg = { progress, ud, r->content_bytes };
	struct strlist made = { 0 };
	struct cpio c;
	int rc;

	r->initrd_fd = memfd_create("swaptool-initrd", MFD_CLOEXEC);
	if (r->initrd_fd < 0)
		return set_why(why, -errno, "cannot make room for the initramfs in memory: %m");
	rc = cpio_open(&c, r->initrd_fd, 6, t);
	if (progress)
		c.progress = cpio_tick, c.ud = &pg;
	for (size_t i = 0; rc == 0 && i < ARRAY_SIZE(top); i++) {
		rc = cpio_add_dir(&c, top[i], streq(top[i], "tmp") ? 01777 : streq(top[i], "root") ? 0700 : 0755);
		strlist_add(&made, top[i]);
	}
	for (size_t i = 0; rc == 0 && i < ARRAY_SIZE(links); i++)
		rc = cpio_add_symlink(&c, links[i][0], links[i][1]);
	/* the first console, before /init mounts devtmpfs (the kernel's own default initramfs has it) */
	if (rc == 0)
		rc = cpio_add_node(&c, "dev/console", S_IFCHR | 0600, 5, 1);
	for (size_t i = 0; rc == 0 && i < r->nentries; i++)
		if ((rc = add_parents(&c, &made, r->entries[i].dst)) == 0)
			rc = write_entry(&c, &r->entries[i], why);
	if (rc == 0)
		rc = cpio_finish(&c);
	strlist_clear(&made);
	r->cpio_bytes = c.raw_bytes;
	r->initrd_bytes = c.out_bytes;
	r->cpio_entries = c.entries;
	cpio_free(&c);
	if (rc < 0 && why && !*why)
		set_why(why, rc, "cannot write the initramfs: %s", strerror(-rc));
	return rc;
}

/* ---- the ESP ---- */

/* The machine of a PE image (IMAGE_FILE_MACHINE_AMD64 0x8664, _ARM64 0xaa64), 0 when it is none. */
static unsigned pe_machine(int fd)
{
	unsigned char mz[64], pe[6];
	uint32_t at;

	if (pread_all(fd, mz, sizeof(mz), 0) < 0 || mz[0] != 'M' || mz[1] != 'Z')
		return 0;
	at = mz[0x3c] | (uint32_t)mz[0x3d] << 8 | (uint32_t)mz[0x3e] << 16 | (uint32_t)mz[0x3f] << 24;
	if (at > (1u << 20) || pread_all(fd, pe, sizeof(pe), at) < 0 || memcmp(pe, "PE\0\0", 4) != 0)
		return 0;
	return pe[4] | (unsigned)pe[5] << 8;
}

static int memfd_text(const char *name, const char *text)
{
	int fd = memfd_create(name, MFD_CLOEXEC);

	if (fd >= 0 && write_all(fd, text, strlen(text)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* A gzip-compressed kernel (Debian's arm64 vmlinuz) inflated into a memfd: the loader starts only
 * an EFI-stub image. -EFBIG past KERNEL_MAX. */
static int inflate_kernel(int fd, int *out)
{
	_cleanup_free_ unsigned char *buf = xcalloc(1, 1u << 20);
	gzFile gz = gzdopen(dup(fd), "rb");
	uint64_t total = 0;
	int m = memfd_create("swaptool-kernel", MFD_CLOEXEC), n, rc = 0;

	if (!gz || m < 0) {
		if (gz)
			gzclose(gz);
		if (m >= 0)
			close(m);
		return -ENOMEM;
	}
	while (rc == 0 && (n = gzread(gz, buf, 1u << 20)) > 0) {
		total += (uint64_t)n;
		rc = total > KERNEL_MAX ? -EFBIG : write_all(m, buf, (size_t)n);
	}
	if (rc == 0 && n < 0)
		rc = -EBADMSG;
	gzclose(gz);
	if (rc < 0) {
		close(m);
		return rc;
	}
	*out = m;
	return 0;
}

/* An x86 bzImage names its release in its setup header (Documentation/arch/x86/boot.rst:
 * kernel_version at 0x20e, relative to 0x200): the modules must be that kernel's. 0 when they are or
 * the image does not say, -EINVAL with *why when it names another release. */
static int kernel_release_matches(struct rescue *r, int fd, char **why)
{
	unsigned char h[0x210];
	char ver[128] = "";
	uint32_t at;

	if (pread_all(fd, h, sizeof(h), 0) < 0 || memcmp(h + 0x202, "HdrS", 4) != 0)
		return 0;
	at = (h[0x20e] | (uint32_t)h[0x20f] << 8) + 0x200u;
	if (h[0x20e] == 0 && h[0x20f] == 0)
		return 0;
	if (pread(fd, ver, sizeof(ver) - 1, at) <= 0)
		return 0;
	ver[strcspn(ver, " ")] = 0;
	if (!ver[0] || streq(ver, r->release))
		return 0;
	return set_why(why, -EINVAL, "the kernel '%s' is release %s, the modules in '%s' are %s: name the modules "
			"directory of that kernel (--modules /lib/modules/%s)", r->kernel, ver, r->moddir, r->release, ver);
}

static int open_kernel(struct rescue *r, int *out, char **why)
{
	_cleanup_close_ int fd = open(r->kernel, O_RDONLY | O_CLOEXEC);
	unsigned char magic[2] = { 0, 0 };
	unsigned want = streq(r->arch, "x86_64") ? 0x8664 : 0xaa64, got;
	int rc;

	if (fd < 0)
		return set_why(why, -errno, "cannot open the kernel '%s': %m; name one with --kernel FILE", r->kernel);
	(void)pread_all(fd, magic, 2, 0);
	if (magic[0] == 0x1f && magic[1] == 0x8b) {
		int m;

		if ((rc = inflate_kernel(fd, &m)) < 0)
			return set_why(why, rc, "cannot decompress the kernel '%s' (gzip): %s", r->kernel, strerror(-rc));
		close(fd);
		fd = m;
	}
	got = pe_machine(fd);
	if (!got)
		return set_why(why, -ENOEXEC, "the kernel '%s' is not an EFI executable (no EFI stub): the stick's loader "
				"starts only such kernels; a distribution kernel is one", r->kernel);
	if (got != want)
		return set_why(why, -ENOEXEC, "the kernel '%s' is for PE machine 0x%x, this machine (%s) needs 0x%x",
			       r->kernel, got, r->arch, want);
	if ((rc = kernel_release_matches(r, fd, why)) < 0)
		return rc;
	*out = TAKE_FD(fd);
	return 0;
}

static int esp_add(struct rescue *r, const char *path, int fd, char **why)
{
	struct stat st;

	if (fd < 0 || fstat(fd, &st) < 0)
		return set_why(why, -errno, "cannot prepare '%s' for the ESP: %m", path);
	r->esp[r->nesp++] = (struct fat_file){ .path = path, .fd = fd, .size = (uint64_t)st.st_size };
	return 0;
}

int rescue_esp(struct rescue *r, char **why)
{
	unsigned want = streq(r->arch, "x86_64") ? 0x8664 : 0xaa64;
	int lfd = open(r->loader, O_RDONLY | O_CLOEXEC), kfd = -1, rc;

	for (const char *p = r->append ? r->append : ""; *p; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p > 0x7e) {
			if (lfd >= 0)
				close(lfd);
			return set_why(why, -EINVAL, "the kernel arguments hold a control or non-ASCII byte: the loader entry "
					"takes one line of printable ASCII");
		}
	if (lfd < 0)
		return set_why(why, -errno, "cannot open the loader '%s': %m; install systemd-boot-efi (or name it with "
				"--loader)", r->loader);
	if (pe_machine(lfd) != want) {
		close(lfd);
		return set_why(why, -ENOEXEC, "the loader '%s' is no EFI executable for %s", r->loader, r->arch);
	}
	snprintf(r->boot_path, sizeof(r->boot_path), "EFI/BOOT/%s", r->efi_name);
	if ((rc = esp_add(r, r->boot_path, lfd, why)) < 0)
		return rc;
	r->loader_conf = xstrdup("default swaptool-rescue.conf\ntimeout 3\neditor yes\n");
	r->entry_conf = xasprintf("title   swaptool rescue: %s\nlinux   /swaptool/vmlinuz\ninitrd  /swaptool/initrd.img\n"
				  "options console=ttyS0,115200 console=tty0%s%s\n", r->built, r->append ? " " : "",
				  r->append ? r->append : "");
	if ((rc = esp_add(r, "loader/loader.conf", memfd_text("loader.conf", r->loader_conf), why)) < 0 ||
	    (rc = esp_add(r, "loader/entries/swaptool-rescue.conf", memfd_text("entry", r->entry_conf), why)) < 0)
		return rc;
	if ((rc = open_kernel(r, &kfd, why)) < 0 || (rc = esp_add(r, "swaptool/vmlinuz", kfd, why)) < 0)
		return rc;
	return esp_add(r, "swaptool/initrd.img", r->initrd_fd, why);
}

/* ---- layout, writing ---- */

int rescue_layout(struct rescue *r, uint32_t lba, char **why)
{
	uint64_t esp = fat_min_bytes(r->esp, r->nesp, lba);

	if (!esp)
		return set_why(why, -EINVAL, "the ESP's files cannot be laid out in a FAT");
	/* room to spare: a loader or kernel of the next release, an operator's own file */
	esp += 16ull << 20;
	r->lba = lba;
	r->esp_first = RESCUE_ALIGN / lba;
	r->esp_last = r->esp_first + esp / lba - 1;
	r->state_first = r->esp_last + 1;
	r->state_last = r->state_first + RESCUE_STATE_BYTES / lba - 1;
	/* the backup table's 33 (or 5) LBAs fit the last MiB */
	r->bytes = (r->state_last + 1) * lba + RESCUE_ALIGN;
	return 0;
}

static int zero_range(int fd, uint64_t off, uint64_t len)
{
	_cleanup_free_ char *z = xcalloc(1, RESCUE_ALIGN);
	int rc = 0;

	for (uint64_t done = 0; rc == 0 && done < len; done += RESCUE_ALIGN)
		rc = pwrite_all(fd, z, len - done < RESCUE_ALIGN ? (size_t)(len - done) : RESCUE_ALIGN, off + done);
	return rc;
}

int rescue_write_table_esp(struct rescue *r, int fd, const char *path, uint64_t disk_bytes, time_t t, char **why)
{
	struct gpt_new_part parts[2] = {
		{ .number = 1, .start_lba = r->esp_first, .end_lba = r->esp_last, .type_guid = ESP_TYPE, .name = RESCUE_ESP_NAME },
		{ .number = 2, .start_lba = r->state_first, .end_lba = r->state_last, .type_guid = LINUX_FS_TYPE,
		  .name = RESCUE_STATE_LABEL },
	};
	struct gpt_new g = { .lba_size = r->lba, .lba_count = disk_bytes / r->lba, .parts = parts, .nparts = 2 };
	uint32_t volid = 0;
	int rc;

	if (disk_bytes < r->bytes)
		return set_why(why, -ENOSPC, "'%s' is %" PRIu64 " bytes, the stick needs %" PRIu64, path, disk_bytes, r->bytes);
	/* no old table, boot sector or filesystem signature outside the new partitions' reach */
	if ((rc = zero_range(fd, 0, RESCUE_ALIGN)) < 0 ||
	    (rc = zero_range(fd, disk_bytes / r->lba * r->lba - RESCUE_ALIGN, RESCUE_ALIGN)) < 0)
		return set_why(why, rc, "cannot write to '%s': %s", path, strerror(-rc));
	if ((rc = gpt_write(fd, path, &g, why)) < 0)
		return rc;
	if (getentropy(&volid, sizeof(volid)) < 0)
		volid = (uint32_t)t;
	return fat_write(fd, r->esp_first * r->lba, (r->esp_last - r->esp_first + 1) * r->lba, r->lba,
			 (uint32_t)r->esp_first, RESCUE_ESP_LABEL, volid, t, r->esp, r->nesp, why);
}

static const char *prog(const struct rescue *r, const char *name)
{
	for (size_t i = 0; i < rescue_programs_n && i < r->programs.n; i++)
		if (streq(rescue_programs[i].name, name))
			return r->programs.v[i];
	return name;
}

/* A tool's exit code, its output's tail in *out (may be NULL). */
static int tool(char *const argv[], char **out)
{
	static char magic[] = "E2FSPROGS_LIBMAGIC_SUPPRESS=1";
	char *env[] = { magic, NULL };
	struct proc_opts o = { .argv = argv, .setenv = env, .timeout_ns = 300ull * 1000000000ull, .die_with_parent = true };
	struct proc_result res;
	int rc = proc_run(&o, &res);

	if (rc < 0)
		return rc;
	if (out)
		*out = TAKE_PTR(res.tail);
	rc = proc_exit_code(&res);
	proc_result_free(&res);
	return rc;
}

/* The state partition's tree in a temporary directory: swaptool/ (0700) with the records (0600). */
static int stage_state(const struct rescue *r, char dir[64], char **why)
{
	const char *tmp = getenv("TMPDIR") && *getenv("TMPDIR") && strlen(getenv("TMPDIR")) < 40 ? getenv("TMPDIR") : "/tmp";
	_cleanup_free_ char *sub = NULL;
	int rc;

	snprintf(dir, 64, "%s/swaptool-stick.XXXXXX", tmp);
	if (!mkdtemp(dir) || chmod(dir, 0755) < 0)
		return set_why(why, -errno, "cannot make a temporary directory under '%s': %m", tmp);
	sub = xasprintf("%s/%s", dir, RESCUE_STATE_DIR);
	if (mkdir(sub, 0700) < 0)
		return set_why(why, -errno, "cannot make '%s': %m", sub);
	for (size_t i = 0; i < r->nrecords; i++) {
		_cleanup_free_ char *p = xasprintf("%s/%s.json", sub, r->records[i].step);

		if ((rc = write_file_atomic(p, r->records[i].text, r->records[i].len, 0600)) < 0)
			return set_why(why, rc, "cannot write '%s': %s", p, strerror(-rc));
	}
	return 0;
}

static void unstage(const char *dir)
{
	_cleanup_free_ char *sub = xasprintf("%s/%s", dir, RESCUE_STATE_DIR);
	DIR *d = opendir(sub);
	struct dirent *e;

	while (d && (e = readdir(d)))
		if (e->d_name[0] != '.') {
			_cleanup_free_ char *p = xasprintf("%s/%s", sub, e->d_name);

			unlink(p);
		}
	if (d)
		closedir(d);
	rmdir(sub);
	rmdir(dir);
}

int rescue_write_state(struct rescue *r, const char *path, char **why)
{
	char dir[64] = "";
	_cleanup_free_ char *opts = xasprintf("offset=%" PRIu64 ",root_owner=0:0,lazy_itable_init=0,lazy_journal_init=0,"
					      "nodiscard", r->state_first * r->lba);
	_cleanup_free_ char *blocks = xasprintf("%llu", RESCUE_STATE_BYTES / 4096), *out = NULL;
	char *argv[] = { (char *)prog(r, "mke2fs"), "-F", "-q", "-t", "ext4", "-b", "4096", "-L", RESCUE_STATE_LABEL,
			 "-d", dir, "-E", opts, (char *)path, blocks, NULL };
	int rc = stage_state(r, dir, why);

	if (rc == 0 && (rc = tool(argv, &out)) != 0)
		rc = set_why(why, rc < 0 ? rc : -EIO, "mke2fs of the state partition failed (%s): %s",
			     rc < 0 ? strerror(-rc) : "exit status", out ? out : "");
	if (dir[0])
		unstage(dir);
	return rc;
}

/* ---- reading back ---- */

static void check_add(json_object *checks, const char *id, const char *status, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void check_add(json_object *checks, const char *id, const char *status, const char *fmt, ...)
{
	json_object *c = json_object_new_object();
	_cleanup_free_ char *s = NULL;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		abort();
	va_end(ap);
	jset_str(c, "id", id);
	jset_str(c, "status", status);
	jset_str(c, "summary", s);
	json_object_array_add(checks, c);
}

static bool part_is(const struct part *p, unsigned n, uint64_t first, uint64_t last, const char *type, const char *name)
{
	return p->number == n && p->start_lba == first && p->end_lba == last && strcasecmp(p->type_guid, type) == 0 &&
	       streq(p->name, name);
}

static int verify_gpt(struct rescue *r, int fd, const char *path, uint64_t disk_bytes, json_object *checks)
{
	_cleanup_free_ char *w = NULL, *problems = NULL;
	struct ptable t;
	size_t np;
	int rc = ptable_read(fd, path, r->lba, disk_bytes, &t, &w);

	if (rc < 0) {
		check_add(checks, "gpt", "fail", "the partition table cannot be read back: %s", w ? w : strerror(-rc));
		return 1;
	}
	np = ptable_check(&t, &problems);
	if (t.kind != PT_GPT || !t.primary_ok || !t.backup_ok || np || t.nparts != 2 ||
	    !part_is(&t.parts[0], 1, r->esp_first, r->esp_last, ESP_TYPE, RESCUE_ESP_NAME) ||
	    !part_is(&t.parts[1], 2, r->state_first, r->state_last, LINUX_FS_TYPE, RESCUE_STATE_LABEL)) {
		check_add(checks, "gpt", "fail", "the table read back is not the one written: %s, %s primary and %s backup "
			  "header, %zu partitions, %s", ptable_kind_name(t.kind), t.primary_ok ? "good" : "bad",
			  t.backup_ok ? "good" : "bad", t.nparts, problems ? problems : "partitions not where they were put");
		ptable_free(&t);
		return 1;
	}
	check_add(checks, "gpt", "pass", "GPT read back: both headers and their CRCs good, no problem as sgdisk -v counts "
		  "them, p1 %s LBA %" PRIu64 "-%" PRIu64 ", p2 %s LBA %" PRIu64 "-%" PRIu64, RESCUE_ESP_NAME, r->esp_first,
		  r->esp_last, RESCUE_STATE_LABEL, r->state_first, r->state_last);
	ptable_free(&t);
	return 0;
}

int rescue_verify_table_esp(struct rescue *r, int fd, const char *path, uint64_t disk_bytes, json_object *checks)
{
	int failed = verify_gpt(r, fd, path, disk_bytes, checks);
	uint64_t off = r->esp_first * r->lba, len = (r->esp_last - r->esp_first + 1) * r->lba, total = 0;

	for (size_t i = 0; i < r->nesp; i++) {
		_cleanup_free_ char *w = NULL;
		char hex[65];
		uint64_t size = 0;
		int rc = fat_file_sha256(fd, off, len, r->esp[i].path, hex, &size, &w);

		if (rc < 0 || size != r->esp[i].size || !streq(hex, r->esp[i].sha256)) {
			check_add(checks, "esp", "fail", "'%s' read back through the FAT is not what was written: %s",
				  r->esp[i].path, rc < 0 ? w : "its size or sha256 differs");
			return failed + 1;
		}
		total += size;
	}
	check_add(checks, "esp", "pass", "FAT32 read back: %zu files, %" PRIu64 " bytes, every sha256 as written", r->nesp,
		  total);
	return failed;
}

int rescue_verify_state(struct rescue *r, const char *path, json_object *checks)
{
	uint64_t off = r->state_first * r->lba;
	_cleanup_free_ char *dev = xasprintf("%s?offset=%" PRIu64, path, off), *out = NULL;
	char *argv[] = { (char *)prog(r, "e2fsck"), "-fn", dev, NULL };
	int rc = tool(argv, &out);

	if (rc != 0) {
		check_add(checks, "state", "fail", "e2fsck -fn of the state partition exited %d: %s", rc, out ? out : "");
		return 1;
	}
	for (size_t i = 0; i < r->nrecords; i++) {
		_cleanup_free_ char *file = xasprintf("/%s/%s.json", RESCUE_STATE_DIR, r->records[i].step), *w = NULL, *text = NULL;
		size_t len = 0;

		rc = extfs_read_file(path, off, file, RECORD_MAX_BYTES, &text, &len, &w);
		if (rc < 0 || len != r->records[i].len || memcmp(text, r->records[i].text, len) != 0) {
			check_add(checks, "state", "fail", "'%s' read back from the state partition is not what was written: %s",
				  file, rc < 0 ? w : "its bytes differ");
			return 1;
		}
	}
	check_add(checks, "state", "pass", "ext4 '%s' read back: e2fsck -fn clean, %zu record%s equal to what was written",
		  RESCUE_STATE_LABEL, r->nrecords, r->nrecords == 1 ? "" : "s");
	return 0;
}

/* ---- a stick found again ---- */

int rescue_find_state(int fd, const char *path, uint64_t *offset, char **why)
{
	struct stat st;
	struct fs_id id;
	uint64_t bytes;
	int ssz = 512;

	if (fstat(fd, &st) < 0)
		return set_why(why, -errno, "cannot stat it: %m");
	bytes = (uint64_t)st.st_size;
	if (S_ISBLK(st.st_mode) && (ioctl(fd, BLKGETSIZE64, &bytes) < 0 || ioctl(fd, BLKSSZGET, &ssz) < 0))
		return set_why(why, -errno, "cannot read its size: %m");
	/* a partition (or an image) that is the state's ext4 itself */
	if (probe_fs(fd, 0, bytes, &id) == 0 && streq(id.type, "ext4") && streq(id.label, RESCUE_STATE_LABEL)) {
		*offset = 0;
		return 0;
	}
	for (uint32_t lba = (uint32_t)ssz; lba <= 4096; lba *= 8) {
		_cleanup_free_ char *w = NULL;
		struct ptable t;

		if (ptable_read(fd, path, lba, bytes, &t, &w) < 0)
			continue;
		for (size_t i = 0; t.kind == PT_GPT && i < t.nparts; i++) {
			const struct part *p = &t.parts[i];
			uint64_t off;

			if (!streq(p->name, RESCUE_STATE_LABEL) || u64_mul(p->start_lba, lba, &off) < 0)
				continue;
			if (probe_fs(fd, off, p->size_bytes, &id) == 0 && streq(id.type, "ext4") &&
			    streq(id.label, RESCUE_STATE_LABEL)) {
				*offset = off;
				ptable_free(&t);
				return 0;
			}
		}
		ptable_free(&t);
		if (S_ISBLK(st.st_mode))
			break; /* a device has one LBA size */
	}
	return set_why(why, -ENOENT, "it holds no ext4 labelled %s (in a GPT partition of that name, or as itself): not "
			"a stick 'swaptool rescue' wrote", RESCUE_STATE_LABEL);
}

int rescue_secure_boot(const char *efivars)
{
	_cleanup_free_ char *p = xasprintf("%s/%s", efivars, SECURE_BOOT_VAR), *buf = NULL;
	size_t len = 0;
	int rc = read_input(p, 64, 0, &buf, &len, NULL);

	if (rc < 0)
		return rc == -ENOENT ? -ENOENT : rc;
	/* efivarfs: 4 bytes of attributes, then the variable: one byte, 1 when enforcing */
	if (len != 5)
		return -EBADMSG;
	return buf[4] == 1;
}

/* ---- the record ---- */

json_object *rescue_json(const struct rescue *r)
{
	json_object *o = json_object_new_object(), *a;

	jset_str(o, "arch", r->arch);
	jset_str(o, "efi_boot_file", r->efi_name);
	a = json_object_new_array();
	for (size_t i = 0; i < r->programs.n; i++) {
		json_object *p = json_object_new_object();

		jset_str(p, "name", rescue_programs[i].name);
		jset_str(p, "path", r->programs.v[i]);
		jset_str(p, "package", rescue_programs[i].package);
		json_object_array_add(a, p);
	}
	json_object_object_add(o, "programs", a);
	a = json_object_new_array();
	for (size_t i = 0; i < r->libraries.n; i++)
		json_object_array_add(a, json_object_new_string(r->libraries.v[i]));
	json_object_object_add(o, "libraries", a);
	a = json_object_new_array();
	for (size_t i = 0; i < r->modules.files.n; i++)
		json_object_array_add(a, json_object_new_string(r->modules.files.v[i]));
	json_object_object_add(o, "modules", a);
	a = json_object_new_array();
	for (size_t i = 0; i < r->modules.builtin.n; i++)
		json_object_array_add(a, json_object_new_string(r->modules.builtin.v[i]));
	json_object_object_add(o, "modules_builtin", a);
	a = json_object_new_array();
	for (size_t i = 0; i < r->modules_missing.n; i++)
		json_object_array_add(a, json_object_new_string(r->modules_missing.v[i]));
	json_object_object_add(o, "modules_absent", a);
	a = json_object_new_array();
	for (size_t i = 0; i < r->nrecords; i++)
		json_object_array_add(a, json_object_new_string(r->records[i].step));
	json_object_object_add(o, "records", a);
	a = json_object_new_object();
	jset_str(a, "path", r->kernel);
	jset_str(a, "release", r->release);
	jset_str(a, "modules_dir", r->moddir);
	json_object_object_add(o, "kernel", a);
	a = json_object_new_object();
	jset_str(a, "name", "systemd-boot");
	jset_str(a, "path", r->loader);
	jset_str(a, "package", "systemd-boot-efi");
	jset_bool(a, "signed", false);
	json_object_object_add(o, "loader", a);
	jset_str(o, "kernel_arguments", r->append);
	a = json_object_new_object();
	jset_u64(a, "bytes", r->initrd_bytes);
	jset_u64(a, "cpio_bytes", r->cpio_bytes);
	jset_u64(a, "content_bytes", r->content_bytes);
	jset_u64(a, "entries", r->cpio_entries);
	jset_str(a, "compression", "gzip");
	json_object_object_add(o, "initramfs", a);
	a = json_object_new_array();
	for (size_t i = 0; i < r->nesp; i++) {
		json_object *f = json_object_new_object();

		jset_str(f, "path", r->esp[i].path);
		jset_u64(f, "bytes", r->esp[i].size);
		jset_str(f, "sha256", r->esp[i].sha256[0] ? r->esp[i].sha256 : NULL);
		json_object_array_add(a, f);
	}
	json_object_object_add(o, "esp_files", a);
	if (r->lba) {
		const struct { const char *name, *fs; uint64_t first, last; } parts[] = {
			{ RESCUE_ESP_NAME, "vfat", r->esp_first, r->esp_last },
			{ RESCUE_STATE_LABEL, "ext4", r->state_first, r->state_last },
		};

		jset_u64(o, "bytes", r->bytes);
		jset_u64(o, "lba_size", r->lba);
		a = json_object_new_array();
		for (size_t i = 0; i < ARRAY_SIZE(parts); i++) {
			json_object *p = json_object_new_object();

			jset_u64(p, "number", i + 1);
			jset_str(p, "name", parts[i].name);
			jset_str(p, "fs", parts[i].fs);
			jset_u64(p, "start_lba", parts[i].first);
			jset_u64(p, "end_lba", parts[i].last);
			jset_u64(p, "bytes", (parts[i].last - parts[i].first + 1) * r->lba);
			json_object_array_add(a, p);
		}
		json_object_object_add(o, "partitions", a);
	}
	return o;
}
