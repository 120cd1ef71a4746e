/* SPDX-License-Identifier: MIT */
/* Fuzz target: fstab and crypttab text from a backup or a root (verify, restore's fstab check);
 * identifiers resolve through a stub that answers from the input (no device is probed). */
#include "fuzz.h"

#include "fstab.h"

static bool resolve(const char *tag, const char *value, void *userdata)
{
	(void)userdata;
	return tag && value && (strlen(value) & 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fstab_report rep = { 0 };
	char *s;

	if (size < 1)
		return 0;
	s = fuzz_str(data + 1, size - 1);
	(void)fstab_check(s, data[0] & 1, resolve, NULL, &rep);
	fstab_report_free(&rep);
	free(s);
	return 0;
}
