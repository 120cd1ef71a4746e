#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Checks report.html against the records it is drawn from (used by 55-report-evidence.sh): the
# drives table cell by cell, and every chart's series point by point (counted in the SVG).
import json
import sys
from html.parser import HTMLParser

report_json, report_html = sys.argv[1], sys.argv[2]
ref_json = sys.argv[3] if len(sys.argv) > 3 else None
rep = json.load(open(report_json))
acc = rep["steps"]["accept"]
ref = json.load(open(ref_json)) if ref_json else None
fails = []


def check(cond, what):
    if not cond:
        fails.append(what)


class Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.charts = {}      # data-chart -> {"series": {name: (declared, counted)}, "gates": n, "xt": n, "yt": n, "bars": n}
        self.chart = None
        self.cells = {}       # (side, field) -> text
        self.cell = None
        self.text = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "svg" and "chart" in a.get("class", ""):
            self.chart = self.charts.setdefault(a["data-chart"], {"series": {}, "gates": 0, "xt": 0, "yt": 0, "bars": 0})
        elif self.chart is not None and tag == "polyline" and a.get("class") == "series":
            pts = a.get("points", "").split()
            self.chart["series"][a["data-series"]] = (int(a["data-points"]), len(pts))
        elif self.chart is not None and tag == "g" and a.get("class") == "hist-bars":
            # a sparse histogram drawn as bars: its buckets and reads, and each bar's reads
            self.hbars = self.chart.setdefault("hist-bars", {})[a["data-series"]] = {
                "buckets": int(a["data-buckets"]), "reads": int(a["data-reads"]), "sum": 0}
        elif self.chart is not None and tag == "g":
            key = {"gate": "gates", "xtick": "xt", "ytick": "yt"}.get(a.get("class"))
            if key:
                self.chart[key] += 1
        elif self.chart is not None and tag == "rect" and a.get("class") == "bar":
            self.chart["bars"] += 1
        elif self.chart is not None and tag == "rect" and a.get("class") == "hbar":
            self.hbars["sum"] += int(a["data-reads"])
        elif tag == "td" and "data-field" in a:
            self.cell = (a["data-side"], a["data-field"])
            self.text = []

    def handle_endtag(self, tag):
        if tag == "svg":
            self.chart = None
        elif tag == "td" and self.cell:
            self.cells[self.cell] = "".join(self.text)
            self.cell = None

    def handle_data(self, data):
        if self.cell:
            self.text.append(data)


page = Page()
page.feed(open(report_html).read())
charts = page.charts

# every series: as many points drawn as it says, and an axis with ticks on both sides
for name, c in charts.items():
    for s, (declared, counted) in c["series"].items():
        check(declared == counted, f"{name}/{s}: data-points {declared} but {counted} points drawn")
    check(c["yt"] >= 2, f"{name}: fewer than 2 y ticks")
    if name != "compare":
        check(c["xt"] >= 2, f"{name}: fewer than 2 x ticks")

PCTL = ["p50", "p90", "p99", "p99_9", "p99_99", "max"]


def run_of(a, name):
    return next((r for r in a["runs"] if r["name"] == name), None)


gates = acc["gates"]
for r in acc["runs"]:
    name = r["name"]
    bins = r["lat_hist"]["bins"]
    check(sum(b[2] for b in bins) == r["ios"], f"{name}: histogram counts {sum(b[2] for b in bins)} != ios {r['ios']}")
    h = charts.get("hist-" + name)
    check(h is not None, f"no latency distribution chart for run {name}")
    if h:
        hb = h.get("hist-bars", {})
        if name in hb:
            # sparse: bars holding every read of every bucket
            b = hb[name]
            check(b["buckets"] == len(bins) and b["reads"] == r["ios"] and b["sum"] == r["ios"],
                  f"hist-{name}: bars of {b} for {len(bins)} buckets and {r['ios']} reads")
        else:
            check(h["series"].get(name, (0, 0))[1] == len(bins), f"hist-{name}: {h['series'].get(name)} points, record has {len(bins)} buckets")
        ng = sum(1 for g in gates if g.get("run") == name and g.get("unit") == "us")
        check(h["gates"] == ng, f"hist-{name}: {h['gates']} gate lines, record has {ng} latency gates")
        rr = run_of(ref, name) if ref else None
        if rr and "reference" in hb:
            check(hb["reference"]["buckets"] == len(rr["lat_hist"]["bins"]) and hb["reference"]["sum"] == rr["ios"],
                  f"hist-{name}: reference bars")
        elif rr:
            check(h["series"].get("reference", (0, 0))[1] == len(rr["lat_hist"]["bins"]), f"hist-{name}: reference series")
    n = sum(1 for k in PCTL if r["lat_us"].get(k, 0) > 0)
    check(charts["percentiles"]["series"].get(name, (0, 0))[1] == n, f"percentiles/{name}: expected {n} points")
    ps = r.get("per_second_iops", [])
    if ps:
        check(charts["per-second"]["series"].get(name, (0, 0))[1] == len(ps), f"per-second/{name}: expected {len(ps)} points")
        if ref and run_of(ref, name) and run_of(ref, name)["per_second_iops"]:
            check(charts["per-second"]["series"].get("reference " + name, (0, 0))[1] == len(run_of(ref, name)["per_second_iops"]),
                  f"per-second/reference {name}")
n_us = sum(1 for g in gates if g.get("unit") == "us" and any(g.get("run") == r["name"] for r in acc["runs"]))
check(charts["percentiles"]["gates"] == n_us, f"percentiles: {charts['percentiles']['gates']} gate lines, expected {n_us}")
n_iops = sum(1 for g in gates if g.get("unit") == "IOPS" and any(g.get("run") == r["name"] and r["per_second_iops"] for r in acc["runs"]))
check(charts["per-second"]["gates"] == n_iops, f"per-second: {charts['per-second']['gates']} gate lines, expected {n_iops}")

sweep = acc.get("sweep", [])
if sweep:
    for s in ("IOPS", "p50"):
        check(charts["sweep"]["series"].get(s, (0, 0))[1] == len(sweep), f"sweep/{s}: expected {len(sweep)} points")
    if ref and ref.get("sweep"):
        check(charts["sweep"]["series"].get("reference IOPS", (0, 0))[1] == len(ref["sweep"]), "sweep/reference IOPS")
if ref:
    matched = sum(1 for r in acc["runs"] if run_of(ref, r["name"]))
    check(charts["compare"]["bars"] == 2 * matched, f"compare: {charts['compare']['bars']} bars, expected {2 * matched}")

# the drives table: each cell is report.json's drives field, "unknown" where it is null
for side in ("old", "new"):
    d = rep["drives"][side]
    for field in ("device", "controller", "model", "serial", "firmware", "class"):
        want = d.get(field) if d.get(field) is not None else "unknown"
        got = page.cells.get((side, field))
        check(got == want, f"drives {side}.{field}: html '{got}', report.json '{want}'")
    for field in ("power_on_hours", "media_errors", "critical_warning", "error_log_entries", "lba_format"):
        want = "{:,}".format(d[field]) if d.get(field) is not None else "unknown"
        got = page.cells.get((side, field))
        check(got == want, f"drives {side}.{field}: html '{got}', expected '{want}'")

for f in fails:
    print("FAIL:", f, file=sys.stderr)
print(f"checked {len(charts)} charts, {sum(len(c['series']) for c in charts.values())} series, {len(page.cells)} drive cells")
sys.exit(1 if fails else 0)
