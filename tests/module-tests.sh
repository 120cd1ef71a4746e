#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# One unit test per src module (docs/design.md): every src/X.c has its tests/unit/test-X.c, registered
# in tests/meson.build. And every numbered CLI test has a number of its own, so that "test 30" names
# one file and the order of tests/cli/ is the order of concerns.
set -euo pipefail
: "${SRCDIR:?run through meson test}"
fail=0
# the two lists of unit tests: plain ones, and those built with the record fixtures
listed=$(sed -n -e '/^unit_tests = \[/,/^\]/p' -e 's/^fixture_unit_tests = \[\(.*\)\]$/\1/p' "$SRCDIR/tests/meson.build" |
	tr ',' '\n' | sed -E "s/^ *//; s/ *$//" | grep -E "^'[a-z_0-9]+'$" || true)
for c in "$SRCDIR"/src/*.c; do
	m=$(basename "$c" .c)
	if [ ! -f "$SRCDIR/tests/unit/test-$m.c" ]; then
		echo "FAIL: src/$m.c has no unit test: write tests/unit/test-$m.c" >&2
		fail=1
	elif ! grep -qx "'$m'" <<<"$listed" && ! grep -q "'unit/test-$m\.c'" "$SRCDIR/tests/meson.build"; then
		echo "FAIL: tests/unit/test-$m.c is not registered: add '$m' to unit_tests in tests/meson.build" >&2
		fail=1
	fi
done
[ "$fail" = 0 ] && echo "ok - every src module has a registered unit test"

dups=$(for t in "$SRCDIR"/tests/cli/[0-9]*.sh; do basename "$t" | cut -d- -f1; done | sort | uniq -d)
if [ -n "$dups" ]; then
	for n in $dups; do
		echo "FAIL: CLI tests share the number $n:" "$(cd "$SRCDIR/tests/cli" && echo "$n"-*.sh)" >&2
	done
	fail=1
else
	echo "ok - every tests/cli/NN-*.sh has a number of its own"
fi
exit "$fail"
