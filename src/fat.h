/* SPDX-License-Identifier: MIT */
/* FAT32 for the rescue stick's EFI system partition: written whole from a list of files (no mount, no
 * mtools), and read back by path to prove what was written. Microsoft's "FAT: General Overview of
 * On-Disk Format" (1.03) is the reference: its BPB, FSInfo, directory entries and long names. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* A file of the new filesystem: `path` relative to the root ("EFI/BOOT/BOOTX64.EFI", its directories
 * made as needed; a name is printable ASCII without / \ : * ? " < > |), its bytes read from `fd` at
 * offset 0 to exactly `size`. fat_write sets sha256 to the hash of what it wrote. */
struct fat_file {
	const char *path;
	int fd;
	uint64_t size;
	char sha256[65];
};

/* The smallest FAT32 in `sector`-byte sectors, a whole number of MiB, that holds `files` (their
 * sizes and paths: cluster slack and directories counted) with at least 65,525 clusters, as FAT32
 * needs; 0 when the paths are no good (fat_write says why). */
uint64_t fat_min_bytes(const struct fat_file *files, size_t n, uint32_t sector);

/*
 * Write a FAT32 of `bytes` at `offset` of `fd` (sector size `sector`: 512 or 4096, the drive's logical
 * block) holding `files`: boot sector, FSInfo and their backups at sectors 6 and 7, both FATs, the
 * directories and the files in contiguous clusters, dated `t`, volume `label` (at most 11
 * characters, upper-cased) with serial `volume_id`. `hidden` is the partition's first LBA (the
 * BPB's hidden sectors). Only the filesystem's own bytes are written (free clusters are not
 * zeroed). -ENOSPC with *why giving the size needed when the files do not fit.
 */
int fat_write(int fd, uint64_t offset, uint64_t bytes, uint32_t sector, uint32_t hidden, const char *label,
	      uint32_t volume_id, time_t t, struct fat_file *files, size_t n, char **why);

/*
 * Read back the FAT32 at `offset` (at most `bytes` long): the boot sector checked against the region
 * (every count and offset with overflow checks: the bytes are as hostile as any disk's), the two
 * FATs equal, then the file at `path` found through the directories (long names, case-insensitive,
 * their checksums checked) and its cluster chain followed to its size, without loops or clusters
 * outside the filesystem: its sha256 and size. -ENOENT when the path is not there, -EBADMSG with
 * *why when the filesystem is not sound.
 */
int fat_file_sha256(int fd, uint64_t offset, uint64_t bytes, const char *path, char hex[65], uint64_t *size, char **why);
