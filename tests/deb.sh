#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The Debian package, end to end: build it from a copy of the tree (dpkg-buildpackage -us -uc -b),
# check its Depends and contents, lintian (no errors), install it with dpkg -i, run the installed
# binary (--version, man -w, completion, a preflight on a disk image), then remove it again.
# Not part of `meson test` (it takes minutes and installs a package); .ci/run calls it.
# DEB_OUT=DIR keeps a copy of the package there (.ci/run hands it to tests/ansible.sh).
# Exit 77 (skip) without root or without the packaging tools, or when swaptool is already installed.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
skip() { echo "SKIP: $*" >&2; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok - $*"; }

[ "$(id -u)" = 0 ] || skip "needs root (dpkg -i)"
for c in dpkg-buildpackage dh lintian man git; do
	command -v "$c" >/dev/null || skip "$c is not installed (apt-get install debhelper dpkg-dev lintian man-db git)"
done
if dpkg-query -W -f='${Status}' swaptool 2>/dev/null | grep -q 'install ok installed'; then
	skip "the swaptool package is already installed; not replacing it"
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/swaptool-deb.XXXXXX")
installed=false
cleanup() {
	if $installed; then dpkg -r swaptool >/dev/null 2>&1 || true; fi
	rm -rf "$tmp"
}
trap cleanup EXIT

# a copy of the tree: tracked and untracked files that git does not ignore (no build directories)
tree="$tmp/swaptool-0.1.0"
mkdir -p "$tree"
git -C "$src" ls-files -z -co --exclude-standard | (cd "$src" && tar --null -T - -cf -) | tar -C "$tree" -xf -
echo "== dpkg-buildpackage -us -uc -b (log: $tmp/build.log)"
(cd "$tree" && dpkg-buildpackage -us -uc -b) >"$tmp/build.log" 2>&1 || { tail -40 "$tmp/build.log"; fail "dpkg-buildpackage failed"; }
arch=$(dpkg --print-architecture)
deb="$tmp/swaptool_0.1.0-1_${arch}.deb"
[ -f "$deb" ] || fail "no $deb; built: $(ls "$tmp")"
ok "built $(basename "$deb")"
if [ -n "${DEB_OUT:-}" ]; then mkdir -p "$DEB_OUT" && cp "$deb" "$DEB_OUT/"; fi

deps=$(dpkg-deb -f "$deb" Depends)
for d in e2fsprogs gdisk util-linux fdisk libc6 libjson-c5 libext2fs2 libblkid1 libfdisk1 libarchive13 libnvme1 liburing2 libssl3 libsmartcols1 libfuse3-3; do
	grep -qE "(^|, )$d( |,|$)" <<<"$deps" || fail "Depends lacks $d: $deps"
done
dpkg-deb -c "$deb" | awk '{print $6}' >"$tmp/contents"
for f in ./usr/bin/swaptool ./usr/share/man/man1/swaptool.1.gz ./usr/share/man/man1/swaptool-metrics.1.gz \
	./usr/share/man/man1/swaptool-fleet.1.gz ./usr/share/man/man5/swaptool-profile.5.gz \
	./usr/share/bash-completion/completions/swaptool ./usr/share/doc/swaptool/profile.example.ini \
	./usr/share/doc/swaptool/copyright ./usr/share/doc/swaptool/changelog.Debian.gz \
	./usr/share/doc/swaptool/examples/ansible/roles/swaptool/tasks/main.yml; do
	grep -qxF "$f" "$tmp/contents" || fail "the package lacks $f"
done
n=$(grep -c '^./usr/share/man/man[157]/swaptool.*\.gz$' "$tmp/contents")
[ "$n" = "$(ls "$src"/docs/swaptool*.[157] | wc -l)" ] || fail "$n man pages packaged, $(ls "$src"/docs/swaptool*.[157] | wc -l) in docs/"
ok "Depends: $deps; binary, $n man pages, completion, example profile"

lintian --fail-on error --tag-display-limit 0 "$deb" >"$tmp/lintian.log" 2>&1 || { cat "$tmp/lintian.log"; fail "lintian reports errors"; }
echo "lintian: $(grep -c '^[EWI]:' "$tmp/lintian.log" || true) tags, no errors"
sed 's/^/   /' "$tmp/lintian.log"
ok "lintian: no errors"

dpkg -i "$deb" >"$tmp/dpkg.log" 2>&1 || { cat "$tmp/dpkg.log"; fail "dpkg -i failed"; }
installed=true
[ "$(/usr/bin/swaptool --version)" = "swaptool 0.1.0" ] || fail "--version: $(/usr/bin/swaptool --version)"
[ "$(man -w swaptool)" = /usr/share/man/man1/swaptool.1.gz ] || fail "man -w swaptool: $(man -w swaptool)"
man -w swaptool-fleet >/dev/null || fail "man -w swaptool-fleet"
man -w 5 swaptool-profile >/dev/null || fail "man -w 5 swaptool-profile"
# bash-completion loads the installed completion on demand
if [ -r /usr/share/bash-completion/bash_completion ]; then
	bash -c '. /usr/share/bash-completion/bash_completion; _completion_loader swaptool; complete -p swaptool' |
		grep -q -- '-F _swaptool swaptool' || fail "bash-completion does not load the installed completion"
fi
# a demo step with the installed binary: preflight of a disk image, judged from the XG7000's dumps
mkdisk=$(ls "$tree"/obj-*/tests/mkdisk)
"$mkdisk" scaled "$tmp/src.img" >/dev/null
rc=0
/usr/bin/swaptool --state "$tmp/state" --json preflight "$tmp/src.img" --target 2000398934016 \
	--from-dumps "$tree/fixtures/nvme/xg7000" >"$tmp/pf.json" || rc=$?
[ "$rc" = 0 ] || { cat "$tmp/pf.json"; fail "installed preflight exited $rc"; }
[ "$(jq -r '.checks[] | select(.id == "drive-class") | .status' "$tmp/pf.json")" = warn ] || fail "drive-class is not warn"
[ "$(jq -r '.source.model' "$tmp/pf.json")" = "XG7000-2TB 2242" ] || fail "source model"
[ -f "$tmp/state/preflight.json" ] || fail "no record written"
ok "installed: --version, man -w, completion, preflight on an image"

dpkg -r swaptool >/dev/null
installed=false
[ ! -e /usr/bin/swaptool ] || fail "/usr/bin/swaptool is left after dpkg -r"
ok "removed"
