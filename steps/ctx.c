/* SPDX-License-Identifier: MIT */
/* The invocation context's error slot: a step records its error here and cli/main.c shows it. */
#include "ctx.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

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
