#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# clone decides "the target is the source" by identity, not by path text: a hard link, /proc/self/fd,
# a bind mount, loop devices over such names, a partition of one, a target in use through another
# loop device over its file (mounted), and a saved plan matched to "./disk.img" as to "disk.img".
# Each is refused with exit 3 and the source's sha256 is unchanged.
. "$SRCDIR/tests/lib.sh"
for t in sgdisk mkfs.ext4 mkfs.vfat debugfs tune2fs sha256sum; do command -v $t >/dev/null || skip "$t missing"; done

# A small GPT disk (64 MiB: ESP + ext4) so that the whole source can be hashed after every case;
# mkdisk's smallest image is 4 GiB.
mkdisk_small() {
	local f=$1 s e
	truncate -s 64M "$f"
	sgdisk -n1:2048:+8M -t1:ef00 -n2:0:0 -t2:8300 "$f" >/dev/null
	s=$(sgdisk -i2 "$f" | awk '/First sector/ { print $3 }')
	e=$(sgdisk -i2 "$f" | awk '/Last sector/ { print $3 }')
	truncate -s 8M "$TMP/p1"
	mkfs.vfat "$TMP/p1" >/dev/null
	truncate -s $(((e - s + 1) * 512)) "$TMP/p2"
	mkfs.ext4 -q -F "$TMP/p2"
	echo "controller key" >"$TMP/key"
	debugfs -w -R "write $TMP/key controller.key" "$TMP/p2" >/dev/null 2>&1
	dd if="$TMP/p1" of="$f" bs=512 seek=2048 conv=notrunc,sparse status=none
	dd if="$TMP/p2" of="$f" bs=512 seek="$s" conv=notrunc,sparse status=none
	rm -f "$TMP/p1" "$TMP/p2"
}

mkdir -p "$TMP/d"
S=$TMP/d/disk.img
mkdisk_small "$S"
truncate -s 64M "$TMP/tgt.img"
SUM=$(sha256sum <"$S")
n=0
# refused WHY TARGET [ARGS...]: clone of $S onto TARGET exits 3 with WHY; the source is unchanged
refused() {
	local want=$1 tgt=$2
	shift 2
	n=$((n + 1))
	run 3 "$SWAPTOOL" --state "$TMP/st$n" clone "$S" "$tgt" --yes "$@"
	contains "$want"
	[ "$(sha256sum <"$S")" = "$SUM" ] || fail "refusal of '$tgt' ($want) changed the source"
	[ ! -e "$TMP/u$n" ] || fail "refusal of '$tgt' created the undo file"
}

ln "$S" "$TMP/link.img"
refused "is the source" "$TMP/link.img"
exec 7<"$S"
refused "is the source" /proc/self/fd/7
refused "is the source" "/proc/$$/fd/7"
exec 7<&-
ok "a hard link and /proc/self/fd name the source"

# The plan saved for "disk.img" binds "./disk.img": the smaller-target and fingerprint checks run.
cd "$TMP/d"
run 0 "$SWAPTOOL" --state "$TMP/stp" plan disk.img --target 83886080
truncate -s 72M "$TMP/small.img"
run 3 "$SWAPTOOL" --state "$TMP/stp" clone ./disk.img "$TMP/small.img" --yes
contains "smaller than the 83,886,080 bytes the plan needs"
run 3 "$SWAPTOOL" --state "$TMP/stp" clone "$TMP/d/../d/disk.img" "$TMP/small.img" --yes
contains "smaller than the 83,886,080 bytes the plan needs"
[ "$(sha256sum <"$S")" = "$SUM" ] || fail "the smaller-target refusal changed the source"
# a changed source (another ext4 UUID) against the plan made before the change
cp --sparse=always disk.img changed.img
run 0 "$SWAPTOOL" --state "$TMP/stc" plan changed.img --target 83886080
off=$(sgdisk -i2 changed.img | awk '/First sector/ { print $3 * 512 }')
tune2fs -U 0d6c4e57-0000-493d-a531-809dda000099 "changed.img?offset=$off" >/dev/null 2>&1 ||
	debugfs -w -R "ssv uuid 0d6c4e57-0000-493d-a531-809dda000099" "changed.img?offset=$off" >/dev/null 2>&1
truncate -s 80M "$TMP/big.img"
c0=$(sha256sum <changed.img)
run 3 "$SWAPTOOL" --state "$TMP/stc" clone ./changed.img "$TMP/big.img" --yes
contains "no longer matches the plan"
[ "$(sha256sum <changed.img)" = "$c0" ] || fail "the fingerprint refusal changed the source"
[ "$(stat -c %b "$TMP/big.img")" = 0 ] || fail "the fingerprint refusal wrote the target"
# the plan record names the source by identity
jq -e '.plan.source.identity | test("^file [0-9]+:[0-9]+ [0-9]+$")' "$TMP/stc/plan.json" >/dev/null ||
	fail "no identity in the plan record: $(jq -c .plan.source "$TMP/stc/plan.json")"
cd - >/dev/null
ok "a saved plan is matched by identity: ./disk.img is disk.img"

# Root from here: bind mounts and loop devices. The loop devices go before the bind mount they
# may be over, the mounts before the files.
need_loop
BIND=0
cleanup_65() {
	local l
	umount "$TMP/mnt" 2>/dev/null || true
	for l in "${LOOPS[@]}"; do
		partx -d "$l" 2>/dev/null || true
		losetup -d "$l" 2>/dev/null || true
	done
	LOOPS=()
	if [ "$BIND" = 1 ]; then umount "$TMP/bind" 2>/dev/null || umount -l "$TMP/bind" 2>/dev/null || true; fi
	cleanup_test
}
trap cleanup_65 EXIT
mkdir -p "$TMP/bind"
if mount --bind "$TMP/d" "$TMP/bind" 2>/dev/null; then
	BIND=1
	refused "is the source" "$TMP/bind/disk.img"
	ok "a bind mount of the source's directory names the source"
else
	echo "# mount --bind failed: bind-mount case skipped"
fi

# Loop devices over the source under other names: its path, a hard link, a bind mount; at an
# offset; a partition of one (partx).
attach "$S"; L=$DEV
refused "overlaps" "$L"
attach "$TMP/link.img"
refused "overlaps" "$DEV"
if [ "$BIND" = 1 ]; then
	attach "$TMP/bind/disk.img"
	refused "overlaps" "$DEV"
fi
attach -o 9437184 "$TMP/link.img"
refused "overlaps" "$DEV"
[ -b "${L}p2" ] || skip "no partition nodes for $L"
refused "overlaps" "${L}p2"
# and the other way round: the source named by a loop device, the target its file or a partition
n=$((n + 1))
run 3 "$SWAPTOOL" --state "$TMP/st$n" clone "$L" "$TMP/link.img" --yes
contains "overlaps"
[ "$(sha256sum <"$S")" = "$SUM" ] || fail "source as a loop device: the source changed"
ok "loop devices over the source (hard link, bind mount, offset, partition) are the source"

# The target in use through another loop device over its file: a partition-offset loop that is
# mounted. Named as the image or as its own (unmounted) loop device, the target is refused.
mkfs.ext4 -q -F -E offset=9437184 "$TMP/tgt.img" 16M
T0=$(sha256sum <"$TMP/tgt.img")
MNT=$(losetup -f --show -o 9437184 --sizelimit 16777216 "$TMP/tgt.img") || skip "losetup failed"
LOOPS+=("$MNT")
mkdir -p "$TMP/mnt"
mount -o ro "$MNT" "$TMP/mnt" || skip "cannot mount $MNT"
refused "in use" "$TMP/tgt.img"
contains "$MNT"
TL=$(losetup -f --show "$TMP/tgt.img") || skip "losetup failed"
LOOPS+=("$TL")
refused "in use" "$TL"
contains "mounted"
[ "$(sha256sum <"$TMP/tgt.img")" = "$T0" ] || fail "the target in use was written"
umount "$TMP/mnt"
# open in another process, not mounted
sleep 60 <"$MNT" &
holder=$!
holds() { [ "$(readlink "/proc/$holder/fd/0" 2>/dev/null)" = "$MNT" ]; }
wait_for 20 holds || fail "the holder ($holder) did not open $MNT"
refused "in use" "$TMP/tgt.img"
contains "open in process $holder"
kill $holder 2>/dev/null || true
wait $holder 2>/dev/null || true
[ "$(sha256sum <"$TMP/tgt.img")" = "$T0" ] || fail "the target in use was written"
ok "a target in use through another loop device over its file is refused"
