/* SPDX-License-Identifier: MIT */
/* verify-report: check a report's SSHSIG (and allowed_signers), its record hashes, and that its
 * verdict follows from its records. */
#include "steps.h"
#include "report.h"
#include "sign.h"

#include <fcntl.h>

static const struct option verify_report_options[] = {
	{ "sig", required_argument, NULL, 's' },
	{ "allowed-signers", required_argument, NULL, 'a' },
	{ "identity", required_argument, NULL, 'I' },
	{ 0 },
};

const struct step step_verify_report = {
	.name = "verify-report",
	.summary = "check a report's SSH signature, its signer and its record hashes",
	.usage = "swaptool verify-report REPORT [--sig FILE] [--allowed-signers FILE --identity ID]\n"
		 "  REPORT                  report.json\n"
		 "  --sig FILE              the armoured signature (default: REPORT.sig)\n"
		 "  --allowed-signers FILE  ssh-keygen(1) ALLOWED SIGNERS file; with --identity, the signer must be\n"
		 "                          listed for ID and namespace swaptool-report\n"
		 "exit: 0 good, 1 bad signature, signer not allowed or records changed, 3 unreadable or malformed\n",
	.options = verify_report_options,
	.run = step_verify_report_run,
	.render = step_verify_report_render,
	.flags = 0,
};

/* An armoured SSHSIG is under 1 KiB, an allowed_signers file a few lines; a report embeds every
 * record (a few MiB at most). */
#define VERIFY_SIG_MAX_BYTES (1u << 20)
#define VERIFY_REPORT_MAX_BYTES (256u << 20)

int step_verify_report_run(struct ctx *ctx, int argc, char **argv, struct record *rec)
{
	const char *report_path, *allowed = NULL, *identity = NULL, *why = NULL;
	_cleanup_free_ char *sig_path = NULL, *armour = NULL, *text = NULL, *fp = NULL, *hwhy = NULL, *vwhy = NULL,
			   *iwhy = NULL;
	struct sshsig sig;
	unsigned char md[64];
	unsigned mdlen = 0;
	size_t alen = 0, tlen = 0;
	json_object *doc = NULL, *s;
	bool sig_good;
	int c, r;

	while ((c = getopt_long(argc, argv, "", verify_report_options, NULL)) != -1) {
		switch (c) {
		case 's': sig_path = xstrdup(optarg); break;
		case 'a': allowed = optarg; break;
		case 'I': identity = optarg; break;
		default: return step_bad_option(ctx, argc, argv);
		}
	}
	if (optind + 1 != argc)
		return ctx_error(ctx, EXIT_USAGE, "verify-report takes one REPORT (report.json); see 'swaptool help verify-report'");
	if (!allowed != !identity)
		return ctx_error(ctx, EXIT_USAGE, "--allowed-signers and --identity go together; see 'swaptool help verify-report'");
	report_path = argv[optind];
	if (!sig_path)
		sig_path = xasprintf("%s.sig", report_path);

	r = read_input(sig_path, VERIFY_SIG_MAX_BYTES, 0, &armour, &alen, &iwhy);
	if (r < 0)
		return ctx_error(ctx, EXIT_FAILED, "cannot read the signature '%s': %s; pass --sig FILE", sig_path, iwhy);
	r = sshsig_parse(armour, alen, &sig, &why);
	if (r < 0)
		return ctx_error(ctx, EXIT_FAILED, "%s signature '%s': %s%s", r == -ENOTSUP ? "unsupported" : "malformed",
				 sig_path, why, r == -ENOTSUP ? "; swaptool reports are signed with ssh-ed25519 keys" : "");
	/* One read: the bytes hashed are the bytes parsed below, even if the file changes meanwhile. */
	r = read_input(report_path, VERIFY_REPORT_MAX_BYTES, 0, &text, &tlen, &iwhy);
	if (r < 0)
		return ctx_error(ctx, EXIT_FAILED, "cannot read the report '%s': %s", report_path, iwhy);
	if (allowed) {
		_cleanup_close_ int afd = open_input(allowed, VERIFY_SIG_MAX_BYTES, 0, &iwhy);
		if (afd < 0)
			return ctx_error(ctx, EXIT_FAILED, "cannot read the allowed signers file '%s': %s", allowed, iwhy);
	}
	r = sshsig_hash_buf(text, tlen, sig.hashalg, md, &mdlen);
	if (r < 0)
		return ctx_error(ctx, EXIT_FAILED, "cannot read the report '%s': %s", report_path, strerror(-r));

	fp = sshkey_fingerprint(sig.pk);
	s = json_object_new_object();
	jset_str(s, "key_type", "ssh-ed25519");
	jset_str(s, "fingerprint", fp);
	jset_str(s, "namespace", sig.ns);
	jset_str(s, "hashalg", sig.hashalg);
	json_object_object_add(rec->root, "signature", s);
	jset_str(rec->root, "report", report_path);
	jset_str(rec->root, "sig", sig_path);

	r = sshsig_verify(&sig, SSHSIG_NAMESPACE, md, mdlen, &why);
	sig_good = r == 0;
	if (sig_good)
		record_check(rec, "signature", ST_PASS, "good %s signature by %s (namespace %s)", sig.hashalg, fp, sig.ns);
	else if (r == -EBADMSG)
		record_check(rec, "signature", ST_FAIL, "signed for namespace '%s', not '%s'", sig.ns, SSHSIG_NAMESPACE);
	else
		record_check(rec, "signature", ST_FAIL, "%s", why);

	if (allowed) {
		r = allowed_signers_check(allowed, identity, SSHSIG_NAMESPACE, sig.pk, &why);
		if (r < 0 && r != -EPERM)
			return ctx_error(ctx, EXIT_FAILED, "cannot read the allowed signers file '%s': %s", allowed, strerror(-r));
		jset_str(rec->root, "identity", identity);
		if (r == 0)
			record_check(rec, "allowed-signer", ST_PASS, "'%s' may sign %s with %s", identity, SSHSIG_NAMESPACE, fp);
		else
			record_check(rec, "allowed-signer", ST_FAIL, "%s ('%s', %s)", why, identity, allowed);
	} else
		record_check(rec, "allowed-signer", ST_SKIP,
			     "signer not checked against a trust list: pass --allowed-signers FILE --identity ID");

	/* The hashes only mean something on a report that is what the signer signed. */
	if (!sig_good) {
		record_check(rec, "records", ST_SKIP, "not checked: the signature does not cover this file");
		record_check(rec, "verdict", ST_SKIP, "not checked: the signature does not cover this file");
		record_finish(rec);
		return record_exit_code(rec);
	}
	r = json_parse_doc(text, tlen, &doc, &iwhy);
	if (r < 0)
		return ctx_error(ctx, EXIT_FAILED, "'%s' is signed but is not a swaptool report: %s", report_path, iwhy);
	{
		const char *schema = jget_str(doc, "schema");

		if (schema && startswith(schema, "swaptool-report/") && !streq(schema, REPORT_SCHEMA)) {
			_cleanup_free_ char *sc = xstrdup(schema);
			json_object_put(doc);
			return ctx_error(ctx, EXIT_FAILED, "the report '%s' has schema '%s' but this swaptool reads only '%s'; "
					 "verify it with the swaptool that made it", report_path, sc, REPORT_SCHEMA);
		}
		if (!streq(schema, REPORT_SCHEMA) || !json_object_is_type(doc, json_type_object)) {
			json_object_put(doc);
			return ctx_error(ctx, EXIT_FAILED, "'%s' is signed but is not a swaptool report (schema %s)",
					 report_path, REPORT_SCHEMA);
		}
	}
	r = report_check_hashes(doc, &hwhy);
	record_check(rec, "records", r == 0 ? ST_PASS : ST_FAIL, "%s", hwhy);
	/* A signature and matching hashes prove who wrote the report, not that its verdict is true:
	 * the verdict is made again from the records, with the function report used. */
	r = report_check_verdict(doc, &vwhy);
	record_check(rec, "verdict", r == 0 ? ST_PASS : ST_FAIL, "%s", vwhy);
	s = jget(doc, "signer");
	if (s && jget_str(s, "fingerprint") && !streq(jget_str(s, "fingerprint"), fp))
		record_check(rec, "signer", ST_FAIL, "the report names signer %s but was signed by %s",
			     jget_str(s, "fingerprint"), fp);
	jset_str(rec->root, "report_host", jget_str(doc, "host"));
	jset_str(rec->root, "report_verdict", jget_str(doc, "verdict"));
	jset_str(rec->root, "report_created", jget_str(doc, "created"));
	jset_str(rec->root, "why", jget_str(doc, "why"));
	json_object_put(doc);
	record_finish(rec);
	return record_exit_code(rec);
}

void step_verify_report_render(const struct ctx *ctx, json_object *record)
{
	out_checks(ctx, record);
	if (jget_str(record, "report_verdict"))
		out_line(ctx, "\nreport: %s, made %s on %s: %s  %s", jget_str(record, "report"),
			 jget_str(record, "report_created") ?: "?", jget_str(record, "report_host") ?: "?",
			 jget_str(record, "report_verdict"), jget_str(record, "why") ?: "");
	out_verdict(ctx, record, "%s", streq(jget_str(record, "verdict"), "fail") ? "do not trust this report"
										    : "the report is authentic and intact");
}
