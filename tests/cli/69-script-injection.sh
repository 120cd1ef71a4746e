#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# plan --script with hostile strings from the disk and the command line: partition names and an ext4
# label holding quotes, newlines, $(...), backticks, here-document terminators and bytes 0x01-0x1f,
# under a directory whose name holds the same. The script parses (bash -n); run with every command
# that writes (e2fsck, resize2fs, dd, e2image, sfdisk, sgdisk, ...) replaced by a recorder first on
# PATH, it runs to its end, no injected command runs, and each recorded argument and sfdisk's input
# carry the strings unchanged (sfdisk, fed the recorded input, writes the source's names back).
. "$SRCDIR/tests/lib.sh"
command -v sgdisk >/dev/null || skip "sgdisk missing"
command -v sfdisk >/dev/null || skip "sfdisk missing"
command -v mke2fs >/dev/null || skip "mke2fs missing"

# The markers an injected command would create: "touch M1" ... run in the script's directory,
# or anywhere under $TMP.
markers_absent() {
	local found
	found=$(find "$TMP" -name 'M[0-9]*' -print)
	[ -z "$found" ] || fail "an injected command ran: $found"
}

D="$TMP/d'ir \$(touch M7) \`touch M8\`"$'\n'"EOF"
mkdir -p "$D"
SRC="$D/s.img"
TGT="$D/t'\$(touch M9).img"
truncate -s 64M "$SRC"
sgdisk -n1:2048:+1M -n2:0:+1M -n3:0:+1M -n4:0:0 -t4:8300 "$SRC" >/dev/null
# GPT names hold at most 36 UTF-16 units: one trick per partition.
N1=$'a\'b"c$(touch M1)'
N2=$'\nEOF\ntouch M2\nEOF\n'
N3=$'`touch M3`\x01\x1f\x7f;touch M4 #'
N4=$'\'EOF\'\n$(touch M5)\\'
sgdisk -c "1:$N1" -c "2:$N2" -c "3:$N3" -c "4:$N4" "$SRC" >/dev/null 2>&1
[ "$(sgdisk -i 2 "$SRC" | grep -c 'touch M2')" -ge 1 ] || skip "sgdisk did not keep a name with newlines"
mke2fs -q -t ext4 -F -L $'$(touch M6)\n`x`' -E offset=$((8192 * 512)) "$SRC" 59M
truncate -s 72M "$TGT" # larger: no shrink, so the stock tools run the whole path
sfdisk -J "$SRC" | jq -c '[.partitiontable.partitions[].name]' >"$TMP/names.src"

cd "$D"
run 0 "$SWAPTOOL" --state "$STATE" --json plan "$SRC" --target "$TGT" --script "$D/clone.sh"
jeq .plan.paths.fs_clone.possible true
printf '%s' "$OUT" | jq -e --arg n "$N2" '.plan.paths.fs_clone.partitions[1].name == $n' >/dev/null ||
	fail "the plan does not carry p2's name unchanged"
[ -x "$D/clone.sh" ] || fail "no script"
bash -n "$D/clone.sh" || fail "the script does not parse"
grep -q '<<' "$D/clone.sh" && fail "the script has a here-document"
# no line starts with a word the disk chose (the trick of a name that closes a here-document)
grep -nE '^(touch|EOF|.EOF.)' "$D/clone.sh" && fail "a line of the script starts with a name's text"
LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' "$D/clone.sh" && fail "raw control bytes in the script"
markers_absent
ok "the script parses and holds no raw string from the disk"

# Recorders for everything the script could write with, first on PATH; the script's own guard
# (sizes, fingerprint through the real swaptool) runs for real.
mkdir "$TMP/bin"
for c in e2fsck resize2fs dd e2image sfdisk sgdisk wipefs partx blockdev e2undo mkfs.ext4 mke2fs tune2fs; do
	cat >"$TMP/bin/$c" <<-'REC'
		#!/bin/bash
		# records its name and arguments, NUL-separated, one call per record; sfdisk's stdin too
		printf '%s\0' "${0##*/}" "$@" >>"$RECORD"
		printf '\n' >>"$RECORD"
		if [ "${0##*/}" = sfdisk ]; then cat >"$RECORD.sfdisk"; fi
		exit 0
	REC
	chmod +x "$TMP/bin/$c"
done
got=0
RECORD="$TMP/record" PATH="$TMP/bin:$PATH" SWAPTOOL="$SWAPTOOL" XDG_STATE_HOME="$TMP/xdg" \
	bash "$D/clone.sh" >"$TMP/script.out" 2>&1 || got=$?
[ "$got" = 0 ] || { cat "$TMP/script.out" >&2; fail "the script stopped (exit $got)"; }
grep -q 'path 2 done' "$TMP/script.out" || fail "the script did not reach its end"
markers_absent
ok "the script ran to its end under recorders; nothing injected ran"

# Every recorded argument naming a disk is the exact path (no word split, nothing expanded).
tr '\0' '\037' <"$TMP/record" >"$TMP/record.txt"
for c in e2fsck resize2fs dd e2image sfdisk; do
	grep -q "^$c"$'\037' "$TMP/record.txt" || fail "$c did not run"
done
grep -qF "of=$TGT"$'\037' <(tr '\n' ' ' <"$TMP/record.txt") || fail "dd did not get the target's path whole"
grep -qF "$SRC?offset=$((8192 * 512))" <(tr '\n' ' ' <"$TMP/record.txt") || fail "e2fsck did not get the source's path whole"
grep -qF $'\037'"$TGT"$'\037' <(tr '\n' ' ' <"$TMP/record.txt") || fail "sfdisk did not get the target's path whole"
ok "the paths reached the commands whole"

# sfdisk's recorded input, given to the real sfdisk, writes back exactly the source's names.
truncate -s 72M "$TMP/scratch.img"
sfdisk -q --no-reread --no-tell-kernel --wipe never "$TMP/scratch.img" <"$TMP/record.sfdisk" >/dev/null ||
	fail "sfdisk refused the script's table"
sfdisk -J "$TMP/scratch.img" | jq -c '[.partitiontable.partitions[].name]' >"$TMP/names.tgt"
cmp -s "$TMP/names.src" "$TMP/names.tgt" || fail "names changed: $(cat "$TMP/names.src") -> $(cat "$TMP/names.tgt")"
sgdisk -v "$TMP/scratch.img" | grepq 'No problems found' || fail "sgdisk -v on the written table"
markers_absent
ok "sfdisk writes the names back unchanged"

# A target named with '?' (where e2fsck and resize2fs would read "?offset=" options and open another
# file): the guard stops before anything runs.
: >"$TMP/record"
mkdir -p "$TMP/q?x"
truncate -s 56M "$TMP/q?x/t.img"
got=0
RECORD="$TMP/record" PATH="$TMP/bin:$PATH" SWAPTOOL="$SWAPTOOL" XDG_STATE_HOME="$TMP/xdg" \
	bash "$D/clone.sh" "$TMP/q?x/t.img" >"$TMP/script.out" 2>&1 || got=$?
[ "$got" = 3 ] || { cat "$TMP/script.out" >&2; fail "the script ran against a path with '?' (exit $got)"; }
grep -q "holds '?'" "$TMP/script.out" || fail "the stop does not say why: $(cat "$TMP/script.out")"
[ ! -s "$TMP/record" ] || fail "a command ran before the guard stopped: $(tr '\0' ' ' <"$TMP/record")"
# and one that starts with '-' (e2fsck would take it for an option)
got=0
(cd "$TMP/q?x" && RECORD="$TMP/record" PATH="$TMP/bin:$PATH" SWAPTOOL="$SWAPTOOL" XDG_STATE_HOME="$TMP/xdg" \
	bash "$D/clone.sh" -t.img) >"$TMP/script.out" 2>&1 || got=$?
[ "$got" = 3 ] || { cat "$TMP/script.out" >&2; fail "the script ran against a name starting with '-' (exit $got)"; }
grep -q "starts with '-'" "$TMP/script.out" || fail "the stop does not say why: $(cat "$TMP/script.out")"
[ ! -s "$TMP/record" ] || fail "a command ran before the guard stopped: $(tr '\0' ' ' <"$TMP/record")"
ok "a path with '?' or a leading '-' is stopped by the guard"
