#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The disk-image fixture generator: exact geometry, clean filesystems, sparse cost, checked by independent tools.
. "$SRCDIR/tests/lib.sh"
: "${MKDISK:?run through meson test (tests/run)}"

run 2 "$MKDISK"
ok "placeholder"
