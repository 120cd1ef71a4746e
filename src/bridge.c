/* SPDX-License-Identifier: MIT */
/* The USB bridge a disk sits behind, from sysfs (src/bridge.h). Only reads files under sysfs: a
 * bridge's strings are the bridge's, and may be anything, so they pass disk_sysfs_text's checks. */
#include "util.h"
#include "bridge.h"
#include "disk.h"
#include "size.h"

#include <limits.h>

static bool hex4(const char *s)
{
	if (!s || strlen(s) != 4)
		return false;
	for (; *s; s++)
		if (!strchr("0123456789abcdefABCDEF", *s))
			return false;
	return true;
}

/* sysfs "speed" is Mb/s, "1.5" for low speed: the whole part, 0 when it is not a number. */
static uint64_t link_speed(const char *dir)
{
	_cleanup_free_ char *v = disk_sysfs_text(dir, "speed");
	const char *why;
	uint64_t mbps = 0;

	if (v) {
		v[strcspn(v, ".")] = '\0';
		if (u64_parse(v, &mbps, &why) < 0 || mbps > 1000000)
			mbps = 0;
	}
	return mbps;
}

/* The interface under the USB device (2-1:1.0) that the disk's SCSI host hangs from names its
 * driver: "uas" (queued commands) or "usb-storage" (Bulk-Only: one command at a time). NULL when
 * it cannot be told. */
static char *interface_driver(const char *devdir, size_t usb_len)
{
	_cleanup_free_ char *link = NULL;
	const char *next = devdir + usb_len + 1, *end, *base;
	char target[PATH_MAX];

	if (devdir[usb_len] != '/')
		return NULL;
	end = strchr(next, '/');
	link = xasprintf("%.*s/%.*s/driver", (int)usb_len, devdir, (int)(end ? (size_t)(end - next) : strlen(next)),
			 next);
	if (!realpath(link, target))
		return NULL;
	base = strrchr(target, '/');
	return xstrdup(base ? base + 1 : target);
}

int bridge_of_sysfs_dir(const char *devdir, struct disk_bridge *b)
{
	_cleanup_free_ char *dir = xstrdup(devdir);

	*b = (struct disk_bridge){ 0 };
	/* the disk's directory is many levels below the USB device: walk up, at most as deep as sysfs goes */
	for (unsigned depth = 0; depth < 64; depth++) {
		char *slash = strrchr(dir, '/');
		_cleanup_free_ char *vid = NULL, *pid = NULL;

		if (!slash || slash == dir)
			return -ENOENT;
		*slash = '\0';
		vid = disk_sysfs_text(dir, "idVendor");
		pid = disk_sysfs_text(dir, "idProduct");
		if (!vid && !pid)
			continue;
		if (!hex4(vid) || !hex4(pid))
			return -EBADMSG;
		b->vendor_id = TAKE_PTR(vid);
		b->product_id = TAKE_PTR(pid);
		b->manufacturer = disk_sysfs_text(dir, "manufacturer");
		b->product = disk_sysfs_text(dir, "product");
		b->serial = disk_sysfs_text(dir, "serial");
		b->speed_mbps = link_speed(dir);
		b->driver = interface_driver(devdir, strlen(dir));
		return 0;
	}
	return -ENOENT;
}

int bridge_of_disk(const char *sysname, struct disk_bridge *b)
{
	_cleanup_free_ char *link = NULL;
	char real[PATH_MAX];

	*b = (struct disk_bridge){ 0 };
	if (!sysname || !*sysname || strchr(sysname, '/') || sysname[0] == '.')
		return -EINVAL;
	link = xasprintf("/sys/block/%s", sysname);
	if (!realpath(link, real))
		return -errno;
	return bridge_of_sysfs_dir(real, b);
}

void bridge_free(struct disk_bridge *b)
{
	free(b->vendor_id);
	free(b->product_id);
	free(b->manufacturer);
	free(b->product);
	free(b->serial);
	free(b->driver);
	*b = (struct disk_bridge){ 0 };
}

char *bridge_describe(const struct disk_bridge *b)
{
	_cleanup_free_ char *speed = b->speed_mbps >= 1000 && b->speed_mbps % 1000 == 0
					     ? xasprintf(", %" PRIu64 " Gb/s", b->speed_mbps / 1000)
				     : b->speed_mbps ? xasprintf(", %" PRIu64 " Mb/s", b->speed_mbps)
						     : xstrdup("");

	return xasprintf("%s:%s%s%s%s%s%s, %s", b->vendor_id, b->product_id, b->manufacturer ? " " : "",
			 b->manufacturer ?: "", b->product ? " " : "", b->product ?: "", speed,
			 b->driver ?: "driver unknown");
}

json_object *bridge_json(const struct disk_bridge *b)
{
	json_object *o = json_object_new_object();

	jset_str(o, "vendor_id", b->vendor_id);
	jset_str(o, "product_id", b->product_id);
	jset_str(o, "manufacturer", b->manufacturer);
	jset_str(o, "product", b->product);
	jset_str(o, "serial", b->serial);
	json_object_object_add(o, "speed_mbps", b->speed_mbps ? json_object_new_uint64(b->speed_mbps) : NULL);
	jset_str(o, "driver", b->driver);
	return o;
}
