/* SPDX-License-Identifier: MIT */
/* ptable_check: literal tables against the problems sgdisk -v names (overlaps, order, bounds, overflow). */
#include "util.h"
#include "gpt.h"
#include "tap.h"

/* A GPT on 131,072 LBAs of 512 B: usable 34..131,038 (32 LBAs of entries at each end). */
static struct ptable gpt(struct part *p, size_t n)
{
	return (struct ptable){ .kind = PT_GPT, .lba_size = 512, .lba_count = 131072, .first_usable_lba = 34,
				.last_usable_lba = 131038, .backup_header_lba = 131071, .primary_ok = true,
				.backup_ok = true, .entries_lba = 2, .entries_lbas = 32, .parts = p, .nparts = n };
}

static size_t check(const struct ptable *t, const char *want)
{
	_cleanup_free_ char *why = NULL;
	size_t n = ptable_check(t, &why);

	if (want) {
		CHECK(why && strstr(why, want));
		if (!why || !strstr(why, want))
			fprintf(stderr, "got '%s', want '%s'\n", why ? why : "(none)", want);
	} else {
		CHECK(why == NULL);
		if (why)
			fprintf(stderr, "unexpected: %s\n", why);
	}
	return n;
}

int main(void)
{
	struct part p[4];
	struct ptable t;
	_cleanup_free_ struct part *many = NULL;

	/* sound: touching partitions, the first at the first usable LBA, the last at the last one */
	p[0] = (struct part){ .number = 1, .start_lba = 34, .end_lba = 2047 };
	p[1] = (struct part){ .number = 2, .start_lba = 2048, .end_lba = 131038 };
	t = gpt(p, 2);
	CHECK_U64(check(&t, NULL), 0);

	/* one LBA of overlap */
	p[1].start_lba = 2047;
	CHECK_U64(check(&t, "partitions 1 and 2 overlap (LBAs 34-2047 and 2047-131038)"), 1);
	p[1].start_lba = 2048;

	/* one LBA past the last usable LBA, then past the disk */
	p[1].end_lba = 131039;
	CHECK_U64(check(&t, "partition 2 ends at LBA 131039, past the last usable LBA 131038"), 1);
	p[1].end_lba = 131072;
	CHECK_U64(check(&t, "partition 2 ends at LBA 131072, past the disk's last LBA 131071"), 1);
	p[1].end_lba = 131038;

	/* one LBA before the first usable LBA */
	p[0].start_lba = 33;
	CHECK_U64(check(&t, "partition 1 begins at LBA 33, before the first usable LBA 34"), 1);
	p[0].start_lba = 34;

	/* a one-LBA partition is fine; one that ends before it begins is not */
	p[0].end_lba = 34;
	CHECK_U64(check(&t, NULL), 0);
	p[0].end_lba = 33;
	CHECK_U64(check(&t, "partition 1 ends (LBA 33) before it begins (LBA 34)"), 1);
	p[0].end_lba = 2047;

	/* (end + 1) * 512 past 2^63: the byte offset does not fit an off_t */
	p[1].end_lba = UINT64_MAX / 512;
	CHECK_U64(check(&t, "partition 2's end (LBA 36028797018963967) overflows 64-bit byte offsets"), 1);
	p[1].end_lba = 1ULL << 54; /* (2^54 + 1) * 512 = 2^63 + 512: fits a uint64, not an off_t */
	CHECK_U64(check(&t, "partition 2's end (LBA 18014398509481984) overflows 64-bit byte offsets"), 1);
	p[1].end_lba = (1ULL << 54) - 2; /* (2^54 - 1) * 512 = 2^63 - 512: past the disk, no overflow */
	CHECK_U64(check(&t, "partition 2 ends at LBA 18014398509481982, past the disk's last LBA 131071"), 1);
	p[1].end_lba = UINT64_MAX;
	CHECK_U64(check(&t, "overflows 64-bit byte offsets"), 1);
	p[1].end_lba = 131038;

	/* nested and listed out of order: a big partition holding two small ones overlaps both */
	p[0] = (struct part){ .number = 1, .start_lba = 5000, .end_lba = 6000 };
	p[1] = (struct part){ .number = 2, .start_lba = 100, .end_lba = 100000 };
	p[2] = (struct part){ .number = 3, .start_lba = 7000, .end_lba = 8000 };
	t = gpt(p, 3);
	CHECK_U64(check(&t, "partitions 2 and 1 overlap"), 2);
	CHECK_U64(check(&t, "partitions 2 and 3 overlap"), 2);

	/* the header: usable range backwards, past the disk, entries inside the usable range */
	p[0] = (struct part){ .number = 1, .start_lba = 2048, .end_lba = 4095 };
	t = gpt(p, 1);
	t.last_usable_lba = 131072;
	CHECK_U64(check(&t, "the GPT's last usable LBA 131072 is past the disk's last LBA 131071"), 1);
	t = gpt(p, 1);
	t.first_usable_lba = 33;
	CHECK_U64(check(&t, "the GPT's entry array (LBA 2, 32 LBAs) overlaps its usable LBAs from 33"), 1);
	t = gpt(p, 1);
	t.first_usable_lba = 131039;
	/* and partition 1 now begins before the first usable LBA */
	CHECK_U64(check(&t, "the GPT's first usable LBA 131039 is past its last usable LBA 131038"), 2);
	t = gpt(p, 1);
	t.backup_header_lba = 131072;
	CHECK_U64(check(&t, "the GPT's backup header LBA 131072 is past the disk's last LBA 131071"), 1);
	t = gpt(p, 1);
	t.entries_lba = UINT64_MAX - 1;
	CHECK_U64(check(&t, "the GPT's entry array"), 1);

	/* MBR: an extended container holding logical partitions is no overlap; LBA 0 is the MBR */
	p[0] = (struct part){ .number = 1, .start_lba = 2048, .end_lba = 10239 };
	p[1] = (struct part){ .number = 2, .start_lba = 10240, .end_lba = 131071, .container = true };
	p[2] = (struct part){ .number = 5, .start_lba = 12288, .end_lba = 20479 };
	p[3] = (struct part){ .number = 6, .start_lba = 22528, .end_lba = 30719 };
	t = (struct ptable){ .kind = PT_DOS, .lba_size = 512, .lba_count = 131072, .parts = p, .nparts = 4 };
	CHECK_U64(check(&t, NULL), 0);
	p[3].start_lba = 20000;
	CHECK_U64(check(&t, "partitions 5 and 6 overlap"), 1);
	p[3].start_lba = 22528;
	p[1].end_lba = 131072;
	CHECK_U64(check(&t, "partition 2 ends at LBA 131072, past the disk's last LBA 131071"), 1);
	p[1].end_lba = 131071;
	p[0].start_lba = 0;
	CHECK_U64(check(&t, "partition 1 begins at LBA 0, before the first usable LBA 1"), 1);
	p[0].start_lba = 2048;

	/* no table: nothing to check */
	t = (struct ptable){ .kind = PT_NONE, .lba_size = 512, .lba_count = 131072 };
	CHECK_U64(check(&t, NULL), 0);

	/* 65,536 entries (the most a header may hold), back to back, then one overlap at the end */
	many = xcalloc(65536, sizeof(*many));
	for (unsigned i = 0; i < 65536; i++)
		many[i] = (struct part){ .number = 65536 - i, .start_lba = 34 + 65535 - i, .end_lba = 34 + 65535 - i };
	t = gpt(many, 65536);
	CHECK_U64(check(&t, NULL), 0);
	many[0].start_lba--;
	CHECK_U64(check(&t, "partitions 65535 and 65536 overlap (LBAs 65568-65568 and 65568-65569)"), 1);
	return tap_done();
}
