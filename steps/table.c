/* SPDX-License-Identifier: MIT */
/* The step table: one line per step, in the order an operator runs them. Each step's name, options
 * and usage live in its own file (steps/steps.h). */
#include "steps.h"

const struct step *const step_table[] = {
	&step_preflight,
	&step_backup,
	&step_plan,
	&step_rescue,
	&step_clone,
	&step_import,
	&step_restore,
	&step_verify,
	&step_accept,
	&step_report,
	&step_verify_report,
	&step_status,
	&step_compare,
	&step_metrics,
	&step_fleet,
	&step_config,
	NULL,
};

const struct step *step_find(const char *name)
{
	for (size_t i = 0; step_table[i]; i++)
		if (streq(step_table[i]->name, name))
			return step_table[i];
	return NULL;
}

/* Edits (insert, delete, substitute, swap two neighbours) from a to b, counting no further than
 * max + 1 for names too long to be a step's: a step name is short, so the table fits on the stack. */
static size_t edits(const char *a, const char *b, size_t max)
{
	size_t la = strlen(a), lb = strlen(b);
	size_t d[24][24];

	if (la >= 24 || lb >= 24)
		return max + 1;
	for (size_t i = 0; i <= la; i++)
		d[i][0] = i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = j;
	for (size_t i = 1; i <= la; i++)
		for (size_t j = 1; j <= lb; j++) {
			size_t v = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);

			if (d[i - 1][j] + 1 < v)
				v = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < v)
				v = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < v)
				v = d[i - 2][j - 2] + 1;
			d[i][j] = v;
		}
	return d[la][lb];
}

const struct step *step_nearest(const char *name)
{
	const struct step *best = NULL;
	size_t best_d = 3; /* two edits at most: "prefligt", "acept", "verfy" */

	for (size_t i = 0; step_table[i]; i++) {
		size_t d = edits(name, step_table[i]->name, best_d);

		if (d < best_d)
			best = step_table[i], best_d = d;
	}
	return best;
}
