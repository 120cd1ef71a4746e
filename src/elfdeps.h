/* SPDX-License-Identifier: MIT */
/* What an ELF program needs to run elsewhere: its interpreter and the shared libraries its DT_NEEDED
 * entries name, resolved as the dynamic loader does (RUNPATH/RPATH, /etc/ld.so.conf, the default
 * directories), transitively: the rescue stick's programs and their closure. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "util.h"

struct elf_info {
	unsigned char cls;      /* 1: 32-bit, 2: 64-bit (EI_CLASS) */
	unsigned char data;     /* 1: little-endian, 2: big-endian (EI_DATA) */
	uint16_t machine;       /* e_machine: 62 x86-64, 183 aarch64 */
	char *interp;           /* PT_INTERP ("/lib64/ld-linux-x86-64.so.2"); NULL when static */
	struct strlist needed;  /* DT_NEEDED names, in order */
	struct strlist runpath; /* DT_RUNPATH's directories, else DT_RPATH's; "$ORIGIN" left as it is */
};

/* Read the ELF headers of the open file: every offset and count is checked against the file's size
 * before it is used (a truncated or hostile file is -ENOEXEC with *why saying what is wrong). A file
 * that is no ELF at all (a script) is -ENOEXEC with *why "it is not an ELF file". */
int elf_read(int fd, struct elf_info *e, char **why);
void elf_info_free(struct elf_info *e);

/* The directories the dynamic loader searches after an object's own RUNPATH: those of `conf`
 * (/etc/ld.so.conf and the files its `include` lines name, relative to its directory), then /lib
 * and /usr/lib (and /lib64, /usr/lib64). A missing conf leaves the defaults. */
void elf_libdirs(const char *conf, struct strlist *dirs);

/* Every file the programs in `roots` need to start, beyond themselves: interpreters and libraries,
 * each once, by the path it was found at (a symlink's name, as the loader opens it), in the order
 * found. A library is taken only when its class and machine match the object that needs it, as the
 * loader skips others. -ENOENT with *why naming the library and who needs it when one is nowhere. */
int elf_closure(const struct strlist *roots, const struct strlist *libdirs, struct strlist *files, char **why);
