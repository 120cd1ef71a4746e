/* SPDX-License-Identifier: MIT */
/* Fuzz target: size and target specs (--target, --working-set, --seq-bytes, --sweep, counts). */
#include "fuzz.h"

#include "size.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint32_t lbas[] = { 512, 4096, 0, 520, 65536, 131072, 1, 0xffffffffu };
	uint32_t lba;
	char *s, buf[32];
	const char *why = NULL;
	uint64_t v = 0;
	struct lba_geometry g;

	if (size < 1)
		return 0;
	lba = lbas[data[0] & 7];
	s = fuzz_str(data + 1, size - 1);
	if (size_parse(s, lba, &v, &why) == 0) {
		/* whatever parses renders, and its geometry is computed without trapping */
		fmt_thousands(v, buf);
		fmt_tb(v, buf);
		fmt_tib(v, buf);
		fmt_decimal(v, buf);
		fmt_binary(v, buf);
		if (lba_size_valid(lba))
			(void)lba_geometry(v, lba, &g);
	}
	why = NULL;
	if (u64_parse(s, &v, &why) == 0)
		fmt_thousands_signed((int64_t)v, buf);
	free(s);
	return 0;
}
