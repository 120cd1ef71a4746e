/* SPDX-License-Identifier: MIT */
/* A kernel's modules as depmod describes them (modules.dep, modules.builtin under /lib/modules/RELEASE):
 * the modules a set of names needs, dependencies first, for the rescue stick's initramfs. */
#pragma once

#include "util.h" /* struct strlist */

/* "xhci-pci", "xhci_pci" and ".../xhci-pci.ko.xz" are one module: its name, '-' written '_'. */
char *kmod_name(const char *name_or_path);

struct kmod_set {
	struct strlist files;   /* paths relative to the modules directory, in load order */
	struct strlist builtin; /* names asked for that are built into the kernel (nothing to load) */
	struct strlist missing; /* names asked for that are neither in modules.dep nor built in */
};

/*
 * The modules `names` need, read from `moddir`/modules.dep (and modules.builtin when there): each
 * module after the ones it depends on, each once. A name neither there nor built in goes to
 * missing, the caller judges it. modules.dep is outside input: a line whose path is absolute,
 * climbs with "..", or is not a .ko file is -EBADMSG with *why naming the line; a file over 64 MiB
 * is refused; a dependency cycle is -ELOOP. No modules.dep: -ENOENT, *why says to run depmod.
 */
int kmod_resolve(const char *moddir, const char *const *names, size_t n, struct kmod_set *out, char **why);
void kmod_set_free(struct kmod_set *s);
