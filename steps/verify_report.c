/* SPDX-License-Identifier: MIT */
/* verify-report: check a report's SSHSIG (and allowed_signers), its record hashes, and that its
 * verdict follows from its records. */
#include "steps.h"
#include "report.h"
#include "sign.h"

#include <fcntl.h>

static const struct step_operand verify_report_operands[] = {
	{ "REPORT", "report.json" },
	{ 0 },
};

static const struct step_option verify_report_options[] = {
	{ { "sig", required_argument, NULL, 's' }, "FILE", "the armoured signature (default: REPORT.sig)" },
	{ { "allowed-signers", required_argument, NULL, 'a' }, "FILE",
	  "ssh-keygen(1) ALLOWED SIGNERS file; with --identity, the signer must be\n"
	  "listed for ID and namespace swaptool-report" },
	{ { "identity", required_argument, NULL, 'I' }, "ID", NULL },
	STEP_OPTIONS_END,
};

const struct step step_verify_report = {
	.name = "verify-report",
	.summary = "check a report's SSH signature, its signer and its record hashes",
	.synopsis = "swaptool verify-report REPORT [--sig FILE] [--allowed-signers FILE --identity ID]\n",
	.operands = verify_report_operands,
	.options = verify_report_options,
	.notes = "exit: 0 good, 1 bad signature, signer not allowed or records changed, 3 unreadable or malformed\n",
	.run = step_verify_report_run,
	.render = step_verify_report_render,
	.flags = 0,
};

/* An armoured SSHSIG is under 1 KiB, an allowed_signers file a few lines; a report embeds every
 * record (a few MiB at most). */
#define VERIFY_SIG_MAX_BYTES (1u << 20)
#define VERIFY_REPORT_MAX_BYTES (256u << 20)

/* One verify-report run: what the command line names, the signature and the report's bytes. */
struct vr_job {
	const char *report_path, *allowed, *identity, *why;
	char *sig_path, *armour, *text, *fp, *iwhy;
	struct sshsig sig;
	unsigned char md[64];
	unsigned mdlen;
	size_t alen, tlen;
};

static void vr_job_free(struct vr_job *j)
{
	free(j->sig_path);
	free(j->armour);
	free(j->text);
	free(j->fp);
	free(j->iwhy);
}

/* The options and the one REPORT; 0 or the exit code. */
static int vr_args(struct ctx *ctx, int argc, char **argv, struct vr_job *j)
{
	int c;

	while ((c = getopt_long(argc, argv, "", step_getopt(verify_report_options), NULL)) != -1) {
		switch (c) {
		case 's': j->sig_path = xstrdup(optarg); break;
		case 'a': j->allowed = optarg; break;
		case 'I': j->identity = optarg; break;
		default: return step_bad_option(ctx, argc, argv);
		}
	}
	if (optind + 1 != argc)
		return ctx_error(ctx, EXIT_USAGE, "verify-report takes one REPORT (report.json); see 'swaptool help verify-report'");
	if (!j->allowed != !j->identity)
		return ctx_error(ctx, EXIT_USAGE, "--allowed-signers and --identity go together; see 'swaptool help verify-report'");
	j->report_path = argv[optind];
	if (!j->sig_path)
		j->sig_path = xasprintf("%s.sig", j->report_path);
	return 0;
}

/* The signature parsed, the report read and hashed, the allowed signers file readable; 0 or the exit code. */
static int vr_read(struct ctx *ctx, struct vr_job *j)
{
	int r = read_input(j->sig_path, VERIFY_SIG_MAX_BYTES, 0, &j->armour, &j->alen, &j->iwhy);

	if (r < 0)
		return ctx_error(ctx, EXIT_FAILED, "cannot read the signature '%s': %s; pass --sig FILE", j->sig_path, j->iwhy);
	r = sshsig_parse(j->armour, j->alen, &j->sig, &j->why);
	if (r < 0)
		return ctx_error(ctx, EXIT_FAILED, "%s signature '%s': %s%s", r == -ENOTSUP ? "unsupported" : "malformed",
				 j->sig_path, j->why, r == -ENOTSUP ? "; swaptool reports are signed with ssh-ed25519 keys" : "");
	/* One read: the bytes hashed are the bytes parsed below, even if the file changes meanwhile. */
	r = read_input(j->report_path, VERIFY_REPORT_MAX_BYTES, 0, &j->text, &j->tlen, &j->iwhy);
	if (r < 0)
		return ctx_error(ctx, EXIT_FAILED, "cannot read the report '%s': %s", j->report_path, j->iwhy);
	if (j->allowed) {
		_cleanup_close_ int afd = open_input(j->allowed, VERIFY_SIG_MAX_BYTES, 0, &j->iwhy);
		if (afd < 0)
			return ctx_error(ctx, EXIT_FAILED, "cannot read the allowed signers file '%s': %s", j->allowed, j->iwhy);
	}
	r = sshsig_hash_buf(j->text, j->tlen, j->sig.hashalg, j->md, &j->mdlen);
	if (r < 0)
		return ctx_error(ctx, EXIT_FAILED, "cannot read the report '%s': %s", j->report_path, strerror(-r));
	return 0;
}

/* The signature into the record and checked; returns whether it is good. */
static bool check_signature(struct record *rec, struct vr_job *j)
{
	json_object *s = json_object_new_object();
	int r;

	j->fp = sshkey_fingerprint(j->sig.pk);
	jset_str(s, "key_type", "ssh-ed25519");
	jset_str(s, "fingerprint", j->fp);
	jset_str(s, "namespace", j->sig.ns);
	jset_str(s, "hashalg", j->sig.hashalg);
	json_object_object_add(rec->root, "signature", s);
	jset_str(rec->root, "report", j->report_path);
	jset_str(rec->root, "sig", j->sig_path);

	r = sshsig_verify(&j->sig, SSHSIG_NAMESPACE, j->md, j->mdlen, &j->why);
	if (r == 0)
		record_check(rec, "signature", ST_PASS, "good %s signature by %s (namespace %s)", j->sig.hashalg, j->fp, j->sig.ns);
	else if (r == -EBADMSG)
		record_check(rec, "signature", ST_FAIL, "signed for namespace '%s', not '%s'", j->sig.ns, SSHSIG_NAMESPACE);
	else
		record_check(rec, "signature", ST_FAIL, "%s", j->why);
	return r == 0;
}

/* The signer against the allowed signers file, when one is named; 0 or the exit code. */
static int check_signer(struct ctx *ctx, struct record *rec, struct vr_job *j)
{
	int r;

	/* A good signature without a trust list says the bytes are what some key signed, not whose:
	 * the headline says so (step_verify_report_render), and --json has it as signer_checked. */
	jset_bool(rec->root, "signer_checked", j->allowed != NULL);
	if (!j->allowed) {
		record_check(rec, "allowed-signer", ST_SKIP,
			     "signer not checked against a trust list: pass --allowed-signers FILE --identity ID");
		return 0;
	}
	r = allowed_signers_check(j->allowed, j->identity, SSHSIG_NAMESPACE, j->sig.pk, &j->why);
	if (r < 0 && r != -EPERM)
		return ctx_error(ctx, EXIT_FAILED, "cannot read the allowed signers file '%s': %s", j->allowed, strerror(-r));
	jset_str(rec->root, "identity", j->identity);
	if (r == 0)
		record_check(rec, "allowed-signer", ST_PASS, "'%s' may sign %s with %s", j->identity, SSHSIG_NAMESPACE, j->fp);
	else
		record_check(rec, "allowed-signer", ST_FAIL, "%s ('%s', %s)", j->why, j->identity, j->allowed);
	return 0;
}

/* The signed bytes as a report of this swaptool's schema; 0 or the exit code (DOC then released). */
static int parse_report(struct ctx *ctx, const struct vr_job *j, json_object **doc)
{
	_cleanup_free_ char *iwhy = NULL;
	const char *schema;

	if (json_parse_doc(j->text, j->tlen, doc, &iwhy) < 0)
		return ctx_error(ctx, EXIT_FAILED, "'%s' is signed but is not a swaptool report: %s", j->report_path, iwhy);
	schema = jget_str(*doc, "schema");
	if (schema && startswith(schema, "swaptool-report/") && !streq(schema, REPORT_SCHEMA)) {
		_cleanup_free_ char *sc = xstrdup(schema);
		json_object_put(*doc);
		return ctx_error(ctx, EXIT_FAILED, "the report '%s' has schema '%s' but this swaptool reads only '%s'; "
				 "verify it with the swaptool that made it", j->report_path, sc, REPORT_SCHEMA);
	}
	if (!streq(schema, REPORT_SCHEMA) || !json_object_is_type(*doc, json_type_object)) {
		json_object_put(*doc);
		return ctx_error(ctx, EXIT_FAILED, "'%s' is signed but is not a swaptool report (schema %s)",
				 j->report_path, REPORT_SCHEMA);
	}
	return 0;
}

/* The report's record hashes, its verdict made again, its signer; 0 or the exit code. */
static int check_contents(struct ctx *ctx, struct record *rec, const struct vr_job *j)
{
	_cleanup_free_ char *hwhy = NULL, *vwhy = NULL;
	json_object *doc = NULL, *s;
	int r = parse_report(ctx, j, &doc);

	if (r)
		return r;
	r = report_check_hashes(doc, &hwhy);
	record_check(rec, "records", r == 0 ? ST_PASS : ST_FAIL, "%s", hwhy);
	/* A signature and matching hashes prove who wrote the report, not that its verdict is true:
	 * the verdict is made again from the records, with the function report used. */
	r = report_check_verdict(doc, &vwhy);
	record_check(rec, "verdict", r == 0 ? ST_PASS : ST_FAIL, "%s", vwhy);
	s = jget(doc, "signer");
	if (s && jget_str(s, "fingerprint") && !streq(jget_str(s, "fingerprint"), j->fp))
		record_check(rec, "signer", ST_FAIL, "the report names signer %s but was signed by %s",
			     jget_str(s, "fingerprint"), j->fp);
	jset_str(rec->root, "report_host", jget_str(doc, "host"));
	jset_str(rec->root, "report_verdict", jget_str(doc, "verdict"));
	jset_str(rec->root, "report_created", jget_str(doc, "created"));
	jset_str(rec->root, "why", jget_str(doc, "why"));
	json_object_put(doc);
	return 0;
}

/* read; the signature, the signer; and only on a good signature the contents */
static int verify_report(struct ctx *ctx, struct record *rec, struct vr_job *j)
{
	bool sig_good;
	int r = vr_read(ctx, j);

	if (r)
		return r;
	sig_good = check_signature(rec, j);
	if ((r = check_signer(ctx, rec, j)))
		return r;
	/* The hashes only mean something on a report that is what the signer signed. */
	if (!sig_good) {
		record_check(rec, "records", ST_SKIP, "not checked: the signature does not cover this file");
		record_check(rec, "verdict", ST_SKIP, "not checked: the signature does not cover this file");
	} else if ((r = check_contents(ctx, rec, j)))
		return r;
	record_finish(rec);
	return record_exit_code(rec);
}

int step_verify_report_run(struct ctx *ctx, int argc, char **argv, struct record *rec)
{
	struct vr_job j = { 0 };
	int r = vr_args(ctx, argc, argv, &j);

	if (r == 0)
		r = verify_report(ctx, rec, &j);
	vr_job_free(&j);
	return r;
}

void step_verify_report_render(const struct ctx *ctx, json_object *record)
{
	out_checks(ctx, record);
	if (jget_str(record, "report_verdict")) {
		out_line(ctx, "%s", "");
		out_line(ctx, "report: %s, made %s on %s: %s  %s", jget_str(record, "report"),
			 jget_str(record, "report_created") ?: "?", jget_str(record, "report_host") ?: "?",
			 jget_str(record, "report_verdict"), jget_str(record, "why") ?: "");
	}
	if (streq(jget_str(record, "verdict"), "fail"))
		out_verdict(ctx, record, "%s", "do not trust this report");
	else if (!jget_bool(record, "signer_checked"))
		out_verdict(ctx, record, "%s", "the report is intact, signer not checked: any key's signature verifies "
					       "without a trust list; pass --allowed-signers FILE --identity ID to know who signed it");
	else
		out_verdict(ctx, record, "%s", "the report is authentic and intact");
}
