#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# src/ is the library and never prints (docs/design.md): none of its files includes the headers of
# the steps (steps/steps.h, steps/out.h, steps/ctx.h), and none of those lives in src/; and src/'s
# own modules include each other in no cycle.
set -euo pipefail
: "${SRCDIR:?run through meson test}"
bad=$(grep -lE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"](steps|out|ctx|nodes)\.h[>"]' "$SRCDIR"/src/*.[ch] || true)
[ -z "$bad" ] || { echo "FAIL: src/ includes CLI or step headers: $bad" >&2; exit 1; }
for h in steps.h out.h ctx.h main.c out.c; do
	[ ! -e "$SRCDIR/src/$h" ] || { echo "FAIL: src/$h belongs in steps/" >&2; exit 1; }
done
echo "ok - src/ includes no header of steps/ or cli/"

# The include graph of src/'s modules has no cycle (a module X is src/X.c with src/X.h; X -> Y when
# either includes "Y.h"; a private header X_int.h belongs to X): a cycle makes two modules one that
# nobody can read, test or move alone. tsort names the modules of each loop on stderr.
edges=$(for f in "$SRCDIR"/src/*.[ch]; do
	m=$(basename "${f%.*}")
	m=${m%_int}
	sed -nE 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"([^"/]+)\.h".*/\1/p' "$f" | while read -r d; do
		[ ! -e "$SRCDIR/src/$d.h" ] && continue
		d=${d%_int}
		[ "$d" = "$m" ] || echo "$m $d"
	done
done | sort -u)
# each loop as "a <-> b" (tsort: "input contains a loop:", then one module a line)
loops=$(printf '%s\n' "$edges" | tsort 2>&1 >/dev/null |
	awk '/contains a loop/ { if (l) printf "%s; ", l; l = ""; next } /^tsort: [^ :]+$/ { l = l (l ? " <-> " : "") $2 }
	     END { if (l) printf "%s", l }' || true)
[ -z "$loops" ] || { echo "FAIL: src/ modules include each other in a cycle: $loops" >&2; exit 1; }
echo "ok - the include graph of src/'s modules has no cycle"

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
