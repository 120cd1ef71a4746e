/* SPDX-License-Identifier: MIT */
/* Each step's interface agrees with itself: every long option of its getopt table is in its usage
 * text, with a metavariable exactly when it takes a value, and every --option the usage names is in
 * the table (or is a global one). With --list it prints "STEP --opt --opt..." per step, and with
 * --globals "--opt --opt..." for the global options (cli/globals.c), for tests/cli/08-step-options.sh,
 * which holds the same tables against `swaptool help STEP`, `swaptool STEP --help`,
 * docs/swaptool-STEP.1 and docs/swaptool.1. */
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

static const struct option *table_find(const struct step *s, const char *name, size_t n)
{
	for (const struct option *o = s->options; o->name; o++)
		if (strlen(o->name) == n && !strncmp(o->name, name, n))
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

/* "--name SIZE", "--name=WHEN", "--name fresh|clone": the usage gives the option a value. */
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

static void check_step(const struct step *s)
{
	unsigned bad = 0;

	CHECK(s->name && *s->name && s->summary && *s->summary && s->usage && s->run && s->options);
	if (!s->name || !s->usage || !s->options)
		return;
	CHECK(!strncmp(s->usage, "swaptool ", 9) && !strncmp(s->usage + 9, s->name, strlen(s->name)));
	for (const struct option *o = s->options; o->name; o++) {
		const char *p = find_word(s->usage, o->name);
		bool with_value = false;

		if (!p) {
			fprintf(stderr, "%s: --%s is in the option table but not in the usage text\n", s->name, o->name);
			bad++;
			continue;
		}
		/* a value somewhere (the synopsis or its own line); a flag: none on its own line (in a
		 * synopsis, "--undo UNDO.tar.gz" is the flag and then the operand) */
		for (; p; p = find_word(p + 1, o->name))
			if (o->has_arg == required_argument || (p >= s->usage + 3 && !strncmp(p - 3, "\n  ", 3)))
				with_value = with_value || metavar_after(p, strlen(o->name));
		if (with_value != (o->has_arg == required_argument)) {
			fprintf(stderr, "%s: --%s %s, but the usage text %s\n", s->name, o->name,
				o->has_arg == required_argument ? "takes a value" : "takes no value",
				with_value ? "gives it one" : "names none");
			bad++;
		}
		CHECK(o->flag == NULL);
		for (const struct option *q = o + 1; q->name; q++)
			if (streq(q->name, o->name) || q->val == o->val) {
				fprintf(stderr, "%s: --%s and --%s share a name or a value\n", s->name, o->name, q->name);
				bad++;
			}
	}
	for (const char *p = strstr(s->usage, "--"); p; p = strstr(p + 2, "--")) {
		size_t n = 0;

		while (opt_char(p[2 + n]))
			n++;
		if (n == 0 || (p != s->usage && opt_char(p[-1])))
			continue;
		if (!table_find(s, p + 2, n) && !is_global(p + 2, n)) {
			fprintf(stderr, "%s: the usage text names --%.*s, which the option table lacks\n", s->name,
				(int)n, p + 2);
			bad++;
		}
	}
	CHECK(bad == 0);
}

/* The checker itself: a table and a usage text that disagree are caught, both ways. */
static void check_checker(void)
{
	static const struct option two[] = { { "alpha", required_argument, NULL, 'a' },
					      { "beta", no_argument, NULL, 'b' },
					      { 0 } };
	struct step s = { .name = "x", .summary = "x", .options = two, .run = step_config_run };
	int before = tap_failures;

	fprintf(stderr, "the checker on bad steps (4 complaints expected):\n");

	s.usage = "swaptool x [--alpha N] [--beta]\n";
	CHECK(find_word(s.usage, "alpha") && find_word(s.usage, "beta") && !find_word(s.usage, "alp"));
	CHECK(metavar_after(find_word(s.usage, "alpha"), 5) && !metavar_after(find_word(s.usage, "beta"), 4));
	CHECK(metavar_after(find_word("--path fresh|clone", "path"), 4));
	/* check_step on bad input must fail: count its failures, then take them back */
	s.usage = "swaptool x [--alpha N]\n"; /* --beta missing */
	check_step(&s);
	s.usage = "swaptool x [--alpha N] [--beta] [--gamma]\n"; /* --gamma unknown */
	check_step(&s);
	s.usage = "swaptool x [--alpha] [--beta]\n"; /* --alpha's value missing */
	check_step(&s);
	s.usage = "swaptool x [--alpha N] [--beta]\n  --beta N  a flag given a value\n";
	check_step(&s);
	CHECK_U64((uint64_t)(tap_failures - before), 4);
	tap_failures = before;
	fprintf(stderr, "the real steps:\n");
}

int main(int argc, char **argv)
{
	size_t n = 0;

	if (argc == 2 && streq(argv[1], "--list")) {
		for (size_t i = 0; step_table[i]; i++) {
			printf("%s", step_table[i]->name);
			for (const struct option *o = step_table[i]->options; o->name; o++)
				printf(" --%s", o->name);
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
