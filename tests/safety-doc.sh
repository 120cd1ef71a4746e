#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# docs/swaptool-safety.7 names only real tests: every entry of BAD INPUTS names at least one test;
# each tests/... file it names exists and is registered in tests/meson.build, each fuzz-replay-TARGET
# is a registered fuzz target, and each quoted ok line is printed by the file named before it.
# Also checks that the checker itself rejects a page naming a missing or unregistered test.
set -euo pipefail
: "${SRCDIR:?run through meson test (tests/run)}"
command -v python3 >/dev/null || { echo "SKIP: no python3" >&2; exit 77; }

check() { # PAGE: exit 0 when every reference holds, 1 with one line per bad reference
	python3 - "$SRCDIR" "$1" <<'PY'
import os, re, sys
src, page = sys.argv[1], sys.argv[2]
meson = open(os.path.join(src, "tests/meson.build")).read()
def listed(var):
    m = re.search(r"^%s\s*=\s*\[(.*?)\]" % var, meson, re.S | re.M)
    return set(re.findall(r"'([^']+)'", m.group(1))) if m else set()
cli, unit, fuzz = listed("cli_tests"), listed("unit_tests"), listed("fuzz_targets")
def plain(s):  # groff to text: \- is -, fonts and \(lq \(rq dropped, \e is a backslash
    s = s.replace("\\-", "-").replace("\\(lq", "\x01").replace("\\(rq", "\x02").replace("\\e", "\\")
    return re.sub(r"\\f[BIRP]", "", s)
REF = re.compile(r"\b(tests/cli/[0-9A-Za-z_.-]+\.sh|tests/unit/test-[0-9A-Za-z_-]+\.c|tests/[0-9A-Za-z_-]+\.sh|fuzz-replay-[a-z-]+)|\(ok \x01([^\x02]*)\x02\)")
errors, entries, section = [], [], None
cur = None
for n, line in enumerate(open(page, encoding="utf-8"), 1):
    line = plain(line.rstrip("\n"))
    if line.startswith(".SH"):
        section = line[3:].strip().strip('"')
        cur = None
        continue
    if line.startswith(".SS"):
        cur = None
        continue
    if line.startswith(".TP") and section == "BAD INPUTS":
        cur = {"line": n, "refs": 0}
        entries.append(cur)
        continue
    last = None
    for m in REF.finditer(line):
        ref, okl = m.group(1), m.group(2)
        if ref:
            last = ref
            if cur is not None:
                cur["refs"] += 1
            if ref.startswith("fuzz-replay-"):
                if ref[len("fuzz-replay-"):] not in fuzz:
                    errors.append("%d: %s is not a fuzz target in tests/meson.build" % (n, ref))
                continue
            if not os.path.isfile(os.path.join(src, ref)):
                errors.append("%d: %s does not exist" % (n, ref))
                continue
            base = os.path.basename(ref)
            if ref.startswith("tests/cli/"):
                ok = base[:-3] in cli
            elif ref.startswith("tests/unit/"):
                ok = base[len("test-"):-2] in unit
            else:
                ok = "find_program('%s')" % base in meson
            if not ok:
                errors.append("%d: %s is not registered in tests/meson.build" % (n, ref))
        elif okl is not None:
            if last is None or not last.startswith("tests/"):
                errors.append("%d: ok line '%s' follows no test file" % (n, okl))
            elif os.path.isfile(os.path.join(src, last)):
                body = open(os.path.join(src, last), encoding="utf-8", errors="replace").read()
                if not any(l.startswith(okl) for l in re.findall(r'\bok "([^"\n]*)"', body)):
                    errors.append("%d: %s prints no ok line '%s'" % (n, last, okl))
for e in entries:
    if e["refs"] == 0:
        errors.append("%d: this BAD INPUTS entry names no test" % e["line"])
if len(entries) < 20:
    errors.append("only %d entries under BAD INPUTS: the page was not parsed" % len(entries))
for e in errors:
    print(e)
print("# %d entries checked" % len(entries), file=sys.stderr)
sys.exit(1 if errors else 0)
PY
}

PAGE=$SRCDIR/docs/swaptool-safety.7
check "$PAGE" || { echo "FAIL: $PAGE names tests that do not hold (above)" >&2; exit 1; }
echo "ok - every entry of swaptool-safety(7) names a test that exists and is registered"

# the checker catches what it is for: a missing file, an unregistered one, an ok line no test prints,
# an entry with no test
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
bad() { # SED-EXPR WHAT
	sed "$1" "$PAGE" >"$TMP/page.7"
	if out=$(check "$TMP/page.7" 2>/dev/null); then
		echo "FAIL: the checker accepts a page with $2" >&2
		exit 1
	fi
	grep -q "$3" <<<"$out" || { echo "FAIL: $2: the checker said '$out'" >&2; exit 1; }
}
bad '0,/tests\/cli\/35\\-inputs.sh/s//tests\/cli\/31\\-nosuch.sh/' "a missing test file" "does not exist"
bad '0,/tests\/cli\/35\\-inputs.sh/s//tests\/lib.sh/' "an unregistered test file" "not registered"
bad '0,/fuzz\\-replay\\-disk/s//fuzz\\-replay\\-nosuch/' "an unknown fuzz target" "not a fuzz target"
bad '0,/(ok \\(lqbad sources\\(rq)/s//(ok \\(lqno such line\\(rq)/' "an ok line no test prints" "prints no ok line"
bad '0,/^Test: .*/s//Test: none./' "an entry without a test" "names no test"
echo "ok - the checker rejects a missing, unregistered or unknown test, a false ok line and an entry with none"
