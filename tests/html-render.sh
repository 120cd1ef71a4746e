#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# report.html is one self-contained file that renders: load it in headless Chromium, dump the DOM
# and take a screenshot. Skips (77) where /usr/bin/chromium is not installed.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/cli/50-records.lib.sh"
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
[ -x "$CHROMIUM" ] || skip "no $CHROMIUM"

write_records "$STATE"
run 0 "$SWAPTOOL" --state "$STATE" report --no-sign --out "$TMP/o"
H=$TMP/o/report.html
# self-contained: no external assets, no scripts
grep -Eiq '(src|href)=|url\(|@import|<script|<link' "$H" && fail "report.html refers to something outside itself"
[ "$(grep -c '<svg' "$H")" = 2 ] || fail "expected the latency chart and the sweep chart"
[ "$(grep -c '<polyline' "$H")" = 4 ] || fail "expected 3 percentile curves and 1 sweep curve"
grep -q 'rand16 p50 &lt;= 250 us' "$H" || fail "the p50 gate is not drawn"
grep -q 'rand64 p99.9 &lt;= 2000 us' "$H" || fail "the p99.9 gate is not drawn"

chrome() {
	timeout 60 "$CHROMIUM" --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking \
		--disable-component-update --disable-sync --user-data-dir="$TMP/profile" "$@" 2>>"$TMP/chromium.log"
}
chrome --dump-dom "file://$H" >"$TMP/dom.html" || { cat "$TMP/chromium.log" >&2; fail "chromium could not load report.html"; }
grep -q '<polyline' "$TMP/dom.html" || fail "chromium's DOM has no SVG curves"
grep -q 'class="v accepted"' "$TMP/dom.html" || fail "chromium's DOM lacks the verdict"
(cd "$TMP" && chrome --screenshot="$TMP/shot.png" --window-size=1100,1800 "file://$H") || fail "screenshot failed"
[ "$(head -c 8 "$TMP/shot.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "the screenshot is not a PNG"
size=$(stat -c %s "$TMP/shot.png")
# a blank 1100x1800 page compresses to a few KB; tables and two charts are well over 40 KB
[ "$size" -gt 40000 ] || fail "the screenshot is only $size bytes: nothing rendered?"
if [ -n "${KEEP_SCREENSHOT:-}" ]; then cp "$TMP/shot.png" "$KEEP_SCREENSHOT"; fi
ok "report.html renders in headless Chromium ($size-byte screenshot)"
