/* SPDX-License-Identifier: MIT */
/* report: one signed document (report.json + SSHSIG, report.txt, report.html) from the step records. */
#include "steps.h"
#include "report.h"
#include "sign.h"

#include <fcntl.h>
#include <sys/stat.h>

/* The host key is the default signer as root: every node has one, and the fleet already trusts it. */
#define DEFAULT_KEY "/etc/ssh/ssh_host_ed25519_key"

static int write_out(struct ctx *ctx, const char *dir, const char *name, const char *text, mode_t mode, char **path)
{
	int r;

	*path = xasprintf("%s/%s", dir, name);
	r = write_file_atomic(*path, text, strlen(text), mode);
	if (r < 0)
		return ctx_error(ctx, EXIT_FAILED, "cannot write '%s': %s; pass --out DIR with a writable directory", *path,
				 strerror(-r));
	return 0;
}

static bool identity_ok(const char *id)
{
	if (!*id)
		return false;
	for (const char *p = id; *p; p++)
		if (*p == ' ' || *p == '\t' || *p == '"' || *p == '\n' || *p == ',' || *p == '#')
			return false;
	return true;
}

int step_report_run(struct ctx *ctx, int argc, char **argv, struct record *rec)
{
	static const struct option opts[] = {
		{ "key", required_argument, NULL, 'k' },
		{ "out", required_argument, NULL, 'o' },
		{ "identity", required_argument, NULL, 'I' },
		{ "no-sign", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, STEP_OPT_HELP_VAL },
		{ 0 },
	};
	const char *key_path = NULL, *identity_arg = NULL, *why = NULL;
	_cleanup_free_ char *out = NULL, *identity = NULL, *json_path = NULL, *sig_path = NULL, *txt_path = NULL;
	_cleanup_free_ char *html_path = NULL, *as_path = NULL, *text = NULL, *html = NULL, *armour = NULL;
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

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'k': key_path = optarg; break;
		case 'o': out = xstrdup(optarg); break;
		case 'I': identity_arg = optarg; break;
		case 'n': sign = false; break;
		default: return step_bad_option(ctx, argc, argv);
		}
	}
	if (optind < argc)
		return ctx_error(ctx, EXIT_USAGE, "unexpected argument '%s'; see 'swaptool help report'", argv[optind]);
	identity = identity_arg ? xstrdup(identity_arg) : xasprintf("swaptool@%s", host_name());
	if (!identity_ok(identity))
		return ctx_error(ctx, EXIT_USAGE, "bad identity '%s': no spaces, quotes, commas or '#'; e.g. --identity ops@%s",
				 identity, host_name());
	if (!out)
		out = xasprintf("%s/report", ctx->state_dir);

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
					 r != -ENOTSUP && r != -EBADMSG ? "; pass --key FILE (an OpenSSH ed25519 key)" : "");
		if (key->encrypted && !(getenv("SSH_AUTH_SOCK") && *getenv("SSH_AUTH_SOCK")))
			return ctx_error(ctx, EXIT_FAILED,
					 "key '%s' is encrypted and no ssh-agent is reachable (SSH_AUTH_SOCK is not set); "
					 "run 'eval $(ssh-agent) && ssh-add %s', or pass an unencrypted key",
					 key_path, key_path);
		fp = sshkey_fingerprint(key->pk);
		publine = sshkey_public_line(key->pk);
	}

	r = report_build(ctx->state_dir, &rep);
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

	r = mkdir_p(out, 0755);
	if (r == 0) {
		struct stat st;
		r = stat(out, &st) < 0 ? -errno : S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
	}
	if (r < 0) {
		json_object_put(rep);
		return ctx_error(ctx, EXIT_FAILED, "cannot create '%s': %s; pass --out DIR", out, strerror(-r));
	}
	{
		/* STATE/report.json is this step's own record: main would overwrite the signed report with it. */
		_cleanup_free_ char *ro = realpath(out, NULL), *rs = realpath(ctx->state_dir, NULL);
		if (ro && rs && streq(ro, rs)) {
			json_object_put(rep);
			return ctx_error(ctx, EXIT_USAGE, "--out '%s' is the state directory, where this step's own record "
					 "report.json goes; pass another directory (default STATE/report)", out);
		}
	}
	json_path = xasprintf("%s/report.json", out);
	sig_path = xasprintf("%s/report.json.sig", out);
	as_path = xasprintf("%s/allowed_signers", out);
	/* A signature left from an earlier run would not match the new report.json. */
	if (unlink(sig_path) < 0 && errno != ENOENT) {
		json_object_put(rep);
		return ctx_error(ctx, EXIT_FAILED, "cannot remove the old signature '%s': %s", sig_path, strerror(errno));
	}
	{
		_cleanup_free_ char *doc = xasprintf("%s\n", json_object_to_json_string_ext(
			rep, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
		_cleanup_free_ char *p = NULL;
		r = write_out(ctx, out, "report.json", doc, 0644, &p);
	}
	text = report_text(rep);
	html = report_html(rep, ctx->profile);
	if (r == 0)
		r = write_out(ctx, out, "report.txt", text, 0644, &txt_path);
	if (r == 0)
		r = write_out(ctx, out, "report.html", html, 0644, &html_path);
	if (r != 0) {
		json_object_put(rep);
		return r;
	}

	if (sign) {
		/* Sign what is on disk: SHA-512 streamed from the file, as ssh-keygen reads it. */
		fd = open(json_path, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || sshsig_hash_fd(fd, "sha512", md, &mdlen) < 0) {
			json_object_put(rep);
			return ctx_error(ctx, EXIT_FAILED, "cannot read back '%s': %s", json_path, strerror(errno));
		}
		r = sshsig_sign(key, SSHSIG_NAMESPACE, "sha512", md, mdlen, &armour, &why);
		explicit_bzero(md, sizeof(md));
		if (r < 0) {
			json_object_put(rep);
			return ctx_error(ctx, EXIT_FAILED, "cannot sign '%s' with '%s': %s", json_path, key_path, why);
		}
		_cleanup_free_ char *p = NULL;
		r = write_out(ctx, out, "report.json.sig", armour, 0644, &p);
		as_line = xasprintf("%s namespaces=\"%s\" %s", identity, SSHSIG_NAMESPACE, publine);
		_cleanup_free_ char *as_text = xasprintf("%s\n", as_line);
		_cleanup_free_ char *p2 = NULL;
		if (r == 0)
			r = write_out(ctx, out, "allowed_signers", as_text, 0644, &p2);
		if (r != 0) {
			json_object_put(rep);
			return r;
		}
		verify_cmd = xasprintf("ssh-keygen -Y verify -f %s -I %s -n %s -s %s < %s", as_path, identity,
				       SSHSIG_NAMESPACE, sig_path, json_path);
		verify_ours = xasprintf("swaptool verify-report %s --allowed-signers %s --identity %s", json_path, as_path,
					identity);
	}

	/* The record: one check per step, the engine gates, the signature. */
	v = report_verdict(jget(rep, "steps"), NULL, &vwhy);
	for (size_t i = 0; i < json_object_array_length(jget(rep, "summary")); i++) {
		json_object *s = json_object_array_get_idx(jget(rep, "summary"), i);
		const char *step = jget_str(s, "step"), *st = jget_str(s, "status");
		enum status cst = streq(st, "pass") ? ST_PASS : streq(st, "warn") ? ST_WARN : streq(st, "fail") ? ST_FAIL : ST_SKIP;

		if (streq(st, "missing"))
			cst = report_step_required(step) ? ST_WARN : ST_SKIP;
		if (streq(step, "plan") && cst == ST_FAIL)
			cst = ST_WARN;
		record_check(rec, step, cst, "%s", jget_str(s, "why") ?: "");
	}
	acc = jget(jget(rep, "steps"), "accept");
	if (acc) {
		bool run, failed;
		report_engine_gates(acc, &run, &failed);
		record_check(rec, "engine-gates", failed ? ST_FAIL : run ? ST_PASS : ST_WARN, "%s",
			     failed ? "an engine gate failed" : run ? "engine gates run and passed"
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
