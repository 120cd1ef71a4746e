/* SPDX-License-Identifier: MIT */
/* report_text (src/report_text.c): report.txt from a small report: the head and verdict lines, the
 * sections the records give, the clone trap's figures, the gates table, the drives, the signature. */
#include "tap.h"
#include "util.h"
#include "report.h"
#include "records.h"

/* A report as report_build makes it, from the fixtures (tests/tools/records.c), without a state dir. */
static json_object *report_of(const char *const *steps, size_t n)
{
	json_object *rep = json_object_new_object(), *st = json_object_new_object(), *sum = json_object_new_array();
	json_object *recs = json_object_new_array();
	char *why = NULL;

	jset_str(rep, "schema", "swaptool-report/1");
	jset_str(rep, "version", "9.9.9");
	jset_str(rep, "host", "builder");
	jset_str(rep, "kernel", "6.1.0-test");
	jset_str(rep, "created", "2026-11-06T12:00:00Z");
	jset_str(rep, "node", "dgx4");
	for (size_t i = 0; i < n; i++) {
		json_object *rec = fixture_record(steps[i]), *s = json_object_new_object(), *e = json_object_new_object();
		char hex[65];
		enum status v = report_judge_step(steps[i], rec, &why);

		jset_str(s, "step", steps[i]);
		jset_str(s, "status", report_step_word(steps[i], rec, v));
		jset_str(s, "finished", jget_str(rec, "finished"));
		jset_str(s, "why", why);
		free(why);
		json_object_array_add(sum, s);
		report_record_sha256(rec, hex);
		jset_str(e, "step", steps[i]);
		jset_str(e, "sha256", hex);
		json_object_array_add(recs, e);
		json_object_object_add(st, steps[i], rec);
	}
	jset_str(rep, "verdict", report_verdict_name(report_verdict(st, NULL, &why)));
	jset_str(rep, "why", why);
	free(why);
	json_object_object_add(rep, "signer", NULL);
	json_object_object_add(rep, "summary", sum);
	json_object_object_add(rep, "records", recs);
	json_object_object_add(rep, "steps", st);
	return rep;
}

static bool has_line(const char *text, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (strncmp(p, line, n) == 0 && (p[n] == '\n' || p[n] == '\0'))
			return true;
	return false;
}

static void test_full(void)
{
	static const char *const all[] = { "preflight", "backup", "restore", "verify", "accept" };
	json_object *rep = report_of(all, ARRAY_SIZE(all));
	char *t;

	report_add_drives(rep, NULL);
	t = report_text(rep);
	CHECK(startswith(t, "swaptool report for dgx4: made on builder at 2026-11-06T12:00:00Z (swaptool 9.9.9, kernel 6.1.0-test)\n"));
	CHECK(has_line(t, "verdict: accepted  preflight, backup, verify and accept (with the engine gates) of the target drive passed"));
	/* one section per record, in the report's order */
	CHECK(strstr(t, "\nSteps\n") && strstr(t, "\nDrives (old -> new)\n") && strstr(t, "\nClone trap\n"));
	CHECK(strstr(t, "\nClone trap\n") < strstr(t, "\nBackup\n") && strstr(t, "\nBackup\n") < strstr(t, "\nRestore\n"));
	CHECK(strstr(t, "\nRestore verification\n") && strstr(t, "\nAcceptance on dgx4 ("));
	/* the incident's geometry, as docs/incident.md gives it */
	CHECK(has_line(t, "  delta: -48,009,314,304 bytes (target minus source)"));
	CHECK(has_line(t, "  GPT backup header at LBA 4,000,797,359 on the old drive; the new drive's last LBA is 3,907,029,167"));
	CHECK(has_line(t, "  raw clone IMPOSSIBLE; filesystem-aware clone possible; fresh install + restore possible"));
	/* verify read the backup's own tarball */
	CHECK(strstr(t, "(the backup's)\n") != NULL);
	CHECK(strstr(t, "engine gates (cold-boot 157 K prompt, full 97-scenario bench): passed\n") != NULL);
	CHECK(strstr(t, ">= 60000 IOPS") != NULL);
	/* the old drive's model from preflight; the new one unmeasured */
	CHECK(strstr(t, "XG7000-2TB 2242") != NULL && strstr(t, "unknown") != NULL);
	CHECK(has_line(t, "Not signed"));
	CHECK(!strstr(t, "Against the reference node"));
	free(t);
	json_object_put(rep);
}

static void test_partial(void)
{
	static const char *const some[] = { "backup" };
	json_object *rep = report_of(some, ARRAY_SIZE(some)), *s = json_object_new_object(), *ref;
	char *t;

	jset_str(s, "identity", "ops@dgx4");
	jset_str(s, "key_type", "ssh-ed25519");
	jset_str(s, "fingerprint", "SHA256:abc");
	json_object_object_add(rep, "signer", s);
	t = report_text(rep);
	CHECK(has_line(t, "verdict: incomplete  missing: preflight, verify, accept"));
	/* no preflight: no clone trap; no accept: no acceptance; the drives still there (derived) */
	CHECK(!strstr(t, "Clone trap") && !strstr(t, "Acceptance on") && strstr(t, "Drives (old -> new)"));
	CHECK(has_line(t, "Signed by ops@dgx4 (ssh-ed25519 SHA256:abc), namespace swaptool-report"));
	free(t);
	json_object_put(rep);

	/* this node's runs against a reference node's: B/A per run */
	static const char *const acc[] = { "accept" };
	rep = report_of(acc, ARRAY_SIZE(acc));
	ref = fixture_record("dgx5-accept");
	CHECK(report_add_reference(rep, ref, "/refs/dgx5.json") == 0);
	t = report_text(rep);
	CHECK(strstr(t, "\nAgainst the reference node dgx5 (A; this node dgx4 is B; /refs/dgx5.json, record sha256 ") != NULL);
	CHECK(strstr(t, "IOPS A") && strstr(t, "p99.9 B"));
	free(t);
	json_object_put(ref);
	json_object_put(rep);
}

int main(void)
{
	test_full();
	test_partial();
	return tap_done();
}
