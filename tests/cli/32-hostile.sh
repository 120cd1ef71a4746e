#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# restore refuses hostile archives whole (exit 3) and writes nothing inside or outside the root:
# absolute path, '..', symlink then a file through it (one archive, and split across two
# restores), hard links out of the set (/etc/shadow), device node, hash mismatch, names not in
# the manifest, missing entries, no or bad manifest, truncated and corrupt gzip, 10,000 entries.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/fixtures/backup-lib.sh"

H="$TMP/hostile"
OUTSIDE="$TMP/outside"
mkdir -p "$OUTSIDE" "$STATE"
echo canary >"$OUTSIDE/canary"
python3 "$SRCDIR/tests/fixtures/make-hostile.py" "$H" "$OUTSIDE"

R="$TMP/root"
mkdir -p "$R/home/nv"
echo keep >"$R/home/nv/keep.txt"
outside_before=$(snapshot "$OUTSIDE")
state_before=$(snapshot "$STATE")
shadow_before=$(stat -c '%h %i' /etc/shadow 2>/dev/null || echo none)

# refused CASE 'REASON': exit 3, the reason named, nothing written anywhere
refused() {
	local root_before
	root_before=$(snapshot "$R")
	run 3 "$SWAPTOOL" --state "$STATE" restore "$H/$1.tar.gz" --root "$R"
	contains "$2"
	contains "nothing was written"
	[ "$(snapshot "$R")" = "$root_before" ] || fail "$1: the root changed"
	[ "$(snapshot "$OUTSIDE")" = "$outside_before" ] || fail "$1: something was written outside the root"
	[ "$(snapshot "$STATE")" = "$state_before" ] || fail "$1: the state directory changed (undo or records)"
	# verify refuses the same archive
	run 3 "$SWAPTOOL" --state "$TMP/vstate" verify "$H/$1.tar.gz" --root "$R"
	ok "$1 refused: $2"
}

refused absolute "absolute path"
refused dotdot "'..' component"
refused symlink-then-file "goes through the symlink 'home/nv/link' of the same archive"
refused hardlink-shadow "hard link to '/etc/shadow', out of the backup set"
refused hardlink-outside-set "hard link to 'etc/shadow', out of the backup set"
refused device-node "device node"
refused hash-mismatch "sha256"
refused not-in-manifest "not listed in the manifest"
refused missing-entry "does not hold it"
refused no-manifest "does not start with swaptool-manifest.json"
refused bad-manifest "not valid JSON"
refused truncated "truncated"
refused corrupt "" # the reason depends on where the bytes flipped
refused crc-mismatch "CRC-32"
start=$(date +%s%N)
refused 10000-entries "more than the limit of 8192"
ms=$(( ($(date +%s%N) - start) / 1000000 ))
[ "$ms" -lt 5000 ] || fail "refusing the 10,000-entry archive took $ms ms"
[ "$(stat -c '%h %i' /etc/shadow 2>/dev/null || echo none)" = "$shadow_before" ] || fail "/etc/shadow gained a link"

# split across two restores: the first plants the link (legitimately), the second is refused
# (exit 1: verify then finds no controller.key in this bare root)
run 1 "$SWAPTOOL" --state "$TMP/s1" restore "$H/split-1-link.tar.gz" --root "$R"
[ -L "$R/home/nv/link" ] || fail "the first restore did not create the link"
root_before=$(snapshot "$R")
run 3 "$SWAPTOOL" --state "$TMP/s1" restore "$H/split-2-file.tar.gz" --root "$R"
contains "goes through the symlink 'home/nv/link' on the root"
[ "$(snapshot "$R")" = "$root_before" ] || fail "split: the root changed"
[ "$(snapshot "$OUTSIDE")" = "$outside_before" ] || fail "split: written outside the root through the link"
ok "split across two restores refused: the link from the first is not followed"

# the good control archive is accepted
run_good() { "$SWAPTOOL" --state "$TMP/s2" restore "$H/good.tar.gz" --root "$TMP/goodroot" >/dev/null 2>&1 || [ $? = 1 ]; }
mkdir -p "$TMP/goodroot"
run_good || fail "the control archive was refused"
[ "$(cat "$TMP/goodroot/home/nv/ok.txt")" = ok ] || fail "the control archive was not restored"
[ "$(stat -c %i "$TMP/goodroot/home/nv/ok.txt")" = "$(stat -c %i "$TMP/goodroot/home/nv/ok-link.txt")" ] ||
	fail "the hard link inside the set was not restored as a link"
ok "the control archive restores, its in-set hard link as a link"
