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
