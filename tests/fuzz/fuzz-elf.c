/* SPDX-License-Identifier: MIT */
/* Fuzz target: ELF headers as the rescue stick reads its programs' (elf_read, src/elfdeps.h): the
 * program headers, the interpreter, the dynamic section and its string table, every offset and count
 * checked against the file. */
#include "fuzz.h"

#include "elfdeps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];
	int fd = fuzz_memfd(data, size, path);
	struct elf_info e;
	char *why = NULL;

	if (elf_read(fd, &e, &why) == 0) {
		/* what a reader does with the result: every string is a C string */
		for (size_t i = 0; i < e.needed.n; i++)
			(void)strlen(e.needed.v[i]);
		for (size_t i = 0; i < e.runpath.n; i++)
			(void)strlen(e.runpath.v[i]);
		elf_info_free(&e);
	}
	free(why);
	close(fd);
	return 0;
}
