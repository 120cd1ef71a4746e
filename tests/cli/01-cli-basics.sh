#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Global options, help, version, unknown steps and options: exit codes and one JSON document.
. "$SRCDIR/tests/lib.sh"

run 0 "$SWAPTOOL" --version
contains "swaptool 0."
run 0 "$SWAPTOOL" --help
contains "steps:"
run 2 "$SWAPTOOL"
run 2 "$SWAPTOOL" frobnicate
contains "unknown step 'frobnicate'"
run 2 "$SWAPTOOL" --json frobnicate
jeq .verdict error
jeq .error.exit_code 2
run 2 "$SWAPTOOL" help frobnicate
run 2 "$SWAPTOOL" --state
contains "needs a value"

ok "basics"

# a typo of a step is named with the step it is nearest to; a name far from all is not
run 2 "$SWAPTOOL" prefligt
contains "did you mean 'preflight'?"
run 2 "$SWAPTOOL" --json stauts
jeq .error.message "unknown step 'stauts'; did you mean 'status'? ('swaptool --help' lists the steps)"
run 2 "$SWAPTOOL" frobnicate
case "$ERR" in *"did you mean"*) fail "a guess for a name near no step";; esac
# --help names every exit code of the README's table, 4 included, and its option column fits its
# widest option
run 0 "$SWAPTOOL" --help
contains "4 preflight's"
contains "  --trust-unsafe-profile  as root"
ok "an unknown step near a known one gets a 'did you mean'; --help lists exit code 4"

# Step help, both spellings.
run 0 "$SWAPTOOL" help preflight
contains "--target SPEC"
run 0 "$SWAPTOOL" preflight --help
contains "--target-lba-size"

# Colour only on a terminal, and never with NO_COLOR or --no-color (script(1) gives us a pty).
if command -v script >/dev/null; then
	truncate -s 64M "$TMP/c.img"
	esc=$(printf '\033[')
	script -qec "$SWAPTOOL --state $STATE preflight $TMP/c.img --target 2TB" /dev/null >"$TMP/tty.out" || true
	grep -qF "$esc" "$TMP/tty.out" || fail "no colour on a terminal"
	NO_COLOR=1 script -qec "$SWAPTOOL --state $STATE preflight $TMP/c.img --target 2TB" /dev/null >"$TMP/tty.out" || true
	! grep -qF "$esc" "$TMP/tty.out" || fail "colour despite NO_COLOR"
	script -qec "$SWAPTOOL --state $STATE --no-color preflight $TMP/c.img --target 2TB" /dev/null >"$TMP/tty.out" || true
	! grep -qF "$esc" "$TMP/tty.out" || fail "colour despite --no-color"
	"$SWAPTOOL" --state "$STATE" preflight "$TMP/c.img" --target 2TB >"$TMP/pipe.out" || true
	! grep -qF "$esc" "$TMP/pipe.out" || fail "colour into a pipe"
	ok "colour rules"
fi

# --json anywhere on the line gives exactly one JSON document.
run 0 "$SWAPTOOL" --state "$STATE" preflight "$TMP/c.img" --target 2TB --json
[ "$(printf '%s' "$OUT" | jq -s length)" = 1 ] || fail "more than one JSON document"
jeq .schema swaptool/1
jeq .step preflight
jeq .host "$(hostname -s)"
ok "one JSON document"
