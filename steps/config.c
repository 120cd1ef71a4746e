/* SPDX-License-Identifier: MIT */
/* config: a read-only view of the profile in force (it has no data of its own). */
#include "steps.h"

static const struct step_option config_options[] = {
	STEP_OPTIONS_END,
};

const struct step step_config = {
	.name = "config",
	.summary = "the profile in force, where it comes from, and its values",
	.synopsis = "swaptool config\n",
	.options = config_options,
	.notes = "  the profile is --profile FILE, else $SWAPTOOL_PROFILE, else SYSCONFDIR/swaptool/profile.ini when it\n"
		 "  exists ($SWAPTOOL_SYSCONFDIR replaces SYSCONFDIR), else the built-in one (swaptool-profile(5))\n",
	.run = step_config_run,
	.render = step_config_render,
	.flags = 0,
};

int step_config_run(struct ctx *ctx, int argc, char **argv, struct record *rec)
{
	json_object *p;

	if (getopt_long(argc, argv, "", step_getopt(config_options), NULL) != -1)
		return step_bad_option(ctx, argc, argv);
	if (optind < argc)
		return ctx_error(ctx, EXIT_USAGE, "config takes no arguments ('%s'); see 'swaptool help config'",
				 argv[optind]);
	p = json_object_new_object();
	jset_str(p, "source", ctx->profile_from);
	jset_str(p, "path", ctx->profile_path);
	/* the verdict root's other steps act on (cli/main.c, src/trust.h): the built-in profile is no file */
	json_object_object_add(p, "trusted", json_object_new_boolean(!ctx->profile_distrust));
	if (ctx->profile_distrust)
		jset_str(p, "untrusted_because", ctx->profile_distrust);
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

void step_config_render(const struct ctx *ctx, json_object *record)
{
	json_object *p = jget(record, "profile");
	_cleanup_table_ struct table *t = table_new(2);

	out_line(ctx, "profile: %s%s%s%s", jget_str(p, "source"), jget_str(p, "path") ? " ('" : "",
		 jget_str(p, "path") ?: "", jget_str(p, "path") ? "')" : "");
	if (jget_str(p, "untrusted_because"))
		out_line(ctx, "trust: not trusted: %s; as root every other step refuses it without "
			      "--trust-unsafe-profile", jget_str(p, "untrusted_because"));
	else if (!jget_str(p, "path"))
		out_line(ctx, "trust: trusted (the built-in profile is no file)");
	else
		out_line(ctx, "trust: trusted (no user other than %s can change it)",
			 geteuid() == 0 ? "root" : "root and you");
	table_header(t, "key", "value");
	config_rows(t, "", jget(p, "values"));
	table_print(ctx, t);
}

