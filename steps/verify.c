/* SPDX-License-Identifier: MIT */
/* verify: the live system against a backup's manifest; identifiers in fstab resolve here. */
#include "steps.h"
#include "extract.h"
#include "tarball.h"
#include "verify.h"

static const struct step_option verify_options[] = {
	STEP_OPT_ROOT("check the tree under DIR (default /)"),
	STEP_OPT_MAP_USER,
	STEP_OPTIONS_END,
};

const struct step step_verify = {
	.name = "verify",
	.summary = "the live system against a backup's manifest: files, modes, owners, controller.key, fstab ids, hosts",
	.synopsis = "swaptool verify TARBALL [--root DIR] [--map-user OLD=NEW]...\n",
	.options = verify_options,
	.run = step_verify_run,
	.render = NULL,
	.flags = STEP_SAVES_RECORD | STEP_READS_ONLY,
};


int step_verify_run(struct ctx *ctx, int argc, char **argv, struct record *rec)
{
	const char *root = "/", *tarball;
	_cleanup_(name_map_free) struct name_map map = { 0 };
	_cleanup_(arc_free) struct arc a = { 0 };
	_cleanup_free_ char *why = NULL;
	json_object *o;
	int c, r;

	while ((c = getopt_long(argc, argv, "", step_getopt(verify_options), NULL)) != -1) {
		switch (c) {
		case 'r': root = optarg; break;
		case 'm':
			if (step_parse_map_user(ctx, optarg, &map))
				return EXIT_USAGE;
			break;
		default:
			return step_bad_option(ctx, argc, argv);
		}
	}
	if (optind + 1 != argc)
		return ctx_error(ctx, EXIT_USAGE, "verify needs one TARBALL; see 'swaptool help verify'");
	tarball = argv[optind];
	if (step_check_root(ctx, root))
		return EXIT_USAGE;
	arc_catch_sigint(); /* SIGINT still prints the one document (exit 130) */
	r = arc_load(tarball, &ctx->profile->limits, &a, &why);
	if (r < 0)
		return ctx_error(ctx, r == -EINTR ? EXIT_INTERRUPTED : EXIT_FAILED, "cannot use '%s': %s", tarball,
				 why ? why : strerror(-r));
	o = json_object_new_object();
	jset_str(o, "path", tarball);
	jset_u64(o, "bytes", a.bytes);
	jset_str(o, "sha256", a.sha256);
	jset_str(o, "host", a.man.host);
	jset_str(o, "created", a.man.created);
	jset_u64(o, "entries", a.man.n);
	json_object_object_add(rec->root, "archive", o);
	jset_str(rec->root, "root", root);
	verify_system(&a, root, &map, ctx->profile, fstab_resolve_blkid, NULL, rec);
	fstab_blkid_reset();
	if (arc_interrupted)
		return ctx_error(ctx, EXIT_INTERRUPTED, "interrupted; verify of '%s' did not finish", root);
	record_finish(rec);
	return record_exit_code(rec);
}
