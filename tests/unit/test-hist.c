/* SPDX-License-Identifier: MIT */
/* The latency histogram against exact nearest-rank percentiles of sorted samples. */
#include <math.h>
#include <stdlib.h>

#include "hist.h"
#include "tap.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;
static uint64_t rnd(void)
{
	/* splitmix64: fixed seed, so a failure reproduces */
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}
static double unif(void) { return (double)(rnd() >> 11) / 9007199254740992.0; }
static double gauss(void) { return sqrt(-2.0 * log(unif() + 1e-300)) * cos(2 * M_PI * unif()); }

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static const uint32_t ppms[] = { 500000, 900000, 990000, 999000, 999900 };

/* Every percentile within 0.5 % of the exact nearest-rank value; max exact; mean exact. */
static void check_dist(const char *name, uint64_t *v, size_t n)
{
	struct hist *h = malloc(sizeof(*h));
	uint64_t sum = 0;

	hist_init(h);
	for (size_t i = 0; i < n; i++) {
		hist_add(h, v[i]);
		sum += v[i];
	}
	qsort(v, n, sizeof(*v), cmp_u64);
	for (size_t k = 0; k < sizeof(ppms) / sizeof(ppms[0]); k++) {
		uint64_t rank = ((uint64_t)n * ppms[k] + 999999) / 1000000;
		uint64_t exact = v[rank - 1], got = hist_quantile(h, ppms[k]);
		double err = fabs((double)got - (double)exact) / (double)exact;

		if (err > 0.005)
			fprintf(stderr, "%s p%u: got %" PRIu64 " exact %" PRIu64 " err %.4f%%\n", name,
				ppms[k], got, exact, err * 100);
		CHECK(err <= 0.005);
	}
	CHECK_U64(hist_quantile(h, 1000000), v[n - 1]);
	CHECK_U64(h->max_ns, v[n - 1]);
	CHECK_U64(h->min_ns, v[0]);
	CHECK_U64(hist_mean(h), sum / n);
	CHECK_U64(h->count, n);
	free(h);
}

static void exact_ranks(void); /* at the end of the file */

int main(void)
{
	const size_t n = 200000;
	uint64_t *v = malloc(n * sizeof(*v));
	struct hist *h = malloc(sizeof(*h)), *h2 = malloc(sizeof(*h2));

	/* bucket geometry: contiguous, and no bucket wider than 1/256 of its lower bound */
	for (unsigned i = 1; i < HIST_BUCKETS - 1; i++) {
		CHECK(hist_bucket_low(i) == hist_bucket_high(i - 1) + 1);
		CHECK((hist_bucket_high(i) - hist_bucket_low(i)) * 256 <= hist_bucket_low(i));
		CHECK(hist_index(hist_bucket_low(i)) == i);
		CHECK(hist_index(hist_bucket_high(i)) == i);
	}
	CHECK(hist_index(HIST_MAX_NS) < HIST_BUCKETS - 1); /* 60 s still has a bounded bucket */
	CHECK_U64(hist_index(UINT64_MAX), HIST_BUCKETS - 1);
	/* every value from 1 us to 60 s: bucket midpoint within 0.5 % (0.2 % by construction) */
	for (int i = 0; i < 1000000; i++) {
		uint64_t x = 1000 + rnd() % (HIST_MAX_NS - 1000);
		unsigned idx = hist_index(x);
		uint64_t mid = hist_bucket_low(idx) + (hist_bucket_high(idx) - hist_bucket_low(idx)) / 2;
		double err = fabs((double)mid - (double)x) / (double)x;
		if (err > 0.005) {
			CHECK(err <= 0.005);
			break;
		}
	}

	/* uniform 1 us .. 10 ms */
	for (size_t i = 0; i < n; i++)
		v[i] = 1000 + rnd() % 9999000;
	check_dist("uniform", v, n);
	/* lognormal: median 100 us, sigma 1 (a real drive's shape) */
	for (size_t i = 0; i < n; i++)
		v[i] = (uint64_t)(100000.0 * exp(gauss()));
	check_dist("lognormal", v, n);
	/* bimodal: 98.5 % around 69 us (the hot-slice p50 of docs/incident.md), 1.5 % a 10 ms tail */
	for (size_t i = 0; i < n; i++)
		v[i] = rnd() % 1000 < 985 ? (uint64_t)(69000.0 * exp(0.2 * gauss()))
					  : (uint64_t)(10000000.0 * exp(0.1 * gauss()));
	check_dist("bimodal", v, n);

	/* clamp to the exact max: one sample, every percentile is that sample */
	hist_init(h);
	hist_add(h, 1183000);
	for (size_t k = 0; k < 5; k++)
		CHECK_U64(hist_quantile(h, ppms[k]), 1183000);
	/* a value past 60 s: the top bucket answers with the exact max */
	hist_add(h, 75000000000ULL);
	CHECK_U64(hist_quantile(h, 999000), 75000000000ULL);
	CHECK_U64(h->over_200ms, 1);
	CHECK_U64(h->over_1s, 1);
	CHECK_U64(h->over_5s, 1);
	/* the over-counters come from raw values: exactly 200 ms is not over 200 ms */
	hist_init(h);
	hist_add(h, 200000000ULL);
	hist_add(h, 200000001ULL);
	CHECK_U64(h->over_200ms, 1);
	/* empty */
	hist_init(h);
	CHECK_U64(hist_quantile(h, 500000), 0);
	CHECK_U64(hist_mean(h), 0);

	/* merge = one histogram of all samples */
	hist_init(h);
	hist_init(h2);
	for (int i = 0; i < 1000; i++)
		hist_add(i % 2 ? h : h2, 5000 + (uint64_t)i * 100);
	hist_merge(h, h2);
	CHECK_U64(h->count, 1000);
	CHECK_U64(h->min_ns, 5000);
	CHECK_U64(h->max_ns, 5000 + 999 * 100);
	CHECK(llabs((long long)hist_quantile(h, 500000) - 54900) <= 275);

	exact_ranks();

	/* the record's form: only the non-empty buckets, in order, their counts adding up to count */
	hist_init(h);
	hist_add(h, 100);
	hist_add(h, 100);
	hist_add(h, 70000);
	{
		json_object *o = hist_json(h), *bins = NULL, *b;

		CHECK(json_object_object_get_ex(o, "bins", &bins) && json_object_array_length(bins) == 2);
		b = json_object_array_get_idx(bins, 0);
		CHECK_U64(json_object_get_uint64(json_object_array_get_idx(b, 0)), 100);
		CHECK_U64(json_object_get_uint64(json_object_array_get_idx(b, 2)), 2);
		b = json_object_array_get_idx(bins, 1);
		CHECK(json_object_get_uint64(json_object_array_get_idx(b, 0)) <= 70000);
		CHECK(json_object_get_uint64(json_object_array_get_idx(b, 1)) >= 70000);
		CHECK_U64(json_object_get_uint64(json_object_array_get_idx(b, 2)), 1);
		CHECK_STR(json_object_get_string(json_object_object_get(o, "unit")), "ns");
		CHECK_U64(json_object_get_uint64(json_object_object_get(o, "count")), 3);
		json_object_put(o);
	}

	free(v);
	free(h);
	free(h2);
	return tap_done();
}

/* ---- exact ranks: literal figures, no tolerance ----
 * The tolerance above (0.5 %) is wider than a bucket, so a nearest rank off by one, or a quantile
 * answered with the next bucket's bound, would pass it. Here each percentile's rank falls exactly
 * on the edge of a group of equal samples, and the answer is a literal figure worked out by hand
 * from the layout in hist.h: values below 512 ns have a bucket each (the value itself); from 2^k
 * (k >= 9) on, buckets are 2^(k-8) wide and the answer is low + (width - 1) / 2, clamped to the
 * exact [min, max]:
 *   100 ns         its own bucket                          -> 100
 *   131072 = 2^17  bucket [131072, 131583], width 512     -> 131327
 *   1048576 = 2^20 bucket [1048576, 1052671], width 4096  -> 1050623
 *   5000000        bucket [4997120, 5013503] (305 * 2^14)  -> midpoint 5005311, clamped to max 5000000
 */
struct rank_group {
	uint64_t ns;
	unsigned count;
};

static void fill_groups(struct hist *h, const struct rank_group *g, size_t ng)
{
	hist_init(h);
	for (size_t i = 0; i < ng; i++)
		for (unsigned k = 0; k < g[i].count; k++)
			hist_add(h, g[i].ns);
}

static void exact_ranks(void)
{
	struct hist *h = malloc(sizeof(*h));

	/* bucket bounds: the last value of one bucket and the first of the next */
	CHECK_U64(hist_index(511), 511);
	CHECK_U64(hist_index(512), 512);
	CHECK_U64(hist_index(513), 512);  /* 512..1023: buckets 2 ns wide */
	CHECK_U64(hist_index(131071), 2559); /* shift 8: 8 * 256 + 511 */
	CHECK_U64(hist_index(131072), 2560); /* shift 9: 9 * 256 + 256 */
	CHECK_U64(hist_bucket_low(2560), 131072);
	CHECK_U64(hist_bucket_high(2560), 131583);
	CHECK_U64(hist_bucket_high(2559), 131071);

	/* N = 1000, each rank the LAST sample of its group: rank + 1 is the next group.
	 * ranks: 1-500 100 ns, 501-990 2^17, 991-999 2^20, 1000 5 ms */
	fill_groups(h, (const struct rank_group[]){ { 100, 500 }, { 131072, 490 }, { 1048576, 9 }, { 5000000, 1 } }, 4);
	CHECK_U64(hist_quantile(h, 500000), 100);      /* rank 500 */
	CHECK_U64(hist_quantile(h, 900000), 131327);   /* rank 900 */
	CHECK_U64(hist_quantile(h, 990000), 131327);   /* rank 990 */
	CHECK_U64(hist_quantile(h, 999000), 1050623);  /* rank 999 */
	CHECK_U64(hist_quantile(h, 999900), 5000000);  /* rank ceil(999.9) = 1000 */
	CHECK_U64(hist_quantile(h, 1000000), 5000000);
	CHECK_U64(hist_quantile(h, 1), 100);           /* rank 1, never 0 */
	CHECK_U64(hist_quantile_live(h, 500000), 100);
	CHECK_U64(hist_quantile_live(h, 990000), 131327);
	CHECK_U64(hist_quantile_live(h, 999000), 1050623);

	/* N = 1000, each rank the FIRST sample of its group: rank - 1 is the previous group.
	 * ranks: 1-499 100 ns, 500-989 2^17, 990-999 2^20, 1000 5 ms */
	fill_groups(h, (const struct rank_group[]){ { 100, 499 }, { 131072, 490 }, { 1048576, 10 }, { 5000000, 1 } }, 4);
	CHECK_U64(hist_quantile(h, 500000), 131327);   /* rank 500 */
	CHECK_U64(hist_quantile(h, 990000), 1050623);  /* rank 990 */
	CHECK_U64(hist_quantile(h, 999000), 1050623);  /* rank 999 */
	CHECK_U64(hist_quantile(h, 999900), 5000000);

	/* N = 999: nearest rank rounds UP (ceil(499.5) = 500), not down or to the nearest
	 * ranks: 1-499 100 ns, 500-999 2^17 */
	fill_groups(h, (const struct rank_group[]){ { 100, 499 }, { 131072, 500 } }, 2);
	CHECK_U64(hist_quantile(h, 500000), 131072);   /* 131327 clamped to the exact max */
	CHECK_U64(hist_quantile(h, 499000), 100);      /* ceil(498.501) = 499 */
	fill_groups(h, (const struct rank_group[]){ { 100, 499 }, { 131072, 499 }, { 1048576, 1 } }, 3);
	CHECK_U64(hist_quantile(h, 500000), 131327);   /* N = 999, rank 500 */
	CHECK_U64(hist_quantile(h, 999000), 1048576);  /* rank ceil(998.001) = 999: 1050623 clamped to max */

	/* a single sample on a bucket's first value: every percentile is the sample itself */
	fill_groups(h, (const struct rank_group[]){ { 131072, 1 } }, 1);
	CHECK_U64(hist_quantile(h, 500000), 131072);
	CHECK_U64(hist_quantile(h, 999000), 131072);
	free(h);
}
