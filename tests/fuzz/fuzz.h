/* SPDX-License-Identifier: MIT */
/* Shared by the libFuzzer targets: the entry point and an input as a file that path-based parsers open. */
#pragma once

#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The input as an anonymous file (memfd): path-based parsers open "/proc/self/fd/N" like any
 * file, and nothing is left behind when the target crashes. Returns the fd (close it), -1 on error. */
static inline int fuzz_memfd(const void *data, size_t size, char path[64])
{
	int fd = memfd_create("fuzz", MFD_CLOEXEC);
	size_t off = 0;

	if (fd < 0)
		abort();
	while (off < size) {
		ssize_t n = write(fd, (const char *)data + off, size - off);
		if (n <= 0)
			abort();
		off += (size_t)n;
	}
	snprintf(path, 64, "/proc/self/fd/%d", fd);
	return fd;
}

/* A NUL-terminated copy (parsers of text take C strings). */
static inline char *fuzz_str(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}
