/* SPDX-License-Identifier: MIT */
/* The engine predicted from accept's measurements: a prefill chunk's reads against the spin limit. */
#include "util.h"
#include "predict.h"

#include <math.h>

#include "record.h"

/*
 * Why a slow drive kills the engine (docs/incident.md): FLARE reads the Engram shard with 4 KiB
 * random reads, 6,490,000 of them for a 157,000-token prefill, 41.34 a token. The prefill runs in
 * 4096-token chunks, so one chunk is ceil(4096 * 6,490,000 / 157,000) = 169,319 reads (the
 * write-up's "about 170 K"), 693.5 MB of 4 KiB reads (its "about 680 MB" counts 170 K reads of
 * 4 KB). While one rank reads, the others spin in the collective, and past its spin limit (8 to
 * 20 s) the collective times out. So the chunk's time at the drive's IOPS decides:
 *
 *   XG7000 at 98 GB, 16 in flight   12.9 K IOPS   169,319 / 12,900  = 13.1 s   past 8 s: fail
 *   XG7000, 64 in flight             24.8 K IOPS                       6.8 s   1.17x: warn
 *   healthy reference, 16 in flight  80 K IOPS                         2.1 s   3.8x: pass
 *   healthy reference, 64 in flight  204 K IOPS                        0.83 s  9.6x: pass
 *
 * The status takes the LOW end of the spin limit (8 s): the limit is not known closer than 8-20 s,
 * and a chunk that fits only the high end times out on some nodes. Under 2x margin is a warning,
 * a judgement rather than a measurement: the run samples 15-20 s of a prefill that lasts minutes
 * (the 157,000-token cold prompt is 6,490,000 reads: 81 s at 80 K IOPS, 503 s at 12.9 K), so a
 * stretch slower than the slowest it saw is to be expected.
 *
 * A mean hides stretches where the drive is slower, and one slow chunk is enough for a timeout.
 * So the worst chunk is read from the run's per-second counts (io.h: per_second[i] reads
 * completed in second i of the measured window). Within a second the reads are taken as evenly
 * spread, so C(t), the reads completed by time t, rises linearly inside each second. The worst
 * chunk time is the longest stretch [s, e] of the series, on or between second boundaries, over
 * which at most one chunk's reads (R) completed:
 *
 *   worst = max { e - s : 0 <= s <= e <= n, C(e) - C(s) <= R }
 *
 * A chunk whose reads fell in that stretch could not have finished sooner, whatever second it
 * started in; a second with no reads at all (a stall) lies wholly inside such a stretch. Between
 * second boundaries e - s is linear in s (the two rates are constant), so the maximum lies where
 * s or e is on a boundary: for each boundary i taken as a start, the latest e with
 * C(e) <= C(i) + R; for each boundary j taken as an end, the earliest s with C(s) >= C(j) - R. Two
 * pointers over the prefix sums find both in O(n). Only stretches that hold all R reads count
 * (the others are shorter than one that does, once the series holds R reads at all).
 *
 * A series that holds fewer than R reads in all (a short run at a slow drive: 15 s at 5 K IOPS is
 * 75 K reads) has no chunk in it: -ENODATA says so, and predict_engine takes the chunk at the
 * run's mean IOPS as the worst, marked as such (worst_chunk_basis "mean_iops").
 */

void predict_workload_defaults(struct predict_workload *w)
{
	*w = (struct predict_workload){
		.measured_reads = 6490000,
		.measured_tokens = 157000,
		.chunk_tokens = 4096,
		.read_bytes = 4096,
		.spin_low_s = 8,
		.spin_high_s = 20,
		.cold_prompt_tokens = 157000,
	};
}

int predict_workload_check(const struct predict_workload *w, char **why)
{
	if (!w)
		return set_why(why, -EINVAL, "no workload model");
	if (!w->measured_reads || !w->measured_tokens)
		return set_why(why, -EINVAL, "the workload's measured reads and tokens must not be 0");
	if (!w->chunk_tokens || !w->read_bytes || !w->cold_prompt_tokens)
		return set_why(why, -EINVAL, "the workload's chunk tokens, read size and cold prompt must not be 0");
	if (!w->spin_low_s || w->spin_low_s > w->spin_high_s)
		return set_why(why, -EINVAL, "the workload's spin limit %" PRIu64 "-%" PRIu64 " s is not 1 s or more, "
			       "low end first", w->spin_low_s, w->spin_high_s);
	return 0;
}

double predict_reads_per_token(const struct predict_workload *w)
{
	if (predict_workload_check(w, NULL) < 0)
		return NAN;
	return (double)w->measured_reads / (double)w->measured_tokens;
}

/* ceil(tokens * measured_reads / measured_tokens), without wrapping. */
static int reads_for(const struct predict_workload *w, uint64_t tokens, uint64_t *out)
{
	uint64_t prod, q;
	int r = predict_workload_check(w, NULL);

	if (r < 0)
		return r;
	r = u64_mul(tokens, w->measured_reads, &prod);
	if (r < 0)
		return r;
	q = prod / w->measured_tokens;
	*out = q + (prod % w->measured_tokens != 0);
	return 0;
}

int predict_reads_per_chunk(const struct predict_workload *w, uint64_t *out)
{
	return reads_for(w, w ? w->chunk_tokens : 0, out);
}

int predict_chunk_bytes(const struct predict_workload *w, uint64_t *out)
{
	uint64_t reads;
	int r = predict_reads_per_chunk(w, &reads);

	return r < 0 ? r : u64_mul(reads, w->read_bytes, out);
}

int predict_cold_prompt_reads(const struct predict_workload *w, uint64_t *out)
{
	return reads_for(w, w ? w->cold_prompt_tokens : 0, out);
}

int predict_seconds(uint64_t reads, double iops, double *out)
{
	if (!isfinite(iops) || iops < 0)
		return -EINVAL;
	*out = iops == 0 ? INFINITY : (double)reads / iops;
	return 0;
}

int predict_chunk_s(const struct predict_workload *w, double iops, double *out)
{
	uint64_t reads;
	int r = predict_reads_per_chunk(w, &reads);

	return r < 0 ? r : predict_seconds(reads, iops, out);
}

int predict_cold_prompt_s(const struct predict_workload *w, double iops, double *out)
{
	uint64_t reads;
	int r = predict_cold_prompt_reads(w, &reads);

	return r < 0 ? r : predict_seconds(reads, iops, out);
}

/* C(t) = the reads completed by time t, from the prefix sums P (P[k] = C(k)). The latest t with
 * C(t) <= target, given P[k] <= target < P[k + 1] (or k == n). */
static double latest_at(const uint64_t *ps, const uint64_t *P, size_t n, size_t k, uint64_t target)
{
	if (k == n)
		return (double)n;
	return (double)k + (double)(target - P[k]) / (double)ps[k];
}

/* The earliest t with C(t) >= target, given P[k] < target <= P[k + 1]. */
static double earliest_at(const uint64_t *ps, const uint64_t *P, size_t k, uint64_t target)
{
	return (double)k + (double)(target - P[k]) / (double)ps[k];
}

int predict_worst_chunk_s(const struct predict_workload *w, const uint64_t *per_second, size_t n, double *out,
			  double *start_s, char **why)
{
	_cleanup_free_ uint64_t *P = NULL;
	uint64_t R;
	double worst = -1, at = 0;
	size_t k;
	int r;

	r = predict_reads_per_chunk(w, &R);
	if (r < 0)
		return set_why(why, r, "the workload model gives no chunk size");
	if (!per_second || n == 0)
		return set_why(why, -ENODATA, "no per-second counts: the run has no whole second measured");
	if (n > SIZE_MAX / sizeof(*P) - 1)
		return set_why(why, -EOVERFLOW, "%zu seconds of counts are too many", n);
	P = xcalloc(n + 1, sizeof(*P));
	for (size_t i = 0; i < n; i++)
		if (u64_add(P[i], per_second[i], &P[i + 1]) < 0)
			return set_why(why, -EOVERFLOW, "the per-second counts add up past 64 bits");
	if (P[n] < R)
		return set_why(why, -ENODATA, "the run's %zu s of per-second counts hold %" PRIu64 " reads, fewer than "
			       "one chunk's %" PRIu64, n, P[n], R);

	/* starts on a boundary i: the latest end holding at most R reads after it */
	k = 0;
	for (size_t i = 0; i <= n && P[n] - P[i] >= R; i++) {
		uint64_t target = P[i] + R; /* <= P[n]: no overflow */
		double e;

		if (k < i)
			k = i;
		while (k < n && P[k + 1] <= target)
			k++;
		e = latest_at(per_second, P, n, k, target);
		if (e - (double)i > worst)
			worst = e - (double)i, at = (double)i;
	}
	/* ends on a boundary j: the earliest start holding at most R reads before it */
	k = 0;
	for (size_t j = 0; j <= n; j++) {
		uint64_t target;
		double s;

		if (P[j] < R)
			continue;
		target = P[j] - R;
		if (target == 0) {
			s = 0;
		} else {
			/* the last k with P[k] < target; P[0] = 0 < target */
			while (k + 1 <= j && P[k + 1] < target)
				k++;
			s = earliest_at(per_second, P, k, target);
		}
		if ((double)j - s > worst)
			worst = (double)j - s, at = s;
	}
	*out = worst;
	if (start_s)
		*start_s = at;
	return 0;
}

const char *predict_status_name(enum predict_status s)
{
	return s == PREDICT_PASS ? "pass" : s == PREDICT_WARN ? "warn" : "fail";
}

enum predict_status predict_status_of(const struct predict_workload *w, double worst_s)
{
	double low = w ? (double)w->spin_low_s : 0;

	/* NaN compares false: written so that it fails */
	if (!(worst_s <= low) || low <= 0)
		return PREDICT_FAIL;
	if (worst_s * 2 > low)
		return PREDICT_WARN;
	return PREDICT_PASS;
}

void prediction_clear(struct prediction *p)
{
	if (!p)
		return;
	free(p->summary);
	*p = (struct prediction){ 0 };
}

/* "6.83 s", "13.1 s", "503 s", "forever (no reads completed)" */
static char *secs(double s)
{
	if (!isfinite(s))
		return xstrdup("forever (no reads completed)");
	return xasprintf(s < 10 ? "%.2f s" : s < 100 ? "%.1f s" : "%.0f s", s);
}

int predict_engine(const struct predict_workload *w, double iops, const uint64_t *per_second, size_t n,
		   struct prediction *out, char **why)
{
	_cleanup_free_ char *series_why = NULL, *worst = NULL, *cold = NULL, *verdict = NULL, *basis = NULL;
	struct prediction p = { .iops = iops, .worst_start_s = NAN };
	int r;

	r = predict_workload_check(w, why);
	if (r < 0)
		return r;
	if (!isfinite(iops) || iops < 0)
		return set_why(why, -EINVAL, "the run's IOPS is not a number of 0 or more");
	r = predict_reads_per_chunk(w, &p.reads_per_chunk);
	if (r == 0)
		r = predict_chunk_bytes(w, &p.chunk_bytes);
	if (r == 0)
		r = predict_cold_prompt_reads(w, &p.cold_prompt_reads);
	if (r < 0)
		return set_why(why, r, "the workload model's reads do not fit in 64 bits");
	p.reads_per_token = predict_reads_per_token(w);
	predict_seconds(p.reads_per_chunk, iops, &p.chunk_s);
	predict_seconds(p.cold_prompt_reads, iops, &p.cold_prompt_s);

	r = predict_worst_chunk_s(w, per_second, n, &p.worst_chunk_s, &p.worst_start_s, &series_why);
	if (r == 0)
		p.worst_from_series = true;
	else if (r == -ENODATA) {
		p.worst_chunk_s = p.chunk_s;
		p.worst_start_s = NAN;
		basis = xasprintf("at the run's mean IOPS (%s) it", series_why);
	} else
		return set_why(why, r, "%s", series_why);

	p.margin = isfinite(p.worst_chunk_s) && p.worst_chunk_s > 0 ? (double)w->spin_low_s / p.worst_chunk_s : 0;
	p.status = predict_status_of(w, p.worst_chunk_s);

	worst = secs(p.worst_chunk_s);
	cold = secs(p.cold_prompt_s);
	if (p.status == PREDICT_FAIL)
		verdict = xasprintf("past the %" PRIu64 " s low end of the collective's %" PRIu64 "-%" PRIu64
				    " s spin limit: the engine would hit a collective timeout", w->spin_low_s,
				    w->spin_low_s, w->spin_high_s);
	else
		verdict = xasprintf("%.2fx inside the %" PRIu64 " s low end of the collective's %" PRIu64 "-%" PRIu64
				    " s spin limit%s", floor(p.margin * 100) / 100, w->spin_low_s, w->spin_low_s,
				    w->spin_high_s, p.status == PREDICT_WARN ? ", under the 2x margin" : "");
	p.summary = xasprintf("a %" PRIu64 "-token prefill chunk is %" PRIu64 " reads of %" PRIu64 " bytes (%.1f MB); "
			      "%s takes %s, %s; the %" PRIu64 "-token cold prompt "
			      "(%" PRIu64 " reads) takes %s at the run's %.0f IOPS",
			      w->chunk_tokens, p.reads_per_chunk, w->read_bytes, (double)p.chunk_bytes / 1e6,
			      basis ? basis : "its slowest stretch of the run", worst, verdict, w->cold_prompt_tokens,
			      p.cold_prompt_reads, cold, iops);
	*out = p;
	return 0;
}

/* Seconds to the millisecond; null when not finite (jset_double). */
static void jset_s(json_object *o, const char *key, double s)
{
	jset_double(o, key, isfinite(s) ? round(s * 1000) / 1000 : s);
}

json_object *prediction_to_json(const struct predict_workload *w, const struct prediction *p)
{
	json_object *o = json_object_new_object(), *spin = json_object_new_object();

	jset_double(o, "reads_per_token", round(p->reads_per_token * 100) / 100);
	jset_u64(o, "chunk_tokens", w->chunk_tokens);
	jset_u64(o, "reads_per_chunk", p->reads_per_chunk);
	jset_u64(o, "chunk_bytes", p->chunk_bytes);
	jset_double(o, "iops", p->iops);
	jset_s(o, "chunk_s", p->chunk_s);
	jset_s(o, "worst_chunk_s", p->worst_chunk_s);
	jset_str(o, "worst_chunk_basis", p->worst_from_series ? "per_second_iops" : "mean_iops");
	jset_u64(o, "cold_prompt_tokens", w->cold_prompt_tokens);
	jset_u64(o, "cold_prompt_reads", p->cold_prompt_reads);
	jset_s(o, "cold_prompt_s", p->cold_prompt_s);
	jset_u64(spin, "low", w->spin_low_s);
	jset_u64(spin, "high", w->spin_high_s);
	json_object_object_add(o, "spin_limit_s", spin);
	/* rounded down, so that a margin shown as 2.00 never belongs to a warning */
	jset_double(o, "margin", floor(p->margin * 100) / 100);
	jset_str(o, "status", predict_status_name(p->status));
	jset_str(o, "summary", p->summary);
	return o;
}

int predict_run_json(const struct predict_workload *w, json_object *run, json_object **out, char **why)
{
	_cleanup_free_ uint64_t *ps = NULL;
	struct prediction p;
	json_object *iops = jget(run, "iops"), *arr = jget(run, "per_second_iops");
	size_t n = 0;
	int r;

	if (!json_object_is_type(iops, json_type_int) && !json_object_is_type(iops, json_type_double))
		return set_why(why, -EBADMSG, "the run has no numeric 'iops'");
	if (arr) {
		if (!json_object_is_type(arr, json_type_array))
			return set_why(why, -EBADMSG, "the run's 'per_second_iops' is not an array");
		n = jarray_len(arr);
		ps = xcalloc(n ? n : 1, sizeof(*ps));
		for (size_t i = 0; i < n; i++) {
			json_object *v = jarray_at(arr, i);
			int64_t x = json_object_get_int64(v);

			if (!json_object_is_type(v, json_type_int) || x < 0)
				return set_why(why, -EBADMSG, "the run's 'per_second_iops[%zu]' is not a whole number "
					       "of 0 or more", i);
			ps[i] = (uint64_t)x;
		}
	}
	r = predict_engine(w, json_object_get_double(iops), ps, n, &p, why);
	if (r < 0)
		return r;
	*out = prediction_to_json(w, &p);
	prediction_clear(&p);
	return 0;
}

/* A prediction's worst chunk in seconds from its JSON: null (a chunk that never completes) or a
 * missing key is +inf, the slowest there is. */
static double json_worst_s(json_object *p)
{
	json_object *v = jget(p, "worst_chunk_s");

	return v && (json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int))
		       ? json_object_get_double(v)
		       : INFINITY;
}

bool predict_json_worse(json_object *a, json_object *b)
{
	return json_worst_s(a) > json_worst_s(b);
}
