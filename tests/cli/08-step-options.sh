#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Each step's options in their places agree: the option table getopt parses and the usage's options
# block is printed from (listed by the test-only tests/unit/test-steps.c --list), `swaptool help
# STEP` = `swaptool STEP --help`, and the SYNOPSIS and OPTIONS of docs/swaptool-STEP.1, the one place
# written apart from the table. Every option of the table is in both texts, and every --option the
# texts name is in the table or is a global option. The global options come from their one table
# too (cli/globals.c, listed by test-steps --globals), held against docs/swaptool.1.
. "$SRCDIR/tests/lib.sh"
: "${TEST_STEPS:?run through meson test}"

globals=" $("$TEST_STEPS" --globals) "
[ "$(wc -w <<<"$globals")" -ge 10 ] || fail "test-steps --globals gave too few options: $globals"
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
# no short options beside the tables: getopt_long gets an empty optstring in every step, or "-"
# (operands returned in their place, fleet and metrics), which names none
if grep -nE 'getopt_long\([^,]+, [^,]+, "([^"-]|-[^"])' "$SRCDIR"/steps/*.c; then
	fail "a step takes short options that no usage text or man page lists"
fi
ok "every step's options: table, help and man page agree ($n options)"

# docs/swaptool.1 lists exactly the global options: each is in its SYNOPSIS or heads an item of its
# OPTIONS, and every option named there is one (an item's text may name steps' options)
man_heads() {
	sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' "$1" |
		awk '/^\.SH/ { s = /^\.SH SYNOPSIS/; o = /^\.SH OPTIONS/; t = 0; next }
		     s || (o && t) { print } { t = /^\.TP/ }'
}
heads=$(man_heads "$SRCDIR/docs/swaptool.1")
[ -n "$heads" ] || fail "docs/swaptool.1 has no SYNOPSIS or OPTIONS items"
for o in $globals; do
	names "$heads" "$o" || fail "global option $o (cli/globals.c) is not in the SYNOPSIS or an OPTIONS item of docs/swaptool.1"
done
for o in $(options "$heads"); do
	[[ $globals == *" $o "* ]] || fail "docs/swaptool.1 lists $o as a global option, which cli/globals.c lacks"
done
ok "the global options: cli/globals.c and docs/swaptool.1 agree ($(wc -w <<<"$globals") options)"

# the check itself: an option missing from a text is caught, and so is one the step does not take
names "  --target-lba-size N" --target && fail "names: --target found inside --target-lba-size"
names "[--target SPEC]" --target || fail "names: --target not found in a synopsis"
[ "$(options ".B --rehearse [--scratch DIR]")" = "$(printf -- '--rehearse\n--scratch')" ] ||
	fail "options: $(options ".B --rehearse [--scratch DIR]")"
printf '.SH SYNOPSIS\n.B swaptool\n.RB [ \\-\\-json ]\n.SH OPTIONS\ntext --rehearse\n.TP\n.BR \\-q ", " \\-\\-quiet\nno --frob\n.SH X\n--other\n' >"$TMP/g.1"
[ "$(options "$(man_heads "$TMP/g.1")")" = "$(printf -- '--json\n--quiet')" ] ||
	fail "man_heads: $(man_heads "$TMP/g.1")"
ok "the checks find what they look for"
