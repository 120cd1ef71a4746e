/* SPDX-License-Identifier: MIT */
/* Fuzz target: the site profile (--profile FILE, INI through libinih) as profile_load reads it. */
#include "fuzz.h"

#include "profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];
	int fd = fuzz_memfd(data, size, path);
	struct profile *p = NULL;
	char *err = NULL;

	if (profile_load(path, &p, &err) == 0)
		profile_free(p);
	free(err);
	close(fd);
	return 0;
}
