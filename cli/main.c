/* SPDX-License-Identifier: MIT */
/* swaptool: the step table, global options and dispatch. */
#include "steps.h"
#include "lock.h"

#include <fcntl.h>
#include <locale.h>
#include <signal.h>

#include <archive.h>
#include <blkid/blkid.h>
#include <ext2fs/ext2fs.h>
#include <libfdisk/libfdisk.h>
#include <libsmartcols/libsmartcols.h>
#include <openssl/crypto.h>
#include <zlib.h>

/* config: a read-only view of the profile in force (the step lives here: it has no data of its own). */
static int step_config_run(struct ctx *ctx, int argc, char **argv, struct record *rec)
{
	json_object *p;

	if (argc > 1 && argv[1][0] == '-')
		return ctx_error(ctx, EXIT_USAGE, "unknown option '%.*s'; see 'swaptool help config'",
				 (int)strcspn(argv[1], "="), argv[1]);
	if (argc > 1)
		return ctx_error(ctx, EXIT_USAGE, "config takes no arguments ('%s'); see 'swaptool help config'",
				 argv[1]);
	p = json_object_new_object();
	jset_str(p, "source", ctx->profile_from);
	jset_str(p, "path", ctx->profile_path);
	json_object_object_add(p, "values", profile_to_json(ctx->profile));
	json_object_object_add(rec->root, "profile", p);
	record_finish(rec);
	return record_exit_code(rec);
}

/* One row per value: "accept.runs[0].min_iops  60000". */
static void config_rows(struct table *t, const char *prefix, json_object *v)
{
	if (json_object_is_type(v, json_type_object)) {
		json_object_object_foreach(v, k, sub) {
			_cleanup_free_ char *name = *prefix ? xasprintf("%s.%s", prefix, k) : xstrdup(k);
			config_rows(t, name, sub);
		}
	} else if (json_object_is_type(v, json_type_array)) {
		if (jarray_len(v) == 0)
			table_row(t, prefix, "(none)");
		for (size_t i = 0; i < jarray_len(v); i++) {
			_cleanup_free_ char *name = xasprintf("%s[%zu]", prefix, i);
			config_rows(t, name, jarray_at(v, i));
		}
	} else
		table_row(t, prefix, v ? json_object_get_string(v) : "-");
}

static void step_config_render(const struct ctx *ctx, json_object *record)
{
	json_object *p = jget(record, "profile");
	_cleanup_table_ struct table *t = table_new(2);

	out_line(ctx, "profile: %s%s%s%s", jget_str(p, "source"), jget_str(p, "path") ? " ('" : "",
		 jget_str(p, "path") ?: "", jget_str(p, "path") ? "')" : "");
	table_header(t, "key", "value");
	config_rows(t, "", jget(p, "values"));
	table_print(ctx, t);
}

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


static const struct step steps[] = {
	/* one line per step, in the order an operator runs them */
	{ "preflight", "identity, health and class of the source drive; the clone trap, to the byte",
	  "swaptool preflight SOURCE --target SIZE|DEVICE|IMAGE [options]\n"
	  "  SOURCE                  NVMe controller (/dev/nvme0), block device or image file\n"
	  "  --target SPEC           bytes (2000398934016), sectors (3907029168s), 2TB, or a device/image\n"
	  "  --target-lba-size N     LBA size of a bare --target count (default 512)\n"
	  "  --lba-size N            LBA size of an image-file SOURCE (default 512)\n"
	  "  --home DIR              home of the node's user (default: $SUDO_USER's, else $HOME)\n"
	  "  --from-dumps DIR        judge the drive from nvme-cli binary dumps (id-ctrl.bin, smart-log.bin...)\n"
	  "  --target-model MODEL    the target's model, looked up in the drive catalogue\n",
	  step_preflight_run, step_preflight_render, STEP_SAVES_RECORD | STEP_READS_ONLY },
	{ "backup", "the node's irreplaceable config (controller.key, ~/.ssh, netplan, fstab, hosts) as a verified tarball",
	  "swaptool backup [--home DIR] [--root DIR] [--out FILE] [--copy-to DIR] [--skip-unreadable]\n"
	  "  --home DIR          home of the node's user, as the node sees it (default: $SUDO_USER's, else $HOME)\n"
	  "  --root DIR          read the backup set under DIR instead of / (offline or demo trees)\n"
	  "  --out FILE          the tarball (default ~/HOST-swap-backup-YYYYMMDD/HOST-config.tar.gz)\n"
	  "  --copy-to DIR       also copy it into DIR (off the drive being replaced), synced and hash-checked\n"
	  "  --skip-unreadable   record unreadable files as skipped instead of failing (exit 3)\n",
	  step_backup_run, step_backup_render, STEP_SAVES_RECORD },
	{ "plan", "both migration paths with exact figures and commands; --rehearse proves path 2 on throwaway copies",
	  "swaptool plan SOURCE --target SIZE|DEVICE|IMAGE [--path fresh|clone] [--script FILE] [--rehearse [--scratch DIR]]\n"
	  "  --target SPEC           bytes (2000398934016), sectors (3907029168s), 2TB, or a device/image\n"
	  "  --target-lba-size N     LBA size of a bare --target count (default 512; 4096 rewrites the GPT in 4 KiB LBAs)\n"
	  "  --lba-size N            LBA size of an image-file SOURCE (default 512)\n"
	  "  --path fresh|clone      show only path 1 (fresh install + restore) or path 2 (clone with shrink)\n"
	  "  --script FILE           write path 2 as a bash script that checks sizes, serials and the fingerprint\n"
	  "                          before each destructive command\n"
	  "  --rehearse              run path 2 on metadata-only sparse copies; the source is never written\n"
	  "  --scratch DIR           where the rehearsal's sparse copies go (default $TMPDIR, else /var/tmp)\n"
	  "  --home DIR              home of the node's user inside the source (for the re-fetchable sizes)\n",
	  step_plan_run, step_plan_render, STEP_SAVES_RECORD | STEP_READS_ONLY },
	{ "clone", "path 2 on the disks: used-block copy, shrink on the way, new GPT, check (the source is only read)",
	  "swaptool clone SOURCE TARGET --yes [--fingerprint HEX]\n"
	  "  --yes                   required: the whole target is overwritten\n"
	  "  --fingerprint HEX       the plan's fingerprint; default: the one 'swaptool plan' saved for SOURCE\n"
	  "  --target-lba-size N     LBA size of an image-file TARGET (default 512)\n"
	  "  --lba-size N            LBA size of an image-file SOURCE (default 512)\n"
	  "exit: 0 done and verified, 1 a check of the result failed, 3 refused or failed, 130 interrupted\n",
	  step_clone_run, step_clone_render, STEP_SAVES_RECORD },
	{ "restore", "check a whole backup tarball, then put it back under --root atomically, with undo; then verify",
	  "swaptool restore TARBALL [--root DIR] [--dry-run] [--map-user OLD=NEW]... [--undo-out FILE]\n"
	  "swaptool restore --undo UNDO.tar.gz [--root DIR]\n"
	  "  --root DIR          write under DIR (default /); only entries the manifest lists\n"
	  "  --dry-run           say what would be created, replaced, kept or refused; write nothing\n"
	  "  --map-user OLD=NEW  owner (user or group) OLD in the backup is NEW here (repeatable)\n"
	  "  --undo-out FILE     a new file for the undo tarball (default STATE/restore-undo-TIME-PID.tar.gz)\n"
	  "  --undo              put back what an earlier restore replaced and remove what it created\n",
	  step_restore_run, step_restore_render, STEP_SAVES_RECORD },
	{ "verify", "the live system against a backup's manifest: files, modes, owners, controller.key, fstab ids, hosts",
	  "swaptool verify TARBALL [--root DIR] [--map-user OLD=NEW]...\n"
	  "  --root DIR          check the tree under DIR (default /)\n"
	  "  --map-user OLD=NEW  owner OLD in the backup is NEW here (repeatable)\n",
	  step_verify_run, NULL, STEP_SAVES_RECORD | STEP_READS_ONLY },
	{ "accept", "the new drive against the incident's gates: io_uring 4 KiB O_DIRECT random reads, sequential, engine",
	  "swaptool accept [FILE|DEVICE] [options]\n"
	  "  FILE|DEVICE            what to read (the Engram shard, or a block device); opened read-only;\n"
	  "                         none: the profile's target_glob, else the whole disk that holds /\n"
	  "  --home DIR             the node user's home, for '~' in target_glob\n"
	  "  --working-set SIZE     centered working set (default 98G from the profile)\n"
	  "  --duration S           measured seconds of each random run, 1-86400 (profile: 15 and 20)\n"
	  "  --ramp S               seconds excluded before measuring (default 2)\n"
	  "  --inflight N[,N...]    reads in flight of the random runs, 1-4096 (default 16,64)\n"
	  "  --threads N            rings, one per thread, 1-1024 (default: one per core)\n"
	  "  --seq-bytes SIZE       bytes of the 1 MiB sequential run (default 4G); --no-seq skips it\n"
	  "  --sweep SIZE,SIZE...   also run at these working sets: the collapse curve, with a chart\n"
	  "  --gate NAME=COMMAND    an engine gate run with sh -c: pass on exit 0 (repeatable)\n"
	  "  --force                measure even when the device is busy (may be serving)\n"
	  "  --seed N               PRNG seed of the offsets (default: random, recorded)\n",
	  step_accept_run, step_accept_render, STEP_SAVES_RECORD },
	{ "report", "one signed report (report.json + SSHSIG, report.txt, report.html) from the step records",
	  "swaptool report [--key FILE] [--out DIR] [--identity NAME] [--no-sign] [--reference FILE]\n"
	  "  --key FILE        OpenSSH ed25519 private key, mode 0600 or stricter; an encrypted one signs\n"
	  "                    through ssh-agent (default as root: /etc/ssh/ssh_host_ed25519_key)\n"
	  "  --out DIR         where report.json, report.json.sig, allowed_signers, report.txt and\n"
	  "                    report.html go (default: STATE/report)\n"
	  "  --identity NAME   the signer's principal in allowed_signers (default: swaptool@HOST);\n"
	  "                    letters, digits and . _ - @ + only\n"
	  "  --no-sign         write the report without a signature\n"
	  "  --reference FILE  a reference node's accept.json or report.json: both nodes on the same\n"
	  "                    axes, with B/A ratios\n",
	  step_report_run, step_report_render, STEP_SAVES_RECORD },
	{ "verify-report", "check a report's SSH signature, its signer and its record hashes",
	  "swaptool verify-report REPORT [--sig FILE] [--allowed-signers FILE --identity ID]\n"
	  "  REPORT                  report.json\n"
	  "  --sig FILE              the armoured signature (default: REPORT.sig)\n"
	  "  --allowed-signers FILE  ssh-keygen(1) ALLOWED SIGNERS file; with --identity, the signer must be\n"
	  "                          listed for ID and namespace swaptool-report\n"
	  "exit: 0 good, 1 bad signature, signer not allowed or records changed, 3 unreadable or malformed\n",
	  step_verify_report_run, step_verify_report_render, 0 },
	{ "status", "which steps are done, their verdicts and why, and what to run next",
	  "swaptool status [--path fresh|clone]\n"
	  "  --path fresh|clone  the migration path: fresh install + restore (default), or filesystem-aware\n"
	  "                      clone; without it, the records say which was taken\n",
	  step_status_run, step_status_render, 0 },
	{ "compare", "two accept results side by side (candidate vs reference node), with B/A ratios and gates",
	  "swaptool compare A.json B.json\n"
	  "  A.json, B.json  accept records (STATE/accept.json) or signed reports (report.json)\n",
	  step_compare_run, step_compare_render, 0 },
	{ "metrics", "records and reports as node_exporter textfile metrics (Prometheus text format)",
	  "swaptool metrics RECORD... [--out FILE]\n"
	  "  RECORD      preflight or accept records (STATE/STEP.json), report records or report.json, of any nodes\n"
	  "  --out FILE  write FILE atomically, mode 0644 (e.g. in node_exporter's textfile directory)\n",
	  step_metrics_run, step_metrics_render, 0 },
	{ "fleet", "many nodes in one view: drive class, delta, path, accept figures against a reference, gates",
	  "swaptool fleet RECORD... [--reference HOST]\n"
	  "  RECORD            preflight or accept records (STATE/STEP.json), report records or report.json\n"
	  "  --reference HOST  the node the others' accept figures are divided by (default: the first\n"
	  "                    node whose accept passed)\n"
	  "exit: 0 every node passes, 1 a node failed a step, 2 usage, 3 unreadable or malformed input\n",
	  step_fleet_run, step_fleet_render, 0 },
	{ "config", "the profile in force, where it comes from, and its values",
	  "swaptool config\n"
	  "  the profile is --profile FILE, else $SWAPTOOL_PROFILE, else SYSCONFDIR/swaptool/profile.ini when it\n"
	  "  exists ($SWAPTOOL_SYSCONFDIR replaces SYSCONFDIR), else the built-in one (swaptool-profile(5))\n",
	  step_config_run, step_config_render, 0 },
};

static const struct step *find_step(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(steps); i++)
		if (streq(steps[i].name, name))
			return &steps[i];
	return NULL;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: swaptool [-j|--json] [--state DIR] [--profile FILE] [--no-record] [-q|--quiet]\n"
		   "                [--color=auto|always|never] [-V|--version [--verbose]] STEP [ARGS]\n\n"
		   "Replace the boot NVMe of a GPU node without losing its identity, and prove the new drive.\n\n"
		   "steps:\n");
	for (size_t i = 0; i < ARRAY_SIZE(steps); i++)
		fprintf(f, "  %-14s %s\n", steps[i].name, steps[i].summary);
	fprintf(f, "\n'swaptool help STEP' shows a step's options; man swaptool has the whole story.\n"
		   "exit codes: 0 pass, 1 a check or gate failed, 2 usage, 3 could not do the job, 130 interrupted\n");
}

static void step_usage(const struct step *s)
{
	printf("swaptool %s: %s\n\nusage: %s", s->name, s->summary, s->usage);
	printf("\nglobal options: -j|--json --state DIR --profile FILE --no-record -q|--quiet --color=WHEN\n");
}

struct globals {
	bool help, version, verbose;
	enum { COLOR_AUTO, COLOR_ALWAYS, COLOR_NEVER } color;
};

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
		const char **slot = NULL;
		const char *val = NULL;

		if (streq(a, "--")) {
			while (i < *argc)
				argv[out++] = argv[i++];
			break;
		}
		if (streq(a, "--json") || streq(a, "-j"))
			ctx->json = true;
		else if (streq(a, "--quiet") || streq(a, "-q"))
			ctx->quiet = true;
		else if (streq(a, "--no-color"))
			g->color = COLOR_NEVER;
		else if (streq(a, "--color") || startswith(a, "--color=")) {
			const char *w = a[7] == '=' ? a + 8 : "always"; /* a bare --color means always, as ls(1) */

			if (streq(w, "auto"))
				g->color = COLOR_AUTO;
			else if (streq(w, "always"))
				g->color = COLOR_ALWAYS;
			else if (streq(w, "never"))
				g->color = COLOR_NEVER;
			else
				return ctx_error(ctx, EXIT_USAGE, "bad --color '%s': give auto, always or never", w);
		} else if (streq(a, "--no-record"))
			ctx->no_record = true;
		else if (streq(a, "--help") || streq(a, "-h"))
			g->help = true;
		else if (streq(a, "--version") || streq(a, "-V"))
			g->version = true;
		else if (streq(a, "--verbose"))
			g->verbose = true;
		else if (startswith(a, "--state") || startswith(a, "--profile")) {
			bool state = startswith(a, "--state");
			const char *name = state ? "--state" : "--profile";
			size_t n = strlen(name);

			if (a[n] != '\0' && a[n] != '=') {
				if (before_step)
					return ctx_error(ctx, EXIT_USAGE, "unknown option '%s'; 'swaptool --help' lists "
							 "the options", a);
				argv[out++] = argv[i];
				continue;
			}
			slot = state ? (const char **)&ctx->state_dir : &ctx->profile_path;
			if (a[n] == '=')
				val = a + n + 1;
			else if (i + 1 < *argc)
				val = argv[++i];
			if (!val || !*val)
				return ctx_error(ctx, EXIT_USAGE, "option '%s' needs a value", name);
			*slot = state ? (const char *)xstrdup(val) : val;
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

static int swaptool_main(int argc, char **argv);
/* The run's context; main frees what it holds, so every early return of swaptool_main is covered. */
static struct ctx ctx;
static char *profile_owned; /* ctx.profile_path once profile_locate chose it */

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
	free(ctx.err_msg);
	return close_stdout(ctx.step, code);
}

static int swaptool_main(int argc, char **argv)
{
	struct globals g = { 0 };
	struct record rec = { 0 };
	struct state_lock lock = { .fd = -1 };
	const struct step *s;
	const char *no_color = getenv("NO_COLOR"), *term = getenv("TERM");
	_cleanup_free_ char *perr = NULL;
	int code, r;

	if (take_globals(&ctx, &g, &argc, argv) != 0) {
		out_error(&ctx, ctx.err_code, ctx.err_msg);
		return ctx.err_code;
	}
	/* auto: a terminal that is not "dumb", and no NO_COLOR (no-color.org: set and not empty) */
	if (g.color == COLOR_AUTO)
		ctx.color = isatty(STDOUT_FILENO) && !(no_color && *no_color) && !(term && streq(term, "dumb"));
	else
		ctx.color = g.color == COLOR_ALWAYS;
	ctx.color = ctx.color && !ctx.json;
	ctx.progress = isatty(STDERR_FILENO) && !ctx.quiet;

	profile_locate(ctx.profile_path, &profile_owned, &ctx.profile_from);
	ctx.profile_path = profile_owned;

	if (g.version) {
		if (g.verbose) {
			r = profile_load(ctx.profile_path, &ctx.profile, &perr);
			version_verbose(&ctx, r < 0 ? perr : NULL);
		} else if (ctx.json)
			printf("{\"schema\":\"%s\",\"version\":\"%s\"}\n", RECORD_SCHEMA, SWAPTOOL_VERSION);
		else
			printf("swaptool %s\n", SWAPTOOL_VERSION);
		return 0;
	}
	if (argc < 2) {
		if (g.help) {
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
		s = find_step(argv[2]);
		if (!s) {
			_cleanup_free_ char *msg = xasprintf("unknown step '%s'; 'swaptool --help' lists the steps", argv[2]);
			out_error(&ctx, EXIT_USAGE, msg);
			return EXIT_USAGE;
		}
		step_usage(s);
		return 0;
	}
	s = find_step(argv[1]);
	if (!s) {
		ctx.step = NULL;
		ctx_error(&ctx, EXIT_USAGE, "unknown step '%s'; 'swaptool --help' lists the steps", argv[1]);
		out_error(&ctx, ctx.err_code, ctx.err_msg);
		return EXIT_USAGE;
	}
	ctx.step = s->name;
	if (g.help) {
		step_usage(s);
		return 0;
	}

	r = profile_load(ctx.profile_path, &ctx.profile, &perr);
	if (r < 0) {
		out_error(&ctx, EXIT_USAGE, perr);
		return EXIT_USAGE;
	}
	if (!ctx.state_dir && state_dir_default(&ctx.state_dir) < 0) {
		out_error(&ctx, EXIT_USAGE, "no state directory: set --state DIR, XDG_STATE_HOME or HOME");
		return EXIT_USAGE;
	}
	if (record_init(&rec, s->name) < 0)
		abort();

	/* One writer per state directory, held from before the step's first write to after its record.
	 * A directory that cannot hold the lock file cannot take the record either: the save says so. */
	r = (s->flags & STEP_SAVES_RECORD) && !ctx.no_record
		    ? state_lock_take(&lock, ctx.state_dir, s->name, STATE_LOCK_WAIT_MS) : 0;
	if (r == -EINVAL) {
		_cleanup_free_ char *msg = xasprintf("lock file '%s/.lock' is not a regular file (a symlink, FIFO or "
						     "device was put there); remove it", ctx.state_dir);
		out_error(&ctx, EXIT_FAILED, msg);
		code = EXIT_FAILED;
		goto out;
	}
	if (r == -EBUSY) {
		char pid[24] = "unknown";
		if (lock.holder)
			snprintf(pid, sizeof(pid), "%ld", (long)lock.holder);
		_cleanup_free_ char *msg = xasprintf(
			"state directory '%s' is in use by swaptool pid %s (step %s); wait for it to finish, "
			"or pass --state DIR for a separate run", ctx.state_dir, pid,
			lock.holder_step[0] ? lock.holder_step : "unknown");
		out_error(&ctx, EXIT_FAILED, msg);
		code = EXIT_FAILED;
		goto out;
	}
	optind = 1;
	opterr = 0;
	code = s->run(&ctx, argc - 1, argv + 1, &rec);

	if (ctx.err_code) {
		out_error(&ctx, ctx.err_code, ctx.err_msg);
		code = ctx.err_code;
	} else {
		if ((s->flags & STEP_SAVES_RECORD) && !ctx.no_record) {
			r = record_save(&rec, ctx.state_dir);
			/* A step that changed nothing still has its result: show it, and say on stderr that it
			 * was not kept (a non-root user with the root's state directory, a read-only disk).
			 * plan --rehearse is evidence the report needs, so it fails like the steps that write. */
			if (r < 0 && (s->flags & STEP_READS_ONLY) && !jget(rec.root, "rehearsal")) {
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
				code = EXIT_FAILED;
				goto out;
			}
		}
		if (ctx.json)
			out_json(rec.root);
		else if (s->render)
			s->render(&ctx, rec.root);
		else {
			out_checks(&ctx, rec.root);
			out_verdict(&ctx, rec.root, "%s", "");
		}
	}
out:
	state_lock_release(&lock);
	record_free(&rec);
	return code;
}
