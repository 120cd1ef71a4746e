/* SPDX-License-Identifier: MIT */
/* disk (src/disk.c): images of 512- and 4096-byte LBAs (sizes as stat and blockdev count them),
 * what is refused (a directory, an empty file, a character device, a missing path), sysfs names;
 * with a loop device (root): a block device and its partition, checked against blockdev(8). */
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "util.h" /* first: the headers of src/ take size_t, bool from it */
#include "disk.h"
#include "tap.h"
#include "testsh.h"

static void test_image(void)
{
	_cleanup_free_ char *img = tpath("d.img"), *why = NULL;
	struct disk d;

	/* 10 MiB and 1000 bytes: the tail shorter than one LBA is not counted */
	CHECK(sh("truncate -s $((10 * 1048576 + 1000)) d.img") == 0);
	CHECK(disk_open(img, 0, &d, &why) == 0);
	CHECK(d.kind == DISK_IMAGE);
	CHECK_U64(d.size_bytes, sh_u64("stat -c %%s d.img"));
	CHECK_U64(d.lba_size, 512); /* the default */
	CHECK_U64(d.lba_count, 20481);
	CHECK_STR(d.path, img);
	CHECK_STR(d.dev, img);
	CHECK(d.sysname == NULL && d.ctrl == NULL && d.nns == 0);
	CHECK(d.fd >= 0);
	CHECK(!disk_holds_root(&d));
	disk_close(&d);
	CHECK(d.fd == -1 && d.path == NULL);
	disk_close(&d); /* twice: nothing */

	CHECK(disk_open(img, 4096, &d, &why) == 0);
	CHECK_U64(d.lba_size, 4096);
	CHECK_U64(d.lba_count, 2560);
	disk_close(&d);
}

static void test_refused(void)
{
	struct disk d;
	_cleanup_free_ char *dirp = tpath("dir"), *empty = tpath("empty.img"), *tiny = tpath("tiny.img"),
			    *missing = tpath("missing.img"), *fifo = tpath("fifo");
	char *why = NULL;

	CHECK(sh("mkdir dir && : > empty.img && head -c 4095 /dev/zero > tiny.img && mkfifo fifo") == 0);
	CHECK(disk_open(dirp, 0, &d, &why) == -EISDIR);
	CHECK(why && strstr(why, "is a directory"));
	disk_close(&d), free(why), why = NULL;
	CHECK(disk_open(empty, 0, &d, &why) == -ERANGE);
	CHECK(why && strstr(why, "is empty (0 bytes)"));
	disk_close(&d), free(why), why = NULL;
	/* less than one LBA of 4096 */
	CHECK(disk_open(tiny, 4096, &d, &why) == -ERANGE);
	disk_close(&d), free(why), why = NULL;
	CHECK(disk_open(missing, 0, &d, &why) == -ENOENT);
	CHECK(why && strstr(why, "cannot open"));
	disk_close(&d), free(why), why = NULL;
	/* a FIFO is no disk, and is refused before it is opened (no hang) */
	CHECK(disk_open(fifo, 0, &d, &why) == -ENOTBLK);
	disk_close(&d), free(why), why = NULL;
	/* a character device that is not an NVMe controller */
	CHECK(disk_open("/dev/null", 0, &d, &why) == -ENOTBLK);
	CHECK(why && strstr(why, "not an NVMe controller"));
	disk_close(&d), free(why), why = NULL;
}

static void test_sysfs(void)
{
	_cleanup_free_ char *name = NULL;

	/* 0:0 names no block device */
	CHECK(sysfs_block_name(makedev(0, 0), &name) == -ENOENT);
	if (access("/sys/dev/block/7:0", F_OK) == 0) {
		CHECK(sysfs_block_name(makedev(7, 0), &name) == 0);
		CHECK_STR(name, "loop0");
	}
}

/* A loop device over a GPT image (losetup -P): the whole disk opens as a block device, its
 * partition is refused naming the disk. Skipped without root or loop devices. */
static void test_loop(void)
{
	_cleanup_free_ char *dev = NULL, *part = NULL, *why = NULL, *want_name = NULL;
	struct disk d;

	if (geteuid() != 0 || sh("command -v losetup partx sgdisk blockdev >/dev/null && [ -e /dev/loop-control ]") != 0) {
		fprintf(stderr, "# no root or no loop devices: the block-device cases are skipped\n");
		return;
	}
	CHECK(sh("truncate -s 64M loop.img && sgdisk -o -n 1:2048:+16M loop.img >/dev/null") == 0);
	dev = sh_str("losetup --show -f -P -r loop.img 2>/dev/null");
	if (!dev[0]) {
		fprintf(stderr, "# losetup failed: the block-device cases are skipped\n");
		return;
	}
	/* the kernel here may not scan the table: partx makes the node, as tests/lib.sh's attach does */
	CHECK(sh("for i in $(seq 50); do partx -a %s 2>/dev/null || partx -u %s 2>/dev/null; [ -b %sp1 ] && exit 0; sleep 0.1; done; exit 1",
		 dev, dev, dev) == 0);
	CHECK(disk_open(dev, 4096, &d, &why) == 0); /* image_lba_size is for images only */
	CHECK(d.kind == DISK_BLOCK);
	CHECK_U64(d.size_bytes, sh_u64("blockdev --getsize64 %s", dev));
	CHECK_U64(d.lba_size, sh_u64("blockdev --getss %s", dev));
	CHECK_U64(d.lba_count, 64 * 1048576 / d.lba_size);
	want_name = xstrdup(strrchr(dev, '/') + 1);
	CHECK_STR(d.sysname, want_name);
	CHECK(!disk_holds_root(&d));
	disk_close(&d);
	part = xasprintf("%sp1", dev);
	free(why), why = NULL;
	CHECK(disk_open(part, 0, &d, &why) == -ENOTBLK);
	CHECK(why && strstr(why, dev));
	disk_close(&d);
	CHECK(sh("partx -d %s 2>/dev/null; losetup -d %s", dev, dev) == 0);
}

/* VPD page 0x80 as the kernel keeps it in vpd_pg80, and disk_sysfs_serial's order: "serial" first. */
static void test_vpd_serial(void)
{
	static const unsigned char ok[] = { 0x00, 0x80, 0x00, 0x10, ' ', ' ', 'S', '6', 'B', '0', 'N', 'L',
					    '0', 'W', '1', '2', '3', '4', ' ', ' ' };
	static const unsigned char nul[] = { 0x00, 0x80, 0x00, 0x06, 'A', 'B', 'C', 0, 0, 0 };
	static const unsigned char ctl[] = { 0x00, 0x80, 0x00, 0x03, 'A', 0x1b, 'C' };
	static const unsigned char other[] = { 0x00, 0x83, 0x00, 0x03, 'A', 'B', 'C' };
	static const unsigned char longer[] = { 0x00, 0x80, 0x00, 0x09, 'A', 'B', 'C' };
	static const unsigned char blank[] = { 0x00, 0x80, 0x00, 0x02, ' ', ' ' };
	_cleanup_free_ char *a = disk_vpd_serial(ok, sizeof(ok)), *b = disk_vpd_serial(nul, sizeof(nul));
	_cleanup_free_ char *dir = tpath("dev"), *s1 = NULL, *s2 = NULL, *m = NULL, *f = NULL, *s3 = NULL;

	CHECK_STR(a, "S6B0NL0W1234");
	CHECK_STR(b, "ABC"); /* NUL padding ends the serial */
	CHECK(disk_vpd_serial(ctl, sizeof(ctl)) == NULL);
	CHECK(disk_vpd_serial(other, sizeof(other)) == NULL);
	CHECK(disk_vpd_serial(longer, sizeof(longer)) == NULL); /* the length runs past the page */
	CHECK(disk_vpd_serial(blank, sizeof(blank)) == NULL);
	CHECK(disk_vpd_serial(ok, 3) == NULL);

	CHECK(sh("mkdir dev && printf '\\000\\200\\000\\004WD42' > dev/vpd_pg80") == 0);
	s1 = disk_sysfs_serial(dir);
	CHECK_STR(s1, "WD42");
	CHECK(sh("echo ' RTL9210B-CG ' > dev/model && echo 1.00 > dev/rev && echo ' NVME123 ' > dev/serial") == 0);
	s2 = disk_sysfs_serial(dir);
	CHECK_STR(s2, "NVME123"); /* the attribute, where the driver has one */
	disk_sysfs_identity(dir, &m, &f, &s3);
	CHECK_STR(m, "RTL9210B-CG");
	CHECK_STR(f, "1.00"); /* SCSI names it rev */
	CHECK_STR(s3, "NVME123");
}

int main(void)
{
	tdir_make("test-disk");
	test_image();
	test_refused();
	test_sysfs();
	test_vpd_serial();
	test_loop();
	return tap_done();
}
