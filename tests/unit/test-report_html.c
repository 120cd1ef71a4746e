/* SPDX-License-Identifier: MIT */
/* report_html (src/report_html.c): report.html from a small report: one self-contained page, the
 * verdict and step cells, the drives table's fields, the signature box, and every string escaped. */
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

static size_t count(const char *s, const char *what)
{
	size_t n = 0;

	for (const char *p = s; (p = strstr(p, what)); p += strlen(what))
		n++;
	return n;
}

static void test_page(void)
{
	static const char *const all[] = { "preflight", "backup", "restore", "verify", "accept" };
	json_object *rep = report_of(all, ARRAY_SIZE(all));
	char *h;

	report_add_drives(rep, NULL);
	h = report_html(rep, NULL);
	CHECK(startswith(h, "<!DOCTYPE html>\n<html lang=\"en\">"));
	CHECK(strstr(h, "</table></div>\n</section>\n</body></html>\n") && h[strlen(h) - 1] == '\n');
	/* every table in its scroller; those with a header row have it in a thead, repeated in print */
	CHECK(count(h, "<div class=\"tw\"><table") == count(h, "<table") && count(h, "<table") >= 8);
	CHECK(count(h, "<thead><tr>") == count(h, "<table") - 2); /* the clone trap and the backup have none */
	CHECK(strstr(h, "<table class=\"steps keep\">") && strstr(h, "<table class=\"drives\">"));
	/* on paper every page says whose report it is, its verdict and its page number */
	CHECK(strstr(h, "@top-left{content:\"swaptool report: dgx4 \xe2\x80\x94 ACCEPTED\"") != NULL);
	CHECK(strstr(h, "@top-right{content:\"page \" counter(page) \" of \" counter(pages)") != NULL);
	/* self-contained: no script, nothing fetched */
	CHECK(!strstr(h, "<script") && !strstr(h, " src=") && !strstr(h, "<link") && !strstr(h, "https://"));
	CHECK(count(h, "http://") == count(h, "xmlns=\"http://www.w3.org/2000/svg\""));
	CHECK(strstr(h, "<title>swaptool report: dgx4</title>") != NULL);
	CHECK(strstr(h, "<span class=\"verdict accepted\">ACCEPTED</span> ") != NULL);
	/* each step a row; preflight's clone-trap finding in its own word */
	for (size_t i = 0; i < ARRAY_SIZE(all); i++) {
		_cleanup_free_ char *row = xasprintf("<tr><td class=\"nw\">%s</td><td class=\"st st-", all[i]);
		CHECK(count(h, row) == 1);
	}
	CHECK(strstr(h, "<td class=\"nw\">preflight</td><td class=\"st st-trap\">TRAP</td>") != NULL);
	CHECK(strstr(h, "<h2>Clone trap</h2>") && strstr(h, "<h2>Backup</h2>") && strstr(h, "<h2>Acceptance</h2>"));
	CHECK(strstr(h, "<th>raw clone</th><td class=\"st st-fail\">FAIL</td>") != NULL);
	/* the drives: the old model measured, the new drive's unknown cells marked */
	CHECK(strstr(h, "data-field=\"model\" data-side=\"old\">XG7000-2TB 2242</td>") != NULL);
	CHECK(strstr(h, "data-field=\"model\" data-side=\"new\">Corsair MP600 MINI</td>") != NULL);
	CHECK(strstr(h, "<span class=\"st st-missing\">NOT SIGNED</span>") != NULL);
	CHECK(count(h, "<svg class=\"chart\"") >= 1);
	free(h);
	json_object_put(rep);
}

/* What a record says is text, never markup: node, why, check summaries, gate names, the signer. */
static void test_escaping(void)
{
	static const char *const some[] = { "preflight", "accept" };
	json_object *rep = report_of(some, ARRAY_SIZE(some)), *s = json_object_new_object();
	json_object *g = jarray_at(jget(jget(jget(rep, "steps"), "accept"), "gates"), 0);
	char *h;

	jset_str(rep, "node", "<b>dgx\"4&'</b>");
	jset_str(jarray_at(jget(rep, "summary"), 0), "why", "<script>alert(1)</script>");
	jset_str(g, "name", "g<&>");
	jset_str(s, "identity", "ops<i>@x");
	jset_str(s, "key_type", "ssh-ed25519");
	jset_str(s, "fingerprint", "SHA256:\"q\"");
	json_object_object_add(rep, "signer", s);
	h = report_html(rep, NULL);
	CHECK(strstr(h, "<title>swaptool report: &lt;b&gt;dgx&quot;4&amp;&#39;&lt;/b&gt;</title>") != NULL);
	/* in the page header's CSS string too: nothing ends the string or the style element */
	CHECK(strstr(h, "content:\"swaptool report: \\3c b\\3e dgx\\22 4\\26 \\27 \\3c \\2f b\\3e  \xe2\x80\x94 INCOMPLETE\"") != NULL);
	CHECK(count(h, "</style>") == 1);
	CHECK(!strstr(h, "<b>dgx") && !strstr(h, "<script") && !strstr(h, "<i>@x") && !strstr(h, "g<&>"));
	CHECK(strstr(h, "&lt;script&gt;alert(1)&lt;/script&gt;") != NULL);
	CHECK(strstr(h, "<td class=\"nw\">g&lt;&amp;&gt;</td>") != NULL);
	CHECK(strstr(h, "<span class=\"st st-pass\">SIGNED</span> report.json is signed by <b>ops&lt;i&gt;@x</b>") != NULL);
	CHECK(strstr(h, "<code>SHA256:&quot;q&quot;</code>") != NULL);
	/* accept without preflight's drives: derived, and the verdict word for a report missing steps */
	CHECK(strstr(h, "<span class=\"verdict incomplete\">INCOMPLETE</span>") != NULL);
	free(h);
	json_object_put(rep);
}

int main(void)
{
	test_page();
	test_escaping();
	return tap_done();
}
