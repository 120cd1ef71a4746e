#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# src/ is the library and never prints (docs/design.md): none of its files includes the headers of
# the steps (steps/steps.h) or of the CLI (cli/out.h, cli/ctx.h), and none of those lives in src/.
set -euo pipefail
: "${SRCDIR:?run through meson test}"
bad=$(grep -lE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"](steps|out|ctx|nodes)\.h[>"]' "$SRCDIR"/src/*.[ch] || true)
[ -z "$bad" ] || { echo "FAIL: src/ includes CLI or step headers: $bad" >&2; exit 1; }
for h in steps.h out.h ctx.h main.c out.c; do
	[ ! -e "$SRCDIR/src/$h" ] || { echo "FAIL: src/$h belongs in cli/ or steps/" >&2; exit 1; }
done
echo "ok - src/ includes no header of steps/ or cli/"
