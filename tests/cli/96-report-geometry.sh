#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# report.html as a person sees it, measured, not only loaded: a long report (histograms, a sweep of 24
# working sets, a sustained load, a reference node: mkrecord accept-long) in headless Chromium at
# 1400 px and at a phone's 390 px, where a script appended to a copy measures the laid-out page
# (tests/cli/96-report-geometry.js: nothing wider than the viewport, tables that fit or scroll as a
# whole, no word or number broken inside a table, chart labels inside their chart, clear of one
# another, of data lines and of bars); and printed to PDF, page by page with pdftotext: every page
# carries the node, the verdict and "page N of M", a table split across pages repeats its header
# and leaves no fewer than three rows on a page, the records stay whole on the last page.
. "$SRCDIR/tests/lib.sh"
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
[ -x "$CHROMIUM" ] || skip "no $CHROMIUM"
command -v python3 >/dev/null || skip "no python3"

"$MKRECORD" set "$STATE"
"$MKRECORD" accept-long "$STATE/accept.json"
"$MKRECORD" dgx5-accept-long "$TMP/ref.json"
run 0 "$SWAPTOOL" --state "$STATE" report --no-sign --out "$TMP/o" --reference "$TMP/ref.json"
H=$TMP/o/report.html
grep -qi '<script' "$H" && fail "report.html holds a script"

chrome() {
	timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking \
		--disable-component-update --disable-sync --user-data-dir="$TMP/profile" "$@" 2>>"$TMP/chromium.log"
}

# a sparse histogram (the seq run: 64 reads in 50-odd buckets) is drawn as bars, a dense one as a line
python3 - "$H" <<'PY' || fail "the histograms are not drawn as they should be"
import re, sys
page = open(sys.argv[1]).read()
def chart(name):
    m = re.search(r'<svg class="chart" data-chart="%s".*?</svg>' % name, page, re.S)
    return m.group(0) if m else ""
seq, r16 = chart("hist-seq"), chart("hist-rand16")
bars = re.search(r'<g class="hist-bars" data-series="seq" data-buckets="(\d+)" data-reads="64"', seq)
assert bars and int(bars.group(1)) > 32, "seq: no bars of its 64 reads"
assert sum(int(n) for n in re.findall(r'<rect class="hbar" data-reads="(\d+)"', seq.split('data-series="reference"')[0])) == 64
assert '<polyline class="series" data-series="seq"' not in seq, "seq is still a line"
assert '<polyline class="series" data-series="rand16"' in r16 and "hist-bars" not in r16, "rand16 is not a line"
PY
ok "the sparse histogram (64 reads) as bars, the dense ones as lines"

# measure: the page with the script, shown in an iframe of the width to test (Chromium's headless
# window is at least 500 px wide), the verdict written into the frame's parent
{ sed 's|</body></html>||' "$H"; echo '<script>'; cat "$SRCDIR/tests/cli/96-report-geometry.js"; echo '</script></body></html>'; } \
	>"$TMP/measured.html"
measure() {
	local w=$1
	python3 - "$TMP/measured.html" "$w" >"$TMP/frame-$w.html" <<'PY'
import html, sys
page = open(sys.argv[1]).read()
print('<!DOCTYPE html><html><body style="margin:0"><iframe style="border:0;width:%spx;height:2400px" srcdoc="%s">'
      '</iframe></body></html>' % (sys.argv[2], html.escape(page)))
PY
	chrome --window-size=$((w + 100)),2500 --dump-dom "file://$TMP/frame-$w.html" >"$TMP/dom-$w.html" ||
		{ cat "$TMP/chromium.log" >&2; fail "chromium could not load the page at $w px"; }
	python3 - "$TMP/dom-$w.html" "$w" <<'PY' || fail "report.html at $w px: see above"
import html, json, re, sys
found = re.findall(r'<pre id="geometry">(.*?)</pre>', open(sys.argv[1]).read(), re.S)
if not found:
    sys.exit("no verdict: the measuring script did not run")
v = json.loads(html.unescape(found[-1]))
w = int(sys.argv[2])
for p in v["problems"]:
    print("  " + p, file=sys.stderr)
# it looked at what there is: every table and chart, their cells and labels
assert v["width"] == w, "measured at %s px, not %s" % (v["width"], w)
assert v["tables"] >= 10 and v["cells"] > 500 and v["chars"] > 4000, v
assert v["charts"] >= 9 and v["texts"] > 150, v
sys.exit(1 if v["problems"] else 0)
PY
}
measure 1400
ok "at 1400 px: tables fit their columns, no word broken, chart labels clear and inside"
measure 390
ok "at 390 px: the page does not scroll sideways, tables scroll as a whole, no word or number broken"

# paper
command -v pdftotext >/dev/null && command -v pdfinfo >/dev/null || skip "no pdftotext/pdfinfo (poppler-utils)"
(cd "$TMP" && chrome --no-pdf-header-footer --print-to-pdf="$TMP/report.pdf" "file://$H") || fail "print to PDF failed"
pages=$(pdfinfo "$TMP/report.pdf" | awk '/^Pages:/ {print $2}')
[ "$pages" -ge 4 ] || fail "the PDF has $pages pages: too short to test its pages"
for n in $(seq "$pages"); do
	pdftotext -layout -f "$n" -l "$n" "$TMP/report.pdf" "$TMP/page-$n.txt"
	head -n 3 "$TMP/page-$n.txt" | grep -Eq "swaptool report: dgx4 .* ACCEPTED +page $n of $pages\$" ||
		fail "page $n lacks the running header (node, verdict, page $n of $pages): $(head -n 3 "$TMP/page-$n.txt")"
done
ok "every one of the $pages pages says dgx4, ACCEPTED and page N of $pages"

# the long tables: each page holding rows of one shows its header row above them, and three rows or more
python3 - "$TMP" "$pages" <<'PY' || fail "a table split across pages: see above"
import re, sys
tmp, pages = sys.argv[1], int(sys.argv[2])
tables = {
    "sweep": (re.compile(r"^\s*[0-9.]+ [MGT]iB\s+[0-9.]+ K\s+[0-9.]+ [um]s\s"), re.compile(r"working set\s+IOPS\s+p50\s+reference IOPS")),
    "prediction": (re.compile(r"^\s*sweep16\s"), re.compile(r"run\s+working set\s+IOPS\s+chunk at mean")),
}
bad, split = [], []
for name, (row, head) in tables.items():
    seen = []
    for n in range(1, pages + 1):
        lines = open("%s/page-%d.txt" % (tmp, n)).read().split("\n")
        rows = [i for i, l in enumerate(lines) if row.search(l)]
        if not rows:
            continue
        seen.append(n)
        if not any(head.search(l) for l in lines[:rows[0]]):
            bad.append("%s: page %d has its rows without its header row" % (name, n))
        if len(rows) < 3:
            bad.append("%s: page %d holds only %d of its rows" % (name, n, len(rows)))
    if len(seen) > 1:
        split.append(name)
if not split:
    bad.append("neither the sweep nor the prediction table spans two pages: the fixture is too short to test")
for b in bad:
    print("  " + b, file=sys.stderr)
print("split across pages: " + ", ".join(split))
sys.exit(1 if bad else 0)
PY
# the records: their heading and every hash on one page, the last
last=$TMP/page-$pages.txt
grep -q '^ *Records *$' "$last" || fail "the last page does not hold the records' heading"
[ "$(grep -cE '^ *(preflight|backup|restore|verify|accept) +[0-9a-f]{64} *$' "$last")" = 5 ] ||
	fail "the last page does not hold the 5 records' hashes: $(cat "$last")"
ok "print: headers repeated on continuation pages, no page with fewer than 3 of a table's rows, the records whole"
