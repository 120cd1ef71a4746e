#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Path 1 (fresh install + restore) judged against the target (issue 31): what it puts on the new
# drive is the OS install, the irreplaceable files and the stores it re-creates. On the incident's
# source (docs/incident.md): 2 TB, everything fits (exit 4, the trap with a path); 1 TB, path 1 fits
# but the 738 GB ~/.cache/flare does not after the 477 GB ~/flare-pkgs (a warning naming it; exit 4);
# 200 MB, neither path fits (exit 1, not 4). The source's used bytes come from debugfs and sgdisk,
# the targets' usable bytes from the GPT layout worked by hand, not from swaptool.
. "$SRCDIR/tests/lib.sh"
command -v debugfs >/dev/null || skip "debugfs missing"
command -v sgdisk >/dev/null || skip "sgdisk missing"

src="$TMP/dgx4.img"
"$MKDISK" incident "$src" --home /home/nv >/dev/null
off=$((1050624 * 512))
# debugfs, not dumpe2fs -h: e2fsprogs 1.47.2 (Debian 13) cannot open IMG?offset=N with dumpe2fs
fld() { debugfs -R 'stats -h' "$src?offset=$off" 2>/dev/null | sed -n "s/^$1: *//p"; }
blocks=$(fld "Block count") free=$(fld "Free blocks") bsize=$(fld "Block size")
# p1 is the ESP (vfat, counted whole: the installer makes it again), p2 the ext4 root (its used blocks)
[ "$(blkid -p -o value -s TYPE -O $((2048 * 512)) "$src")" = vfat ] || fail "p1 is not vfat"
esp=$(( ($(sgdisk -i 1 "$src" | sed -n 's/^Last sector: \([0-9]*\).*/\1/p') - 2048 + 1) * 512 ))
used=$(( (blocks - free) * bsize + esp ))

pf() { "$SWAPTOOL" --state "$STATE" --json preflight "$src" --home /home/nv --target "$@"; }
plan() { "$SWAPTOOL" --state "$STATE" --json plan "$src" --home /home/nv --target "$@"; }
check() { jeq ".checks[] | select(.id == \"$1\") | .$2" "$3"; }
F=.paths.fresh_install

# 2 TB (the demo's target): path 1 fits with both stores; what it puts there adds up to what the
# source's filesystems hold. Unchanged: exit 4, path 1 recommended.
run 4 pf 2000398934016
jeq "$F.source_used_bytes" "$used"
jeq "$F.possible" true
# 3,907,029,168 LBAs: usable 34..3,907,029,134
jeq "$F.target_usable_bytes" $(( (3907029134 - 34 + 1) * 512 ))
jeq "$F.need_bytes" "$(printf '%s' "$OUT" | jq "$used - $F.refetchable_bytes")"
jeq "$F.total_bytes" "$used"
jeq "[$F.refetchable[].fits] | all" true
jeq "$F.refetchable[0].path" /home/nv/flare-pkgs
jeq "$F.refetchable[1].path" /home/nv/.cache/flare
jeq "$F.refetchable_bytes" 1215000190976
check fresh-install-fit status pass
jeq .paths.recommended fresh_install
jeq .verdict trap
run 0 plan 2000398934016
jeq .plan.paths.fresh_install.possible true
jeq .plan.paths.fresh_install.recommended true
jeq .plan.paths.fresh_install.total_bytes "$used"
check fresh-install status pass
ok "2 TB: path 1 fits with both stores, exit 4 as before"

# 1 TB: 1,953,525,168 LBAs, usable 34..1,953,525,134. The install (281 GB) and ~/flare-pkgs (477 GB)
# fit; ~/.cache/flare (738 GB) does not after them: a warning naming it, its size and what to do.
run 4 pf 1000204886016
jeq "$F.target_usable_bytes" $(( (1953525134 - 34 + 1) * 512 ))
jeq "$F.possible" true
jeq "$F.refetchable[0].fits" true
jeq "$F.refetchable[1].fits" false
jeq "$F.total_bytes" "$(printf '%s' "$OUT" | jq "$F.need_bytes + $F.refetchable[0].bytes")"
jeq "$F.refetchable[1].bytes > $F.target_usable_bytes - $F.total_bytes" true
check fresh-install-fit status warn
check fresh-install-fit stores_missing 1
check fresh-install-fit 'summary | test("/home/nv/.cache/flare \\(738.000 GB\\) does not fit")' true
check fresh-install-fit 'summary | test("re-fetch fewer stores")' true
jeq .verdict trap
jeq .paths.recommended fresh_install
run 0 plan 1000204886016
jeq .plan.paths.fresh_install.possible true
jeq .plan.paths.fresh_install.stores_missing "/home/nv/.cache/flare (738.000 GB)"
check fresh-install status warn
check fresh-install 'summary | contains("/home/nv/.cache/flare (738.000 GB) does not fit")' true
ok "1 TB: path 1 fits, the 738 GB store that does not is named"

# 200 MB: 390,625 LBAs, usable 34..390,591. Neither path fits: exit 1 (it was 4, "a path exists").
run 1 pf 200000000
jeq "$F.target_usable_bytes" $(( (390591 - 34 + 1) * 512 ))
jeq "$F.possible" false
jeq "$F.need_bytes > $F.target_usable_bytes" true
jeq "[$F.refetchable[].fits] | any" false
jeq .paths.fs_clone.possible false
jeq .paths.raw_clone.possible false
jeq .paths.recommended null
jeq .verdict fail
check fresh-install-fit status fail
check fresh-install-fit need_bytes "$(printf '%s' "$OUT" | jq "$F.need_bytes")"
check fresh-install-fit 'summary | test("path 1 cannot fit.*use a larger drive$")' true
run 1 "$SWAPTOOL" --state "$STATE" --no-color preflight "$src" --home /home/nv --target 200000000
contains "No path fits this target"
grepq -v "a path exists" <<<"$OUT" || fail "200 MB: preflight claims a path exists"
run 1 plan 200000000
jeq .plan.paths.fresh_install.possible false
jeq .plan.paths.fresh_install.recommended false
check fresh-install status fail
check fs-clone status fail
run 1 "$SWAPTOOL" --state "$STATE" --no-color plan "$src" --home /home/nv --target 200000000
contains "no path fits this target"
ok "200 MB: neither path fits, exit 1 with the reasons"

# A store that cannot be measured (the default home has none) is not judged: no "fits" for it.
run 4 "$SWAPTOOL" --state "$STATE" --json preflight "$src" --target 2000398934016
jeq "[$F.refetchable[] | has(\"fits\")] | any" false
jeq "[$F.refetchable[] | has(\"error\")] | all" true
ok "unmeasured stores are not judged"
