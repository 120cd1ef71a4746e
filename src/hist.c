/* SPDX-License-Identifier: MIT */
/* The log-linear latency histogram: bucket arithmetic, merge, quantiles. */
#include "hist.h"

#include <string.h>

#include "json.h"

void hist_init(struct hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min_ns = UINT64_MAX;
}

unsigned hist_index(uint64_t ns)
{
	return hist_index_inline(ns);
}

uint64_t hist_bucket_low(unsigned idx)
{
	unsigned shift;

	if (idx < 2 * HIST_SUB)
		return idx;
	shift = idx / HIST_SUB - 1;
	return (uint64_t)(idx - shift * HIST_SUB) << shift;
}

uint64_t hist_bucket_high(unsigned idx)
{
	unsigned shift;

	if (idx < 2 * HIST_SUB)
		return idx;
	if (idx == HIST_BUCKETS - 1)
		return UINT64_MAX;
	shift = idx / HIST_SUB - 1;
	return hist_bucket_low(idx) + (1ULL << shift) - 1;
}

void hist_merge(struct hist *dst, const struct hist *src)
{
	if (!src->count)
		return;
	for (unsigned i = 0; i < HIST_BUCKETS; i++)
		dst->b[i] += src->b[i];
	dst->count += src->count;
	dst->sum_ns += src->sum_ns;
	if (src->min_ns < dst->min_ns)
		dst->min_ns = src->min_ns;
	if (src->max_ns > dst->max_ns)
		dst->max_ns = src->max_ns;
	dst->over_200ms += src->over_200ms;
	dst->over_1s += src->over_1s;
	dst->over_5s += src->over_5s;
}

static uint64_t quantile(const struct hist *h, uint32_t ppm, bool live)
{
	uint64_t n = live ? __atomic_load_n(&h->count, __ATOMIC_RELAXED) : h->count;
	uint64_t rank, seen = 0, v = 0;
	unsigned i;

	if (!n)
		return 0;
	if (ppm > 1000000)
		ppm = 1000000;
	/* nearest rank: ceil(n * ppm / 1e6), at least 1; n < 2^44 keeps the product exact */
	rank = (n * ppm + 999999) / 1000000;
	if (rank == 0)
		rank = 1;
	for (i = 0; i < HIST_BUCKETS; i++) {
		seen += live ? __atomic_load_n(&h->b[i], __ATOMIC_RELAXED) : h->b[i];
		if (seen >= rank)
			break;
	}
	if (i == HIST_BUCKETS)
		i = HIST_BUCKETS - 1;
	if (i == HIST_BUCKETS - 1)
		v = h->max_ns; /* the open-ended top bucket has no midpoint */
	else
		v = hist_bucket_low(i) + (hist_bucket_high(i) - hist_bucket_low(i)) / 2;
	if (!live) {
		if (v > h->max_ns)
			v = h->max_ns;
		if (v < h->min_ns)
			v = h->min_ns;
		if (ppm == 1000000)
			v = h->max_ns;
	}
	return v;
}

uint64_t hist_quantile(const struct hist *h, uint32_t ppm)
{
	return quantile(h, ppm, false);
}

uint64_t hist_quantile_live(const struct hist *h, uint32_t ppm)
{
	return quantile(h, ppm, true);
}

uint64_t hist_mean(const struct hist *h)
{
	return h->count ? h->sum_ns / h->count : 0;
}

json_object *hist_json(const struct hist *h)
{
	json_object *o = json_object_new_object(), *bins = json_object_new_array();

	for (unsigned i = 0; i < HIST_BUCKETS && h->count; i++) {
		json_object *b;

		if (!h->b[i])
			continue;
		b = json_object_new_array();
		json_object_array_add(b, json_object_new_uint64(hist_bucket_low(i)));
		json_object_array_add(b, json_object_new_uint64(hist_bucket_high(i)));
		json_object_array_add(b, json_object_new_uint64(h->b[i]));
		json_object_array_add(bins, b);
	}
	jset_str(o, "unit", "ns");
	jset_u64(o, "count", h->count);
	json_object_object_add(o, "bins", bins);
	return o;
}
