/* SPDX-License-Identifier: MIT */
/* Whether two open disks or images reach the same bytes, decided by what the kernel says (inodes, device numbers, loop backing files, sysfs holders and slaves), never by path text; and exclusive holds for a clone. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * 1 when writing one of the two open files could change bytes of the other, 0 when not, a
 * negative errno when it cannot be told (then *why says what could not be read). Both
 * directions count: the target inside the source and the source inside the target.
 *
 * What reaches what, each step read from the kernel:
 *  - a regular file is its (st_dev, st_ino): hard links, bind mounts, /proc/self/fd and any
 *    other name of it are the same file;
 *  - a block device is its major:minor; a partition lies in its whole disk; a device-mapper or
 *    md device lies in its slaves (/sys/dev/block/M:m/slaves, followed transitively); a loop
 *    device lies in its backing file (LOOP_GET_STATUS64: lo_device/lo_inode, or lo_rdevice when
 *    it is over a block device);
 *  - a regular file lies in the block device of its filesystem (st_dev), when that is one.
 * Two devices that lie in the same disk or file count as overlapping even when their ranges
 * might not (two partitions of one disk, two loop devices at different offsets of one file):
 * the refusal errs on the safe side. Two different files of one filesystem do not overlap.
 * On overlap *why (when not NULL) names the shared storage ("the file with inode 12 on 7:0").
 * A directory stands for the files that will be created in it (an undo file on the source).
 */
int ident_overlap(int afd, int bfd, char **why);

/*
 * 1 when the bytes of `fd` are in use under another name, 0 when not, negative errno when it
 * cannot be told. Another name is a loop device over the same file: over `fd` itself when it
 * is an image, over its backing file when `fd` is (a partition of) a loop device (other than
 * that loop device). Such a loop device is in use when it or one of its partitions is claimed
 * (mounted, held by md/device-mapper, opened O_EXCL: the kernel's own "busy"), has holders, or
 * is open in another process. *why names the device and how it is used.
 */
int ident_in_use(int fd, char **why);

/* The loop devices bound to the file (dev, ino): their device numbers in *out (malloc'd). */
int ident_loops_over(dev_t dev, ino_t ino, dev_t **out, size_t *n);

/*
 * Who a disk or image is, to match a saved plan to the source by identity rather than by the
 * text of its path: "file MAJ:MIN INO" for a regular file, "block MAJ:MIN" for a block device,
 * "block MAJ:MIN file MAJ:MIN INO" for a loop device (with its backing file). ident_same: the
 * same file, the same device (and, for a loop device, still over the same file), or a loop
 * device and the file it is over.
 */
int ident_key_fd(int fd, char **key);
bool ident_key_same(const char *a, const char *b);

/*
 * A disk or image held for a whole clone. `anchor` is a plain read-only descriptor that pins
 * the inode (every reopen goes through /proc/self/fd/anchor, so a renamed or replaced path
 * cannot change what is written); `fd` is the descriptor that is read or written: opened
 * O_EXCL on a block device (the kernel refuses it while the device, a partition of it or a
 * holder is mounted or claimed, and refuses those to others while it is held), and locked with
 * flock(LOCK_EX|LOCK_NB) on an image file (another swaptool cannot take it).
 */
struct ident_hold {
	int anchor, fd;
	bool blk, write;
	char proc[48]; /* "/proc/PID/fd/ANCHOR": the held inode by a name a child process can open */
};
#define IDENT_HOLD_INIT { .anchor = -1, .fd = -1 }

/* Open `path` (a block device or a regular file; -ENOTBLK otherwise) without blocking and
 * without claiming it: the anchor only. */
int ident_hold_open(const char *path, bool write, struct ident_hold *h);
/* Claim it: -EBUSY when it is mounted, claimed or locked elsewhere. */
int ident_hold_claim(struct ident_hold *h);
/* A tool that claims a block device itself (e2fsck -fy, resize2fs open it O_EXCL) cannot run
 * while it is held: pause drops the claim on a block device (an image keeps its lock, the tools
 * do not flock), resume takes it back on the same inode. */
void ident_hold_pause(struct ident_hold *h);
int ident_hold_resume(struct ident_hold *h);
void ident_hold_close(struct ident_hold *h);
