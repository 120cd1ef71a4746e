/* SPDX-License-Identifier: MIT */
/* Each step's interface agrees with itself. The options block of its usage is printed from its
 * option table (steps/common.c), so that block cannot drift; what is still written by hand can:
 * the table's entries (a value name exactly when the option takes a value, no name or value twice,
 * a line of its own or a mention elsewhere in the usage), and the synopsis and notes (every
 * --option they name is in the table or is a global one; in the synopsis, one that takes a value
 * is given one). The layout of the block is checked on a step made up here. With --list it prints
 * "STEP --opt --opt..." per step, and with --globals "--opt --opt..." for the global options
 * (cli/globals.c), for tests/cli/08-step-options.sh, which holds the same tables against
 * `swaptool help STEP`, `swaptool STEP --help`, docs/swaptool-STEP.1 and docs/swaptool.1. */
#include "globals.h"
#include "steps.h"
#include "tap.h"

#include <ctype.h>

/* cli/main.c takes these out of argv before a step sees them (take_globals). */
static bool is_global(const char *name, size_t n)
{
	for (size_t i = 0; i < global_options_n; i++)
		if (strlen(global_options[i].name) == n && !strncmp(global_options[i].name, name, n))
			return true;
	return false;
}

static bool opt_char(char c)
{
	return islower((unsigned char)c) || isdigit((unsigned char)c) || c == '-';
}

static const struct step_option *table_find(const struct step *s, const char *name, size_t n)
{
	for (const struct step_option *o = s->options; o->opt.name; o++)
		if (strlen(o->opt.name) == n && !strncmp(o->opt.name, name, n))
			return o;
	return NULL;
}

/* The first place at or after `from` where text has "--name" as a whole word; NULL when none. */
static const char *find_word(const char *from, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = strstr(from, "--"); p; p = strstr(p + 1, "--"))
		if (!strncmp(p + 2, name, n) && !opt_char(p[2 + n]) && (p == from || !opt_char(p[-1])))
			return p;
	return NULL;
}

/* "--name SIZE", "--name=WHEN", "--name fresh|clone": the text gives the option a value. */
static bool metavar_after(const char *p, size_t n)
{
	const char *v = p + 2 + n;

	if (*v != ' ' && *v != '=')
		return false;
	v++;
	if (isupper((unsigned char)*v))
		return true;
	while (islower((unsigned char)*v))
		v++;
	return *v == '|';
}

/* The usage as `swaptool help STEP` prints it after "usage: "; free() it. */
static char *usage_text(const struct step *s)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		abort();
	step_usage_print(f, s);
	fclose(f);
	return text;
}

/* Every --option that `text` (written by hand) names is one the step takes or a global one. */
static unsigned check_named(const struct step *s, const char *what, const char *text)
{
	unsigned bad = 0;

	for (const char *p = text ? strstr(text, "--") : NULL; p; p = strstr(p + 2, "--")) {
		size_t n = 0;

		while (opt_char(p[2 + n]))
			n++;
		if (n == 0 || (p != text && opt_char(p[-1])))
			continue;
		if (!table_find(s, p + 2, n) && !is_global(p + 2, n)) {
			fprintf(stderr, "%s: %s names --%.*s, which the option table lacks\n", s->name, what, (int)n, p + 2);
			bad++;
		}
	}
	return bad;
}

static unsigned check_option(const struct step *s, const struct step_option *o, const char *usage)
{
	const char *name = o->opt.name;
	unsigned bad = 0;

	CHECK(o->opt.flag == NULL);
	CHECK(o->opt.has_arg == no_argument || o->opt.has_arg == required_argument);
	if (o->opt.has_arg == required_argument && !o->arg) {
		fprintf(stderr, "%s: --%s takes a value, but its entry names none\n", s->name, name);
		bad++;
	}
	if (o->opt.has_arg == no_argument && o->arg) {
		fprintf(stderr, "%s: --%s takes no value, but its entry names one (%s)\n", s->name, name, o->arg);
		bad++;
	}
	if (!o->help && !find_word(usage, name)) {
		fprintf(stderr, "%s: --%s has no line of its own, and the usage names it nowhere\n", s->name, name);
		bad++;
	}
	/* the synopsis gives a value to an option that takes one, wherever it names it (a flag can be
	 * followed by an operand there: "--undo UNDO.tar.gz") */
	for (const char *p = find_word(s->synopsis, name); p && o->opt.has_arg == required_argument;
	     p = find_word(p + 1, name))
		if (!metavar_after(p, strlen(name))) {
			fprintf(stderr, "%s: --%s takes a value, but the synopsis gives it none\n", s->name, name);
			bad++;
		}
	for (const struct step_option *q = o + 1; q->opt.name; q++)
		if (streq(q->opt.name, name) || q->opt.val == o->opt.val) {
			fprintf(stderr, "%s: --%s and --%s share a name or a value\n", s->name, name, q->opt.name);
			bad++;
		}
	return bad;
}

static void check_step(const struct step *s)
{
	_cleanup_free_ char *usage = NULL;
	const struct option *g;
	unsigned bad = 0;
	size_t n = 0;

	CHECK(s->name && *s->name && s->summary && *s->summary && s->synopsis && s->run && s->options);
	if (!s->name || !s->synopsis || !s->options)
		return;
	CHECK(!strncmp(s->synopsis, "swaptool ", 9) && !strncmp(s->synopsis + 9, s->name, strlen(s->name)));
	usage = usage_text(s);
	for (const struct step_option *o = s->options; o->opt.name; o++, n++)
		bad += check_option(s, o, usage);
	CHECK(n <= STEP_OPTIONS_MAX);
	/* what getopt_long gets is the table's options, in its order */
	g = n <= STEP_OPTIONS_MAX ? step_getopt(s->options) : NULL;
	for (size_t i = 0; g && i <= n; i++)
		CHECK(g[i].name == s->options[i].opt.name && g[i].has_arg == s->options[i].opt.has_arg &&
		      g[i].flag == NULL && g[i].val == s->options[i].opt.val);
	bad += check_named(s, "the synopsis", s->synopsis);
	bad += check_named(s, "the notes", s->notes);
	for (const struct step_operand *a = s->operands; a && a->name; a++)
		bad += check_named(s, "an operand's line", a->help);
	for (const struct step_option *o = s->options; o->opt.name; o++)
		bad += check_named(s, "an option's line", o->help);
	CHECK(bad == 0);
}

/* The checker itself: entries and texts that disagree are caught; the block's layout. */
static void check_checker(void)
{
	static const struct step_operand operands[] = { { "THING", "what to read" }, { 0 } };
	static const struct step_option good[] = {
		{ { "alpha", required_argument, NULL, 'a' }, "N", "the first\ncontinued" },
		{ { "beta-long", no_argument, NULL, 'b' }, NULL, "a flag" },
		{ { "gamma", no_argument, NULL, 'g' }, NULL, NULL }, /* named in the synopsis */
		STEP_OPTIONS_END,
	};
	static const struct step_option no_value[] = { { { "alpha", required_argument, NULL, 'a' }, NULL, "x" },
						       STEP_OPTIONS_END };
	static const struct step_option flag_value[] = { { { "beta", no_argument, NULL, 'b' }, "N", "x" },
							 STEP_OPTIONS_END };
	static const struct step_option one[] = { { { "alpha", required_argument, NULL, 'a' }, "N", "x" },
						  STEP_OPTIONS_END };
	static const struct step_option unnamed[] = { { { "beta", no_argument, NULL, 'b' }, NULL, NULL },
						      STEP_OPTIONS_END };
	static const struct step_option twice[] = { { { "alpha", required_argument, NULL, 'a' }, "N", "x" },
						    { { "beta", required_argument, NULL, 'a' }, "N", "y" },
						    STEP_OPTIONS_END };
	struct step s = { .name = "x", .summary = "x", .synopsis = "swaptool x THING [--alpha N] [--gamma]\n",
			  .operands = operands, .options = good, .notes = "exit: 0 fine\n", .run = step_config_run };
	_cleanup_free_ char *text = usage_text(&s);
	int before = tap_failures;

	/* two spaces after the widest of "THING", "--alpha N" and "--beta-long"; a continuation line
	 * under its first; --gamma has no line */
	CHECK_STR(text, "swaptool x THING [--alpha N] [--gamma]\n"
			"  THING        what to read\n"
			"  --alpha N    the first\n"
			"               continued\n"
			"  --beta-long  a flag\n"
			"exit: 0 fine\n");
	CHECK(find_word(text, "alpha") && find_word(text, "beta-long") && !find_word(text, "alp"));
	CHECK(metavar_after(find_word(text, "alpha"), 5) && !metavar_after(find_word(text, "gamma"), 5));
	CHECK(metavar_after(find_word("--path fresh|clone", "path"), 4));
	check_step(&s);
	CHECK(tap_failures == before);

	fprintf(stderr, "the checker on bad steps (6 complaints expected):\n");
	/* check_step on bad input must fail: count its failures, then take them back */
	s.operands = NULL;
	s.notes = NULL;
	s.synopsis = "swaptool x [--alpha N]\n";
	s.options = no_value; /* --alpha takes a value its entry does not name */
	check_step(&s);
	s.synopsis = "swaptool x [--beta]\n";
	s.options = flag_value; /* a flag with a value name */
	check_step(&s);
	s.synopsis = "swaptool x\n";
	s.options = unnamed; /* no line, and the synopsis does not name it */
	check_step(&s);
	s.synopsis = "swaptool x [--alpha N] [--delta]\n";
	s.options = twice; /* --delta unknown; --alpha and --beta share 'a' */
	check_step(&s);
	s.synopsis = "swaptool x [--alpha]\n";
	s.options = one; /* --alpha's value missing in the synopsis */
	check_step(&s);
	CHECK_U64((uint64_t)(tap_failures - before), 5);
	tap_failures = before;
	fprintf(stderr, "the real steps:\n");
}

int main(int argc, char **argv)
{
	size_t n = 0;

	if (argc == 2 && streq(argv[1], "--list")) {
		for (size_t i = 0; step_table[i]; i++) {
			printf("%s", step_table[i]->name);
			for (const struct step_option *o = step_table[i]->options; o->opt.name; o++)
				printf(" --%s", o->opt.name);
			putchar('\n');
		}
		return 0;
	}
	if (argc == 2 && streq(argv[1], "--globals")) {
		for (size_t i = 0; i < global_options_n; i++)
			printf("%s--%s", i ? " " : "", global_options[i].name);
		putchar('\n');
		return 0;
	}
	check_checker();
	for (size_t i = 0; step_table[i]; i++, n++) {
		check_step(step_table[i]);
		CHECK(step_find(step_table[i]->name) == step_table[i]);
	}
	CHECK(n >= 14);
	CHECK(step_find("nosuchstep") == NULL);
	return tap_done();
}
