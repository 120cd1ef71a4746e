/* SPDX-License-Identifier: MIT */
/* Exact size parsing with 128-bit intermediates, GPT LBA arithmetic and human renderings. */
#include "util.h"
#include "size.h"

#include <ctype.h>
#include <inttypes.h>

struct unit {
	const char *name;
	uint64_t factor;
};

/* Longest names first so "TiB" is not read as "T". Single letters are binary (fio, dd). */
static const struct unit units[] = {
	{ "KiB", 1ULL << 10 }, { "MiB", 1ULL << 20 }, { "GiB", 1ULL << 30 },
	{ "TiB", 1ULL << 40 }, { "PiB", 1ULL << 50 },
	{ "kB", 1000ULL }, { "KB", 1000ULL }, { "MB", 1000000ULL }, { "GB", 1000000000ULL },
	{ "TB", 1000000000000ULL }, { "PB", 1000000000000000ULL },
	{ "K", 1ULL << 10 }, { "k", 1ULL << 10 }, { "M", 1ULL << 20 }, { "G", 1ULL << 30 },
	{ "T", 1ULL << 40 }, { "P", 1ULL << 50 },
	{ "B", 1 }, { "", 1 },
};

int u64_parse(const char *s, uint64_t *out, const char **why)
{
	unsigned __int128 v = 0;

	if (!s || !*s) {
		*why = "empty value";
		return -EINVAL;
	}
	if (*s == '-') {
		*why = "negative value";
		return -ERANGE;
	}
	for (const char *p = s; *p; p++) {
		if (!isdigit((unsigned char)*p)) {
			*why = "not a whole number";
			return -EINVAL;
		}
		v = v * 10 + (unsigned)(*p - '0');
		if (v > UINT64_MAX) {
			*why = "too large for 64 bits";
			return -EOVERFLOW;
		}
	}
	*out = (uint64_t)v;
	return 0;
}

bool lba_size_valid(uint64_t lba_size)
{
	return lba_size >= 512 && lba_size <= 65536 && (lba_size & (lba_size - 1)) == 0;
}

int size_parse(const char *spec, uint32_t lba_size, uint64_t *bytes, const char **why)
{
	unsigned __int128 whole = 0, frac = 0, scale = 1, v;
	const char *p = spec;
	const struct unit *u = NULL;
	bool digits = false;

	*why = NULL;
	if (!spec || !*spec) {
		*why = "empty size";
		return -EINVAL;
	}
	while (isspace((unsigned char)*p))
		p++;
	if (*p == '-') {
		*why = "negative size";
		return -ERANGE;
	}
	if (*p == '+')
		p++;
	for (; isdigit((unsigned char)*p); p++) {
		whole = whole * 10 + (unsigned)(*p - '0');
		digits = true;
		if (whole > UINT64_MAX) {
			*why = "too large for 64 bits";
			return -EOVERFLOW;
		}
	}
	if (*p == '.') {
		p++;
		for (; isdigit((unsigned char)*p); p++) {
			if (scale > UINT64_MAX / 10) {
				*why = "too many decimals";
				return -EINVAL;
			}
			frac = frac * 10 + (unsigned)(*p - '0');
			scale *= 10;
			digits = true;
		}
	}
	if (!digits) {
		*why = "not a number";
		return -EINVAL;
	}
	if (*p == 's' && p[1] == '\0') {
		if (!lba_size_valid(lba_size)) {
			*why = "sector count needs a valid LBA size";
			return -EINVAL;
		}
		if (frac) {
			*why = "a sector count must be a whole number";
			return -EINVAL;
		}
		v = whole * lba_size;
	} else {
		for (size_t i = 0; i < ARRAY_SIZE(units); i++)
			if (strcmp(p, units[i].name) == 0) {
				u = &units[i];
				break;
			}
		if (!u) {
			*why = "unknown unit (use B, s, KB/MB/GB/TB or KiB/MiB/GiB/TiB)";
			return -EINVAL;
		}
		/* (whole * scale + frac) * factor / scale must be an integer. */
		v = (whole * scale + frac) * u->factor;
		if (v % scale != 0) {
			*why = "not a whole number of bytes; give the exact byte count";
			return -EINVAL;
		}
		v /= scale;
	}
	if (v > UINT64_MAX) {
		*why = "too large for 64 bits";
		return -EOVERFLOW;
	}
	if (v == 0) {
		*why = "size is zero";
		return -ERANGE;
	}
	*bytes = (uint64_t)v;
	return 0;
}

uint64_t gpt_entry_lbas(uint32_t lba_size)
{
	/* 128 entries of 128 bytes = 16 KiB, rounded up to whole LBAs. */
	return (16384 + lba_size - 1) / lba_size;
}

int lba_geometry(uint64_t bytes, uint32_t lba_size, struct lba_geometry *g)
{
	uint64_t entries;

	if (!lba_size_valid(lba_size))
		return -EINVAL;
	entries = gpt_entry_lbas(lba_size);
	*g = (struct lba_geometry){ .bytes = bytes, .lba_size = lba_size };
	g->lba_count = bytes / lba_size;
	/* LBA 0 protective MBR, LBA 1 header, then the entries; the same mirrored at the end. */
	if (g->lba_count < 2 * (entries + 1) + 2)
		return -EINVAL;
	g->last_lba = g->lba_count - 1;
	g->first_usable_lba = 2 + entries;
	g->last_usable_lba = g->last_lba - 1 - entries;
	return 0;
}

static void thousands(uint64_t v, char *buf)
{
	char tmp[32];
	int n = snprintf(tmp, sizeof(tmp), "%" PRIu64, v), o = 0;

	for (int i = 0; i < n; i++) {
		if (i > 0 && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = tmp[i];
	}
	buf[o] = '\0';
}

const char *fmt_thousands(uint64_t v, char buf[32])
{
	thousands(v, buf);
	return buf;
}

const char *fmt_thousands_signed(int64_t v, char buf[32])
{
	uint64_t m = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;

	/* 20 digits and 6 commas at most, so the sign always fits in 32 bytes. */
	thousands(m, buf + (v < 0));
	if (v < 0)
		buf[0] = '-';
	return buf;
}

/* v / unit with three decimals, rounded half up, in integers. */
static const char *fmt_scaled(uint64_t v, uint64_t unit, const char *name, char buf[32])
{
	unsigned __int128 milli = ((unsigned __int128)v * 1000 + unit / 2) / unit;

	snprintf(buf, 32, "%" PRIu64 ".%03u %s", (uint64_t)(milli / 1000), (unsigned)(milli % 1000), name);
	return buf;
}

const char *fmt_tb(uint64_t v, char buf[32]) { return fmt_scaled(v, 1000000000000ULL, "TB", buf); }
const char *fmt_tib(uint64_t v, char buf[32]) { return fmt_scaled(v, 1ULL << 40, "TiB", buf); }

const char *fmt_decimal(uint64_t v, char buf[32])
{
	static const char *names[] = { "B", "KB", "MB", "GB", "TB", "PB" };
	uint64_t unit = 1;
	unsigned i = 0;

	while (i + 1 < ARRAY_SIZE(names) && v / unit >= 1000) {
		unit *= 1000;
		i++;
	}
	if (i == 0) {
		snprintf(buf, 32, "%" PRIu64 " B", v);
		return buf;
	}
	return fmt_scaled(v, unit, names[i], buf);
}

const char *fmt_binary(uint64_t v, char buf[32])
{
	static const char *names[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	unsigned i = 0;

	while (i + 1 < ARRAY_SIZE(names) && (v >> (10 * i)) >= 1024)
		i++;
	if (i == 0) {
		snprintf(buf, 32, "%" PRIu64 " B", v);
		return buf;
	}
	if (v % (1ULL << (10 * i)) == 0) {
		snprintf(buf, 32, "%" PRIu64 " %s", v >> (10 * i), names[i]);
		return buf;
	}
	return fmt_scaled(v, 1ULL << (10 * i), names[i], buf);
}
