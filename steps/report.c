/* SPDX-License-Identifier: MIT */
/* report: one signed document (report.json + SSHSIG, report.txt, report.html) from the step records. */
#include "steps.h"
#include "report.h"
#include "sign.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>

static const struct step_option report_options[] = {
	{ { "key", required_argument, NULL, 'k' }, "FILE",
	  "OpenSSH ed25519 private key, mode 0600 or stricter; an encrypted one signs\n"
	  "through ssh-agent (default as root: /etc/ssh/ssh_host_ed25519_key)" },
	{ { "out", required_argument, NULL, 'o' }, "DIR",
	  "where report.json, report.json.sig, allowed_signers, report.txt and\n"
	  "report.html go (default: STATE/report)" },
	{ { "identity", required_argument, NULL, 'I' }, "NAME",
	  "the signer's principal in allowed_signers (default: swaptool@HOST);\n"
	  "letters, digits and . _ - @ + only" },
	{ { "no-sign", no_argument, NULL, 'n' }, NULL, "write the report without a signature" },
	{ { "reference", required_argument, NULL, 'R' }, "FILE",
	  "a reference node's accept.json or report.json: both nodes on the same\n"
	  "axes, with B/A ratios" },
	STEP_OPTIONS_END,
};

const struct step step_report = {
	.name = "report",
	.summary = "one signed report (report.json + SSHSIG, report.txt, report.html) from the step records",
	.synopsis = "swaptool report [--key FILE] [--out DIR] [--identity NAME] [--no-sign] [--reference FILE]\n",
	.options = report_options,
	.run = step_report_run,
	.render = step_report_render,
	.flags = STEP_SAVES_RECORD | STEP_READS_STATE,
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
	for (size_t i = 0; i < SS_N; i++) {
		_cleanup_free_ char *rec = xasprintf("%s/%s.json", ctx->state_dir, schema_steps[i]);
		if (stat(rec, &in) == 0 && same_file(&st, &in)) {
			snprintf(what, sizeof(what), "the %s record", schema_steps[i]);
			return what;
		}
	}
	return NULL;
}

/* Everything report works with, phase to phase. */
enum { F_TXT, F_HTML, F_AS, F_JSON, F_SIG, F_N };
struct report_job {
	struct ctx *ctx;
	struct record *rec;
	const char *key_path, *identity_arg, *ref_path;
	bool sign;
	char *out, *identity, *fp, *publine;
	struct ssh_key *key;
	json_object *ref_doc, *rep;
	char *json_path, *sig_path, *as_path, *txt_path, *html_path;
	char *text, *as_line, *verify_cmd, *verify_ours;
	struct out_file set[F_N];
};

static void report_job_free(struct report_job *j)
{
	out_files_clear(j->set, F_N);
	sshkey_free(j->key);
	json_object_put(j->ref_doc);
	json_object_put(j->rep);
	free(j->out), free(j->identity), free(j->fp), free(j->publine);
	free(j->json_path), free(j->sig_path), free(j->as_path), free(j->txt_path), free(j->html_path);
	free(j->text), free(j->as_line), free(j->verify_cmd), free(j->verify_ours);
}

/* Options and the identity. 0, or the exit code of a usage error. */
static int parse_args(struct report_job *j, int argc, char **argv)
{
	struct ctx *ctx = j->ctx;
	int c;

	while ((c = getopt_long(argc, argv, "", step_getopt(report_options), NULL)) != -1) {
		switch (c) {
		case 'k': j->key_path = optarg; break;
		case 'o': free(j->out), j->out = xstrdup(optarg); break;
		case 'I': j->identity_arg = optarg; break;
		case 'n': j->sign = false; break;
		case 'R': j->ref_path = optarg; break;
		default: return step_bad_option(ctx, argc, argv);
		}
	}
	if (optind < argc)
		return ctx_error(ctx, EXIT_USAGE, "unexpected argument '%s'; see 'swaptool help report'", argv[optind]);
	j->identity = j->identity_arg ? xstrdup(j->identity_arg) : xasprintf("swaptool@%s", host_name());
	if (!identity_ok(j->identity)) {
		_cleanup_free_ char *shown = printable(j->identity);
		return ctx_error(ctx, EXIT_USAGE,
				 "bad identity '%s': use letters, digits and . _ - @ + only (no spaces, quotes, commas, "
				 "wildcards or control characters), not starting with '-'; e.g. --identity ops@dgx4",
				 shown);
	}
	if (!j->out)
		j->out = xasprintf("%s/report", ctx->state_dir);
	return 0;
}

/* --reference: a reference node's accept record or report, drawn on the same axes. */
static int load_reference(struct report_job *j)
{
	_cleanup_free_ char *rtext = NULL;
	int r;

	if (!j->ref_path)
		return 0;
	r = read_file_all(j->ref_path, 256 << 20, &rtext, NULL);
	if (r < 0)
		return ctx_error(j->ctx, EXIT_FAILED, "cannot read the reference '%s': %s; pass a reference node's "
				 "accept.json or report.json", j->ref_path, strerror(-r));
	j->ref_doc = json_tokener_parse(rtext);
	if (!schema_accept_runs(report_accept_of(j->ref_doc)))
		return ctx_error(j->ctx, EXIT_FAILED, "the reference '%s' is neither an accept record nor a report holding "
				 "one; pass a reference node's STATE/accept.json or report.json", j->ref_path);
	return 0;
}

/* The key first: refuse before anything is written. */
static int load_key(struct report_job *j)
{
	struct ctx *ctx = j->ctx;
	const char *why = NULL;
	int r;

	if (!j->sign)
		return 0;
	if (!j->key_path && geteuid() != 0)
		return ctx_error(ctx, EXIT_USAGE,
				 "no signing key: pass --key FILE (an OpenSSH ed25519 key, ssh-keygen -t ed25519), "
				 "or --no-sign for an unsigned report");
	if (!j->key_path)
		j->key_path = DEFAULT_KEY;
	r = sshkey_load_private(j->key_path, &j->key, &why);
	if (r < 0)
		return ctx_error(ctx, EXIT_FAILED, "cannot use key '%s': %s%s%s", j->key_path, why,
				 r == -ENOTSUP ? "; make one with 'ssh-keygen -t ed25519'" : "",
				 r != -ENOTSUP && r != -EBADMSG && r != -EPERM ? "; pass --key FILE (an OpenSSH ed25519 key)"
									      : "");
	if (j->key->encrypted && !(getenv("SSH_AUTH_SOCK") && *getenv("SSH_AUTH_SOCK")))
		return ctx_error(ctx, EXIT_FAILED,
				 "key '%s' is encrypted and no ssh-agent is reachable (SSH_AUTH_SOCK is not set); "
				 "run 'eval $(ssh-agent) && ssh-add %s', or pass an unencrypted key",
				 j->key_path, j->key_path);
	j->fp = sshkey_fingerprint(j->key->pk);
	j->publine = sshkey_public_line(j->key->pk);
	return 0;
}

/* --out must not be an input, nor hold one under an output's name (rename would drop it). */
static int check_out(struct report_job *j)
{
	struct ctx *ctx = j->ctx;
	const char *key = j->sign ? j->key_path : NULL, *input = input_named(ctx, j->out, key);
	int r;

	if (input)
		return ctx_error(ctx, EXIT_USAGE, "--out '%s' is %s%s; pass another directory (default STATE/report)", j->out,
				 input, streq(input, "the state directory") ? ", where this step's own record report.json goes" : "");
	r = mkdir_p(j->out, 0755);
	if (r == 0) {
		struct stat st;
		r = stat(j->out, &st) < 0 ? -errno : S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
	}
	if (r < 0)
		return ctx_error(ctx, EXIT_FAILED, "cannot create '%s': %s; pass --out DIR", j->out, strerror(-r));
	for (size_t i = 0; i < F_N; i++) {
		_cleanup_free_ char *pth = xasprintf("%s/%s", j->out, j->set[i].name);
		struct stat st;

		input = lstat(pth, &st) == 0 && !S_ISLNK(st.st_mode) ? input_named(ctx, pth, key) : NULL;
		if (input)
			return ctx_error(ctx, EXIT_USAGE, "'%s' is %s: writing the report there would replace it; pass "
					 "another --out DIR", pth, input);
	}
	return 0;
}

/* report.json's object from the records, the drives, the reference and the signer. */
static int build(struct report_job *j)
{
	_cleanup_free_ char *why = NULL;
	const char *step = NULL;
	int r = report_build(j->ctx->state_dir, &j->rep, &step, &why);

	if (r < 0 && step)
		return ctx_error(j->ctx, EXIT_FAILED, "cannot read the record '%s/%s.json': %s; move it away or rerun '%s'",
				 j->ctx->state_dir, step, why ?: strerror(-r), step);
	if (r < 0)
		return ctx_error(j->ctx, EXIT_FAILED, "cannot read the step records in '%s': %s; check the files there or "
				 "pass --state DIR", j->ctx->state_dir, strerror(-r));
	report_add_drives(j->rep, j->ctx->profile);
	if (j->ref_doc)
		report_add_reference(j->rep, j->ref_doc, j->ref_path);
	if (j->sign) {
		json_object *s = json_object_new_object();
		jset_str(s, "key_type", "ssh-ed25519");
		jset_str(s, "fingerprint", j->fp);
		jset_str(s, "identity", j->identity);
		json_object_object_add(j->rep, "signer", s);
	}
	j->json_path = xasprintf("%s/report.json", j->out);
	j->sig_path = xasprintf("%s/report.json.sig", j->out);
	j->as_path = xasprintf("%s/allowed_signers", j->out);
	j->txt_path = xasprintf("%s/report.txt", j->out);
	j->html_path = xasprintf("%s/report.html", j->out);
	return 0;
}

/* Sign what is on disk: SHA-512 streamed from the staged report.json, as ssh-keygen reads it. */
static int sign_staged(struct report_job *j)
{
	_cleanup_free_ char *armour = NULL;
	_cleanup_close_ int fd = -1;
	const char *why = NULL;
	unsigned char md[64];
	unsigned mdlen = 0;
	int r;

	fd = open(j->set[F_JSON].tmp, O_RDONLY | O_CLOEXEC);
	r = fd < 0 ? -errno : sshsig_hash_fd(fd, "sha512", md, &mdlen);
	if (r < 0)
		return ctx_error(j->ctx, EXIT_FAILED, "cannot read back '%s': %s", j->set[F_JSON].tmp, strerror(-r));
	r = sshsig_sign(j->key, SSHSIG_NAMESPACE, "sha512", md, mdlen, &armour, &why);
	explicit_bzero(md, sizeof(md));
	if (r < 0)
		return ctx_error(j->ctx, EXIT_FAILED, "cannot sign '%s' with '%s': %s", j->json_path, j->key_path, why);
	j->as_line = xasprintf("%s namespaces=\"%s\" %s", j->identity, SSHSIG_NAMESPACE, j->publine);
	j->set[F_SIG].data = xstrdup(armour);
	j->set[F_AS].data = xasprintf("%s\n", j->as_line);
	j->verify_cmd = xasprintf("ssh-keygen -Y verify -f %s -I %s -n %s -s %s < %s", j->as_path, j->identity,
				  SSHSIG_NAMESPACE, j->sig_path, j->json_path);
	j->verify_ours = xasprintf("swaptool verify-report %s --allowed-signers %s --identity %s", j->json_path,
				   j->as_path, j->identity);
	return 0;
}

/* Every file of the set goes to a temporary first; only a whole set replaces the old one. Without
 * --no-sign the old allowed_signers stays (a trust line, not a claim about this report); an old
 * signature goes with the report it signed. */
static int write_set(struct report_job *j)
{
	const char *failed = NULL;
	struct out_file keep[F_N];
	size_t n = 0;
	int r;

	j->text = report_text(j->rep);
	j->set[F_JSON].data = xasprintf("%s\n", json_object_to_json_string_ext(j->rep, JSON_C_TO_STRING_PRETTY |
										      JSON_C_TO_STRING_NOSLASHESCAPE));
	j->set[F_TXT].data = xstrdup(j->text);
	j->set[F_HTML].data = report_html(j->rep, j->ctx->profile);
	r = stage(j->out, &j->set[F_JSON]);
	if (r == 0 && j->sign && (r = sign_staged(j)) != 0)
		return r;
	for (size_t i = 0; i < F_N && r == 0; i++)
		if (!j->set[i].tmp) {
			r = stage(j->out, &j->set[i]);
			if (r < 0)
				failed = j->set[i].name;
		}
	if (r < 0)
		return ctx_error(j->ctx, EXIT_FAILED, "cannot write '%s/%s': %s; the old report in '%s' is left as it was; "
				 "pass --out DIR with a writable directory", j->out, failed ?: j->set[F_JSON].name,
				 strerror(-r), j->out);
	if (!j->sign)
		j->set[F_AS].name = NULL;
	for (size_t i = 0; i < F_N; i++)
		if (j->set[i].name)
			keep[n++] = j->set[i];
	r = commit(j->out, keep, n, &failed);
	memset(j->set, 0, sizeof(j->set));
	if (r < 0)
		return ctx_error(j->ctx, EXIT_FAILED, "cannot put '%s/%s' in place: %s; the old report in '%s' is left as it was",
				 j->out, failed ?: "?", strerror(-r), j->out);
	return 0;
}

/* The record: one check per step, the engine gates, the signature, the files. */
static void fill_record(struct report_job *j)
{
	struct record *rec = j->rec;
	json_object *rep = j->rep, *files, *acc = jget(jget(rep, "steps"), "accept");
	_cleanup_free_ char *vwhy = NULL;
	enum report_verdict v = report_verdict(jget(rep, "steps"), NULL, &vwhy);

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
	if (acc) {
		bool run, failed_gate;
		schema_accept_engine_gates(acc, &run, &failed_gate);
		record_check(rec, "engine-gates", failed_gate ? ST_FAIL : run ? ST_PASS : ST_WARN, "%s",
			     failed_gate ? "an engine gate failed" : run ? "engine gates run and passed"
								     : "not run: cold-boot 157 K first-touch prompt and full 97-scenario bench");
	}
	if (j->sign)
		record_check(rec, "signature", ST_PASS, "signed as '%s' with %s", j->identity, j->fp);
	else
		record_check(rec, "signature", ST_SKIP, "not signed (--no-sign)");

	jset_str(rec->root, "report_verdict", report_verdict_name(v));
	jset_str(rec->root, "why", jget_str(rep, "why"));
	json_object_object_add(rec->root, "missing", json_object_get(jget(rep, "missing")));
	files = json_object_new_object();
	jset_str(files, "report", j->json_path);
	jset_str(files, "signature", j->sign ? j->sig_path : NULL);
	jset_str(files, "allowed_signers", j->sign ? j->as_path : NULL);
	jset_str(files, "text", j->txt_path);
	jset_str(files, "html", j->html_path);
	json_object_object_add(rec->root, "files", files);
	json_object_object_add(rec->root, "signer", json_object_get(jget(rep, "signer")));
	jset_str(rec->root, "allowed_signers_line", j->as_line);
	jset_str(rec->root, "verify_command", j->verify_cmd);
	jset_str(rec->root, "verify_report_command", j->verify_ours);
	jset_str(rec->root, "text", j->text);
}

/* report, phase by phase: options, the reference, the key, --out, report.json's object, the
 * files written and signed as one set, this step's record. Each phase returns 0 or an exit code. */
int step_report_run(struct ctx *ctx, int argc, char **argv, struct record *rec)
{
	struct report_job j = {
		.ctx = ctx,
		.rec = rec,
		.sign = true,
		.set = {
			[F_TXT] = { .name = "report.txt" },
			[F_HTML] = { .name = "report.html" },
			[F_AS] = { .name = "allowed_signers" },
			[F_JSON] = { .name = "report.json" },
			[F_SIG] = { .name = "report.json.sig" },
		},
	};
	int r;

	r = parse_args(&j, argc, argv);
	if (r == 0)
		r = load_reference(&j);
	if (r == 0)
		r = load_key(&j);
	if (r == 0)
		r = check_out(&j);
	if (r == 0)
		r = build(&j);
	if (r == 0)
		r = write_set(&j);
	if (r == 0) {
		fill_record(&j);
		record_finish(rec);
		r = record_exit_code(rec);
	}
	report_job_free(&j);
	return r;
}

void step_report_render(const struct ctx *ctx, json_object *record)
{
	json_object *files = jget(record, "files");
	const char *text = jget_str(record, "text");

	if (text && !ctx->quiet)
		out_block(text);
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
		out_line(ctx, "allowed_signers line:");
		out_line(ctx, "  %s", jget_str(record, "allowed_signers_line"));
		out_line(ctx, "verify with OpenSSH:");
		out_line(ctx, "  %s", jget_str(record, "verify_command"));
		out_line(ctx, "or:");
		out_line(ctx, "  %s", jget_str(record, "verify_report_command"));
	}
	out_verdict(ctx, record, "report %s: %s", jget_str(record, "report_verdict") ?: "?", jget_str(record, "why") ?: "");
}
