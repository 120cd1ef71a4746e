/* SPDX-License-Identifier: MIT */
/* Helpers every step shares: the error slot and option errors. */
#include "steps.h"

int ctx_error(struct ctx *ctx, int code, const char *fmt, ...)
{
	va_list ap;

	free(ctx->err_msg);
	va_start(ap, fmt);
	if (vasprintf(&ctx->err_msg, fmt, ap) < 0)
		abort();
	va_end(ap);
	ctx->err_code = code;
	return code;
}

int step_bad_option(struct ctx *ctx, int argc, char **argv)
{
	const char *opt = optind > 0 && optind <= argc ? argv[optind - 1] : "?";

	if (optopt && optopt < 0x100 && !startswith(opt, "--"))
		return ctx_error(ctx, EXIT_USAGE, "bad or incomplete option '-%c'; see 'swaptool help %s'", optopt,
				 ctx->step);
	return ctx_error(ctx, EXIT_USAGE, "bad or incomplete option '%s'; see 'swaptool help %s'", opt, ctx->step);
}
