#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every man page in docs/ passes mandoc's lint at warning level: a stray control character or a
# broken macro renders as garbage ("/PATHR," in swaptool-profile(5) once) that no reader reports.
set -euo pipefail
: "${SRCDIR:?run through meson test}"
command -v mandoc >/dev/null || { echo "skip: mandoc is not installed (scripts/install-deps)"; exit 77; }
pages=("$SRCDIR"/docs/*.[1-8])
[ ${#pages[@]} -gt 0 ] && [ -e "${pages[0]}" ] || { echo "FAIL: no man pages under docs/" >&2; exit 1; }
if ! out=$(mandoc -T lint -W warning "${pages[@]}" 2>&1) || [ -n "$out" ]; then
	printf 'FAIL: mandoc -T lint -W warning:\n%s\n' "${out//$SRCDIR\//}" >&2
	exit 1
fi
echo "ok - ${#pages[@]} man pages pass mandoc -T lint -W warning"
