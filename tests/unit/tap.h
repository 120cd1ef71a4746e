/* SPDX-License-Identifier: MIT */
/* A minimal assertion kit for the unit tests: counts failures, exits 1 when any. */
#pragma once

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int tap_failures, tap_checks;

#define CHECK(cond)                                                                         \
	do {                                                                                \
		tap_checks++;                                                               \
		if (!(cond)) {                                                              \
			tap_failures++;                                                     \
			fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
		}                                                                           \
	} while (0)

#define CHECK_U64(got, want)                                                                        \
	do {                                                                                        \
		uint64_t _g = (got), _w = (want);                                                   \
		tap_checks++;                                                                       \
		if (_g != _w) {                                                                     \
			tap_failures++;                                                             \
			fprintf(stderr, "%s:%d: %s = %" PRIu64 ", expected %" PRIu64 "\n", __FILE__, \
				__LINE__, #got, _g, _w);                                            \
		}                                                                                   \
	} while (0)

#define CHECK_STR(got, want)                                                                     \
	do {                                                                                     \
		const char *_g = (got), *_w = (want);                                            \
		tap_checks++;                                                                    \
		if (!_g || strcmp(_g, _w) != 0) {                                                \
			tap_failures++;                                                          \
			fprintf(stderr, "%s:%d: %s = '%s', expected '%s'\n", __FILE__, __LINE__, #got, \
				_g ? _g : "(null)", _w);                                         \
		}                                                                                \
	} while (0)

static inline int tap_done(void)
{
	printf("%d checks, %d failed\n", tap_checks, tap_failures);
	return tap_failures ? 1 : 0;
}
