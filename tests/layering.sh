#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# src/ is the library and never prints (docs/design.md): none of its files includes the headers of
# the steps (steps/steps.h, steps/out.h, steps/ctx.h), and none of those lives in src/.
set -euo pipefail
: "${SRCDIR:?run through meson test}"
bad=$(grep -lE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"](steps|out|ctx|nodes)\.h[>"]' "$SRCDIR"/src/*.[ch] || true)
[ -z "$bad" ] || { echo "FAIL: src/ includes CLI or step headers: $bad" >&2; exit 1; }
for h in steps.h out.h ctx.h main.c out.c; do
	[ ! -e "$SRCDIR/src/$h" ] || { echo "FAIL: src/$h belongs in steps/" >&2; exit 1; }
done
echo "ok - src/ includes no header of steps/ or cli/"

# cli/ is the top floor (docs/design.md): no file under steps/ includes a header of cli/ (globals.h
# or any other cli/*.h; meson builds steps/ without cli/ on its include path), and the services the
# steps use, the context and the output (ctx, out), live in steps/, not in cli/.
for f in ctx.c ctx.h out.c out.h; do
	[ ! -e "$SRCDIR/cli/$f" ] || { echo "FAIL: cli/$f belongs in steps/ (the steps' services)" >&2; exit 1; }
done
cli_h=$(cd "$SRCDIR/cli" && { ls -- *.h 2>/dev/null || true; } | sed 's/\./\\./g' | paste -sd'|' -)
cli_h=${cli_h:+$cli_h|}globals\.h
bad=$(grep -lE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"](\.\./)?(cli/)?('"$cli_h"')[>"]' \
	"$SRCDIR"/steps/*.[ch] || true)
[ -z "$bad" ] || { echo "FAIL: steps/ includes a header of cli/: $bad" >&2; exit 1; }
echo "ok - steps/ includes no header of cli/, and ctx and out live in steps/"
