/* SPDX-License-Identifier: MIT */
/* swaptool: global options, dispatch to the steps (steps/table.c), the record's rendering and saving. */
#include "globals.h"
#include "steps.h"
#include "lock.h"
#include "trust.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <locale.h>
#include <signal.h>

#include <archive.h>
#include <blkid/blkid.h>
#include <ext2fs/ext2fs.h>
#include <libfdisk/libfdisk.h>
#include <libsmartcols/libsmartcols.h>
#include <openssl/crypto.h>
#include <zlib.h>

/* --version --verbose: what a bug report needs: the libraries this binary runs with and the profile. */
static void version_verbose(const struct ctx *ctx, const char *perr)
{
	const char *blkid = "?", *fdisk = "?", *e2 = "?", *scols = "?";
	json_object *o = json_object_new_object(), *libs = json_object_new_object(), *p = json_object_new_object();

	blkid_get_library_version(&blkid, NULL);
	fdisk_get_library_version(&fdisk);
	ext2fs_get_library_version(&e2, NULL);
	scols_get_library_version(&scols);
	jset_str(o, "schema", RECORD_SCHEMA);
	jset_str(o, "version", SWAPTOOL_VERSION);
	jset_str(libs, "libblkid", blkid);
	jset_str(libs, "libfdisk", fdisk);
	jset_str(libs, "libext2fs", e2);
	jset_str(libs, "libsmartcols", scols);
	jset_str(libs, "json-c", json_c_version());
	jset_str(libs, "libarchive", archive_version_details());
	jset_str(libs, "libnvme", SWAPTOOL_LIBNVME_VERSION " (build)");
	jset_str(libs, "liburing", SWAPTOOL_LIBURING_VERSION " (build)");
	jset_str(libs, "openssl", OpenSSL_version(OPENSSL_VERSION));
	jset_str(libs, "zlib", zlibVersion());
	json_object_object_add(o, "libraries", libs);
	jset_str(p, "source", ctx->profile_from);
	jset_str(p, "path", ctx->profile_path);
	if (perr)
		jset_str(p, "error", perr);
	json_object_object_add(o, "profile", p);
	if (ctx->json)
		out_json(o);
	else {
		printf("swaptool %s\n", SWAPTOOL_VERSION);
		json_object_object_foreach(libs, k, v)
			printf("  %-13s %s\n", k, json_object_get_string(v));
		printf("profile: %s%s%s%s\n", ctx->profile_from, ctx->profile_path ? " ('" : "",
		       ctx->profile_path ?: "", ctx->profile_path ? "')" : "");
		if (perr)
			printf("  %s\n", perr);
	}
	json_object_put(o);
}


static void usage(FILE *f)
{
	globals_usage_line(f);
	fprintf(f, "\nReplace the boot NVMe of a GPU node without losing its identity, and prove the new drive.\n\n"
		   "steps:\n");
	for (size_t i = 0; step_table[i]; i++)
		fprintf(f, "  %-14s %s\n", step_table[i]->name, step_table[i]->summary);
	fputc('\n', f);
	globals_help(f);
	fprintf(f, "\n'swaptool help STEP' shows a step's options; man swaptool has the whole story.\n"
		   "exit codes: 0 pass, 1 a check or gate failed, 2 usage, 3 could not do the job, 4 preflight's\n"
		   "clone trap found with a path open, 130 interrupted\n");
}

static void step_usage(const struct step *s)
{
	printf("swaptool %s: %s\n\nusage: ", s->name, s->summary);
	step_usage_print(stdout, s);
	putchar('\n');
	globals_step_line(stdout);
}

struct globals {
	bool help, version, verbose;
	enum { COLOR_AUTO, COLOR_ALWAYS, COLOR_NEVER } color;
};

/* One global option that global_match found, with its value (NULL: none given). 0, or the exit code
 * that ctx_error set. */
static int take_global(struct ctx *ctx, struct globals *g, enum global_id id, const char *val)
{
	switch (id) {
	case G_JSON:
		ctx->json = true;
		break;
	case G_QUIET:
		ctx->quiet = true;
		break;
	case G_NO_COLOR:
		g->color = COLOR_NEVER;
		break;
	case G_COLOR:
		val = val ?: "always"; /* a bare --color means always, as ls(1) */
		if (streq(val, "auto"))
			g->color = COLOR_AUTO;
		else if (streq(val, "always"))
			g->color = COLOR_ALWAYS;
		else if (streq(val, "never"))
			g->color = COLOR_NEVER;
		else
			return ctx_error(ctx, EXIT_USAGE, "bad --color '%s': give auto, always or never", val);
		break;
	case G_NO_RECORD:
		ctx->no_record = true;
		break;
	case G_HELP:
		g->help = true;
		break;
	case G_VERSION:
		g->version = true;
		break;
	case G_VERBOSE:
		g->verbose = true;
		break;
	case G_STATE:
		free(ctx->state_dir);
		ctx->state_dir = xstrdup(val);
		ctx->state_given = true;
		break;
	case G_PROFILE:
		ctx->profile_path = val;
		break;
	case G_TRUST_UNSAFE_PROFILE:
		ctx->trust_unsafe_profile = true;
		break;
	}
	return 0;
}

/* Take the global options out of argv wherever they stand (before a "--"), so that
 * `swaptool preflight X --json` and `swaptool --json preflight X` mean the same. Before the step
 * name every argument that starts with '-' must be a global option: anything else is an unknown
 * option (exit 2), not a step; after it, the step's own getopt judges the rest. */
static int take_globals(struct ctx *ctx, struct globals *g, int *argc, char **argv)
{
	bool before_step = true;
	int out = 1;

	for (int i = 1; i < *argc; i++) {
		const char *a = argv[i];
		const struct global_option *o;
		const char *val;

		if (streq(a, "--")) {
			while (i < *argc)
				argv[out++] = argv[i++];
			break;
		}
		o = global_match(a, &val);
		if (o) {
			if (o->arg == GLOBAL_VALUE && !val && i + 1 < *argc)
				val = argv[++i];
			if (o->arg == GLOBAL_VALUE && (!val || !*val))
				return ctx_error(ctx, EXIT_USAGE, "option '--%s' needs a value", o->name);
			if (take_global(ctx, g, o->id, val) != 0)
				return ctx->err_code;
		} else if (before_step && a[0] == '-' && a[1] != '\0') {
			_cleanup_free_ char *name = xasprintf("%.*s", (int)strcspn(a, "="), a);

			return ctx_error(ctx, EXIT_USAGE, "unknown option '%s'; 'swaptool --help' lists the options",
					 name);
		} else {
			before_step = false;
			argv[out++] = argv[i];
		}
	}
	*argc = out;
	argv[out] = NULL;
	return 0;
}

/* Standard descriptors that are closed at start would be taken by the first file the step opens (a
 * record, a tarball) and output would land in it: give 0 and 2 /dev/null, and refuse to run with no
 * stdout at all, since the result could never be seen. Returns 0 or an exit code. */
static int check_std_fds(void)
{
	for (int fd = 0; fd <= 2; fd++) {
		int n;

		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		/* read-only on 1 too: it only holds the slot, and any write to it fails */
		n = open("/dev/null", fd == 2 ? O_WRONLY : O_RDONLY);
		if (n != fd) {
			if (n >= 0)
				close(n);
			return EXIT_FAILED;
		}
		if (fd == 1) {
			fprintf(stderr, "swaptool: standard output is closed, so the result could not be shown; "
					"run it again with stdout open (a terminal, a file or a pipe)\n");
			return EXIT_FAILED;
		}
	}
	return 0;
}

/* The result is the point of the run: a write to stdout that failed (a full disk, a reader that
 * went away: EPIPE, as SIGPIPE is ignored) is an error with a message, exit 3, like coreutils'
 * close_stdout. */
static int close_stdout(const char *step, int code)
{
	int e = 0;

	errno = 0;
	if (fflush(stdout) != 0)
		e = errno ? errno : EIO;
	else if (ferror(stdout))
		e = EIO; /* an earlier write failed and errno has moved on since */
	if (fclose(stdout) != 0 && !e)
		e = errno ? errno : EIO;
	if (!e)
		return code;
	fprintf(stderr, "swaptool%s%s: cannot write the result to standard output: %s%s\n", step ? " " : "",
		step ? step : "", strerror(e),
		e == EPIPE ? " (the reader closed the pipe before the end)" :
		e == ENOSPC ? "; free some space or send it elsewhere" : "");
	return code == EXIT_INTERRUPTED ? code : EXIT_FAILED;
}

/* Root runs the profile's [engine] commands and signs what it finds in the state directory: either
 * one that another user could change is refused (src/trust.h; the WHO MAY WRITE WHAT section of
 * docs/swaptool-safety.7). The profile's verdict is kept for config, which only shows it; a user
 * other than root keeps the files it is given. 0, or the exit code after the error is shown. */
static int check_trust(struct ctx *ctx, const struct step *s)
{
	_cleanup_free_ char *why = NULL;

	if (ctx->profile_path && trust_check_path(ctx->profile_path, geteuid(), &why) == -EPERM)
		ctx->profile_distrust = TAKE_PTR(why);
	if (geteuid() != 0 || streq(s->name, "config"))
		return 0;
	if (ctx->profile_distrust && !ctx->trust_unsafe_profile)
		ctx_error(ctx, EXIT_USAGE, "profile '%s' (%s) can be changed by a user other than root: %s; root would "
			  "run its [engine] commands: make the file and its directories root's and writable by root "
			  "alone (chown root: FILE; chmod go-w FILE), or pass --trust-unsafe-profile",
			  ctx->profile_path, ctx->profile_from, ctx->profile_distrust);
	/* a missing directory is judged by the part that exists: mkdir_p makes the rest 0700 as root, and
	 * the lock judges it again once made (src/lock.c) */
	else if (trust_check(ctx->state_dir, 0, TRUST_MISSING_OK, &why) == -EPERM)
		ctx_error(ctx, EXIT_FAILED, "state directory '%s' can be changed by a user other than root: %s; root "
			  "would sign what it finds there: make it and its parents root's and writable by root alone "
			  "(chown root: DIR; chmod 0700 DIR), or pass --state DIR with such a directory",
			  ctx->state_dir, why);
	if (!ctx->err_code)
		return 0;
	out_error(ctx, ctx->err_code, ctx->err_msg);
	return ctx->err_code;
}

static int swaptool_main(int argc, char **argv);
/* The run's context; main frees what it holds, so every early return of swaptool_main is covered. */
static struct ctx ctx;
static char *profile_owned; /* ctx.profile_path once profile_locate chose it */

/* A mistyped --state would show every step "not run" (status) or sign an empty report (report, whose
 * lock would make the directory): say what is wrong instead, as lsblk and nvme-cli do for a path
 * that does not exist. The default directory that no step has made yet is a fresh node: nothing has
 * run. 0, or the exit code after the error is shown. */
static int check_state_given(const struct step *s)
{
	struct stat st;
	_cleanup_free_ char *msg = NULL;

	if (!(s->flags & STEP_READS_STATE) || !ctx.state_given ||
	    (stat(ctx.state_dir, &st) == 0 && S_ISDIR(st.st_mode)))
		return 0;
	msg = xasprintf("state directory '%s' %s: no step has saved a record there; name the one the steps used "
			"with --state", ctx.state_dir, access(ctx.state_dir, F_OK) < 0 ? "does not exist" :
			"is not a directory");
	out_error(&ctx, EXIT_FAILED, msg);
	return EXIT_FAILED;
}

int main(int argc, char **argv)
{
	int code;

	signal(SIGPIPE, SIG_IGN);
	/* The output is UTF-8 whatever the locale (records, JSON): libsmartcols would write the bytes of
	 * "°C" as \xc2\xb0 under the C locale, so character types are UTF-8's. */
	if (!setlocale(LC_CTYPE, "C.UTF-8"))
		setlocale(LC_CTYPE, "");
	code = check_std_fds();
	if (code)
		return code;
	code = swaptool_main(argc, argv);
	profile_free(ctx.profile);
	free(profile_owned);
	free(ctx.state_dir);
	free(ctx.profile_distrust);
	free(ctx.err_msg);
	return close_stdout(ctx.step, code);
}

/* The global options out of argv, then what they decide before any step: colour, progress, where
 * the profile is. 0, or the exit code of a bad option (shown). */
static int take_options(struct globals *g, int *argc, char **argv)
{
	const char *no_color = getenv("NO_COLOR"), *term = getenv("TERM");

	if (take_globals(&ctx, g, argc, argv) != 0) {
		out_error(&ctx, ctx.err_code, ctx.err_msg);
		return ctx.err_code;
	}
	/* auto: a terminal that is not "dumb", and no NO_COLOR (no-color.org: set and not empty) */
	if (g->color == COLOR_AUTO)
		ctx.color = isatty(STDOUT_FILENO) && !(no_color && *no_color) && !(term && streq(term, "dumb"));
	else
		ctx.color = g->color == COLOR_ALWAYS;
	ctx.color = ctx.color && !ctx.json;
	ctx.progress = isatty(STDERR_FILENO) && !ctx.quiet;

	profile_locate(ctx.profile_path, &profile_owned, &ctx.profile_from);
	ctx.profile_path = profile_owned;
	return 0;
}

/* --version, with --verbose the libraries and the profile too. */
static int show_version(const struct globals *g)
{
	_cleanup_free_ char *perr = NULL;
	int r;

	if (g->verbose) {
		r = profile_load(ctx.profile_path, &ctx.profile, &perr);
		version_verbose(&ctx, r < 0 ? perr : NULL);
	} else if (ctx.json)
		printf("{\"schema\":\"%s\",\"version\":\"%s\"}\n", RECORD_SCHEMA, SWAPTOOL_VERSION);
	else
		printf("swaptool %s\n", SWAPTOOL_VERSION);
	return 0;
}

/* A name that is no step, with the step it is nearest to when there is one (a typo, as git's "did you
 * mean"), shown. Returns the exit code, 2. */
static int unknown_step(const char *name)
{
	const struct step *near = step_nearest(name);

	if (near)
		ctx_error(&ctx, EXIT_USAGE, "unknown step '%s'; did you mean '%s'? ('swaptool --help' lists the steps)",
			  name, near->name);
	else
		ctx_error(&ctx, EXIT_USAGE, "unknown step '%s'; 'swaptool --help' lists the steps", name);
	out_error(&ctx, ctx.err_code, ctx.err_msg);
	return EXIT_USAGE;
}

/* The step argv names into *s, with `swaptool --help`, `swaptool help [STEP]` and `STEP --help`
 * answered here. -1: run *s; else the exit code (the help shown, or an unknown step). */
static int pick_step(const struct globals *g, int argc, char **argv, const struct step **s)
{
	if (argc < 2) {
		if (g->help) {
			usage(stdout);
			return 0;
		}
		usage(stderr);
		if (ctx.json)
			out_error(&ctx, EXIT_USAGE, "no step given; 'swaptool --help' lists the steps");
		return EXIT_USAGE;
	}
	if (streq(argv[1], "help")) {
		if (argc < 3) {
			usage(stdout);
			return 0;
		}
		*s = step_find(argv[2]);
		if (!*s)
			return unknown_step(argv[2]);
		step_usage(*s);
		return 0;
	}
	*s = step_find(argv[1]);
	if (!*s)
		return unknown_step(argv[1]);
	ctx.step = (*s)->name;
	if (g->help) {
		step_usage(*s);
		return 0;
	}
	return -1;
}

/* What a step needs before it runs: the profile, the state directory, its record, and the state
 * directory's lock when it saves its record. 0, or the exit code (shown). */
static int open_step(const struct step *s, struct record *rec, struct state_lock *lock)
{
	_cleanup_free_ char *perr = NULL;
	int r, code;

	r = profile_load(ctx.profile_path, &ctx.profile, &perr);
	if (r < 0) {
		out_error(&ctx, EXIT_USAGE, perr);
		return EXIT_USAGE;
	}
	if (!ctx.state_dir && state_dir_default(&ctx.state_dir) < 0) {
		out_error(&ctx, EXIT_USAGE, "no state directory: set --state DIR, XDG_STATE_HOME or HOME");
		return EXIT_USAGE;
	}
	code = check_trust(&ctx, s);
	if (code)
		return code;
	code = check_state_given(s);
	if (code)
		return code;
	if (record_init(rec, s->name) < 0)
		abort();

	/* One writer per state directory, held from before the step's first write to after its record.
	 * A directory that cannot hold the lock file cannot take the record either: the save says so. */
	r = (s->flags & STEP_SAVES_RECORD) && !ctx.no_record
		    ? state_lock_take(lock, ctx.state_dir, s->name, STATE_LOCK_WAIT_MS) : 0;
	if (r == -EINVAL || r == -EPERM) {
		out_error(&ctx, EXIT_FAILED, lock->why);
		return EXIT_FAILED;
	}
	if (r == -EBUSY) {
		char pid[24] = "unknown";
		if (lock->holder)
			snprintf(pid, sizeof(pid), "%ld", (long)lock->holder);
		_cleanup_free_ char *msg = xasprintf(
			"state directory '%s' is in use by swaptool pid %s (step %s); wait for it to finish, "
			"or pass --state DIR for a separate run", ctx.state_dir, pid,
			lock->holder_step[0] ? lock->holder_step : "unknown");
		out_error(&ctx, EXIT_FAILED, msg);
		return EXIT_FAILED;
	}
	return 0;
}

/* After run(): its error, or its record saved (when the step saves one) and shown. Returns the
 * exit code, run()'s `code` unless the record could not be saved. */
static int step_result(const struct step *s, struct record *rec, int code)
{
	int r;

	if (ctx.err_code) {
		out_error(&ctx, ctx.err_code, ctx.err_msg);
		return ctx.err_code;
	}
	if ((s->flags & STEP_SAVES_RECORD) && !ctx.no_record) {
		r = record_save(rec, ctx.state_dir);
		/* A step that changed nothing still has its result: show it, and say on stderr that it
		 * was not kept (a non-root user with the root's state directory, a read-only disk).
		 * plan --rehearse is evidence the report needs, so it fails like the steps that write. */
		if (r < 0 && (s->flags & STEP_READS_ONLY) && !jget(rec->root, "rehearsal")) {
			fprintf(stderr, "swaptool %s: warning: cannot write the record to '%s': %s; the result "
					"is shown but not saved: pass --state DIR with a writable directory to "
					"keep it, or --no-record\n", s->name, ctx.state_dir, strerror(-r));
			r = 0;
		}
		if (r < 0) {
			/* restore says itself when the root changed and where its undo is (steps/restore.c) */
			_cleanup_free_ char *msg = xasprintf("cannot write the record to '%s': %s; pass --state DIR with a "
							     "writable directory", ctx.state_dir, strerror(-r));
			out_error(&ctx, EXIT_FAILED, msg);
			return EXIT_FAILED;
		}
	}
	if (ctx.json)
		out_json(rec->root);
	else if (s->render)
		s->render(&ctx, rec->root);
	else {
		out_checks(&ctx, rec->root);
		out_verdict(&ctx, rec->root, "%s", "");
	}
	return code;
}

/* The phases of a run, in order: the global options, --version, the step (or its help), what it
 * needs, the step itself, its result. */
static int swaptool_main(int argc, char **argv)
{
	struct globals g = { 0 };
	struct record rec = { 0 };
	struct state_lock lock = { .fd = -1 };
	const struct step *s = NULL;
	int code;

	code = take_options(&g, &argc, argv);
	if (code)
		return code;
	if (g.version)
		return show_version(&g);
	code = pick_step(&g, argc, argv, &s);
	if (code >= 0)
		return code;
	code = open_step(s, &rec, &lock);
	if (code == 0) {
		optind = 1;
		opterr = 0;
		code = s->run(&ctx, argc - 1, argv + 1, &rec);
		code = step_result(s, &rec, code);
	}
	state_lock_release(&lock);
	record_free(&rec);
	return code;
}
