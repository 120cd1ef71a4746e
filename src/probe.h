/* SPDX-License-Identifier: MIT */
/* Filesystem identity through libblkid: type, UUID, LABEL at an offset; identifier resolution. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

struct fs_id {
	char type[32];   /* "ext4", "vfat"; "" when none found */
	char uuid[64];
	char label[64];
};

/* Probe the region [offset, offset+size) of the open device or image. */
int probe_fs(int fd, uint64_t offset, uint64_t size, struct fs_id *id);

/* A FAT boot sector's bytes per sector (offset 11, little-endian u16); -EINVAL when `boot` does
 * not end in 0x55 0xAA or the value is not 512, 1024, 2048 or 4096 (the values the FAT
 * specification and Linux's fs/fat accept). */
int fat_sector_size(const unsigned char boot[512], uint32_t *bps);
/* The same read from the boot sector at `offset` of the open device or image. */
int probe_fat_sector_size(int fd, uint64_t offset, uint32_t *bps);
/* Whether a filesystem of `fs_sector`-byte sectors (or blocks) works on a drive of `lba`-byte
 * logical blocks: Linux refuses a FAT whose sector is smaller ("FAT-fs: logical sector size too
 * small") and an ext4 whose block is, and each must be a whole number of the drive's blocks. */
static inline bool fs_sector_fits(uint32_t fs_sector, uint32_t lba)
{
	return lba && fs_sector >= lba && fs_sector % lba == 0;
}
