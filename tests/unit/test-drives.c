/* SPDX-License-Identifier: MIT */
/* Unit tests for src/drives.c: catalogue matches, the naming trap, SKUs, judging unknown drives, profile entries. */
#include "tap.h"
#include "util.h"
#include "drives.h"
#include "profile.h"

static const char *lookup(const char *model, enum drive_verdict *v)
{
	static struct drive_class c;

	if (drive_lookup(NULL, model, &c) != 1)
		return NULL;
	*v = c.e.verdict;
	return c.e.name;
}

static void test_catalogue(void)
{
	enum drive_verdict v = DRIVE_UNKNOWN;
	struct drive_class c;

	/* The incident's drives, by the model strings they report (or that people type). */
	CHECK_STR(lookup("XG7000-2TB 2242", &v), "KingSpec XG7000");
	CHECK(v == DRIVE_AVOID);
	CHECK_STR(lookup("ESL01TBTLCZ-27J2-TYN", &v), "ESL01TBTLCZ-27J2-TYN");
	CHECK(v == DRIVE_REFERENCE);
	CHECK_STR(lookup("Corsair MP600 MINI", &v), "Corsair MP600 Mini");
	CHECK(v == DRIVE_MEASURE);
	CHECK_STR(lookup("Corsair MP600 Mini 2TB", &v), "Corsair MP600 Mini");
	CHECK_STR(lookup("mp600-mini", &v), "Corsair MP600 Mini");
	CHECK_STR(lookup("CORSAIR MP600 MICRO", &v), "Corsair MP600 Micro");
	CHECK(v == DRIVE_AVOID);
	CHECK_STR(lookup("SAMSUNG MZ1L21T9HCLS-00A07", &v), "Samsung PM9A3");
	CHECK(v == DRIVE_SUITED);
	CHECK_STR(lookup("Samsung PM9E1 2TB", &v), "Samsung PM9E1");
	CHECK(v == DRIVE_SUITED);
	CHECK_STR(lookup("Corsair MP700 MICRO", &v), "Corsair MP700 Micro");
	CHECK(v == DRIVE_SUITED);
	CHECK_STR(lookup("WD_BLACK SN770M 2TB", &v), "WD SN770M");
	CHECK(v == DRIVE_AVOID);
	/* Near misses stay unknown. */
	CHECK(lookup("WD_BLACK SN770 2TB", &v) == NULL);
	CHECK(lookup("Corsair MP600 PRO LPX", &v) == NULL);
	CHECK(lookup("", &v) == NULL);
	CHECK(lookup(NULL, &v) == NULL);
	CHECK(drive_catalogue_len == 8);

	/* The naming trap: both Corsair entries say it. */
	CHECK(drive_lookup(NULL, "Corsair MP600 MICRO", &c) == 1 && c.e.note && strstr(c.e.note, "naming trap"));
	CHECK(drive_lookup(NULL, "Corsair MP600 MINI", &c) == 1 && c.e.note && strstr(c.e.note, "MP600 Micro"));
	CHECK(strstr(c.e.controller, "E27T") != NULL);
	CHECK_U64(c.e.hmb_mb, 64);

	CHECK(drive_model_matches("Corsair MP600 Mini 2TB", "MP600 MINI") == 9);
	CHECK(drive_model_matches("SAMSUNG MZ1L21T9HCLS", "PM9A3|MZ1L2") == 5);
	CHECK(drive_model_matches("XG7000", "XG8000|XG9000") == 0);
}

static void test_skus(void)
{
	struct drive_class c;
	const struct drive_sku *s;

	CHECK(drive_lookup(NULL, "Corsair MP600 Mini 2TB", &c) == 1);
	s = drive_sku_for(&c, "Corsair MP600 Mini 2TB");
	CHECK(s != NULL);
	if (s) {
		CHECK_U64(s->lba_count, 3907029168ull);
		CHECK_U64(s->lba_count * s->lba_size, 2000398934016ull);
	}
	s = drive_sku_for(&c, "Corsair MP600 Mini 1 TB");
	CHECK(s && s->lba_count == 1953525168ull);
	CHECK(drive_sku_for(&c, "Corsair MP600 Mini 12TB") == NULL);
	CHECK(drive_sku_for(&c, "Corsair MP600 Mini") == NULL);
	CHECK(drive_lookup(NULL, "XG7000-2TB 2242", &c) == 1);
	s = drive_sku_for(&c, "XG7000-2TB 2242");
	CHECK(s && s->lba_count * s->lba_size == 2048408248320ull);
}

static void test_judge(void)
{
	struct drive_class c;
	_cleanup_free_ char *w1 = NULL, *w2 = NULL, *w3 = NULL, *w4 = NULL, *w5 = NULL;

	/* Unknown and HMB-dependent: measure, with the MB it declares. */
	CHECK(drive_lookup(NULL, "ACME NV1 1TB", &c) == 0 && !c.known);
	CHECK(drive_judge(&c, true, 8192, &w1) == DRIVE_MEASURE);
	CHECK(w1 && strstr(w1, "32 MB host memory buffer"));
	/* Unknown, no HMB: left to accept. */
	CHECK(drive_judge(&c, true, 0, &w2) == DRIVE_UNKNOWN);
	CHECK(w2 && strstr(w2, "swaptool accept"));
	/* Unknown and nothing reported (a model typed by hand). */
	CHECK(drive_judge(&c, false, 0, &w3) == DRIVE_MEASURE);
	/* Known: the catalogue verdict; a different HMB than the catalogue's is said. */
	CHECK(drive_lookup(NULL, "XG7000-2TB 2242", &c) == 1);
	CHECK(drive_judge(&c, true, 10240, &w4) == DRIVE_AVOID);
	CHECK(w4 && strstr(w4, "40 MB") && !strstr(w4, "catalogue says"));
	CHECK(drive_judge(&c, true, 16384, &w5) == DRIVE_AVOID);
	CHECK(w5 && strstr(w5, "declares a 64 MB") && strstr(w5, "catalogue says 40 MB"));

	CHECK_STR(drive_verdict_name(DRIVE_MEASURE), "measure");
	{
		enum drive_verdict v;

		CHECK(drive_verdict_parse("reference", &v) == 0 && v == DRIVE_REFERENCE);
		CHECK(drive_verdict_parse("great", &v) == -EINVAL);
	}
}

static void test_profile(void)
{
	char path[] = "/tmp/test-drives.XXXXXX";
	int fd = mkstemp(path);
	static const char ini[] = "# site catalogue\n"
				  "[drive ACME NV1]\n"
				  "match = ACME NV1\n"
				  "controller = ACME A1\n"
				  "dram = DRAM\n"
				  "nand = TLC\n"
				  "verdict = suited\n"
				  "reason = measured on dgx7: 150 K IOPS at 98 GB\n"
				  "\n"
				  "[drive XG7000 reflashed]\n"
				  "match = XG7000-2TB\n"
				  "hmb_mb = 40\n"
				  "verdict = measure\n";
	struct profile *p = NULL;
	_cleanup_free_ char *err = NULL;
	struct drive_class c;

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	CHECK(write(fd, ini, sizeof(ini) - 1) == (ssize_t)(sizeof(ini) - 1));
	close(fd);
	CHECK(profile_load(path, &p, &err) == 0);
	if (err)
		fprintf(stderr, "%s\n", err);
	if (p) {
		CHECK(drive_lookup(p, "ACME NV1 1TB", &c) == 1);
		CHECK_STR(c.e.name, "ACME NV1");
		CHECK(c.e.verdict == DRIVE_SUITED);
		CHECK(c.profile_line >= 2);
		/* A user entry overrides the built-in row, even with a longer built-in pattern around. */
		CHECK(drive_lookup(p, "XG7000-2TB 2242", &c) == 1);
		CHECK_STR(c.e.name, "XG7000 reflashed");
		CHECK(c.e.verdict == DRIVE_MEASURE);
		/* Other drives still come from the built-in table. */
		CHECK(drive_lookup(p, "Corsair MP600 MINI", &c) == 1 && c.profile_line == 0);
		profile_free(p);
	}
	unlink(path);
}

int main(void)
{
	test_catalogue();
	test_skus();
	test_judge();
	test_profile();
	return tap_done();
}
