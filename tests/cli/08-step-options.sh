#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Each step's options in its three places agree: the option table getopt parses (listed by the
# test-only tests/unit/test-steps.c --list), `swaptool help STEP` = `swaptool STEP --help`, and the
# SYNOPSIS and OPTIONS of docs/swaptool-STEP.1. Every option of the table is in both texts, and every
# --option the texts name is in the table or is a global option.
. "$SRCDIR/tests/lib.sh"
: "${TEST_STEPS:?run through meson test}"

globals=" --json --state --profile --no-record --quiet --color --no-color --help --version --verbose "
# options TEXT: the --options TEXT names, one per line
options() { grep -oE -- '(^|[^a-z0-9-])--[a-z][a-z0-9-]*' <<<"$1" | sed 's/^[^-]*//' | sort -u; }
# names TEXT OPTION: TEXT has OPTION as a whole word
names() { grep -qE -- "(^|[^a-z0-9-])$2([^a-z0-9-]|\$)" <<<"$1"; }
# the man page's SYNOPSIS and OPTIONS, roff escapes and fonts taken out
man_options() {
	sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' "$1" |
		awk '/^\.SH SYNOPSIS/ || /^\.SH OPTIONS/ { f = 1; next } /^\.SH/ { f = 0 } f'
}

"$TEST_STEPS" --list >"$TMP/tables"
[ "$(wc -l <"$TMP/tables")" -ge 14 ] || fail "test-steps --list gave too few steps: $(cat "$TMP/tables")"
n=0
while read -r step opts; do
	run 0 "$SWAPTOOL" help "$step"
	help=$(grep -v '^global options:' <<<"$OUT")
	run 0 "$SWAPTOOL" "$step" --help
	[ "$OUT" = "$(cat "$TMP/out")" ] && [ "$(grep -v '^global options:' <<<"$OUT")" = "$help" ] ||
		fail "$step: 'swaptool help $step' and 'swaptool $step --help' differ"
	page=$SRCDIR/docs/swaptool-$step.1
	[ -r "$page" ] || fail "$step: no man page $page"
	man=$(man_options "$page")
	[ -n "$man" ] || fail "$step: $page has no SYNOPSIS or OPTIONS"
	for o in $opts; do
		names "$help" "$o" || fail "$step: $o is in the option table but not in 'swaptool help $step'"
		names "$man" "$o" || fail "$step: $o is in the option table but not in the SYNOPSIS or OPTIONS of $page"
		n=$((n + 1))
	done
	for o in $(options "$help"); do
		[[ " $opts$globals" == *" $o "* ]] || fail "$step: 'swaptool help $step' names $o, which the step does not take"
	done
	for o in $(options "$man"); do
		[[ " $opts$globals" == *" $o "* ]] || fail "$step: $page names $o in SYNOPSIS or OPTIONS, which the step does not take"
	done
done <"$TMP/tables"
[ "$n" -ge 40 ] || fail "only $n options checked"
# no short options beside the tables: getopt_long gets an empty optstring in every step
if grep -nE 'getopt_long\([^,]+, [^,]+, "[^"]' "$SRCDIR"/steps/*.c; then
	fail "a step takes short options that no usage text or man page lists"
fi
ok "every step's options: table, help and man page agree ($n options)"

# the check itself: an option missing from a text is caught, and so is one the step does not take
names "  --target-lba-size N" --target && fail "names: --target found inside --target-lba-size"
names "[--target SPEC]" --target || fail "names: --target not found in a synopsis"
[ "$(options ".B --rehearse [--scratch DIR]")" = "$(printf -- '--rehearse\n--scratch')" ] ||
	fail "options: $(options ".B --rehearse [--scratch DIR]")"
ok "the checks find what they look for"
