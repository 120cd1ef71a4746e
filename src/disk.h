/* SPDX-License-Identifier: MIT */
/* Open a source or target: NVMe controller (char device), block device or image file; size and LBA size. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

enum disk_kind { DISK_IMAGE, DISK_BLOCK, DISK_NVME_CTRL };

struct disk_namespace {
	char *dev;          /* "/dev/nvme0n1" */
	uint64_t size_bytes;
	uint32_t lba_size;
};

struct disk {
	char *path;         /* as given */
	char *dev;          /* what is read: the image, the block device, or the chosen namespace */
	enum disk_kind kind;
	int fd;             /* O_RDONLY (never written by preflight/plan/accept) */
	uint64_t size_bytes;
	uint32_t lba_size;
	uint64_t lba_count;
	char *sysname;      /* "nvme0n1", "loop0"; NULL for an image */
	char *ctrl;         /* "nvme0" when the disk is an NVMe namespace or controller */
	char *model, *firmware, *serial; /* from sysfs; NULL when unknown */
	struct disk_namespace *ns;       /* NVMe controller: its namespaces */
	size_t nns;
};

/*
 * Open `path` read-only. An image file takes `image_lba_size` (512, 4096...). For an NVMe
 * controller the namespace holding a partition table is chosen (else the first). Refused: a
 * partition (-ENOTBLK, *why names the whole disk), a directory (-EISDIR), another character
 * device (-ENOTBLK), an empty file (-ERANGE). On error *why is an allocated message.
 */
int disk_open(const char *path, uint32_t image_lba_size, struct disk *d, char **why);
void disk_close(struct disk *d);
static inline void disk_closep(struct disk *d) { disk_close(d); }

/* An attribute of a sysfs directory ("model", "serial") as one line without the padding around it;
 * NULL when it is missing, empty, longer than 256 bytes, or holds a control byte or invalid UTF-8
 * (hostile or garbled bytes name nothing). Caller frees. */
char *disk_sysfs_text(const char *dir, const char *name);
/* Model, firmware and serial of a disk's sysfs device directory, each checked as disk_sysfs_text
 * does (NULL when unknown). */
void disk_sysfs_identity(const char *devdir, char **model, char **firmware, char **serial);
/* The serial of a disk's sysfs device directory ("/sys/block/sda/device"): its "serial" (NVMe), else
 * VPD page 0x80 as the kernel read it (vpd_pg80: SCSI, USB, SATA); NULL when neither names one. */
char *disk_sysfs_serial(const char *devdir);
/* The serial in a VPD page 0x80 of n bytes, checked as disk_sysfs_text checks a value; NULL when the
 * page is short, of another code, or its serial is empty or unclean. Caller frees. */
char *disk_vpd_serial(const unsigned char *page, size_t n);
/* How the whole disk `sysname` ("sda", "nvme0n1") is attached, from its place in sysfs: "nvme",
 * "usb" (an enclosure or bridge, whatever drive is inside), "sata", "scsi", "virtio", "mmc", "loop",
 * "virtual" (device mapper, md, zram); NULL when it cannot be told. */
const char *disk_transport(const char *sysname);
/* sysfs name ("loop0", "nvme0n1p2") of the block device with this dev_t, or -ENOENT. */
int sysfs_block_name(unsigned long long rdev, char **name);
/* True when the running system's root filesystem lives on this disk: preflight on the node itself,
 * where the profile's paths are measured live rather than through libext2fs. */
bool disk_holds_root(const struct disk *d);
