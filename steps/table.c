/* SPDX-License-Identifier: MIT */
/* The step table: one line per step, in the order an operator runs them. Each step's name, options
 * and usage live in its own file (steps/steps.h). */
#include "steps.h"

const struct step *const step_table[] = {
	&step_preflight,
	&step_backup,
	&step_plan,
	&step_clone,
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
