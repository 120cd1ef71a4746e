/* SPDX-License-Identifier: MIT */
/* Open a disk read-only: image file, block device, or NVMe controller (through its namespaces in sysfs). */
#include "util.h"
#include "disk.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

/* v (allocated) trimmed of the padding around it, or NULL (v freed) when it names nothing reliably:
 * a driver or a device under test can put any bytes in sysfs, and a value that is not one printable
 * line of at most 256 bytes is unknown, neither compared nor shown. */
static char *clean_text(char *v)
{
	size_t lead = 0, len;
	bool clean = true;

	/* SCSI INQUIRY and VPD strings are space-padded on both sides: "  S6B0NL0W123456  " */
	while (v[lead] == ' ' || v[lead] == '\t')
		lead++;
	memmove(v, v + lead, strlen(v + lead) + 1);
	len = strlen(v);
	while (len && (v[len - 1] == ' ' || v[len - 1] == '\t'))
		v[--len] = '\0';
	for (const unsigned char *c = (const unsigned char *)v; *c; c++)
		clean = clean && *c >= 0x20 && *c != 0x7f;
	if (!*v || !clean || len > 256 || !utf8_valid(v)) {
		free(v);
		return NULL;
	}
	return v;
}

char *disk_sysfs_text(const char *dir, const char *name)
{
	_cleanup_free_ char *p = xasprintf("%s/%s", dir, name);
	char *v = NULL;

	if (read_attr(p, &v) < 0)
		return NULL;
	return clean_text(v);
}

char *disk_vpd_serial(const unsigned char *page, size_t n)
{
	size_t len;
	char *v;

	/* SPC-4 7.8.15, Unit Serial Number: byte 1 the page code 0x80, bytes 2-3 the length (big-endian)
	 * of the serial that follows the 4-byte header; a NUL inside ends it early (some bridges pad so) */
	if (n < 4 || page[1] != 0x80)
		return NULL;
	len = (size_t)page[2] << 8 | page[3];
	if (len == 0 || len > n - 4)
		return NULL;
	v = xcalloc(1, len + 1);
	memcpy(v, page + 4, len);
	v[len] = '\0';
	return clean_text(v);
}

void disk_sysfs_identity(const char *devdir, char **model, char **firmware, char **serial)
{
	*model = disk_sysfs_text(devdir, "model");
	/* NVMe names it firmware_rev, SCSI rev */
	*firmware = disk_sysfs_text(devdir, "firmware_rev");
	if (!*firmware)
		*firmware = disk_sysfs_text(devdir, "rev");
	*serial = disk_sysfs_serial(devdir);
}

char *disk_sysfs_serial(const char *devdir)
{
	_cleanup_free_ char *p = NULL;
	unsigned char page[260];
	char *serial = disk_sysfs_text(devdir, "serial");
	ssize_t n;
	int fd;

	if (serial)
		return serial;
	/* a SCSI disk (USB, SAS, SATA through libata) has no "serial": the kernel keeps VPD page 0x80 */
	p = xasprintf("%s/vpd_pg80", devdir);
	fd = open(p, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return NULL;
	n = read(fd, page, sizeof(page));
	close(fd);
	return n > 0 ? disk_vpd_serial(page, (size_t)n) : NULL;
}

const char *disk_transport(const char *sysname)
{
	_cleanup_free_ char *link = NULL;
	char real[PATH_MAX];

	if (!sysname || !*sysname || strchr(sysname, '/') || sysname[0] == '.')
		return NULL;
	link = xasprintf("/sys/block/%s", sysname);
	if (!realpath(link, real))
		return NULL;
	/* The device's place in sysfs names the bus chain from the root, e.g.
	 * .../usb2/2-1/2-1:1.0/host4/target4:0:0/4:0:0:0/block/sda for a disk in a USB enclosure (a
	 * USB-NVMe bridge too: the drive in it is reached through the bridge), .../nvme/nvme0/nvme0n1,
	 * .../virtio1/block/vda, .../ata1/host0/.../block/sda, /sys/devices/virtual/block/loop0. */
	if (strstr(real, "/usb"))
		return "usb";
	if (strstr(real, "/nvme"))
		return "nvme";
	if (strstr(real, "/virtio"))
		return "virtio";
	if (strstr(real, "/ata"))
		return "sata";
	if (strstr(real, "/mmc"))
		return "mmc";
	if (startswith(real, "/sys/devices/virtual/block/"))
		return startswith(sysname, "loop") ? "loop" : "virtual";
	if (strstr(real, "/host") && strstr(real, "/target"))
		return "scsi";
	return NULL;
}

int sysfs_block_name(unsigned long long rdev, char **name)
{
	_cleanup_free_ char *link = xasprintf("/sys/dev/block/%u:%u", major(rdev), minor(rdev));
	char target[PATH_MAX];
	const char *base;

	if (!realpath(link, target))
		return -ENOENT;
	base = strrchr(target, '/');
	*name = xstrdup(base ? base + 1 : target);
	return 0;
}

/* Block device size and logical block size through the ioctls the kernel offers. */
static int block_geometry(int fd, uint64_t *bytes, uint32_t *lba)
{
	int ssz = 0;

	if (ioctl(fd, BLKGETSIZE64, bytes) < 0 || ioctl(fd, BLKSSZGET, &ssz) < 0)
		return -errno;
	*lba = (uint32_t)ssz;
	return 0;
}

/* Model, firmware and serial of the device behind a block device (its controller for NVMe). */
static void read_identity(struct disk *d, const char *sysdir)
{
	_cleanup_free_ char *devdir = xasprintf("%s/device", sysdir);
	char target[PATH_MAX];

	disk_sysfs_identity(devdir, &d->model, &d->firmware, &d->serial);
	if (realpath(devdir, target)) {
		const char *base = strrchr(target, '/');

		if (base && startswith(base + 1, "nvme"))
			d->ctrl = xstrdup(base + 1);
	}
}

static int open_block(struct disk *d, const struct stat *st, char **why)
{
	_cleanup_free_ char *sysdir = xasprintf("/sys/dev/block/%u:%u", major(st->st_rdev), minor(st->st_rdev));
	_cleanup_free_ char *partfile = xasprintf("%s/partition", sysdir);
	int r;

	d->kind = DISK_BLOCK;
	if (sysfs_block_name(st->st_rdev, &d->sysname) < 0)
		d->sysname = NULL;
	if (access(partfile, F_OK) == 0) {
		_cleanup_free_ char *parent = xasprintf("%s/..", sysdir);
		char target[PATH_MAX];
		const char *base = realpath(parent, target) ? strrchr(target, '/') : NULL;

		return set_why(why, -ENOTBLK, "'%s' is a partition; give the whole disk ('/dev/%s')", d->path,
			       base ? base + 1 : "?");
	}
	r = block_geometry(d->fd, &d->size_bytes, &d->lba_size);
	if (r < 0)
		return set_why(why, r, "cannot read the size of '%s': %s", d->path, strerror(-r));
	read_identity(d, sysdir);
	return 0;
}

/* An NVMe controller: its namespaces are block devices named <ctrl>n<N> under /sys/class/nvme/<ctrl>. */
static int open_nvme_ctrl(struct disk *d, const char *ctrl, char **why)
{
	_cleanup_free_ char *classdir = xasprintf("/sys/class/nvme/%s", ctrl);
	DIR *dir = opendir(classdir);
	struct dirent *e;
	ssize_t chosen = -1;

	if (!dir)
		return set_why(why, -errno, "cannot list the namespaces of '%s': %s", d->path, strerror(errno));
	d->kind = DISK_NVME_CTRL;
	d->ctrl = xstrdup(ctrl);
	d->model = disk_sysfs_text(classdir, "model");
	d->firmware = disk_sysfs_text(classdir, "firmware_rev");
	d->serial = disk_sysfs_text(classdir, "serial");
	while ((e = readdir(dir))) {
		_cleanup_free_ char *dev = NULL;
		_cleanup_close_ int fd = -1;
		struct disk_namespace ns = { 0 };
		uint16_t sig = 0;

		/* nvme0n1, or nvme0c0n1 under native multipath */
		if (!startswith(e->d_name, ctrl) || !strchr(e->d_name + strlen(ctrl), 'n'))
			continue;
		dev = xasprintf("/dev/%s", e->d_name);
		fd = open(dev, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || block_geometry(fd, &ns.size_bytes, &ns.lba_size) < 0)
			continue;
		ns.dev = TAKE_PTR(dev);
		d->ns = realloc(d->ns, (d->nns + 1) * sizeof(*d->ns));
		if (!d->ns)
			abort();
		d->ns[d->nns] = ns;
		/* The namespace that holds the partitions is the one an MBR/protective-MBR signature marks. */
		if (chosen < 0 && pread(fd, &sig, 2, 510) == 2 && sig == 0xAA55)
			chosen = (ssize_t)d->nns;
		d->nns++;
	}
	closedir(dir);
	if (d->nns == 0)
		return set_why(why, -ENODEV,
			       "NVMe controller '%s' has no readable namespace; is it attached and are you root?",
			       d->path);
	if (chosen < 0)
		chosen = 0;
	close(d->fd);
	d->fd = open(d->ns[chosen].dev, O_RDONLY | O_CLOEXEC);
	if (d->fd < 0)
		return set_why(why, -errno, "cannot open '%s': %s", d->ns[chosen].dev, strerror(errno));
	d->dev = xstrdup(d->ns[chosen].dev);
	d->size_bytes = d->ns[chosen].size_bytes;
	d->lba_size = d->ns[chosen].lba_size;
	d->sysname = xstrdup(d->ns[chosen].dev + 5);
	return 0;
}

int disk_open(const char *path, uint32_t image_lba_size, struct disk *d, char **why)
{
	struct stat st;
	int r;

	*d = (struct disk){ .fd = -1, .path = xstrdup(path) };
	*why = NULL;
	if (stat(path, &st) < 0) {
		r = -errno;
		return set_why(why, r, "cannot open '%s': %s", path, strerror(errno));
	}
	if (S_ISDIR(st.st_mode))
		return set_why(why, -EISDIR,
			       "'%s' is a directory; give a disk, an NVMe controller or an image file", path);
	if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode) && !S_ISCHR(st.st_mode))
		return set_why(why, -ENOTBLK, "'%s' is not a disk or an image file", path);
	/* Read-only, always: preflight, plan and accept never write (docs/design.md). */
	d->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (d->fd < 0) {
		r = -errno;
		return set_why(why, r, "cannot open '%s': %s%s", path, strerror(errno),
			       errno == EACCES ? "; run as root" : "");
	}
	d->dev = xstrdup(path);
	if (S_ISCHR(st.st_mode)) {
		_cleanup_free_ char *subsys = xasprintf("/sys/dev/char/%u:%u/subsystem", major(st.st_rdev),
							 minor(st.st_rdev));
		_cleanup_free_ char *ctrldir = xasprintf("/sys/dev/char/%u:%u", major(st.st_rdev), minor(st.st_rdev));
		char target[PATH_MAX], ctrl[PATH_MAX];
		const char *base;

		if (!realpath(subsys, target) || !streq(strrchr(target, '/'), "/nvme") || !realpath(ctrldir, ctrl))
			return set_why(why, -ENOTBLK, "'%s' is a character device but not an NVMe controller", path);
		base = strrchr(ctrl, '/');
		free(d->dev);
		d->dev = NULL;
		r = open_nvme_ctrl(d, base + 1, why);
	} else if (S_ISBLK(st.st_mode))
		r = open_block(d, &st, why);
	else {
		d->kind = DISK_IMAGE;
		d->size_bytes = (uint64_t)st.st_size;
		d->lba_size = image_lba_size ? image_lba_size : 512;
		r = 0;
	}
	if (r < 0)
		return r;
	if (d->size_bytes < d->lba_size)
		return set_why(why, -ERANGE, "'%s' is empty (%llu bytes)", path, (unsigned long long)d->size_bytes);
	d->lba_count = d->size_bytes / d->lba_size;
	return 0;
}

void disk_close(struct disk *d)
{
	if (d->fd >= 0)
		close(d->fd);
	for (size_t i = 0; i < d->nns; i++)
		free(d->ns[i].dev);
	free(d->ns);
	free(d->path), free(d->dev), free(d->sysname), free(d->ctrl);
	free(d->model), free(d->firmware), free(d->serial);
	*d = (struct disk){ .fd = -1 };
}

bool disk_holds_root(const struct disk *d)
{
	_cleanup_free_ char *name = NULL, *p = NULL;
	struct stat st;

	if (d->kind == DISK_IMAGE || !d->sysname || stat("/", &st) < 0 || sysfs_block_name(st.st_dev, &name) < 0)
		return false;
	if (streq(name, d->sysname))
		return true;
	p = xasprintf("/sys/class/block/%s/%s", d->sysname, name);
	return access(p, F_OK) == 0;
}
