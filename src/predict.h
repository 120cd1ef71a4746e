/* SPDX-License-Identifier: MIT */
/* The engine predicted from accept's measurements: how long one prefill chunk's Engram reads take
 * at the measured IOPS against the collective's spin limit (docs/incident.md, the arithmetic). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The workload model ([workload] in swaptool-profile(5)). The defaults are the incident's
 * figures: FLARE did 6,490,000 Engram reads for a 157,000-token prefill, so 41.34 reads per
 * token (kept as the two measured figures, not a rounded 41, and divided where used); the
 * prefill runs in 4096-token chunks of 4 KiB random reads; one chunk's reads must finish inside
 * the collective's spin limit (8 to 20 s) or a collective times out; the gate's cold prompt is
 * 157,000 tokens.
 */
struct predict_workload {
	uint64_t measured_reads;     /* Engram reads counted over measured_tokens: 6,490,000 */
	uint64_t measured_tokens;    /* the prefill they were counted over: 157,000 */
	uint64_t chunk_tokens;       /* tokens of one prefill chunk: 4096 */
	uint64_t read_bytes;         /* one Engram read: 4096 */
	uint64_t spin_low_s;         /* the collective's spin limit, low end: 8 */
	uint64_t spin_high_s;        /* and high end: 20 */
	uint64_t cold_prompt_tokens; /* the cold-boot prompt of the engine gate: 157,000 */
};
void predict_workload_defaults(struct predict_workload *w);
/* 0 when every field is usable (no zero, low <= high), else -EINVAL and *why. */
int predict_workload_check(const struct predict_workload *w, char **why);

/* measured_reads / measured_tokens (41.34 by default); NaN for a workload that fails the check. */
double predict_reads_per_token(const struct predict_workload *w);
/* ceil(chunk_tokens * measured_reads / measured_tokens): 169,319 by default. -EINVAL for a bad
 * workload, -EOVERFLOW when the product does not fit in 64 bits. */
int predict_reads_per_chunk(const struct predict_workload *w, uint64_t *out);
/* reads_per_chunk * read_bytes: 693,530,624 by default. */
int predict_chunk_bytes(const struct predict_workload *w, uint64_t *out);
/* ceil(cold_prompt_tokens * measured_reads / measured_tokens): 6,490,000 by default. */
int predict_cold_prompt_reads(const struct predict_workload *w, uint64_t *out);

/* Seconds for `reads` at `iops`: iops 0 gives +Inf (the reads never complete) and returns 0;
 * iops negative, NaN or infinite is -EINVAL. */
int predict_seconds(uint64_t reads, double iops, double *out);
/* One chunk at iops: 169,319 / 12,900 = 13.1 s. */
int predict_chunk_s(const struct predict_workload *w, double iops, double *out);
/* The cold prompt at iops: 6,490,000 / 12,900 = 503 s. */
int predict_cold_prompt_s(const struct predict_workload *w, double iops, double *out);

/* The worst chunk of a per-second series (see the top of src/predict.c): the longest stretch of
 * the series holding at most one chunk's reads. -ENODATA (and *why) when the whole series holds
 * fewer than one chunk's reads, -EINVAL for a bad workload, -EOVERFLOW when the counts' sum does
 * not fit in 64 bits. *start_s (when not NULL) gets where that stretch starts. */
int predict_worst_chunk_s(const struct predict_workload *w, const uint64_t *per_second, size_t n, double *out,
			  double *start_s, char **why);

enum predict_status { PREDICT_PASS, PREDICT_WARN, PREDICT_FAIL };
/* "pass", "warn", "fail". */
const char *predict_status_name(enum predict_status s);
/* fail when worst_s is past spin_low_s (or not a number), warn when the margin spin_low_s /
 * worst_s is under 2, else pass. */
enum predict_status predict_status_of(const struct predict_workload *w, double worst_s);

struct prediction {
	double reads_per_token;
	uint64_t reads_per_chunk, chunk_bytes, cold_prompt_reads;
	double iops;            /* the run's mean */
	double chunk_s;         /* one chunk at the mean */
	double worst_chunk_s;   /* from the series; the mean's chunk_s when the series is too short */
	bool worst_from_series; /* false: the series held fewer than one chunk's reads (or none) */
	double worst_start_s;   /* where the worst stretch starts in the series (NaN when not from it) */
	double cold_prompt_s;
	double margin;          /* spin_low_s / worst_chunk_s (0 when the chunk never completes) */
	enum predict_status status;
	char *summary;          /* one sentence, allocated */
};
/* The whole prediction from a run's mean IOPS and its per-second counts (NULL, 0: none). Returns
 * 0, or -EINVAL (bad workload, bad iops), -EOVERFLOW, with *why. Free with prediction_clear. */
int predict_engine(const struct predict_workload *w, double iops, const uint64_t *per_second, size_t n,
		   struct prediction *out, char **why);
void prediction_clear(struct prediction *p);

/* The prediction as JSON: reads_per_token, chunk_tokens, reads_per_chunk, chunk_bytes, iops,
 * chunk_s, worst_chunk_s, worst_chunk_basis ("per_second_iops" or "mean_iops"),
 * cold_prompt_tokens, cold_prompt_reads, cold_prompt_s, spin_limit_s {low, high}, margin, status, summary; a time that is not finite
 * (iops 0) is null. */
struct json_object;
struct json_object *prediction_to_json(const struct predict_workload *w, const struct prediction *p);
/* predict_engine from an accept run's record object ("iops", "per_second_iops") into its JSON.
 * -EBADMSG with *why when the run's fields are missing or of the wrong type. */
int predict_run_json(const struct predict_workload *w, struct json_object *run, struct json_object **out,
		     char **why);
/* Whether prediction JSON a predicts a slower worst chunk than b (a null time is the slowest). */
bool predict_json_worse(struct json_object *a, struct json_object *b);
