/* SPDX-License-Identifier: MIT */
/* Size parser, LBA geometry and renderings, on the incident's numbers and the edges. */
#include "util.h"
#include "size.h"
#include "tap.h"

static uint64_t ok(const char *spec, uint32_t lba)
{
	uint64_t v = 0;
	const char *why = NULL;
	int r = size_parse(spec, lba, &v, &why);

	if (r < 0)
		fprintf(stderr, "size_parse('%s') refused: %s\n", spec, why);
	CHECK(r == 0);
	return v;
}

static void refused(const char *spec, int want_errno)
{
	uint64_t v = 0;
	const char *why = NULL;
	int r = size_parse(spec, 512, &v, &why);

	CHECK(r == -want_errno);
	CHECK(why != NULL);
}

int main(void)
{
	struct lba_geometry g;
	char buf[32];

	/* The target of docs/incident.md, every form. */
	CHECK_U64(ok("2000398934016", 512), 2000398934016ULL);
	CHECK_U64(ok("3907029168s", 512), 2000398934016ULL);
	CHECK_U64(ok("488378646s", 4096), 2000398934016ULL);
	CHECK_U64(ok("2TB", 512), 2000000000000ULL);
	CHECK_U64(ok("98GiB", 512), 98ULL << 30);
	CHECK_U64(ok("98G", 512), 98ULL << 30);
	CHECK_U64(ok("1.5KiB", 512), 1536);
	CHECK_U64(ok("2.048408248320TB", 512), 2048408248320ULL);
	CHECK_U64(ok("18446744073709551615", 512), UINT64_MAX);

	refused("1.819TiB", EINVAL);     /* inexact */
	refused("0", ERANGE);
	refused("0s", ERANGE);
	refused("-5", ERANGE);
	refused("18446744073709551616", EOVERFLOW);
	refused("16EiB", EINVAL);        /* unknown unit */
	refused("17179869184TiB", EOVERFLOW);
	refused("36028797018963968s", EOVERFLOW);
	refused("", EINVAL);
	refused("abc", EINVAL);
	refused("12 parsecs", EINVAL);
	refused("1.5s", EINVAL);

	/* Seed geometry (docs/design.md). */
	CHECK(lba_geometry(2048408248320ULL, 512, &g) == 0);
	CHECK_U64(g.lba_count, 4000797360ULL);
	CHECK_U64(g.last_lba, 4000797359ULL);
	CHECK_U64(g.last_usable_lba, 4000797326ULL);
	CHECK_U64(g.first_usable_lba, 34);
	CHECK(lba_geometry(2000398934016ULL, 512, &g) == 0);
	CHECK_U64(g.lba_count, 3907029168ULL);
	CHECK_U64(g.last_lba, 3907029167ULL);
	CHECK_U64(g.last_usable_lba, 3907029134ULL);
	/* 4096-byte LBAs: the entry array is 4 LBAs, first usable 6. */
	CHECK(lba_geometry(2000398934016ULL, 4096, &g) == 0);
	CHECK_U64(g.lba_count, 488378646ULL);
	CHECK_U64(g.first_usable_lba, 6);
	CHECK_U64(g.last_usable_lba, 488378646ULL - 1 - 1 - 4);
	CHECK(lba_geometry(4096, 512, &g) == -EINVAL);
	CHECK(lba_geometry(1 << 20, 520, &g) == -EINVAL);

	/* Checked arithmetic. */
	uint64_t v;
	CHECK(u64_mul(UINT64_MAX / 2 + 1, 2, &v) == -EOVERFLOW);
	CHECK(u64_add(UINT64_MAX, 1, &v) == -EOVERFLOW);
	CHECK(u64_sub(1, 2, &v) == -EOVERFLOW);
	CHECK(u64_mul(4000797360ULL, 512, &v) == 0 && v == 2048408248320ULL);

	CHECK_STR(fmt_thousands(2048408248320ULL, buf), "2,048,408,248,320");
	CHECK_STR(fmt_thousands(0, buf), "0");
	CHECK_STR(fmt_thousands_signed(-48009314304LL, buf), "-48,009,314,304");
	CHECK_STR(fmt_tb(2048408248320ULL, buf), "2.048 TB");
	CHECK_STR(fmt_tib(2048408248320ULL, buf), "1.863 TiB");
	CHECK_STR(fmt_tib(2000398934016ULL, buf), "1.819 TiB");
	CHECK_STR(fmt_binary(40ULL << 20, buf), "40 MiB");
	CHECK_STR(fmt_decimal(1215000000000ULL, buf), "1.215 TB");
	CHECK_STR(fmt_decimal(999, buf), "999 B");
	return tap_done();
}
