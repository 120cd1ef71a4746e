#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The built swaptool is hardened: PIE, full RELRO, stack protector and _FORTIFY_SOURCE, read from its
# ELF headers with binutils' readelf (meson.build asks for each; a lost flag fails here).
set -euo pipefail
: "${SWAPTOOL:?run through meson test (tests/run)}"
command -v readelf >/dev/null || { echo "SKIP: no readelf (binutils)" >&2; exit 77; }

bin=$SWAPTOOL
failed=0
bad() { echo "FAIL: $*" >&2; failed=1; }
ok() { echo "ok - $*"; }

hdr=$(readelf -h "$bin")
phdr=$(readelf -l -W "$bin")
dyn=$(readelf -d -W "$bin")
syms=$(readelf -s --dyn-syms -W "$bin")

# PIE: a position-independent executable is ET_DYN with an interpreter and the PIE flag.
if grep -Eq 'Type:[[:space:]]+DYN' <<<"$hdr" && grep -q 'INTERP' <<<"$phdr" &&
	grep -Eq 'FLAGS_1.*PIE' <<<"$dyn"; then
	ok "PIE (ET_DYN, PT_INTERP, FLAGS_1 PIE)"
else
	bad "not a PIE: ELF type $(grep -E 'Type:' <<<"$hdr" | awk '{print $2}'), want DYN with FLAGS_1 PIE"
fi
# Full RELRO: a GNU_RELRO segment, and every relocation done at load (BIND_NOW or FLAGS_1 NOW), so
# the GOT is read-only before main.
grep -q 'GNU_RELRO' <<<"$phdr" && ok "GNU_RELRO segment" || bad "no GNU_RELRO segment (-Wl,-z,relro)"
if grep -Eq '\(BIND_NOW\)|FLAGS_1\).*NOW|\(FLAGS\).*BIND_NOW' <<<"$dyn"; then
	ok "BIND_NOW (full RELRO)"
else
	bad "no BIND_NOW / FLAGS_1 NOW: partial RELRO only (-Wl,-z,now)"
fi
# Stack protector: -fstack-protector-strong makes guarded functions call __stack_chk_fail.
grep -q '__stack_chk_fail' <<<"$syms" && ok "stack protector (__stack_chk_fail)" ||
	bad "no __stack_chk_fail: built without -fstack-protector-strong"
# _FORTIFY_SOURCE: the checked variants (__memcpy_chk, __snprintf_chk...) replace the plain calls.
# A sanitizer build leaves fortify out on purpose (meson.build): then say so and skip only this check.
chk=$(awk '$8 ~ /^__[a-z0-9_]+_chk(@|$)/ && $8 != "__stack_chk_fail" {sub(/@.*/, "", $8); print $8}' <<<"$syms" | sort -u)
if [ -n "$chk" ]; then
	ok "_FORTIFY_SOURCE ($(wc -l <<<"$chk") checked functions: $(head -3 <<<"$chk" | tr '\n' ' '))"
elif grep -Eq '__(asan|ubsan)_' <<<"$syms"; then
	echo "ok - _FORTIFY_SOURCE left out of a sanitizer build (# SKIP)"
else
	bad "no *_chk symbols: built without _FORTIFY_SOURCE"
fi
# Format checks are compile-time only; the build flags are the evidence.
exit $failed
