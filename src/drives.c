/* SPDX-License-Identifier: MIT */
/* The drive-class catalogue as one data table (the incident's drives), and how a model is matched. */
#include "util.h"
#include "drives.h"
#include "profile.h"

#include <ctype.h>
#include <inttypes.h>

/*
 * The built-in catalogue. Every row comes from docs/incident.md (2026-11-04)
 * (docs/swaptool-drives.5 says how to add one; a [drive NAME] profile section overrides a row).
 * The duty is sustained 4 KiB random reads over a ~98 GB working set: the gate is >= 60 K IOPS
 * with p50 <= 250 us at 16 threads, and no collapse at 64.
 */
const struct drive_entry drive_catalogue[] = {
	{
		.name = "KingSpec XG7000",
		.match = "XG7000",
		.controller = "Maxio MAP1602A",
		.dram = "none (DRAM-less)",
		.hmb_mb = 40,
		.nand = "232-layer YMTC TLC",
		.verdict = DRIVE_AVOID,
		.reason = "DRAM-less with a 40 MB host memory buffer and a budget FTL: 4 KiB random reads fall "
			  "from 69 K to 13 K IOPS (p50 1.2 ms) over a 98 GB working set and collapse at 64 threads; "
			  "healthy, simply the wrong class for this duty",
		/* dgx4's namespace: 2,048,408,248,320 B, sold as "2TB" (2048 GB by IDEMA's formula). */
		.skus = { { "2TB", 4000797360ull, 512 } },
	},
	{
		.name = "ESL01TBTLCZ-27J2-TYN",
		.match = "ESL01TBTLCZ",
		.controller = "not published",
		.dram = "none (host memory buffer)",
		.hmb_mb = 64,
		.nand = "TLC",
		.verdict = DRIVE_REFERENCE,
		.reason = "the fleet's reference: declares a 64 MB host memory buffer yet stays flat across working "
			  "sets (113 K IOPS at 2 GB, 80 K at 98 GB, 204 K at 64 threads, p50 <= 283 us)",
	},
	{
		.name = "Corsair MP600 Mini",
		.match = "MP600 MINI",
		.controller = "Phison PS5027-E27T (4-channel)",
		.dram = "none (DRAM-less)",
		.hmb_mb = 64,
		.nand = "162-layer Kioxia BiCS6 TLC",
		.verdict = DRIVE_MEASURE,
		.reason = "the same DRAM-less family as the XG7000 but a newer, better regarded controller and a "
			  "64 MB host memory buffer: measure, not assume (swaptool accept)",
		.note = "not the MP600 Micro: the Micro (2242) is the older Phison E21T + Micron 176L design; check "
			"the label says Mini",
		/* 2 TB: 2,000,398,934,016 B measured on 2026-11-04 (IDEMA sizes for 1 and 4 TB). */
		.skus = { { "1TB", 1953525168ull, 512 }, { "2TB", 3907029168ull, 512 }, { "4TB", 7814037168ull, 512 } },
	},
	{
		.name = "Corsair MP600 Micro",
		.match = "MP600 MICRO",
		.controller = "Phison E21T",
		.dram = "none (DRAM-less)",
		.hmb_mb = 0,
		.nand = "176-layer Micron TLC",
		.verdict = DRIVE_AVOID,
		.reason = "DRAM-less on a controller a generation behind the MP600 Mini's E27T: buy the Mini (and "
			  "measure it) or a DRAM drive instead",
		.note = "naming trap: the MP600 Micro is not the MP600 Mini; the shorter model name is the older, "
			"weaker design (E21T vs E27T)",
	},
	{
		.name = "Samsung PM9A3",
		/* The M.2 parts are MZ1L2960HCJR, MZ1L21T9HCLS, MZ1L23T8HBLA. */
		.match = "PM9A3|MZ1L2",
		.controller = "Samsung Elpis (8-channel)",
		.dram = "DRAM",
		.hmb_mb = 0,
		.nand = "Samsung V-NAND TLC",
		.verdict = DRIVE_SUITED,
		.reason = "enterprise drive with on-drive DRAM, designed for sustained random reads",
	},
	{
		.name = "Samsung PM9E1",
		.match = "PM9E1",
		.controller = "Samsung Presto (8-channel)",
		.dram = "DRAM",
		.hmb_mb = 0,
		.nand = "Samsung V-NAND TLC",
		.verdict = DRIVE_SUITED,
		.reason = "drive with on-drive DRAM, designed for this duty (if it can be had in 2242)",
	},
	{
		.name = "Corsair MP700 Micro",
		.match = "MP700 MICRO",
		.controller = "Phison E28 (8-channel)",
		.dram = "DRAM",
		.hmb_mb = 0,
		.nand = "TLC",
		.verdict = DRIVE_SUITED,
		.reason = "Gen5 2242 with an 8-channel controller and on-drive DRAM",
	},
	{
		.name = "WD SN770M",
		.match = "SN770M",
		.controller = "SanDisk in-house (DRAM-less)",
		.dram = "none (DRAM-less)",
		.hmb_mb = 0,
		.nand = "112-layer Kioxia BiCS5 TLC",
		.verdict = DRIVE_AVOID,
		.reason = "a small host memory buffer plus a budget FTL: the XG7000's class for this duty",
	},
};
const unsigned drive_catalogue_len = ARRAY_SIZE(drive_catalogue);

static const char *const verdict_names[] = {
	[DRIVE_UNKNOWN] = "unknown", [DRIVE_REFERENCE] = "reference", [DRIVE_SUITED] = "suited",
	[DRIVE_MEASURE] = "measure", [DRIVE_AVOID] = "avoid",
};

const char *drive_verdict_name(enum drive_verdict v)
{
	return (unsigned)v < ARRAY_SIZE(verdict_names) ? verdict_names[v] : "unknown";
}

int drive_verdict_parse(const char *s, enum drive_verdict *v)
{
	for (unsigned i = 0; i < ARRAY_SIZE(verdict_names); i++)
		if (streq(s, verdict_names[i])) {
			*v = (enum drive_verdict)i;
			return 0;
		}
	return -EINVAL;
}

/* Upper-case letters and digits only: "Corsair MP600 Mini 2TB" -> "CORSAIRMP600MINI2TB". */
static char *normalize(const char *s, size_t len)
{
	char *out = xcalloc(len + 1, 1);
	size_t n = 0;

	for (size_t i = 0; i < len && s[i]; i++)
		if (isalnum((unsigned char)s[i]))
			out[n++] = (char)toupper((unsigned char)s[i]);
	return out;
}

unsigned drive_model_matches(const char *model, const char *patterns)
{
	_cleanup_free_ char *m = NULL;
	unsigned best = 0;
	const char *p = patterns;

	if (!model || !patterns)
		return 0;
	m = normalize(model, strlen(model));
	while (*p) {
		size_t len = strcspn(p, "|");
		_cleanup_free_ char *pat = normalize(p, len);

		if (*pat && strstr(m, pat) && strlen(pat) > best)
			best = (unsigned)strlen(pat);
		p += len;
		if (*p == '|')
			p++;
	}
	return best;
}

int drive_lookup(const struct profile *p, const char *model, struct drive_class *c)
{
	unsigned best = 0;

	*c = (struct drive_class){ 0 };
	if (!model || !*model)
		return 0;
	for (size_t i = 0; p && i < p->ndrives; i++) {
		const struct profile_drive *d = &p->drives[i];
		enum drive_verdict v = DRIVE_UNKNOWN;
		unsigned len = drive_model_matches(model, d->match);

		if (len <= best)
			continue;
		best = len;
		drive_verdict_parse(d->verdict ? d->verdict : "unknown", &v);
		*c = (struct drive_class){
			.known = true,
			.profile_line = d->line ? d->line : 1,
			.e = { .name = d->name, .match = d->match, .controller = d->controller, .dram = d->dram,
			       .hmb_mb = d->hmb_mb, .nand = d->nand, .verdict = v, .reason = d->reason },
		};
	}
	if (c->known)
		return 1;
	for (unsigned i = 0; i < drive_catalogue_len; i++) {
		unsigned len = drive_model_matches(model, drive_catalogue[i].match);

		if (len > best) {
			best = len;
			*c = (struct drive_class){ .known = true, .e = drive_catalogue[i] };
		}
	}
	return c->known ? 1 : 0;
}

/*
 * The capacity named in a model string: the first whole number followed by TB or GB ("XG7000-2TB
 * 2242" -> "2TB", "MP600 Mini 1 TB" -> "1TB"). "7000" in "XG7000" is not followed by a unit, and
 * "12TB" is not "2TB" because the number is taken whole.
 */
static bool capacity_of(const char *s, char out[24])
{
	for (size_t i = 0; s && s[i]; i++) {
		size_t j = i, k;

		if (!isdigit((unsigned char)s[i]) || (i > 0 && isdigit((unsigned char)s[i - 1])))
			continue;
		while (isdigit((unsigned char)s[j]))
			j++;
		k = j;
		while (s[k] == ' ')
			k++;
		if ((toupper((unsigned char)s[k]) == 'T' || toupper((unsigned char)s[k]) == 'G') &&
		    toupper((unsigned char)s[k + 1]) == 'B' && !isalnum((unsigned char)s[k + 2]) && j - i < 16) {
			snprintf(out, 24, "%.*s%cB", (int)(j - i), s + i, toupper((unsigned char)s[k]));
			return true;
		}
	}
	return false;
}

const struct drive_sku *drive_sku_for(const struct drive_class *c, const char *model)
{
	char want[24], have[24];

	if (!c->known || !capacity_of(model, want))
		return NULL;
	for (unsigned i = 0; i < DRIVE_MAX_SKUS && c->e.skus[i].label; i++)
		if (capacity_of(c->e.skus[i].label, have) && streq(want, have))
			return &c->e.skus[i];
	return NULL;
}

enum drive_verdict drive_judge(const struct drive_class *c, bool have_hmpre, uint32_t hmpre, char **why)
{
	/* hmpre is in 4 KiB units: 256 make a MiB (10240 = 40 MB). */
	uint64_t hmb_mb = ((uint64_t)hmpre + 128) / 256;

	if (c->known) {
		const char *r = c->e.reason ? c->e.reason : "no reason given";

		if (have_hmpre && c->e.hmb_mb && hmpre && hmb_mb != c->e.hmb_mb)
			*why = xasprintf("%s (this one declares a %" PRIu64 " MB host memory buffer, the catalogue "
					 "says %" PRIu64 " MB)",
					 r, hmb_mb, c->e.hmb_mb);
		else
			*why = xstrdup(r);
		return c->e.verdict;
	}
	if (!have_hmpre) {
		*why = xstrdup("not in the catalogue and nothing reported: measure it with swaptool accept before "
			       "trusting it with a lane");
		return DRIVE_MEASURE;
	}
	if (hmpre > 0) {
		*why = xasprintf("not in the catalogue; declares a %" PRIu64 " MB host memory buffer (hmpre %" PRIu32
				 "), so it is DRAM-less and depends on its FTL: measure before trusting it with a lane "
				 "(swaptool accept)",
				 hmb_mb, hmpre);
		return DRIVE_MEASURE;
	}
	*why = xstrdup("not in the catalogue; declares no host memory buffer (on-drive DRAM, or not reported): "
		       "swaptool accept decides");
	return DRIVE_UNKNOWN;
}
