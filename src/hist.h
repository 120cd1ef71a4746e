/* SPDX-License-Identifier: MIT */
/* A log-linear latency histogram: integer-only recording, 1 us..60 s at <= 0.5 % relative error. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include <json-c/json.h>

/*
 * Values are nanoseconds. Below 2 * HIST_SUB (512 ns) every value has its own bucket;
 * above, each power of two is cut into HIST_SUB = 256 equal buckets, so a bucket is at most
 * 1/256 = 0.39 % of its lower bound wide and its midpoint is within 0.2 % of any value in
 * it (the issue asks <= 0.5 %). 60 s = 6e10 ns has its top bit at 2^35, shift 27:
 * 27 * 256 + 511 + 1 = 7424 buckets (58 KiB per histogram). Longer values land in the last
 * bucket; the exact max is kept beside the buckets, and percentiles are clamped to it.
 */
#define HIST_SUB_BITS 8
#define HIST_SUB (1u << HIST_SUB_BITS)
#define HIST_MAX_NS 60000000000ULL
#define HIST_BUCKETS 7424u

struct hist {
	uint64_t count;
	uint64_t sum_ns;  /* exact; 2^64 ns is 584 years of summed latency */
	uint64_t min_ns;  /* UINT64_MAX while empty */
	uint64_t max_ns;
	uint64_t over_200ms, over_1s, over_5s; /* from the raw values, not the buckets */
	uint64_t b[HIST_BUCKETS];
};

void hist_init(struct hist *h);

/* Bucket index of a value: inline, it is computed for every read the harness times. */
static inline unsigned hist_index_inline(uint64_t ns)
{
	unsigned msb, shift, idx;

	if (ns < 2 * HIST_SUB)
		return (unsigned)ns;
	msb = 63u - (unsigned)__builtin_clzll(ns);
	shift = msb - HIST_SUB_BITS; /* >= 1 here: ns >= 512 has msb >= 9 */
	idx = shift * HIST_SUB + (unsigned)(ns >> shift);
	return idx < HIST_BUCKETS ? idx : HIST_BUCKETS - 1;
}
/* The same, out of line (the unit tests). */
unsigned hist_index(uint64_t ns);
/* Lowest and highest value a bucket holds. */
uint64_t hist_bucket_low(unsigned idx);
uint64_t hist_bucket_high(unsigned idx);

/* Hot path: integer operations only. Counters are stored with relaxed atomics so that a
 * progress reader on another thread sees torn-free values without locks (plain moves on x86). */
static inline void hist_add(struct hist *h, uint64_t ns)
{
	unsigned i = hist_index_inline(ns);

	__atomic_store_n(&h->b[i], h->b[i] + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&h->count, h->count + 1, __ATOMIC_RELAXED);
	h->sum_ns += ns;
	if (ns < h->min_ns)
		h->min_ns = ns;
	if (ns > h->max_ns)
		h->max_ns = ns;
	/* one compare on every read; the rare slow ones take the other two */
	if (__builtin_expect(ns > 200000000ULL, 0)) {
		h->over_200ms++;
		h->over_1s += ns > 1000000000ULL;
		h->over_5s += ns > 5000000000ULL;
	}
}

/* Add `src` into `dst` (per-thread histograms merged at the end). */
void hist_merge(struct hist *dst, const struct hist *src);
/*
 * The value at quantile ppm/1e6 by nearest rank (the ceil(q * n)-th smallest sample), as the
 * midpoint of its bucket clamped to the exact [min, max]: ppm 1000000 is the exact max.
 * 0 when empty.
 */
uint64_t hist_quantile(const struct hist *h, uint32_t ppm);
/* Same, reading the buckets of a histogram another thread is still filling (progress line). */
uint64_t hist_quantile_live(const struct hist *h, uint32_t ppm);
/* Mean in ns, rounded down; 0 when empty. */
uint64_t hist_mean(const struct hist *h);

/* The record's form of a histogram, as fio's json+ gives its clat bins: {unit "ns", count, bins:
 * [[lowest ns, highest ns, count]...]} with the non-empty buckets only; their counts add up to count. */
json_object *hist_json(const struct hist *h);
