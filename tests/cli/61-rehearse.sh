#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# plan --rehearse on the incident's image: path 2 on throwaway copies, checked by e2fsck, sgdisk and
# our table reader; the source is never written; the scratch files are removed; time and disk used.
. "$SRCDIR/tests/lib.sh"
: "${MKDISK:?run through meson test (tests/run)}"

"$MKDISK" incident "$TMP/src.img" --written 32 >"$TMP/src.json"
mkdir -p "$TMP/scratch"
# What must not change: the table regions, the ext4 superblock region, size and mtime.
regions() {
	local f=$1 n
	n=$(stat -c %s "$f")
	{ dd if="$f" bs=1M count=2 status=none
	  dd if="$f" bs=512 skip=$((n / 512 - 34)) status=none
	  dd if="$f" bs=1M skip=513 count=4 status=none
	  stat -c '%s %Y %Z' "$f"; } | sha256sum
}
before=$(regions "$TMP/src.img")

run 0 "$SWAPTOOL" --state "$STATE" --json plan "$TMP/src.img" --target 2000398934016 --rehearse --scratch "$TMP/scratch"
jeq .rehearsal.ok true
# every rehearsal check passed and the clone trap is the one the plan resolves: the plan passes,
# the trap kept in view as raw-clone's skip
jeq .verdict pass
jeq '.checks[] | select(.id=="raw-clone") | .status' skip
jeq '.checks[] | select(.id=="raw-clone") | .summary | test("^the clone trap: .*-48,009,314,304 B.*path 1 or 2 instead")' true
jeq '[.checks[] | select(.status == "warn" or .status == "fail")] | length' 0
jeq '.checks[] | select(.id=="rehearse") | .status' pass
jeq '.checks[] | select(.id=="rehearse-e2fsck") | .status' pass
jeq '.checks[] | select(.id=="rehearse-sgdisk") | .status' pass
jeq '.checks[] | select(.id=="rehearse-gpt-backup-header") | .status' pass
jeq '.checks[] | select(.id=="rehearse-gpt-backup-header") | .summary | test("LBA 3,907,029,167, the target.s last LBA is 3,907,029,167")' true
jeq '.checks[] | select(.id=="rehearse-partuuids") | .status' pass
jeq '.checks[] | select(.id=="rehearse-fs-p1") | .summary | test("D6C4-0001")' true
jeq '.checks[] | select(.id=="rehearse-fs-p2") | .summary | test("0d6c4e57-7e41-493d-a531-809dda000002, 488,247,313 blocks")' true
jeq '[.rehearsal.actions[].action] | join(",")' check,e2fsck,copy-raw,copy-used-blocks,shrink,fsck,write-table,verify,manual
jeq '[.rehearsal.actions[] | select(.status != "pass")] | length' 0
jeq '[.rehearsal.actions[] | .seconds | type] | unique | join(",")' number
jeq '.rehearsal.actions[] | select(.action=="copy-used-blocks") | .detail | test("1,462,000,025,600 B unwritten")' true
secs=$(printf '%s' "$OUT" | jq -r '.rehearsal.seconds')
peak=$(printf '%s' "$OUT" | jq -r '.rehearsal.scratch_peak_bytes')
echo "rehearsal: ${secs} s, scratch peak ${peak} bytes"
[ "$peak" -lt 1000000000 ] || fail "scratch disk used $peak bytes, over 1 GB"
# The issue's target is 60 s (bench/clone-vs-e2image measures it); a loaded CI machine gets twice that.
awk -v s="$secs" 'BEGIN { exit !(s < 120) }' || fail "rehearsal took $secs s"
[ -z "$(ls -A "$TMP/scratch")" ] || fail "scratch files left: $(ls -A "$TMP/scratch")"
[ "$(regions "$TMP/src.img")" = "$before" ] || fail "the rehearsal changed the source"
ok "rehearse incident (${secs} s, ${peak} B scratch)"

# Path 2 impossible: nothing to rehearse, exit 1 with the reason; an unusable scratch dir: exit 3.
"$MKDISK" toolarge "$TMP/big.img" >/dev/null
run 1 "$SWAPTOOL" --state "$STATE" --json plan "$TMP/big.img" --target 2000398934016 --rehearse --scratch "$TMP/scratch"
jeq '.checks[] | select(.id=="rehearse") | .status' fail
jeq '.checks[] | select(.id=="rehearse") | .summary | test("nothing to rehearse")' true
run 3 "$SWAPTOOL" --state "$STATE" plan "$TMP/src.img" --target 2000398934016 --rehearse --scratch "$TMP/none"
contains "scratch directory"
ok "refusals"

# Without sgdisk the sgdisk check was not made: it is a skip with its reason, never a pass, and the
# rehearsal still succeeds (scaled variant: the same layout at 1/1000). PATH: a directory of links to
# every command on PATH but sgdisk (the first of each name, as the shell would find it).
command -v sgdisk >/dev/null || skip "sgdisk missing: cannot show the difference"
"$MKDISK" scaled "$TMP/small.img" --written 16 >/dev/null
mkdir "$TMP/bin"
IFS=: read -ra dirs <<<"$PATH"
for d in "${dirs[@]}"; do
	[ -d "$d" ] || continue
	for f in "$d"/*; do
		n=${f##*/}
		[ "$n" = sgdisk ] || [ -e "$TMP/bin/$n" ] || [ ! -x "$f" ] || ln -s "$f" "$TMP/bin/$n"
	done
done
PATH="$TMP/bin" command -v sgdisk >/dev/null && fail "sgdisk still on the stripped PATH"
run 0 env PATH="$TMP/bin" "$SWAPTOOL" --state "$STATE" --json plan "$TMP/small.img" --target 3899999744 --rehearse \
	--scratch "$TMP/scratch"
jeq .rehearsal.ok true
jeq '.checks[] | select(.id=="rehearse-sgdisk") | .status' skip
jeq '.checks[] | select(.id=="rehearse-sgdisk") | .summary | test("sgdisk is not installed")' true
jeq '.rehearsal.checks[] | select(.id=="sgdisk") | .status' skip
jeq '.checks[] | select(.id=="rehearse") | .status' pass
jeq '.rehearsal.actions[] | select(.action=="verify") | .detail | test("1 skipped")' true
run 0 env PATH="$TMP/bin" "$SWAPTOOL" --state "$STATE" plan "$TMP/small.img" --target 3899999744 --rehearse \
	--scratch "$TMP/scratch"
contains "sgdisk is not installed"
printf '%s\n' "$OUT" | grep "rehearse-sgdisk" | grepq -i skip || fail "the table does not show rehearse-sgdisk as skip: $OUT"
ok "sgdisk missing: skip, not pass"
