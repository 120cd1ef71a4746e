/* SPDX-License-Identifier: MIT */
/* Path 1 against the target (src/freshfit.c): the incident's figures at 2 TB, 1 TB and 200 MB, what
 * each kind of partition counts, and hostile counts that must saturate, never wrap into a fit. */
#include "freshfit.h"
#include "size.h"
#include "util.h"
#include "tap.h"

/* the incident's source (docs/incident.md): a 512 MiB ESP, an ext4 root of 499,968,337 blocks of
 * 4 KiB with 134,903,811 free (dumpe2fs of tests/cli/93-path1-fit.sh's image) */
#define ESP_BYTES 536870912ULL
#define ROOT_USED ((499968337ULL - 134903811ULL) * 4096ULL)
#define PKGS 477000065024ULL
#define CACHE 738000125952ULL
#define KEEP 110592ULL

static struct part parts[4];
static struct part_fs fs[4];

static void part(size_t i, uint64_t bytes, const char *type)
{
	parts[i] = (struct part){ .number = (unsigned)i + 1, .size_bytes = bytes };
	fs[i] = (struct part_fs){ 0 };
	snprintf(fs[i].id.type, sizeof(fs[i].id.type), "%s", type);
}

static void ext(size_t i, uint64_t blocks, uint64_t free_blocks, uint32_t bs)
{
	part(i, blocks * bs, "ext4");
	fs[i].is_ext = true;
	fs[i].ext.block_count = blocks;
	fs[i].ext.free_blocks = free_blocks;
	fs[i].ext.block_size = bs;
}

static struct layout incident(uint64_t target)
{
	struct layout l = { .table = { .parts = parts, .nparts = 2 }, .fs = fs };

	part(0, ESP_BYTES, "vfat");
	ext(1, 499968337, 134903811, 4096);
	CHECK(lba_geometry(target, 512, &l.tgt_geo) == 0);
	return l;
}

int main(void)
{
	const uint64_t stores[2] = { PKGS, CACHE };
	struct fresh_fit f;
	struct layout l;
	bool fits[2];
	uint64_t b;

	/* 2 TB: everything fits and adds up to what the source holds */
	l = incident(2000398934016ULL);
	fresh_fit(&l, PKGS + CACHE, KEEP, stores, 2, fits, &f);
	CHECK_U64(f.used_bytes, ESP_BYTES + ROOT_USED);
	CHECK_U64(f.install_bytes, ESP_BYTES + ROOT_USED - PKGS - CACHE - KEEP);
	CHECK_U64(f.need_bytes, f.install_bytes + KEEP);
	CHECK_U64(f.room_bytes, (3907029134ULL - 34 + 1) * 512);
	CHECK_U64(f.total_bytes, f.used_bytes);
	CHECK(f.possible && fits[0] && fits[1]);
	CHECK_U64(f.stores_missing, 0);

	/* 1 TB: path 1 and ~/flare-pkgs fit, ~/.cache/flare does not after them */
	l = incident(1000204886016ULL);
	fresh_fit(&l, PKGS + CACHE, KEEP, stores, 2, fits, &f);
	CHECK_U64(f.room_bytes, (1953525134ULL - 34 + 1) * 512);
	CHECK(f.possible && fits[0] && !fits[1]);
	CHECK_U64(f.total_bytes, f.need_bytes + PKGS);
	CHECK_U64(f.stores_missing, 1);

	/* 200 MB: path 1 does not fit, so no store does */
	l = incident(200000000ULL);
	fresh_fit(&l, PKGS + CACHE, KEEP, stores, 2, fits, &f);
	CHECK_U64(f.room_bytes, (390591ULL - 34 + 1) * 512);
	CHECK(!f.possible && !fits[0] && !fits[1]);
	CHECK_U64(f.stores_missing, 2);
	CHECK_U64(f.total_bytes, f.need_bytes);

	/* a store that was not measured is neither fitted nor counted missing */
	{
		const uint64_t un[2] = { FRESH_FIT_UNKNOWN, PKGS };

		l = incident(2000398934016ULL);
		fresh_fit(&l, PKGS, KEEP, un, 2, fits, &f);
		CHECK(!fits[0] && fits[1]);
		CHECK_U64(f.stores_missing, 0);
	}

	/* what each partition puts on the new drive */
	l = incident(2000398934016ULL);
	l.table.nparts = 4;
	part(2, 1ULL << 30, "swap");
	part(3, 1ULL << 40, "xfs");
	CHECK(fresh_fit_part(&l, 0, &b) && b == ESP_BYTES);
	CHECK(fresh_fit_part(&l, 1, &b) && b == ROOT_USED);
	CHECK(fresh_fit_part(&l, 2, &b) && b == 0);
	CHECK(!fresh_fit_part(&l, 3, &b));
	fresh_fit(&l, 0, 0, NULL, 0, NULL, &f);
	CHECK_U64(f.unmeasured, 1);
	CHECK_U64(f.used_bytes, ESP_BYTES + ROOT_USED);
	part(3, 1ULL << 40, "");
	parts[3].container = true;
	CHECK(fresh_fit_part(&l, 3, &b) && b == 0);
	part(3, 1ULL << 40, "ext4");
	fs[3].is_ext = true;
	fs[3].ext_err = -EUCLEAN;
	CHECK(!fresh_fit_part(&l, 3, &b));

	/* hostile counts: more free blocks than blocks is none used; blocks x block size past 2^64
	 * saturates, and a saturated need never fits, however large the target */
	ext(1, 100, 200, 4096);
	CHECK(fresh_fit_part(&l, 1, &b) && b == 0);
	ext(1, UINT64_MAX / 2, 0, 65536);
	CHECK(fresh_fit_part(&l, 1, &b) && b == UINT64_MAX);
	l.table.nparts = 2;
	l.tgt_geo = (struct lba_geometry){ .lba_size = 4096, .first_usable_lba = 0, .last_usable_lba = UINT64_MAX / 2 };
	fresh_fit(&l, 0, 0, NULL, 0, NULL, &f);
	CHECK_U64(f.room_bytes, UINT64_MAX);
	CHECK_U64(f.used_bytes, UINT64_MAX);
	CHECK(!f.possible);
	/* stores and irreplaceable files that add up past 2^64 leave no install, never a wrapped one */
	l = incident(2000398934016ULL);
	fresh_fit(&l, UINT64_MAX, UINT64_MAX, NULL, 0, NULL, &f);
	CHECK_U64(f.install_bytes, 0);
	CHECK_U64(f.need_bytes, UINT64_MAX);
	CHECK(!f.possible);
	/* a store past what is left after path 1 does not fit, nor does its sum wrap */
	{
		const uint64_t big[2] = { UINT64_MAX - 1, 1 };

		fresh_fit(&l, 0, 0, big, 2, fits, &f);
		CHECK(f.possible && !fits[0] && fits[1]);
		CHECK_U64(f.total_bytes, f.need_bytes + 1);
	}
	/* a target without usable LBAs holds nothing */
	l.tgt_geo = (struct lba_geometry){ .lba_size = 512, .first_usable_lba = 34, .last_usable_lba = 33 };
	fresh_fit(&l, 0, 0, NULL, 0, NULL, &f);
	CHECK_U64(f.room_bytes, 0);
	CHECK(!f.possible);
	return tap_done();
}
