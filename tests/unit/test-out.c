/* SPDX-License-Identifier: MIT */
/* The one verdict vocabulary as people see it (steps/out.c): each word one way in every view, and a
 * word no step writes (a hostile or newer record) shown as UNKNOWN, never as PASS or FAIL. */
#include "out.h"
#include "util.h"
#include "tap.h"

#include <unistd.h>

/* What out_verdict prints for a record made of `json`, read back from a temporary file. */
static char *verdict_line(const struct ctx *ctx, const char *json)
{
	json_object *rec = json_tokener_parse(json);
	char buf[1024] = "";
	FILE *f = tmpfile();
	int saved = dup(STDOUT_FILENO);
	size_t n;

	if (!rec || !f || saved < 0)
		abort();
	fflush(stdout);
	dup2(fileno(f), STDOUT_FILENO);
	out_verdict(ctx, rec, "%s", "");
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	rewind(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	json_object_put(rec);
	return xstrdup(buf);
}

int main(void)
{
	struct ctx plain = { .step = "test" }, color = { .step = "test", .color = true };

	CHECK_STR(out_word(&plain, "pass"), "PASS");
	CHECK_STR(out_word(&plain, "warn"), "WARN");
	CHECK_STR(out_word(&plain, "trap"), "TRAP");
	CHECK_STR(out_word(&plain, "fail"), "FAIL");
	CHECK_STR(out_word(&plain, "skip"), "skip");
	CHECK_STR(out_word(&plain, "bogus"), "UNKNOWN");
	CHECK_STR(out_word(&plain, NULL), "UNKNOWN");
	CHECK_STR(out_status(&plain, ST_WARN), "WARN");
	/* TRAP is coloured as WARN is (yellow), on a colour terminal only */
	CHECK_STR(out_word(&color, "trap"), "\033[33mTRAP\033[0m");
	CHECK_STR(out_word(&color, "warn"), "\033[33mWARN\033[0m");
	CHECK(verdict_word_known("trap") && verdict_word_known("pass") && !verdict_word_known("PASS") &&
	      !verdict_word_known("bogus") && !verdict_word_known(NULL));
	{
		_cleanup_free_ char *s = verdict_line(&plain, "{\"verdict\":\"trap\",\"checks\":[{\"status\":\"fail\",\"summary\":\"x\"}]}");

		CHECK(strstr(s, "verdict: TRAP  x") != NULL);
	}
	{
		/* a hostile verdict with checks that pass: neither PASS nor FAIL, and it says so */
		_cleanup_free_ char *s = verdict_line(&plain, "{\"verdict\":\"bogus\",\"checks\":[{\"status\":\"pass\",\"summary\":\"x\"}]}");

		CHECK(strstr(s, "verdict: UNKNOWN  the record's verdict 'bogus' is not") != NULL);
		CHECK(!strstr(s, "PASS") && !strstr(s, "FAIL"));
	}
	{
		_cleanup_free_ char *s = verdict_line(&plain, "{\"checks\":[]}");

		CHECK(strstr(s, "verdict: UNKNOWN  the record's verdict '(none)'") != NULL);
	}
	return tap_done();
}
