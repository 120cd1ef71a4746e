/* SPDX-License-Identifier: MIT */
/* Filesystem identity through libblkid: type, UUID, LABEL at an offset; identifier resolution. */
#pragma once

#include <stdint.h>

struct fs_id {
	char type[32];   /* "ext4", "vfat"; "" when none found */
	char uuid[64];
	char label[64];
};

/* Probe the region [offset, offset+size) of the open device or image. */
int probe_fs(int fd, uint64_t offset, uint64_t size, struct fs_id *id);
