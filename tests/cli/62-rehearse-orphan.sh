#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# plan --rehearse and clone on an ext4 made as newer mke2fs make it by default (orphan_file,
# metadata_csum_seed): the rehearsal's metadata copy carries the orphan file (it failed e2fsck -fn
# on that copy while the source checked clean), and the clone's target checks clean. A feature the
# copy does not understand makes the rehearsal say so by name, as a warning, not a damaged source.
. "$SRCDIR/tests/lib.sh"
: "${MKDISK:?run through meson test (tests/run)}"

# the scaled layout (the incident's at 1/1000) and its target, as in 61-rehearse
"$MKDISK" scaled "$TMP/src.img" --written 16 --ext4-features orphan_file,metadata_csum_seed >"$TMP/src.json"
off=$(sfdisk -J "$TMP/src.img" | jq '.partitiontable.partitions[1].start * 512')
dev="$TMP/src.img?offset=$off"
feats=$(debugfs -R 'stats -h' "$dev" 2>/dev/null | sed -n 's/^Filesystem features: *//p')
for f in orphan_file metadata_csum_seed metadata_csum; do
	case " $feats " in *" $f "*) ;; *) fail "mkdisk --ext4-features: no $f in '$feats'";; esac
done
e2fsck -fn "$dev" >"$TMP/fsck" 2>&1 || { cat "$TMP/fsck"; fail "e2fsck -fn of the source"; }
ok "fixture with orphan_file,metadata_csum_seed checks clean"

mkdir -p "$TMP/scratch"
sync "$TMP/src.img"
src0=$(sparse_digest "$TMP/src.img")
run 0 "$SWAPTOOL" --state "$STATE" --json plan "$TMP/src.img" --target 3899999744 --rehearse --scratch "$TMP/scratch"
jeq .rehearsal.ok true
jeq '.checks[] | select(.id=="rehearse") | .status' pass
jeq '.checks[] | select(.id=="rehearse-features") | .status' pass
jeq '.checks[] | select(.id=="rehearse-apply") | .status' pass
jeq '.checks[] | select(.id=="rehearse-e2fsck") | .status' pass
jeq '[.rehearsal.actions[] | select(.status != "pass")] | length' 0
jeq '.rehearsal.actions[] | select(.action=="e2fsck") | .detail | startswith("clean")' true
[ -z "$(ls -A "$TMP/scratch")" ] || fail "scratch files left: $(ls -A "$TMP/scratch")"
[ "$(sparse_digest "$TMP/src.img")" = "$src0" ] || fail "the rehearsal changed the source"
ok "rehearsal passes with the orphan file"

# The clone of it: the target's ext4 checks clean and keeps its features and files.
truncate -s 3899999744 "$TMP/tgt.img"
run 0 "$SWAPTOOL" --state "$STATE" --json clone "$TMP/src.img" "$TMP/tgt.img" --yes
jeq .verdict pass
toff=$(sfdisk -J "$TMP/tgt.img" | jq '.partitiontable.partitions[1].start * 512')
e2fsck -fn "$TMP/tgt.img?offset=$toff" >"$TMP/fsck" 2>&1 || { cat "$TMP/fsck"; fail "e2fsck -fn of the target"; }
debugfs -R 'stats -h' "$TMP/tgt.img?offset=$toff" 2>/dev/null | grepq '^Filesystem features:.* orphan_file' ||
	fail "the target lost orphan_file"
jq -r '.files[] | select(.partition == 2) | "\(.path) \(.sha256)"' "$TMP/src.json" >"$TMP/files"
[ -s "$TMP/files" ] || fail "mkdisk listed no files"
while read -r f want; do
	got=$(debugfs -R "cat \"$f\"" "$TMP/tgt.img?offset=$toff" 2>/dev/null | sha256sum | cut -d' ' -f1)
	[ "$got" = "$want" ] || fail "$f on the target: $got, expected $want"
done <"$TMP/files"
[ "$(sparse_digest "$TMP/src.img")" = "$src0" ] || fail "the clone changed the source"
ok "clone: target e2fsck -fn clean, $(wc -l <"$TMP/files") file hashes"
rm -f "$TMP/tgt.img"

# Features the copy does not understand, set on a copy of the source: one libext2fs knows
# (lazy_bg) and one bit nobody knows (compat bit 13, FEATURE_C13). Compat bits: the plan still
# reads the filesystem, and the rehearsal stops before its copy, naming both.
cp --sparse=always "$TMP/src.img" "$TMP/unk.img"
debugfs -w -R "feature lazy_bg FEATURE_C13" "$TMP/unk.img?offset=$off" >/dev/null 2>&1
debugfs -R 'stats -h' "$TMP/unk.img?offset=$off" 2>/dev/null | grepq '^Filesystem features:.*lazy_bg.*FEATURE_C13' ||
	fail "debugfs did not set the features"
run 0 "$SWAPTOOL" --state "$TMP/st2" --json plan "$TMP/unk.img" --target 3899999744 --rehearse --scratch "$TMP/scratch"
jeq .verdict warn
jeq .rehearsal.ok false
jeq '.rehearsal.actions | length' 0
jeq '.checks[] | select(.id=="rehearse-features") | .status' warn
jeq '.checks[] | select(.id=="rehearse-features") | .summary | test("partition 2 has ext4 features lazy_bg, FEATURE_C13, which the rehearsal.s metadata copy does not understand")' true
jeq '.checks[] | select(.id=="rehearse") | .status' warn
jeq '.checks[] | select(.id=="rehearse") | .summary | test("not rehearsed: .*FEATURE_C13")' true
jeq '[.checks[] | select(.status == "fail")] | length' 0
jeq '[.checks[] | .summary | select(test("needs e2fsck"))] | length' 0
[ -z "$(ls -A "$TMP/scratch")" ] || fail "scratch files left: $(ls -A "$TMP/scratch")"
run 0 "$SWAPTOOL" --state "$TMP/st2" plan "$TMP/unk.img" --target 3899999744 --rehearse --scratch "$TMP/scratch"
printf '%s\n' "$OUT" | grep "rehearse-features" | grepq "WARN.*FEATURE_C13" || fail "the table does not warn by name: $OUT"
ok "unknown features: the rehearsal says so by name"
