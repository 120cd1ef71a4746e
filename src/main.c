/* SPDX-License-Identifier: MIT */
/* swaptool: the step table, global options and dispatch. */
#include "steps.h"

#include <signal.h>

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
	  step_preflight_run, step_preflight_render, STEP_SAVES_RECORD },
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
	  step_plan_run, step_plan_render, STEP_SAVES_RECORD },
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
	  "  --undo-out FILE     where the undo tarball goes (default STATE/restore-undo-TIME-PID.tar.gz)\n"
	  "  --undo              put back what an earlier restore replaced and remove what it created\n",
	  step_restore_run, step_restore_render, STEP_SAVES_RECORD },
	{ "verify", "the live system against a backup's manifest: files, modes, owners, controller.key, fstab ids, hosts",
	  "swaptool verify TARBALL [--root DIR] [--map-user OLD=NEW]...\n"
	  "  --root DIR          check the tree under DIR (default /)\n"
	  "  --map-user OLD=NEW  owner OLD in the backup is NEW here (repeatable)\n",
	  step_verify_run, NULL, STEP_SAVES_RECORD },
	{ "accept", "the new drive against the write-up's gates: io_uring 4 KiB O_DIRECT random reads, sequential, engine",
	  "swaptool accept FILE|DEVICE [options]\n"
	  "  FILE|DEVICE            what to read (the Engram shard, or a block device); opened read-only\n"
	  "  --working-set SIZE     centered working set (default 98G from the profile)\n"
	  "  --duration S           measured seconds of each random run (profile: 15 and 20)\n"
	  "  --ramp S               seconds excluded before measuring (default 2)\n"
	  "  --inflight N[,N...]    reads in flight of the random runs (default 16,64)\n"
	  "  --threads N            rings, one per thread (default: one per core)\n"
	  "  --seq-bytes SIZE       bytes of the 1 MiB sequential run (default 4G); --no-seq skips it\n"
	  "  --sweep SIZE,SIZE...   also run at these working sets: the collapse curve, with a chart\n"
	  "  --gate NAME=COMMAND    an engine gate run with sh -c: pass on exit 0 (repeatable)\n"
	  "  --force                measure even when the device is busy (may be serving)\n"
	  "  --seed N               PRNG seed of the offsets (default: random, recorded)\n",
	  step_accept_run, step_accept_render, STEP_SAVES_RECORD },
	{ "report", "one signed report (report.json + SSHSIG, report.txt, report.html) from the step records",
	  "swaptool report [--key FILE] [--out DIR] [--identity NAME] [--no-sign]\n"
	  "  --key FILE        OpenSSH ed25519 private key; an encrypted one signs through ssh-agent\n"
	  "                    (default as root: /etc/ssh/ssh_host_ed25519_key)\n"
	  "  --out DIR         where report.json, report.json.sig, allowed_signers, report.txt and\n"
	  "                    report.html go (default: STATE/report)\n"
	  "  --identity NAME   the signer's principal in allowed_signers (default: swaptool@HOST)\n"
	  "  --no-sign         write the report without a signature\n",
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
	fprintf(f, "usage: swaptool [--json] [--state DIR] [--profile FILE] [--quiet] [--no-color] STEP [ARGS]\n\n"
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
	printf("\nglobal options: --json --state DIR --profile FILE --quiet --no-color\n");
}

struct globals {
	bool help, version, no_color;
};

/* Take the global options out of argv wherever they stand (before a "--"), so that
 * `swaptool preflight X --json` and `swaptool --json preflight X` mean the same. */
static int take_globals(struct ctx *ctx, struct globals *g, int *argc, char **argv)
{
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
		if (streq(a, "--json"))
			ctx->json = true;
		else if (streq(a, "--quiet") || streq(a, "-q"))
			ctx->quiet = true;
		else if (streq(a, "--no-color"))
			g->no_color = true;
		else if (streq(a, "--help") || streq(a, "-h"))
			g->help = true;
		else if (streq(a, "--version"))
			g->version = true;
		else if (startswith(a, "--state") || startswith(a, "--profile")) {
			bool state = startswith(a, "--state");
			const char *name = state ? "--state" : "--profile";
			size_t n = strlen(name);

			if (a[n] != '\0' && a[n] != '=') {
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
		} else
			argv[out++] = argv[i];
	}
	*argc = out;
	argv[out] = NULL;
	return 0;
}

int main(int argc, char **argv)
{
	struct ctx ctx = { 0 };
	struct globals g = { 0 };
	struct record rec = { 0 };
	const struct step *s;
	const char *no_color = getenv("NO_COLOR");
	_cleanup_free_ char *perr = NULL;
	int code, r;

	signal(SIGPIPE, SIG_IGN);
	if (take_globals(&ctx, &g, &argc, argv) != 0) {
		out_error(&ctx, ctx.err_code, ctx.err_msg);
		return ctx.err_code;
	}
	ctx.color = isatty(STDOUT_FILENO) && !g.no_color && !(no_color && *no_color) && !ctx.json;
	ctx.progress = isatty(STDERR_FILENO) && !ctx.quiet;

	if (g.version) {
		printf("swaptool %s\n", SWAPTOOL_VERSION);
		return 0;
	}
	if (argc < 2) {
		if (g.help) {
			usage(stdout);
			return 0;
		}
		usage(stderr);
		return EXIT_USAGE;
	}
	if (streq(argv[1], "help")) {
		if (argc < 3) {
			usage(stdout);
			return 0;
		}
		s = find_step(argv[2]);
		if (!s) {
			fprintf(stderr, "swaptool: unknown step '%s'; 'swaptool --help' lists the steps\n", argv[2]);
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
		profile_free(ctx.profile);
		return EXIT_USAGE;
	}
	if (record_init(&rec, s->name) < 0)
		abort();

	optind = 1;
	opterr = 0;
	code = s->run(&ctx, argc - 1, argv + 1, &rec);

	if (ctx.err_code) {
		out_error(&ctx, ctx.err_code, ctx.err_msg);
		code = ctx.err_code;
	} else {
		if (s->flags & STEP_SAVES_RECORD) {
			r = record_save(&rec, ctx.state_dir);
			if (r < 0) {
				_cleanup_free_ char *msg = xasprintf(
					"cannot write the record to '%s': %s; pass --state DIR with a writable directory",
					ctx.state_dir, strerror(-r));
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
	fflush(stdout);
	record_free(&rec);
	profile_free(ctx.profile);
	free(ctx.state_dir);
	free(ctx.err_msg);
	return code;
}
