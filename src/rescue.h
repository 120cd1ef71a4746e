/* SPDX-License-Identifier: MIT */
/* The rescue stick (swaptool-rescue(1)): what it carries, found on this machine (programs and their
 * library closure, the kernel and its modules, the loader, the records), its initramfs, its layout
 * (GPT: a FAT32 ESP, an ext4 state partition), its writing and the reading back of what was written. */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "fat.h"
#include "kmodules.h"
#include "util.h"

/* The state partition's ext4 label and GPT name, the ESP's, and the state directory inside it. */
#define RESCUE_STATE_LABEL "SWAPTOOL-STATE"
#define RESCUE_ESP_NAME "SWAPTOOL-ESP"
#define RESCUE_ESP_LABEL "SWAPTOOL"
#define RESCUE_STATE_DIR "swaptool"
/* 64 MiB: a few records of well under 1 MiB each, the unattended run's log, and room for the
 * operator's own notes; mke2fs makes it with 4 KiB blocks (16,384) */
#define RESCUE_STATE_BYTES (64ull << 20)
/* the partitions start and the image ends on MiB boundaries */
#define RESCUE_ALIGN (1ull << 20)
/* The stick's /init: rescue/init, embedded by meson (rescue/embed.py). */
extern const char rescue_init[];
extern const size_t rescue_init_len;

/* A program the stick carries: its name on $PATH and the Debian/Ubuntu package that has it. */
struct rescue_program {
	const char *name, *package;
};
extern const struct rescue_program rescue_programs[];
extern const size_t rescue_programs_n;
/* Kernel modules: those path 2 cannot do without (an error when the kernel has neither the module
 * nor the feature built in), and those it is better with (a keyboard on USB, vfat, crc32c in
 * hardware). */
extern const char *const rescue_modules_needed[];
extern const size_t rescue_modules_needed_n;
extern const char *const rescue_modules_wanted[];
extern const size_t rescue_modules_wanted_n;

/* A record the stick carries: STATE/STEP.json as read (and checked) by the caller. */
struct rescue_record {
	const char *step;
	char *text;
	size_t len;
};

/* One entry of the initramfs: a file copied from `src`, data, or a symlink to `link`. */
struct rescue_entry {
	char *dst;         /* inside, without the leading '/': "usr/sbin/e2fsck" */
	char *src;         /* the host's file, or NULL */
	char *link;        /* a symlink's target, or NULL */
	const char *data;  /* generated content (borrowed), or NULL */
	uint64_t bytes;
	unsigned mode;
};

struct rescue {
	/* the caller's */
	const char *kernel, *moddir, *loader, *self, *profile, *path_env, *hostname, *append, *built;
	struct rescue_record records[8];
	size_t nrecords;
	/* rescue_gather's */
	char *release;            /* the kernel's release: the modules directory's name */
	char *arch, *efi_name;    /* "x86_64", "BOOTX64.EFI": of this swaptool's own ELF machine */
	struct strlist programs;  /* the host's path of each of rescue_programs, in order */
	struct strlist libraries; /* their closure: interpreters and libraries */
	struct kmod_set modules;
	struct strlist modules_missing; /* wanted modules this kernel lacks */
	struct rescue_entry *entries;
	size_t nentries;
	uint64_t content_bytes;   /* the initramfs's files before the archive's headers and compression */
	char *modules_list, *generated[6];
	/* rescue_initramfs's: a memfd */
	int initrd_fd;
	uint64_t initrd_bytes, cpio_bytes;
	uint32_t cpio_entries;
	/* rescue_esp's: the files of the ESP */
	char boot_path[32]; /* "EFI/BOOT/BOOTX64.EFI" */
	struct fat_file esp[5];
	size_t nesp;
	char *loader_conf, *entry_conf;
	/* rescue_layout's, in LBAs of lba bytes, inclusive ends */
	uint32_t lba;
	uint64_t bytes, esp_first, esp_last, state_first, state_last;
};

void rescue_init_struct(struct rescue *r);
void rescue_free(struct rescue *r);

/* Every file the stick needs, found on this machine: the programs on r->path_env (-ENOENT, *why
 * naming the program and its package, when one is missing), their closure (elfdeps.h), the modules
 * under r->moddir (kmodules.h: a needed one neither there nor built in is -ENOENT naming it), the
 * kernel, the loader, the profile; the initramfs's entries listed. */
int rescue_gather(struct rescue *r, char **why);
/* The initramfs, a gzip-compressed newc cpio, into a memfd (r->initrd_fd); `progress` (may be NULL)
 * sees the archive's bytes so far against r->content_bytes. */
int rescue_initramfs(struct rescue *r, time_t t, void (*progress)(void *ud, uint64_t done, uint64_t total), void *ud,
		     char **why);
/* The ESP's files: the loader as EFI/BOOT/BOOTX64.EFI (BOOTAA64.EFI), loader/loader.conf, the
 * loader entry (the kernel arguments: r->append), the kernel and the initramfs. */
int rescue_esp(struct rescue *r, char **why);
/* The partitions for LBAs of `lba` bytes: the ESP sized for its files, the state partition, the
 * whole image in r->bytes (what a stick must hold at least). */
int rescue_layout(struct rescue *r, uint32_t lba, char **why);

/* Write the table and the ESP on the open image or device `fd` (of `disk_bytes`, at least r->bytes):
 * the first and last MiB zeroed (no old table or signature is left to confuse a reader), the GPT,
 * the FAT32. `disk_guid`, `esp_guid`, `state_guid`: the GUIDs to give (random ones from the caller). */
int rescue_write_table_esp(struct rescue *r, int fd, const char *path, uint64_t disk_bytes, time_t t, char **why);
/* The state partition: mke2fs -d of a directory holding RESCUE_STATE_DIR and the records, at its
 * offset of `path` (the image, or the device when the caller's hold is paused). */
int rescue_write_state(struct rescue *r, const char *path, char **why);

/* Read back what was written and add a check for each part to `checks` (objects with id, status,
 * summary, as record_check makes): "gpt" (the table as sgdisk -v checks it, and the partitions where
 * the layout put them), "esp" (every file's sha256 read back through the FAT), and, with
 * rescue_verify_state, "state" (e2fsck -fn clean, every record read back through libext2fs equal to
 * what was carried). Returns the number of failed checks. */
int rescue_verify_table_esp(struct rescue *r, int fd, const char *path, uint64_t disk_bytes, json_object *checks);
int rescue_verify_state(struct rescue *r, const char *path, json_object *checks);

/* Where the state partition of a stick or image open at `fd` lies: the GPT partition named
 * RESCUE_STATE_LABEL holding an ext4 labelled so, or the whole of `fd` when it is that ext4 itself
 * (a partition's device). -ENOENT with *why when there is none. */
int rescue_find_state(int fd, const char *path, uint64_t *offset, char **why);

/* Secure Boot as this machine's firmware says (`efivars`: /sys/firmware/efi/efivars): 1 on, 0 off,
 * -ENOENT when there is no such variable (no EFI, or efivarfs not mounted). */
int rescue_secure_boot(const char *efivars);

/* The initramfs's entries and the records as JSON for the step's record. */
json_object *rescue_json(const struct rescue *r);
