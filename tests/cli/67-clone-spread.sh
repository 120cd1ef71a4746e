#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Path 2 on a filesystem whose allocation is spread over every block group (mkdisk scaled-spread),
# for every target size that preflight accepts, from the filesystem's minimum to the source's own
# size: plan --rehearse passes, and clone produces a target that passes e2fsck -fn and sgdisk -v,
# keeps PARTUUIDs and UUIDs and every written file's bytes, including those that lay past the new
# end; the source's sha256 never changes.
. "$SRCDIR/tests/lib.sh"
: "${MKDISK:?run through meson test (tests/run)}"
[ -e /dev/fuse ] || skip "no /dev/fuse: the shrink on the way needs FUSE"
need_root

"$MKDISK" scaled-spread "$TMP/src.img" --written 16 >"$TMP/src.json"
S=$TMP/src.img
size=$(stat -c %s "$S")
off=$(jq -r '.partition_table.partitions[1].fs.offset_bytes' "$TMP/src.json")
src0=$(sha256sum <"$S")
jq -r '.files[] | select(.partition == 2) | "\(.path) \(.sha256)"' "$TMP/src.json" >"$TMP/files"
grep -q blob-2.bin "$TMP/files" || fail "mkdisk wrote no data files"

# The fixture's promise: allocated blocks and written data past the incident's new end, scaled.
run 0 "$SWAPTOOL" --state "$STATE" --json plan "$S" --target 3758096384
past=$(printf '%s' "$OUT" | jq -r .plan.paths.fs_clone.cost.past_cut_bytes)
data=$(printf '%s' "$OUT" | jq -r .plan.paths.fs_clone.cost.past_cut_data_bytes)
[ "$past" -gt 100000000 ] || fail "only $past bytes in use past the new end: the fixture is not spread"
[ "$data" -gt 4000000 ] || fail "only $data bytes of file data past the new end"
contains "rehearsal_scratch_bytes"
ok "spread fixture: $past B in use past the new end, $data B of it data"

# The smallest target preflight accepts, to the LBA (4 KiB steps), by bisection.
fits() { # preflight exits 1 for a raw-clone finding: only its fs-fit check counts here
	{ "$SWAPTOOL" --state "$TMP/pf" --json preflight "$S" --target "$1" 2>/dev/null || true; } |
		jq -e '.checks[] | select(.id=="fs-fit") | .status == "pass"' >/dev/null; }
lo=$((size / 2 / 4096)) hi=$((size / 4096))
fits $((lo * 4096)) && fail "preflight accepts half the source: bisection range wrong"
while [ $((hi - lo)) -gt 1 ]; do
	mid=$(((lo + hi) / 2))
	if fits $((mid * 4096)); then hi=$mid; else lo=$mid; fi
done
min=$((hi * 4096))
echo "smallest accepted target: $min bytes"
[ "$min" -lt $((size * 9 / 10)) ] || fail "the smallest accepted target is $min bytes: bisection went wrong"

# Sizes: the minimum and one LBA-page above it, the issue's 3,758,096,384, points between, one MiB
# under the source, the source's own size, and a larger target (the grow, through a composite file:
# resize2fs would otherwise cut an image target short by the partition's offset).
sizes=("$min" $((min + 4096)) $((min + (size - min) / 4 / 4096 * 4096)) 3758096384
	$((min + (size - min) * 3 / 4 / 4096 * 4096)) $((size - 1048576)) "$size" $((size + 67108864)))
for t in "${sizes[@]}"; do
	run 0 "$SWAPTOOL" --state "$STATE" --json plan "$S" --target "$t" --rehearse --scratch "$TMP"
	jeq .rehearsal.ok true
	jeq '[.rehearsal.actions[] | select(.status != "pass")] | length' 0
	rm -f "$TMP/t.img"
	truncate -s "$t" "$TMP/t.img"
	TMPDIR=$TMP run 0 "$SWAPTOOL" --state "$TMP/cs" --json clone "$S" "$TMP/t.img" --yes
	jeq .verdict pass
	jeq .clone.source_written false
	e2fsck -fn "$TMP/t.img?offset=$off" >"$TMP/fsck" 2>&1 || { cat "$TMP/fsck"; fail "e2fsck -fn of the $t-byte target"; }
	sgdisk -v "$TMP/t.img" | grepq "No problems found" || fail "sgdisk -v of the $t-byte target"
	[ "$(blkid -p -o value -s UUID -O "$off" "$TMP/t.img")" = 0d6c4e57-7e41-493d-a531-809dda000002 ] || fail "ext4 UUID"
	[ "$(sfdisk -J "$TMP/t.img" | jq -r '[.partitiontable.partitions[].uuid] | join(",")')" = \
	  D6C40001-7E41-493D-A531-809DDA000001,D6C40002-7E41-493D-A531-809DDA000002 ] || fail "PARTUUIDs"
	while read -r f want; do
		got=$(debugfs -R "cat \"$f\"" "$TMP/t.img?offset=$off" 2>/dev/null | sha256sum | cut -d' ' -f1)
		[ "$got" = "$want" ] || fail "$f on the $t-byte target: $got, expected $want"
	done <"$TMP/files"
	ok "target $t: rehearsal, clone, e2fsck, sgdisk, UUIDs, $(wc -l <"$TMP/files") file hashes"
done
[ "$(sha256sum <"$S")" = "$src0" ] || fail "the source's sha256 changed"
[ -z "$(find "$TMP" -mindepth 1 -maxdepth 1 -name 'swaptool-*')" ] || fail "scratch or mount directories left: $(ls "$TMP")"
if grep -q "$TMP/swaptool-composite" /proc/mounts; then fail "a composite mount is left"; fi
ok "source sha256 unchanged after ${#sizes[@]} rehearsals and clones"
