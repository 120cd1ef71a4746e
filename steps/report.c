/* SPDX-License-Identifier: MIT */
/* report: one signed document (report.json + SSHSIG, report.txt, report.html) from the step records. */
#include "steps.h"
#include "report.h"
#include "sign.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>

static const struct option report_options[] = {
	{ "key", required_argument, NULL, 'k' },
	{ "out", required_argument, NULL, 'o' },
	{ "identity", required_argument, NULL, 'I' },
	{ "no-sign", no_argument, NULL, 'n' },
	{ "reference", required_argument, NULL, 'R' },
	{ 0 },
};

const struct step step_report = {
	.name = "report",
	.summary = "one signed report (report.json + SSHSIG, report.txt, report.html) from the step records",
	.usage = "swaptool report [--key FILE] [--out DIR] [--identity NAME] [--no-sign] [--reference FILE]\n"
		 "  --key FILE        OpenSSH ed25519 private key, mode 0600 or stricter; an encrypted one signs\n"
		 "                    through ssh-agent (default as root: /etc/ssh/ssh_host_ed25519_key)\n"
		 "  --out DIR         where report.json, report.json.sig, allowed_signers, report.txt and\n"
		 "                    report.html go (default: STATE/report)\n"
		 "  --identity NAME   the signer's principal in allowed_signers (default: swaptool@HOST);\n"
		 "                    letters, digits and . _ - @ + only\n"
		 "  --no-sign         write the report without a signature\n"
		 "  --reference FILE  a reference node's accept.json or report.json: both nodes on the same\n"
		 "                    axes, with B/A ratios\n",
	.options = report_options,
	.run = step_report_run,
	.render = step_report_render,
	.flags = STEP_SAVES_RECORD,
};

/* The host key is the default signer as root: every node has one, and the fleet already trusts it. */
#define DEFAULT_KEY "/etc/ssh/ssh_host_ed25519_key"

/* One file of the report's set, written to a temporary in DIR and renamed with the others. */
struct out_file {
	const char *name; /* in DIR */
	char *data;       /* NULL: an old file of that name goes (a signature of an earlier report) */
	char *tmp;        /* DIR/.NAME.XXXXXX, written and fsynced */
	char *bak;        /* a hard link to the old file, to put it back if the set cannot be completed */
	bool existed, done;
};

static void out_files_clear(struct out_file *f, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (f[i].tmp)
			unlink(f[i].tmp);
		if (f[i].bak)
			unlink(f[i].bak);
		free(f[i].tmp), free(f[i].bak), free(f[i].data);
		f[i].tmp = f[i].bak = f[i].data = NULL;
	}
}

/* Write f->data to a new temporary (O_EXCL) in dir, fsynced; its path in f->tmp. */
static int stage(const char *dir, struct out_file *f)
{
	_cleanup_close_ int fd = -1;
	int r;

	if (!f->data)
		return 0;
	f->tmp = xasprintf("%s/.%s.XXXXXX", dir, f->name);
	fd = mkostemp(f->tmp, O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		free(f->tmp);
		f->tmp = NULL;
		return r;
	}
	r = fchmod(fd, 0644) < 0 ? -errno : write_all(fd, f->data, strlen(f->data));
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	return r;
}

/*
 * Put the staged set in place: every old file is first hard-linked to a backup name, then each
 * temporary is renamed over its name (or the old file removed). When one step fails the ones
 * done are undone from the backups, so DIR holds the old set or the new one, never a mix
 * (a report.json without its signature). Signals wait until the set is whole.
 */
static int commit(const char *dir, struct out_file *f, size_t n, const char **failed)
{
	sigset_t block, old;
	int r = 0;

	sigemptyset(&block);
	sigaddset(&block, SIGINT), sigaddset(&block, SIGTERM), sigaddset(&block, SIGHUP), sigaddset(&block, SIGQUIT);
	sigprocmask(SIG_BLOCK, &block, &old);
	for (size_t i = 0; i < n && r == 0; i++) {
		_cleanup_free_ char *final = xasprintf("%s/%s", dir, f[i].name);
		struct stat st;

		if (lstat(final, &st) < 0) {
			if (errno != ENOENT)
				r = -errno, *failed = f[i].name;
			continue;
		}
		f[i].existed = true;
		for (unsigned k = 0; k < 100 && !f[i].bak; k++) {
			char *b = xasprintf("%s/.%s.old.%d.%u", dir, f[i].name, (int)getpid(), k);
			if (link(final, b) == 0)
				f[i].bak = b;
			else {
				free(b);
				if (errno != EEXIST)
					break; /* no hard links here: that file cannot be put back */
			}
		}
	}
	for (size_t i = 0; i < n && r == 0; i++) {
		_cleanup_free_ char *final = xasprintf("%s/%s", dir, f[i].name);

		if (f[i].tmp ? rename(f[i].tmp, final) < 0 : f[i].existed && unlink(final) < 0 && errno != ENOENT) {
			r = -errno, *failed = f[i].name;
			break;
		}
		if (f[i].tmp) {
			free(f[i].tmp);
			f[i].tmp = NULL;
		}
		f[i].done = true;
	}
	if (r < 0)
		for (size_t i = 0; i < n; i++) {
			_cleanup_free_ char *final = xasprintf("%s/%s", dir, f[i].name);

			if (!f[i].done)
				continue;
			if (f[i].bak && rename(f[i].bak, final) == 0) {
				free(f[i].bak);
				f[i].bak = NULL;
			} else if (!f[i].existed)
				unlink(final);
		}
	out_files_clear(f, n);
	if (r == 0) {
		_cleanup_free_ char *any = xasprintf("%s/%s", dir, f[0].name);
		r = fsync_parent_dir(any);
		if (r < 0)
			*failed = ".";
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	return r;
}

/* A principal for allowed_signers: letters, digits and . _ - @ + only. Anything else could widen
 * the trust line ('*' and '?' are patterns, ',' separates principals, '!' negates, spaces and
 * quotes end the field) or hide in a terminal (control characters). */
static bool identity_ok(const char *id)
{
	size_t n = strlen(id);

	if (!n || n > 256 || id[0] == '-')
		return false;
	for (const char *p = id; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		      strchr("._-@+", *p)))
			return false;
	return true;
}

/* The identity for a message: what cannot be shown safely as '?'. */
static char *printable(const char *s)
{
	char *c = xstrdup(s);

	for (char *p = c; *p; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f)
			*p = '?';
	return c;
}

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* Is `path` (when it exists) one of the step's inputs: the key, its .pub, a step record, the state
 * directory? By identity, not by name: another spelling, a symlink or a hard link is the same. */
static const char *input_named(const struct ctx *ctx, const char *path, const char *key_path)
{
	static char what[64];
	struct stat st, in;

	if (stat(path, &st) < 0)
		return NULL;
	if (stat(ctx->state_dir, &in) == 0 && same_file(&st, &in))
		return "the state directory";
	if (key_path && stat(key_path, &in) == 0 && same_file(&st, &in))
		return "the signing key";
	if (key_path) {
		_cleanup_free_ char *pub = xasprintf("%s.pub", key_path);
		if (stat(pub, &in) == 0 && same_file(&st, &in))
			return "the signing key's .pub";
	}
	for (size_t i = 0; i < report_known_steps_n; i++) {
		_cleanup_free_ char *rec = xasprintf("%s/%s.json", ctx->state_dir, report_known_steps[i]);
		if (stat(rec, &in) == 0 && same_file(&st, &in)) {
			snprintf(what, sizeof(what), "the %s record", report_known_steps[i]);
			return what;
		}
	}
	return NULL;
}

int step_report_run(struct ctx *ctx, int argc, char **argv, struct record *rec)
{
	enum { F_TXT, F_HTML, F_AS, F_JSON, F_SIG, F_N };
	struct out_file set[F_N] = {
		[F_TXT] = { .name = "report.txt" },
		[F_HTML] = { .name = "report.html" },
		[F_AS] = { .name = "allowed_signers" },
		[F_JSON] = { .name = "report.json" },
		[F_SIG] = { .name = "report.json.sig" },
	};
	const char *key_path = NULL, *identity_arg = NULL, *why = NULL, *failed = NULL, *input, *ref_path = NULL;
	json_object *ref_doc = NULL;
	_cleanup_free_ char *out = NULL, *identity = NULL, *json_path = NULL, *sig_path = NULL, *txt_path = NULL;
	_cleanup_free_ char *html_path = NULL, *as_path = NULL, *text = NULL, *armour = NULL;
	_cleanup_free_ char *fp = NULL, *publine = NULL, *as_line = NULL, *verify_cmd = NULL, *verify_ours = NULL;
	_cleanup_sshkey_ struct ssh_key *key = NULL;
	_cleanup_close_ int fd = -1;
	bool sign = true;
	json_object *rep = NULL, *files, *missing, *acc;
	unsigned char md[64];
	unsigned mdlen = 0;
	enum report_verdict v;
	_cleanup_free_ char *vwhy = NULL;
	int c, r;

	while ((c = getopt_long(argc, argv, "", report_options, NULL)) != -1) {
		switch (c) {
		case 'k': key_path = optarg; break;
		case 'o': out = xstrdup(optarg); break;
		case 'I': identity_arg = optarg; break;
		case 'n': sign = false; break;
		case 'R': ref_path = optarg; break;
		default: return step_bad_option(ctx, argc, argv);
		}
	}
	if (optind < argc)
		return ctx_error(ctx, EXIT_USAGE, "unexpected argument '%s'; see 'swaptool help report'", argv[optind]);
	identity = identity_arg ? xstrdup(identity_arg) : xasprintf("swaptool@%s", host_name());
	if (!identity_ok(identity)) {
		_cleanup_free_ char *shown = printable(identity);
		return ctx_error(ctx, EXIT_USAGE,
				 "bad identity '%s': use letters, digits and . _ - @ + only (no spaces, quotes, commas, "
				 "wildcards or control characters), not starting with '-'; e.g. --identity ops@dgx4",
				 shown);
	}
	if (!out)
		out = xasprintf("%s/report", ctx->state_dir);
	/* --reference: a reference node's accept record or report, drawn on the same axes */
	if (ref_path) {
		_cleanup_free_ char *rtext = NULL;

		r = read_file_all(ref_path, 256 << 20, &rtext, NULL);
		if (r < 0)
			return ctx_error(ctx, EXIT_FAILED, "cannot read the reference '%s': %s; pass a reference node's "
					 "accept.json or report.json", ref_path, strerror(-r));
		ref_doc = json_tokener_parse(rtext);
		if (!report_accept_of(ref_doc) || !json_object_is_type(jget(report_accept_of(ref_doc), "runs"), json_type_array)) {
			json_object_put(ref_doc);
			return ctx_error(ctx, EXIT_FAILED, "the reference '%s' is neither an accept record nor a report holding "
					 "one; pass a reference node's STATE/accept.json or report.json", ref_path);
		}
	}

	/* The key first: refuse before anything is written. */
	if (sign) {
		if (!key_path && geteuid() != 0)
			return ctx_error(ctx, EXIT_USAGE,
					 "no signing key: pass --key FILE (an OpenSSH ed25519 key, ssh-keygen -t ed25519), "
					 "or --no-sign for an unsigned report");
		if (!key_path)
			key_path = DEFAULT_KEY;
		r = sshkey_load_private(key_path, &key, &why);
		if (r < 0)
			return ctx_error(ctx, EXIT_FAILED, "cannot use key '%s': %s%s%s", key_path, why,
					 r == -ENOTSUP ? "; make one with 'ssh-keygen -t ed25519'" : "",
					 r != -ENOTSUP && r != -EBADMSG && r != -EPERM ? "; pass --key FILE (an OpenSSH ed25519 key)"
										      : "");
		if (key->encrypted && !(getenv("SSH_AUTH_SOCK") && *getenv("SSH_AUTH_SOCK")))
			return ctx_error(ctx, EXIT_FAILED,
					 "key '%s' is encrypted and no ssh-agent is reachable (SSH_AUTH_SOCK is not set); "
					 "run 'eval $(ssh-agent) && ssh-add %s', or pass an unencrypted key",
					 key_path, key_path);
		fp = sshkey_fingerprint(key->pk);
		publine = sshkey_public_line(key->pk);
	}

	/* --out must not be an input, nor hold one under an output's name (rename would drop it). */
	input = input_named(ctx, out, sign ? key_path : NULL);
	if (input)
		return ctx_error(ctx, EXIT_USAGE, "--out '%s' is %s%s; pass another directory (default STATE/report)", out,
				 input, streq(input, "the state directory") ? ", where this step's own record report.json goes" : "");
	r = mkdir_p(out, 0755);
	if (r == 0) {
		struct stat st;
		r = stat(out, &st) < 0 ? -errno : S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
	}
	if (r < 0)
		return ctx_error(ctx, EXIT_FAILED, "cannot create '%s': %s; pass --out DIR", out, strerror(-r));
	for (size_t i = 0; i < F_N; i++) {
		_cleanup_free_ char *pth = xasprintf("%s/%s", out, set[i].name);
		struct stat st;

		input = lstat(pth, &st) == 0 && !S_ISLNK(st.st_mode) ? input_named(ctx, pth, sign ? key_path : NULL) : NULL;
		if (input)
			return ctx_error(ctx, EXIT_USAGE, "'%s' is %s: writing the report there would replace it; pass "
					 "another --out DIR", pth, input);
	}

	r = report_build(ctx->state_dir, &rep);
	if (r == 0) {
		report_add_drives(rep, ctx->profile);
		if (ref_doc)
			report_add_reference(rep, ref_doc, ref_path);
	}
	json_object_put(ref_doc);
	if (r < 0)
		return ctx_error(ctx, EXIT_FAILED, "cannot read the step records in '%s': %s; check the files there or pass --state DIR",
				 ctx->state_dir, strerror(-r));
	if (sign) {
		json_object *s = json_object_new_object();
		jset_str(s, "key_type", "ssh-ed25519");
		jset_str(s, "fingerprint", fp);
		jset_str(s, "identity", identity);
		json_object_object_add(rep, "signer", s);
	}
	json_path = xasprintf("%s/report.json", out);
	sig_path = xasprintf("%s/report.json.sig", out);
	as_path = xasprintf("%s/allowed_signers", out);
	txt_path = xasprintf("%s/report.txt", out);
	html_path = xasprintf("%s/report.html", out);

	/* Every file of the set goes to a temporary first; only a whole set replaces the old one. */
	text = report_text(rep);
	set[F_JSON].data = xasprintf("%s\n", json_object_to_json_string_ext(rep, JSON_C_TO_STRING_PRETTY |
									  JSON_C_TO_STRING_NOSLASHESCAPE));
	set[F_TXT].data = xstrdup(text);
	set[F_HTML].data = report_html(rep, ctx->profile);
	r = stage(out, &set[F_JSON]);
	if (r == 0 && sign) {
		/* Sign what is on disk: SHA-512 streamed from the file, as ssh-keygen reads it. */
		fd = open(set[F_JSON].tmp, O_RDONLY | O_CLOEXEC);
		r = fd < 0 ? -errno : sshsig_hash_fd(fd, "sha512", md, &mdlen);
		if (r < 0) {
			out_files_clear(set, F_N);
			json_object_put(rep);
			return ctx_error(ctx, EXIT_FAILED, "cannot read back '%s': %s", set[F_JSON].tmp, strerror(-r));
		}
		r = sshsig_sign(key, SSHSIG_NAMESPACE, "sha512", md, mdlen, &armour, &why);
		explicit_bzero(md, sizeof(md));
		if (r < 0) {
			out_files_clear(set, F_N);
			json_object_put(rep);
			return ctx_error(ctx, EXIT_FAILED, "cannot sign '%s' with '%s': %s", json_path, key_path, why);
		}
		as_line = xasprintf("%s namespaces=\"%s\" %s", identity, SSHSIG_NAMESPACE, publine);
		set[F_SIG].data = xstrdup(armour);
		set[F_AS].data = xasprintf("%s\n", as_line);
		verify_cmd = xasprintf("ssh-keygen -Y verify -f %s -I %s -n %s -s %s < %s", as_path, identity,
				       SSHSIG_NAMESPACE, sig_path, json_path);
		verify_ours = xasprintf("swaptool verify-report %s --allowed-signers %s --identity %s", json_path, as_path,
					identity);
	}
	for (size_t i = 0; i < F_N && r == 0; i++)
		if (!set[i].tmp) {
			r = stage(out, &set[i]);
			if (r < 0)
				failed = set[i].name;
		}
	if (r < 0) {
		out_files_clear(set, F_N);
		json_object_put(rep);
		return ctx_error(ctx, EXIT_FAILED, "cannot write '%s/%s': %s; the old report in '%s' is left as it was; pass "
				 "--out DIR with a writable directory", out, failed ?: set[F_JSON].name, strerror(-r), out);
	}
	/* Without --no-sign the old allowed_signers stays (a trust line, not a claim about this report);
	 * an old signature goes with the report it signed. */
	if (!sign)
		set[F_AS].name = NULL;
	{
		struct out_file keep[F_N];
		size_t n = 0;

		for (size_t i = 0; i < F_N; i++)
			if (set[i].name)
				keep[n++] = set[i];
		r = commit(out, keep, n, &failed);
		memset(set, 0, sizeof(set));
	}
	if (r < 0) {
		json_object_put(rep);
		return ctx_error(ctx, EXIT_FAILED, "cannot put '%s/%s' in place: %s; the old report in '%s' is left as it was",
				 out, failed ?: "?", strerror(-r), out);
	}

	/* The record: one check per step, the engine gates, the signature. */
	v = report_verdict(jget(rep, "steps"), NULL, &vwhy);
	for (size_t i = 0; i < jarray_len(jget(rep, "summary")); i++) {
		json_object *s = jarray_at(jget(rep, "summary"), i);
		const char *step = jget_str(s, "step"), *st = jget_str(s, "status");
		enum status cst = streq(st, "pass") || streq(st, REPORT_VERDICT_TRAP) ? ST_PASS : streq(st, "warn") ? ST_WARN : streq(st, "fail") ? ST_FAIL : ST_SKIP;

		if (streq(st, "missing"))
			cst = report_step_required(step) ? ST_WARN : ST_SKIP;
		if (streq(step, "plan") && cst == ST_FAIL)
			cst = ST_WARN;
		record_check(rec, step, cst, "%s", jget_str(s, "why") ?: "");
	}
	acc = jget(jget(rep, "steps"), "accept");
	if (acc) {
		bool run, failed_gate;
		report_engine_gates(acc, &run, &failed_gate);
		record_check(rec, "engine-gates", failed_gate ? ST_FAIL : run ? ST_PASS : ST_WARN, "%s",
			     failed_gate ? "an engine gate failed" : run ? "engine gates run and passed"
								     : "not run: cold-boot 157 K first-touch prompt and full 97-scenario bench");
	}
	if (sign)
		record_check(rec, "signature", ST_PASS, "signed as '%s' with %s", identity, fp);
	else
		record_check(rec, "signature", ST_SKIP, "not signed (--no-sign)");

	jset_str(rec->root, "report_verdict", report_verdict_name(v));
	jset_str(rec->root, "why", jget_str(rep, "why"));
	missing = jget(rep, "missing");
	json_object_object_add(rec->root, "missing", json_object_get(missing));
	files = json_object_new_object();
	jset_str(files, "report", json_path);
	jset_str(files, "signature", sign ? sig_path : NULL);
	jset_str(files, "allowed_signers", sign ? as_path : NULL);
	jset_str(files, "text", txt_path);
	jset_str(files, "html", html_path);
	json_object_object_add(rec->root, "files", files);
	json_object_object_add(rec->root, "signer", json_object_get(jget(rep, "signer")));
	jset_str(rec->root, "allowed_signers_line", as_line);
	jset_str(rec->root, "verify_command", verify_cmd);
	jset_str(rec->root, "verify_report_command", verify_ours);
	jset_str(rec->root, "text", text);
	json_object_put(rep);
	record_finish(rec);
	return record_exit_code(rec);
}

void step_report_render(const struct ctx *ctx, json_object *record)
{
	json_object *files = jget(record, "files");
	const char *text = jget_str(record, "text");

	if (text && !ctx->quiet)
		fputs(text, stdout);
	out_heading(ctx, "Files");
	out_line(ctx, "  %s", jget_str(files, "report") ?: "-");
	if (jget_str(files, "signature"))
		out_line(ctx, "  %s", jget_str(files, "signature"));
	if (jget_str(files, "allowed_signers"))
		out_line(ctx, "  %s", jget_str(files, "allowed_signers"));
	out_line(ctx, "  %s", jget_str(files, "text") ?: "-");
	out_line(ctx, "  %s", jget_str(files, "html") ?: "-");
	if (jget_str(record, "allowed_signers_line")) {
		out_heading(ctx, "Check it anywhere");
		out_line(ctx, "allowed_signers line:\n  %s", jget_str(record, "allowed_signers_line"));
		out_line(ctx, "verify with OpenSSH:\n  %s", jget_str(record, "verify_command"));
		out_line(ctx, "or:\n  %s", jget_str(record, "verify_report_command"));
	}
	out_verdict(ctx, record, "report %s: %s", jget_str(record, "report_verdict") ?: "?", jget_str(record, "why") ?: "");
}
