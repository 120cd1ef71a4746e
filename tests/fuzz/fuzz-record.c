/* SPDX-License-Identifier: MIT */
/* Fuzz target: JSON that swaptool reads back. The first byte picks what the rest is:
 *   0..7   the record STATE/<step>.json of one step (preflight ... accept, report), read by status,
 *          report (build, judge, text, HTML) and compare (accept records)
 *   8..15  a report.json, as verify-report's hash check, compare and the text/HTML renderers read it
 * Renderers print to stdout, which the harness points at /dev/null. */
#include "fuzz.h"

#include <sys/stat.h>

#include "report.h"
#include "schema.h"
#include "steps.h"

/* the corpus's first byte picks schema_steps[0..7]: preflight ... accept, report */
_Static_assert(SS_N == 8, "tests/fuzz/corpus/record names steps by their index in schema_steps");
static char state[2048];

/* the directory is empty between inputs: gone when the process ends */
static void remove_dir(void)
{
	rmdir(state);
}
static struct profile *prof;

static void run_step(int (*run)(struct ctx *, int, char **, struct record *),
		     void (*render)(const struct ctx *, json_object *), const char *step, char **argv, int argc)
{
	struct ctx ctx = { .step = step, .state_dir = state, .profile = prof, .json = false };
	struct record rec = { 0 };

	if (record_init(&rec, step) < 0)
		abort();
	optind = 1;
	opterr = 0;
	run(&ctx, argc, argv, &rec);
	if (!ctx.err_code && render)
		render(&ctx, rec.root);
	free(ctx.err_msg);
	record_free(&rec);
}

static void render_report(json_object *rep)
{
	char *why = NULL;

	(void)report_check_hashes(rep, &why);
	free(why);
	free(report_text(rep));
	free(report_html(rep, prof));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[4096];
	unsigned sel;
	FILE *f;

	if (!prof) {
		char *err = NULL;
		int devnull = open("/dev/null", O_WRONLY);
		const char *tmp = getenv("TMPDIR");

		/* in $TMPDIR, which tests/fuzz/run empties after each target: libFuzzer's fork mode
		 * ends its workers with a signal, so the atexit removal does not always run */
		snprintf(state, sizeof(state), "%s/fuzz-record-state.XXXXXX", tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(state) || atexit(remove_dir) != 0 || profile_load(NULL, &prof, &err) < 0 || devnull < 0 ||
		    dup2(devnull, STDOUT_FILENO) < 0)
			abort();
		close(devnull);
	}
	if (size < 1)
		return 0;
	sel = data[0] & 15;
	snprintf(path, sizeof(path), "%s/%s.json", state, sel < SS_N ? schema_steps[sel] : "in");
	f = fopen(path, "w");
	if (!f || fwrite(data + 1, 1, size - 1, f) != size - 1 || fclose(f) != 0)
		abort();

	if (sel < SS_N) {
		json_object *rep = NULL;

		run_step(step_status_run, step_status_render, "status", (char *[]){ "status", NULL }, 1);
		run_step(step_status_run, step_status_render, "status",
			 (char *[]){ "status", "--path", "clone", NULL }, 3);
		if (report_build(state, &rep, NULL, NULL) == 0)
			render_report(rep);
		json_object_put(rep);
	} else {
		char *text = fuzz_str(data + 1, size - 1);
		json_object *doc = json_tokener_parse(text);
		free(text);
		if (doc && json_object_is_type(doc, json_type_object))
			render_report(doc);
		json_object_put(doc);
	}
	if (sel == SS_ACCEPT || sel >= SS_N)
		run_step(step_compare_run, step_compare_render, "compare", (char *[]){ "compare", path, path, NULL }, 3);
	unlink(path);
	return 0;
}
