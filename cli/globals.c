/* SPDX-License-Identifier: MIT */
/* The global options' one table (cli/globals.h) and the texts printed from it. */
#include "globals.h"
#include "util.h"

#include <string.h>

const struct global_option global_options[] = {
	{ G_JSON, "json", 'j', GLOBAL_FLAG, NULL, NULL, GLOBAL_IN_USAGE | GLOBAL_IN_STEP,
	  "print exactly one JSON document on stdout, errors included" },
	{ G_STATE, "state", 0, GLOBAL_VALUE, "DIR", NULL, GLOBAL_IN_USAGE | GLOBAL_IN_STEP,
	  "where step records are written and read" },
	{ G_PROFILE, "profile", 0, GLOBAL_VALUE, "FILE", NULL, GLOBAL_IN_USAGE | GLOBAL_IN_STEP,
	  "site settings (man 5 swaptool-profile)" },
	/* root refuses a profile another user could change: it names the commands accept runs */
	{ G_TRUST_UNSAFE_PROFILE, "trust-unsafe-profile", 0, GLOBAL_FLAG, NULL, NULL, GLOBAL_IN_USAGE | GLOBAL_IN_STEP,
	  "as root, use a profile another user can change (runs its [engine] commands as root)" },
	{ G_NO_RECORD, "no-record", 0, GLOBAL_FLAG, NULL, NULL, GLOBAL_IN_USAGE | GLOBAL_IN_STEP,
	  "save no record in the state directory" },
	{ G_QUIET, "quiet", 'q', GLOBAL_FLAG, NULL, NULL, GLOBAL_IN_USAGE | GLOBAL_IN_STEP, "no progress lines" },
	/* a bare --color means always, as ls(1) */
	{ G_COLOR, "color", 0, GLOBAL_OPTIONAL, "WHEN", "auto|always|never", GLOBAL_IN_USAGE | GLOBAL_IN_STEP,
	  "colours on stdout: auto (the default), always, never" },
	{ G_NO_COLOR, "no-color", 0, GLOBAL_FLAG, NULL, NULL, 0, "the same as --color=never" },
	{ G_HELP, "help", 'h', GLOBAL_FLAG, NULL, NULL, 0, "this text; with a step, the step's options" },
	{ G_VERSION, "version", 'V', GLOBAL_FLAG, NULL, NULL, GLOBAL_IN_USAGE, "the version" },
	{ G_VERBOSE, "verbose", 0, GLOBAL_FLAG, NULL, NULL, GLOBAL_IN_USAGE | GLOBAL_NESTED,
	  "with --version: the libraries and the profile in force" },
};
const size_t global_options_n = ARRAY_SIZE(global_options);

/* The usage line wraps before an option that would end past this column. */
#define USAGE_WIDTH 90
#define USAGE_INDENT "                "

const struct global_option *global_match(const char *a, const char **value)
{
	*value = NULL;
	for (size_t i = 0; i < global_options_n; i++) {
		const struct global_option *o = &global_options[i];
		size_t n = strlen(o->name);

		if (o->short_name && a[0] == '-' && a[1] == o->short_name && a[2] == '\0')
			return o;
		if (strncmp(a, "--", 2) || strncmp(a + 2, o->name, n))
			continue;
		if (a[2 + n] == '\0')
			return o;
		if (a[2 + n] == '=' && o->arg != GLOBAL_FLAG) {
			*value = a + 3 + n;
			return o;
		}
	}
	return NULL;
}

/* "-j|--json", "--state DIR", "--color=WHEN" (choices: "--color=auto|always|never") into buf. */
static void option_text(const struct global_option *o, bool choices, char *buf, size_t size)
{
	const char *v = choices && o->choices ? o->choices : o->metavar;
	char sh[4] = "";

	if (o->short_name)
		snprintf(sh, sizeof(sh), "-%c|", o->short_name);
	snprintf(buf, size, "%s--%s%s%s", sh, o->name,
		 o->arg == GLOBAL_VALUE ? " " : o->arg == GLOBAL_OPTIONAL ? "=" : "", o->arg == GLOBAL_FLAG ? "" : v);
}

void globals_usage_line(FILE *f)
{
	size_t col = strlen("usage: swaptool");

	fputs("usage: swaptool", f);
	for (size_t i = 0; i < global_options_n; i++) {
		char item[160], text[64];
		size_t len;

		if (!(global_options[i].shown & GLOBAL_IN_USAGE) || (global_options[i].shown & GLOBAL_NESTED))
			continue;
		option_text(&global_options[i], true, text, sizeof(text));
		len = (size_t)snprintf(item, sizeof(item), "[%s", text);
		/* --verbose means something only with --version: "[-V|--version [--verbose]]" */
		for (size_t j = i + 1; j < global_options_n && (global_options[j].shown & GLOBAL_NESTED); j++) {
			option_text(&global_options[j], true, text, sizeof(text));
			len += (size_t)snprintf(item + len, sizeof(item) - len, " [%s]", text);
		}
		len += (size_t)snprintf(item + len, sizeof(item) - len, "]");
		if (col + 1 + len > USAGE_WIDTH) {
			fputs("\n" USAGE_INDENT, f);
			col = strlen(USAGE_INDENT);
		} else {
			fputc(' ', f);
			col++;
		}
		fputs(item, f);
		col += len;
	}
	fputs(" STEP [ARGS]\n", f);
}

void globals_step_line(FILE *f)
{
	fputs("global options:", f);
	for (size_t i = 0; i < global_options_n; i++) {
		char text[64];

		if (!(global_options[i].shown & GLOBAL_IN_STEP))
			continue;
		option_text(&global_options[i], false, text, sizeof(text));
		fprintf(f, " %s", text);
	}
	fputc('\n', f);
}

void globals_help(FILE *f)
{
	char text[64][64];
	int width = 0;

	fputs("global options (before or after the step):\n", f);
	/* the help column two spaces after the widest option, whatever the table holds */
	for (size_t i = 0; i < global_options_n && i < ARRAY_SIZE(text); i++) {
		const struct global_option *o = &global_options[i];
		char sh[8] = "";

		if (o->short_name)
			snprintf(sh, sizeof(sh), "-%c, ", o->short_name);
		snprintf(text[i], sizeof(text[i]), "%s--%s%s%s%s", sh, o->name,
			 o->arg == GLOBAL_VALUE ? " " : o->arg == GLOBAL_OPTIONAL ? "[=" : "",
			 o->arg == GLOBAL_FLAG ? "" : o->metavar, o->arg == GLOBAL_OPTIONAL ? "]" : "");
		if ((int)strlen(text[i]) > width)
			width = (int)strlen(text[i]);
	}
	for (size_t i = 0; i < global_options_n && i < ARRAY_SIZE(text); i++)
		fprintf(f, "  %-*s  %s\n", width, text[i], global_options[i].help);
}
