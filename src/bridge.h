/* SPDX-License-Identifier: MIT */
/* The USB bridge a disk sits behind (an enclosure, a USB-to-NVMe adapter), from sysfs: what it is,
 * how fast its link is, and what that means for what swaptool can read through it. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "json.h"

struct disk_bridge {
	char *vendor_id, *product_id;          /* "0bda", "9210" (idVendor, idProduct): four hex digits */
	char *manufacturer, *product, *serial; /* the bridge's own strings; NULL when absent or unclean */
	uint64_t speed_mbps;                   /* the link: 480 (USB 2), 5000, 10000, 20000; 0 unknown */
	char *driver;                          /* "uas" (queued) or "usb-storage" (Bulk-Only); NULL unknown */
};

/* The USB device above the sysfs device directory `devdir` (the disk's resolved place in sysfs, e.g.
 * /sys/devices/pci0000:00/.../usb2/2-1/2-1:1.0/host4/target4:0:0/4:0:0:0/block/sda): the nearest
 * ancestor holding idVendor and idProduct. -ENOENT when there is none (the disk is not on USB). */
int bridge_of_sysfs_dir(const char *devdir, struct disk_bridge *b);
/* The same for the whole disk `sysname` ("sda") through /sys/block. */
int bridge_of_disk(const char *sysname, struct disk_bridge *b);
void bridge_free(struct disk_bridge *b);
static inline void bridge_freep(struct disk_bridge *b) { bridge_free(b); }
/* "0bda:9210 Realtek RTL9210B-CG, 10 Gb/s, uas": for messages. Caller frees. */
char *bridge_describe(const struct disk_bridge *b);
/* The record's "bridge": {vendor_id, product_id, manufacturer, product, serial, speed_mbps, driver}. */
json_object *bridge_json(const struct disk_bridge *b);
