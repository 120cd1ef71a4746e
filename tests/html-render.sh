#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# report.html is one self-contained file that renders as a page and as paper: load it in headless
# Chromium, dump the DOM, take a wide and a narrow screenshot, print it to PDF and check the PDF is
# A4 with pages that pdftoppm turns into non-blank PNGs. Skips (77) without /usr/bin/chromium.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/fixtures/records-lib.sh"
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
[ -x "$CHROMIUM" ] || skip "no $CHROMIUM"

write_records "$STATE"
run 0 "$SWAPTOOL" --state "$STATE" report --no-sign --out "$TMP/o"
H=$TMP/o/report.html
# self-contained: no external assets, no scripts
grep -Eiq '(src|href)=|url\(|@import|<script|<link' "$H" && fail "report.html refers to something outside itself"
[ "$(grep -c '<svg class="chart"' "$H")" = 3 ] || fail "expected the percentile chart, the sweep chart and the prediction's"
[ "$(grep -c 'data-chart="percentiles"' "$H")" = 1 ] || fail "no percentile chart"
[ "$(grep -c 'data-chart="sweep"' "$H")" = 1 ] || fail "no sweep chart"
[ "$(grep -c 'data-chart="prediction"' "$H")" = 1 ] || fail "no chart of the predicted chunk time"
grep -q 'gate rand16-p50 &lt;= 250 us (pass)' "$H" || fail "the p50 gate is not drawn"
grep -q 'gate rand64-p99.9 &lt;= 2000 us (pass)' "$H" || fail "the p99.9 gate is not drawn"
grep -q '<td class="st st-trap">TRAP</td>' "$H" || fail "preflight's trap is not a TRAP cell"
grep -q 'NOT SIGNED' "$H" || fail "an unsigned report does not say so"
grep -q '<pre' "$H" && fail "report.html repeats its tables as plain text"

chrome() {
	timeout 60 "$CHROMIUM" --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking \
		--disable-component-update --disable-sync --user-data-dir="$TMP/profile" "$@" 2>>"$TMP/chromium.log"
}
png() { [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ]; }
chrome --dump-dom "file://$H" >"$TMP/dom.html" || { cat "$TMP/chromium.log" >&2; fail "chromium could not load report.html"; }
grep -q '<polyline' "$TMP/dom.html" || fail "chromium's DOM has no SVG curves"
grep -q 'class="verdict accepted"' "$TMP/dom.html" || fail "chromium's DOM lacks the verdict"
(cd "$TMP" && chrome --screenshot="$TMP/shot.png" --window-size=1600,1800 "file://$H") || fail "screenshot failed"
(cd "$TMP" && chrome --screenshot="$TMP/narrow.png" --window-size=420,1800 "file://$H") || fail "narrow screenshot failed"
png "$TMP/shot.png" && png "$TMP/narrow.png" || fail "a screenshot is not a PNG"
size=$(stat -c %s "$TMP/shot.png")
# a blank 1600x1800 page compresses to a few KB; tables and two charts are well over 40 KB
[ "$size" -gt 40000 ] || fail "the screenshot is only $size bytes: nothing rendered?"
if [ -n "${KEEP_SCREENSHOT:-}" ]; then cp "$TMP/shot.png" "$KEEP_SCREENSHOT"; fi
ok "report.html renders in headless Chromium ($size-byte screenshot, and a narrow one)"

# paper: A4 (595 x 842 pt), every page a non-blank PNG, the words that carry the meaning in its text
command -v pdftoppm >/dev/null && command -v pdfinfo >/dev/null || skip "no pdftoppm/pdfinfo (poppler-utils)"
(cd "$TMP" && chrome --no-pdf-header-footer --print-to-pdf="$TMP/report.pdf" "file://$H") || fail "print to PDF failed"
pdfinfo "$TMP/report.pdf" >"$TMP/pdfinfo" || fail "pdfinfo cannot read the PDF"
grep -Eq '^Page size: +59[45](\.[0-9]+)? x 84[12](\.[0-9]+)? pts \(A4\)' "$TMP/pdfinfo" || { cat "$TMP/pdfinfo" >&2; fail "the PDF is not A4"; }
pages=$(awk '/^Pages:/ {print $2}' "$TMP/pdfinfo")
[ "$pages" -ge 2 ] && [ "$pages" -le 8 ] || fail "the PDF has $pages pages"
pdftoppm -r 50 -png "$TMP/report.pdf" "$TMP/page" || fail "pdftoppm failed"
n=0
for p in "$TMP"/page-*.png; do
	png "$p" || fail "$p is not a PNG"
	[ "$(stat -c %s "$p")" -gt 3000 ] || fail "$p is blank"
	n=$((n + 1))
done
[ "$n" = "$pages" ] || fail "pdftoppm made $n pages of $pages"
if command -v pdftotext >/dev/null; then
	pdftotext "$TMP/report.pdf" "$TMP/report.pdf.txt"
	for w in ACCEPTED TRAP PASS 'old drive (source)' 'new drive (target)' 'NOT SIGNED'; do
		grep -q "$w" "$TMP/report.pdf.txt" || fail "the PDF's text lacks '$w'"
	done
fi
if [ -n "${KEEP_PDF:-}" ]; then cp "$TMP/report.pdf" "$KEEP_PDF"; fi
ok "report.html prints to a $pages-page A4 PDF"
