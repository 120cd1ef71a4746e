#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# No function of src/, steps/ or cli/ is longer than 120 lines (docs/design.md): past that a function
# holds phases that want names of their own. A function starts at a '{' in column 0 and ends at the
# next '}' in column 0, the project's style; data tables are initialisers, not functions.
set -euo pipefail
: "${SRCDIR:?run through meson test}"
limit=${FUNCTION_LINES_MAX:-120}
long=$(awk -v lim="$limit" '
	FNR == 1 { infn = 0 }
	/^\{/ { infn = 1; start = FNR; name = last; next }
	infn && /^\}/ { if (FNR - start - 1 > lim) printf "%s:%d: %d lines: %s\n", FILENAME, start, FNR - start - 1, name; infn = 0; next }
	!infn && /^[A-Za-z_].*\(/ { last = $0 }' "$SRCDIR"/src/*.c "$SRCDIR"/steps/*.c "$SRCDIR"/cli/*.c)
[ -z "$long" ] || { printf 'FAIL: functions over %d lines:\n%s\n' "$limit" "${long//$SRCDIR\//}" >&2; exit 1; }
echo "ok - no function of src/, steps/ or cli/ is over $limit lines"
