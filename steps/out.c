/* SPDX-License-Identifier: MIT */
/* What the CLI shows: tables and lines on stdout, JSON documents, errors and the progress line
 * (src/ never prints; it builds tables with src/table.h). */
#include "util.h"
#include "out.h"
#include "wrap.h"

#include <time.h>

#define ANSI_BOLD "\033[1m"
#define ANSI_RED "\033[31m"
#define ANSI_GREEN "\033[32m"
#define ANSI_YELLOW "\033[33m"
#define ANSI_DIM "\033[2m"
#define ANSI_RESET "\033[0m"

void table_print(const struct ctx *ctx, const struct table *t)
{
	if (!ctx->json)
		table_fprint(stdout, t, ctx->color);
}

/* The one printer of free text for people: every line beside the tables (a heading, a hint, a
 * verdict, an error, the progress line) goes through here, escaped as the tables' cells are
 * (text_safe, src/util.h): the text holds host names, file names and summaries from records of
 * other nodes and from the node user's home, which must not retitle, clear or overwrite root's
 * terminal. A newline is escaped too, so that a name cannot forge a line of its own: a caller
 * with two lines prints two. */
static char *safe_vformat(const char *fmt, va_list ap)
{
	_cleanup_free_ char *text = NULL;

	if (vasprintf(&text, fmt, ap) < 0)
		abort();
	return text_safe(text, false);
}

/* One line of `head` (the caller's own, escapes allowed) and `safe` text, broken at words to the
 * terminal's width, every line after the first indented by `indent` more than the first. */
static void put_line(FILE *f, const char *head, const char *safe, size_t indent)
{
	_cleanup_free_ char *line = xasprintf("%s%s", head, safe), *wrapped = NULL;

	wrapped = text_wrap(line, term_columns(fileno(f)), strspn(line, " ") + indent);
	fputs(wrapped, f);
	fputc('\n', f);
}

void out_heading(const struct ctx *ctx, const char *fmt, ...)
{
	_cleanup_free_ char *safe = NULL, *wrapped = NULL;
	va_list ap;

	if (ctx->json)
		return;
	va_start(ap, fmt);
	safe = safe_vformat(fmt, ap);
	va_end(ap);
	wrapped = text_wrap(safe, term_columns(STDOUT_FILENO), 2);
	printf(ctx->color ? "\n" ANSI_BOLD "%s" ANSI_RESET "\n" : "\n%s\n", wrapped);
}

void out_line(const struct ctx *ctx, const char *fmt, ...)
{
	_cleanup_free_ char *safe = NULL;
	va_list ap;

	if (ctx->json)
		return;
	va_start(ap, fmt);
	safe = safe_vformat(fmt, ap);
	va_end(ap);
	put_line(stdout, "", safe, 2);
}

void out_block(const char *text)
{
	_cleanup_free_ char *safe = text_safe(text ?: "", true);

	fputs(safe, stdout);
}

const char *out_word(const struct ctx *ctx, const char *word)
{
	static const struct {
		const char *word, *plain, *colored;
	} words[] = {
		{ "pass", "PASS", ANSI_GREEN "PASS" ANSI_RESET },
		{ "done", "PASS", ANSI_GREEN "PASS" ANSI_RESET },
		{ "skip", "skip", ANSI_DIM "skip" ANSI_RESET },
		{ "warn", "WARN", ANSI_YELLOW "WARN" ANSI_RESET },
		/* a finding with a way out: yellow as a warning, its own word */
		{ "trap", "TRAP", ANSI_YELLOW "TRAP" ANSI_RESET },
		{ "fail", "FAIL", ANSI_RED "FAIL" ANSI_RESET },
	};
	for (size_t i = 0; i < ARRAY_SIZE(words); i++)
		if (streq(word, words[i].word))
			return ctx->color ? words[i].colored : words[i].plain;
	/* a word no step writes (a hostile or newer record): neither a pass nor a fail */
	return ctx->color ? ANSI_BOLD "UNKNOWN" ANSI_RESET : "UNKNOWN";
}

const char *out_status(const struct ctx *ctx, enum status st)
{
	return out_word(ctx, status_name(st));
}

void out_checks(const struct ctx *ctx, json_object *record)
{
	json_object *checks = jget(record, "checks");
	_cleanup_table_ struct table *t = table_new(3);

	if (ctx->json || !checks)
		return;
	table_header(t, "status", "check", "finding");
	for (size_t i = 0; i < jarray_len(checks); i++) {
		json_object *c = jarray_at(checks, i);

		table_row(t, out_word(ctx, jget_str(c, "status")), jget_str(c, "id"), jget_str(c, "summary"));
	}
	table_print(ctx, t);
}

void out_verdict(const struct ctx *ctx, json_object *record, const char *fmt, ...)
{
	const char *word = jget_str(record, "verdict");
	_cleanup_free_ char *text = NULL, *head = NULL, *safe = NULL;
	va_list ap;

	if (ctx->json)
		return;
	head = xasprintf("%sverdict:%s %s  ", ctx->color ? ANSI_BOLD : "", ctx->color ? ANSI_RESET : "",
			 out_word(ctx, word));
	fputc('\n', stdout);
	if (!verdict_word_known(word)) {
		/* the step's words were written for a verdict it knows: do not pair them with this one */
		safe = text_safe(word ?: "(none)", false);
		text = xasprintf("the record's verdict '%s' is not pass, warn, trap, fail or skip: do not trust it; "
				 "make the record again with this swaptool", safe);
		put_line(stdout, head, text, 2);
		return;
	}
	va_start(ap, fmt);
	if (vasprintf(&text, fmt, ap) < 0)
		abort();
	va_end(ap);
	/* No words of the step's own: the most severe check says why (the first of them). */
	if (!*text) {
		json_object *checks = jget(record, "checks");
		enum status worst = ST_PASS;

		for (size_t i = 0; i < jarray_len(checks); i++) {
			json_object *c = jarray_at(checks, i);
			enum status cs = ST_PASS;

			status_parse(jget_str(c, "status"), &cs);
			if (cs > worst && cs != ST_SKIP) {
				worst = cs;
				free(text);
				text = xstrdup(jget_str(c, "summary"));
			}
		}
		if (!*text) {
			free(text);
			text = xstrdup("every check passed");
		}
	}
	safe = text_safe(text, false);
	put_line(stdout, head, safe, 2);
}

void out_json(json_object *o)
{
	const char *text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
	/* JSON is UTF-8: json-c copies a string's bytes as they are, so any that jset_str did not
	 * clean (a string added directly) are replaced by U+FFFD here. */
	_cleanup_free_ char *clean = utf8_valid(text) ? NULL : utf8_sanitize(text);

	puts(clean ?: text);
}

void out_error(const struct ctx *ctx, int code, const char *msg)
{
	if (ctx->json) {
		json_object *o = json_object_new_object(), *e = json_object_new_object();
		char now[32];

		iso8601_utc(time(NULL), now);
		jset_str(o, "schema", "swaptool/1");
		jset_str(o, "step", ctx->step);
		jset_str(o, "version", SWAPTOOL_VERSION);
		jset_str(o, "host", host_name());
		jset_str(o, "finished", now);
		jset_str(o, "verdict", "error");
		jset_i64(e, "exit_code", code);
		jset_str(e, "message", msg);
		json_object_object_add(o, "error", e);
		out_json(o);
		json_object_put(o);
		return;
	}
	_cleanup_free_ char *safe = text_safe(msg, false);
	_cleanup_free_ char *head = xasprintf("swaptool%s%s: ", ctx->step ? " " : "", ctx->step ? ctx->step : "");

	put_line(stderr, head, safe, 2);
}

void out_warning(const struct ctx *ctx, const char *fmt, ...)
{
	_cleanup_free_ char *head = xasprintf("swaptool%s%s: warning: ", ctx->step ? " " : "", ctx->step ? ctx->step : "");
	_cleanup_free_ char *safe = NULL;
	va_list ap;

	va_start(ap, fmt);
	safe = safe_vformat(fmt, ap);
	va_end(ap);
	put_line(stderr, head, safe, 2);
}

/* The progress line (stderr, a terminal) rewritten in place: one line, narrower than the terminal
 * (a line as wide as it would wrap and scroll on every update), cut before `tail` (its percentage
 * and time left). A note (`end` "\n") stays: it is wrapped instead. */
static void status_line(const struct ctx *ctx, const char *end, const char *tail, const char *fmt, va_list ap)
{
	_cleanup_free_ char *safe = NULL, *fitted = NULL;
	size_t width = term_columns(fileno(stderr));

	if (!ctx->progress)
		return;
	safe = safe_vformat(fmt, ap);
	fputs("\r\033[K", stderr);
	if (*end) {
		_cleanup_free_ char *line = xasprintf("%s%s", safe, tail);

		put_line(stderr, "", line, 2);
	} else {
		fitted = text_fit(safe, tail, width ? width - 1 : 0);
		fputs(fitted, stderr);
	}
	fflush(stderr);
}

void out_progress(const struct ctx *ctx, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	status_line(ctx, "", "", fmt, ap);
	va_end(ap);
}

static void out_progress_tail(const struct ctx *ctx, const char *tail, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void out_progress_tail(const struct ctx *ctx, const char *tail, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	status_line(ctx, "", tail, fmt, ap);
	va_end(ap);
}

void out_progress_end(const struct ctx *ctx)
{
	if (ctx->progress)
		fputs("\r\033[K", stderr);
}

const char *out_duration(uint64_t s, char *buf)
{
	if (s >= 3600)
		snprintf(buf, 16, "%u:%02u:%02u", (unsigned)(s / 3600 % 100000), (unsigned)(s / 60 % 60),
			 (unsigned)(s % 60));
	else
		snprintf(buf, 16, "%u:%02u", (unsigned)(s / 60), (unsigned)(s % 60));
	return buf;
}

void out_progress_eta(const struct ctx *ctx, uint64_t start_ns, uint64_t done, uint64_t total, const char *fmt, ...)
{
	_cleanup_free_ char *msg = NULL;
	uint64_t now = mono_ns(), elapsed = now > start_ns ? now - start_ns : 0;
	char eta[48] = "", d[16];
	va_list ap;

	if (!ctx->progress)
		return;
	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		abort();
	va_end(ap);
	if (total && done > total)
		done = total;
	/* the pace so far predicts the rest; nothing until there is a pace (a second in, some done) */
	if (total && done && elapsed >= 1000000000u) {
		double left = (double)elapsed / 1e9 * (double)(total - done) / (double)done;
		snprintf(eta, sizeof(eta), "  %u%%  %s left", (unsigned)(done * 100 / total),
			 out_duration((uint64_t)(left + 0.5), d));
	} else if (total)
		snprintf(eta, sizeof(eta), "  %u%%", (unsigned)(done * 100 / total));
	out_progress_tail(ctx, eta, "%s", msg);
}

void out_note(const struct ctx *ctx, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	status_line(ctx, "\n", "", fmt, ap);
	va_end(ap);
}
