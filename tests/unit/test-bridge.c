/* SPDX-License-Identifier: MIT */
/* bridge (src/bridge.c): the USB device above a disk, found by walking up its sysfs directory, in a
 * tree laid out as the kernel lays out a disk in a USB-NVMe enclosure (UAS) and one on Bulk-Only;
 * a disk with no USB device above it; hostile identifiers. */
#include "util.h"
#include "bridge.h"
#include "tap.h"
#include "testsh.h"

/* usb2/2-1 is the USB device, 2-1:1.0 its interface bound to DRIVER, then the SCSI host and disk */
static void make_tree(const char *root, const char *driver, const char *vid, const char *speed)
{
	CHECK(sh("d=%s/devices/pci0000:00/0000:00:14.0/usb2/2-1 && mkdir -p $d/2-1:1.0/host4/target4:0:0/4:0:0:0/block/sda "
		 "%s/drivers/%s && echo '%s' > $d/idVendor && echo 9210 > $d/idProduct && echo Realtek > $d/manufacturer && "
		 "echo ' RTL9210B-CG ' > $d/product && echo 012345678904 > $d/serial && echo %s > $d/speed && "
		 "ln -s ../../../../../../drivers/%s $d/2-1:1.0/driver",
		 root, root, driver, vid, speed, driver) == 0);
}

static void test_uas(void)
{
	_cleanup_free_ char *disk = tpath("a/devices/pci0000:00/0000:00:14.0/usb2/2-1/2-1:1.0/host4/target4:0:0/4:0:0:0/block/sda");
	_cleanup_free_ char *desc = NULL, *js = NULL;
	_cleanup_(bridge_freep) struct disk_bridge b = { 0 };
	_cleanup_json_ json_object *o = NULL;

	make_tree("a", "uas", "0bda", "10000");
	CHECK(bridge_of_sysfs_dir(disk, &b) == 0);
	CHECK_STR(b.vendor_id, "0bda");
	CHECK_STR(b.product_id, "9210");
	CHECK_STR(b.manufacturer, "Realtek");
	CHECK_STR(b.product, "RTL9210B-CG");
	CHECK_STR(b.serial, "012345678904");
	CHECK_U64(b.speed_mbps, 10000);
	CHECK_STR(b.driver, "uas");
	desc = bridge_describe(&b);
	CHECK_STR(desc, "0bda:9210 Realtek RTL9210B-CG, 10 Gb/s, uas");
	o = bridge_json(&b);
	js = xstrdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	CHECK_STR(js, "{\"vendor_id\":\"0bda\",\"product_id\":\"9210\",\"manufacturer\":\"Realtek\",\"product\":"
		      "\"RTL9210B-CG\",\"serial\":\"012345678904\",\"speed_mbps\":10000,\"driver\":\"uas\"}");
}

static void test_bulk_only_usb2(void)
{
	_cleanup_free_ char *disk = tpath("b/devices/pci0000:00/0000:00:14.0/usb2/2-1/2-1:1.0/host4/target4:0:0/4:0:0:0/block/sda");
	_cleanup_free_ char *desc = NULL;
	_cleanup_(bridge_freep) struct disk_bridge b = { 0 };

	make_tree("b", "usb-storage", "152d", "480");
	CHECK(bridge_of_sysfs_dir(disk, &b) == 0);
	CHECK_U64(b.speed_mbps, 480);
	CHECK_STR(b.driver, "usb-storage");
	desc = bridge_describe(&b);
	CHECK_STR(desc, "152d:9210 Realtek RTL9210B-CG, 480 Mb/s, usb-storage");
}

static void test_not_usb_and_hostile(void)
{
	_cleanup_free_ char *nvme = tpath("c/devices/pci0000:00/0000:00:1d.0/0000:3d:00.0/nvme/nvme0/nvme0n1");
	_cleanup_free_ char *bad = tpath("d/devices/pci0000:00/0000:00:14.0/usb2/2-1/2-1:1.0/host4/target4:0:0/4:0:0:0/block/sda");
	_cleanup_free_ char *slow = tpath("e/devices/pci0000:00/0000:00:14.0/usb2/2-1/2-1:1.0/host4/target4:0:0/4:0:0:0/block/sda");
	_cleanup_free_ char *desc = NULL;
	struct disk_bridge b;

	CHECK(sh("mkdir -p %s", nvme) == 0);
	CHECK(bridge_of_sysfs_dir(nvme, &b) == -ENOENT);
	CHECK(b.vendor_id == NULL);
	/* an identifier that is not four hex digits is no USB id: refused, nothing kept */
	make_tree("d", "uas", "0bda;rm", "10000");
	CHECK(bridge_of_sysfs_dir(bad, &b) == -EBADMSG);
	CHECK(b.vendor_id == NULL && b.product == NULL);
	/* low speed reads "1.5"; an unclean product string is unknown, not copied */
	make_tree("e", "uas", "0bda", "1.5");
	CHECK(sh("printf 'RTL\\033[2J' > e/devices/pci0000:00/0000:00:14.0/usb2/2-1/product") == 0);
	CHECK(bridge_of_sysfs_dir(slow, &b) == 0);
	CHECK_U64(b.speed_mbps, 1);
	CHECK(b.product == NULL);
	desc = bridge_describe(&b);
	CHECK_STR(desc, "0bda:9210 Realtek, 1 Mb/s, uas");
	bridge_free(&b);
	CHECK(bridge_of_disk("../sda", &b) == -EINVAL);
	CHECK(bridge_of_disk("", &b) == -EINVAL);
	/* a loop device has no USB device above it */
	if (access("/sys/block/loop0", F_OK) == 0)
		CHECK(bridge_of_disk("loop0", &b) == -ENOENT);
}

int main(void)
{
	tdir_make("test-bridge");
	test_uas();
	test_bulk_only_usb2();
	test_not_usb_and_hostile();
	return tap_done();
}
