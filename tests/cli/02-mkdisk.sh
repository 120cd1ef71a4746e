#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The disk-image fixture generator: exact geometry, clean filesystems, sparse cost, checked by independent tools.
. "$SRCDIR/tests/lib.sh"
: "${MKDISK:?run through meson test (tests/run)}"
export PATH="$PATH:/usr/sbin:/sbin"
for t in sgdisk sfdisk fdisk e2fsck resize2fs debugfs dumpe2fs blkid mkfs.vfat fsck.vfat mkswap ssh-keygen jq; do
	command -v "$t" >/dev/null || skip "'$t' missing (scripts/install-deps)"
done

# Offsets of the partitions' filesystems, from the generator's own JSON.
fsoff() { printf '%s' "$OUT" | jq -r ".partition_table.partitions[$1].fs.offset_bytes"; }
# e2fsck -fn must be clean (exit 0) on IMG at OFFSET; its summary stays in $TMP/fsck.
fsck_clean() {
	e2fsck -fn "$1?offset=$2" >"$TMP/fsck" 2>&1 || { cat "$TMP/fsck" >&2; fail "e2fsck -fn '$1?offset=$2' not clean"; }
}
# used blocks as the last e2fsck counted them ("N/M blocks").
fsck_used() { sed -n 's|.* \([0-9]*\)/[0-9]* blocks$|\1|p' "$TMP/fsck"; }
# within PCT percent: within A B PCT
within() { awk -v a="$1" -v b="$2" -v p="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= b * p / 100) }'; }

# ---- arguments: exit 2 ----
run 2 "$MKDISK"
contains "usage: mkdisk"
run 0 "$MKDISK" --help
contains "variants: incident"
run 2 "$MKDISK" incident
run 2 "$MKDISK" frobnicate "$TMP/x.img"
contains "unknown variant"
run 2 "$MKDISK" scaled "$TMP/x.img" --lba-size 1024
contains "--lba-size must be 512 or 4096"
run 2 "$MKDISK" scaled "$TMP/x.img" --written lots
run 2 "$MKDISK" scaled "$TMP/x.img" --home relative/nv
run 2 "$MKDISK" scaled "$TMP/x.img" --home /home/../etc
run 2 "$MKDISK" scaled "$TMP/x.img" extra
run 2 "$MKDISK" scaled "$TMP/x.img" --bogus
[ ! -e "$TMP/x.img" ] || fail "a usage error created the image"
# never anything but a regular file: a directory, a device
run 3 "$MKDISK" scaled "$TMP"
contains "not a regular file"
run 3 "$MKDISK" scaled /dev/null
contains "not a regular file"
# a tool that fails: exit 3 and no half-made image left behind
mkdir "$TMP/fake"
printf '#!/bin/sh\necho "mke2fs: simulated failure" >&2\nexit 1\n' >"$TMP/fake/mke2fs"
chmod +x "$TMP/fake/mke2fs"
run 3 env PATH="$TMP/fake:$PATH" "$MKDISK" scaled "$TMP/x.img"
contains "simulated failure"
contains "'mke2fs' failed (status 1)"
[ ! -e "$TMP/x.img" ] || fail "a failed run left its image behind"
ok "usage errors exit 2, non-regular OUT is refused with 3, a failed run removes its image"

# ---- incident: the 1.86 TiB drive, sparse ----
IMG="$TMP/incident.img"
t0=$(date +%s%N)
run 0 "$MKDISK" incident "$IMG"
t1=$(date +%s%N)
echo "$OUT" >"$TMP/incident.json"
jeq .size_bytes 2048408248320
jeq .lba_size 512
jeq .lba_count 4000797360
jeq .partition_table.type gpt
jeq .partition_table.first_usable_lba 34
jeq .partition_table.last_usable_lba 4000797326
jeq .partition_table.backup_header_lba 4000797359
jeq '.partition_table.partitions | length' 2
jeq '.partition_table.partitions[0] | "\(.start_lba) \(.end_lba) \(.type_guid) \(.fs.type) \(.fs.version)"' \
	"2048 1050623 C12A7328-F81F-11D2-BA4B-00A0C93EC93B vfat FAT32"
jeq '.partition_table.partitions[1] | "\(.start_lba) \(.end_lba) \(.type_guid) \(.fs.type)"' \
	"1050624 4000797326 0FC63DAF-8483-4772-8E79-3D69D8477DE4 ext4"
apparent=$(stat -c %s "$IMG")
real_kib=$(du -k "$IMG" | cut -f1)
[ "$apparent" = 2048408248320 ] || fail "apparent size $apparent"
# ~75 MB here: bitmaps, group descriptors, extent trees; never the 1.33 TiB
[ "$real_kib" -lt $((250 * 1024)) ] || fail "incident image costs $real_kib KiB of real disk"
echo "# incident: $(( (t1 - t0) / 1000000 )) ms, $(du -h "$IMG" | cut -f1) real of $(du -h --apparent-size "$IMG" | cut -f1)"

# the partition table, by sgdisk and sfdisk
v=$(sgdisk -v "$IMG" 2>&1) || fail "sgdisk -v failed: $v"
case "$v" in *"No problems found"*) ;; *) fail "sgdisk -v: $v";; esac
sfdisk -d "$IMG" >"$TMP/sfd" 2>&1 || fail "sfdisk -d failed"
grep -q '^label: gpt$' "$TMP/sfd" || fail "sfdisk: not gpt"
grep -q '^label-id: D6C40000-7E41-493D-A531-809DDA000000$' "$TMP/sfd" || fail "sfdisk: disk GUID"
grep -q '^first-lba: 34$' "$TMP/sfd" || fail "sfdisk: first-lba"
grep -q '^last-lba: 4000797326$' "$TMP/sfd" || fail "sfdisk: last-lba"
grep -q 'img1 : start= *2048, size= *1048576, type=C12A7328-F81F-11D2-BA4B-00A0C93EC93B, uuid=D6C40001-7E41-493D-A531-809DDA000001, name="EFI System"' "$TMP/sfd" || { cat "$TMP/sfd"; fail "sfdisk: p1"; }
grep -q 'img2 : start= *1050624, size= *3999746703, type=0FC63DAF-8483-4772-8E79-3D69D8477DE4, uuid=D6C40002-7E41-493D-A531-809DDA000002, name="Linux filesystem"' "$TMP/sfd" || { cat "$TMP/sfd"; fail "sfdisk: p2"; }

# the filesystems, by e2fsck, resize2fs, blkid, dumpe2fs, debugfs
P1=$(fsoff 0)
P2=$(fsoff 1)
[ "$P1" = 1048576 ] && [ "$P2" = 537919488 ] || fail "offsets $P1 $P2"
fsck_clean "$IMG" "$P2"
min=$(resize2fs -P "$IMG?offset=$P2" 2>/dev/null | sed -n 's/^Estimated minimum size of the filesystem: //p')
[ -n "$min" ] || fail "resize2fs -P gave no estimate"
jeq '.partition_table.partitions[1].fs.block_count' 499968337
[ "$min" -lt 499968337 ] || fail "resize2fs -P minimum $min is not below the size"
b=$(blkid -p -O "$P2" "$IMG")
case "$b" in *'UUID="0d6c4e57-7e41-493d-a531-809dda000002"'*'TYPE="ext4"'*) ;; *) fail "blkid p2: $b";; esac
b=$(blkid -p -O "$P1" "$IMG")
case "$b" in *'UUID="D6C4-0001"'*'VERSION="FAT32"'*'TYPE="vfat"'*) ;; *) fail "blkid p1: $b";; esac
free=$(debugfs -R 'stats -h' "$IMG?offset=$P2" 2>/dev/null | sed -n 's/^Free blocks: *//p')
jeq '.partition_table.partitions[1].fs.free_blocks' "$free"
ok "incident: GPT, FAT32 and ext4 at the exact LBAs, clean"

# the content: modes, owners, real bytes (sha256 from the JSON), the allocation totals
dbg() { debugfs -R "$1" "$IMG?offset=$P2" 2>/dev/null; }
st=$(dbg 'stat /home/nv/.config/flare/orbit/controller.key')
case "$st" in *"Mode:  0600"*) ;; *) fail "controller.key mode: $st";; esac
case "$st" in *"User:  1000   Group:  1000"*) ;; *) fail "controller.key owner: $st";; esac
# one debugfs run dumps every real file (each run re-reads the 1.86 TiB fs's metadata)
mkdir "$TMP/dump"
printf '%s' "$OUT" | jq -r '.files | to_entries[] | "dump \(.value.path) '"$TMP"'/dump/\(.key)"' >"$TMP/cmds"
debugfs -f "$TMP/cmds" "$IMG?offset=$P2" >/dev/null 2>&1
n=0
while read -r i path sha; do
	got=$(sha256sum <"$TMP/dump/$i" | cut -d' ' -f1)
	[ "$got" = "$sha" ] || fail "$path: sha256 $got, JSON says $sha"
	n=$((n + 1))
done < <(printf '%s' "$OUT" | jq -r '.files | to_entries[] | "\(.key) \(.value.path) \(.value.sha256)"')
[ "$n" -ge 20 ] || fail "only $n real files"
jeq '[.files[] | select(.path | startswith("/home/nv/data/"))] | map(.size_bytes) | add' 8388608
jeq '.written_bytes >= 8388608' true
# ~10 KB of irreplaceable config
cfg=$(printf '%s' "$OUT" | jq '.directories[] | select(.path == "/home/nv/.config/flare") | .bytes')
[ "$cfg" -ge 8000 ] && [ "$cfg" -le 12000 ] || fail "~/.config/flare holds $cfg bytes"
dbg 'cat /etc/fstab' >"$TMP/fstab"
grep -q '^UUID=0d6c4e57-7e41-493d-a531-809dda000002[[:space:]]*/[[:space:]]' "$TMP/fstab" || fail "fstab: /"
grep -q '^UUID=D6C4-0001[[:space:]]*/boot/efi[[:space:]]' "$TMP/fstab" || fail "fstab: /boot/efi"
dbg 'cat /etc/hosts' | grepq 'dgx4' || fail "hosts lacks dgx4"
dbg 'stat /etc/netplan/01-netcfg.yaml' | grepq 'Mode:  0600' || fail "netplan mode"
# the key pair is a real one: ssh-keygen derives the .pub from the private file
cp "$TMP/dump/$(printf '%s' "$OUT" | jq '.files | to_entries[] | select(.value.path == "/home/nv/.ssh/id_ed25519") | .key')" "$TMP/id"
chmod 600 "$TMP/id"
[ "$(ssh-keygen -y -f "$TMP/id" | cut -d' ' -f1,2)" = "$(cut -d' ' -f1,2 "$TMP/dump/$(printf '%s' "$OUT" |
	jq '.files | to_entries[] | select(.value.path == "/home/nv/.ssh/id_ed25519.pub") | .key')")" ] ||
	fail "id_ed25519 does not match id_ed25519.pub"
# the incident's directory sizes, to the byte
for d in "/home/nv/flare-pkgs 477000000000" "/home/nv/.cache/flare 738000000000"; do
	set -- $d
	jeq ".directories[] | select(.path == \"$1\") | .bytes" "$2"
done
jeq '.sparse_files[] | select(.path == "/home/nv/.cache/flare/packages/pkg/weights/engram-0-weights.safetensors") | .size_bytes' 98000000000
# 1.33 TiB allocated: JSON against docs/incident.md (1 %), and against the filesystem's own block counts
alloc=$(printf '%s' "$OUT" | jq .allocated_bytes)
within "$alloc" 1462000000000 1 || fail "allocated $alloc is not 1.33 TiB"
st=$(dbg 'stat /home/nv/.cache/flare/packages/pkg/weights/engram-0-weights.safetensors')
case "$st" in *"Size: 98000000000"*) ;; *) fail "engram size: $st";; esac
bc=$(printf '%s' "$st" | sed -n 's/.*Blockcount: \([0-9]*\).*/\1/p')
within $((bc * 512)) 98000000000 1 || fail "engram allocation $((bc * 512))"
used=$(fsck_used)
[ $((used * 4096)) = "$(printf '%s' "$OUT" | jq '.partition_table.partitions[1].fs.used_bytes')" ] || fail "used blocks $used"
# data + metadata (inode tables ~32 GB, journal) is what e2fsck counts; the data is >= 95 % of it
within "$alloc" $((used * 4096)) 5 || fail "allocated $alloc vs used $((used * 4096))"
ok "incident: content, modes, owners, sha256, 1.33 TiB allocated"
rm -f "$IMG"

# ---- corrupt-primary: primary header CRC fails, backup good ----
IMG="$TMP/corrupt.img"
run 0 "$MKDISK" corrupt-primary "$IMG"
jeq .partition_table.primary_header_damaged true
v=$(sgdisk -v "$IMG" 2>&1 || true)
case "$v" in *"Main header: ERROR"*"Backup header: OK"*"Main partition table: OK"*"Backup partition table: OK"*) ;;
*) fail "sgdisk -v on corrupt-primary: $v";; esac
case "$v" in *"Invalid CRC on main header"*) ;; *) fail "sgdisk does not see the bad CRC: $v";; esac
blkid -p -O "$(fsoff 1)" "$IMG" | grepq 'TYPE="ext4"' || fail "p2 lost on corrupt-primary"
ok "corrupt-primary: sgdisk reports the main header, the backup is good"
rm -f "$IMG"

# ---- mbr: DOS table, p2 to the last LBA ----
IMG="$TMP/mbr.img"
run 0 "$MKDISK" mbr "$IMG"
jeq .partition_table.type dos
sfdisk -d "$IMG" >"$TMP/sfd" 2>&1 || fail "sfdisk -d mbr"
grep -q '^label: dos$' "$TMP/sfd" || fail "mbr: label"
grep -q 'img1 : start= *2048, size= *1048576, type=ef$' "$TMP/sfd" || { cat "$TMP/sfd"; fail "mbr: p1"; }
grep -q 'img2 : start= *1050624, size= *3999746736, type=83$' "$TMP/sfd" || { cat "$TMP/sfd"; fail "mbr: p2"; }
jeq '.partition_table.partitions[1].end_lba' 4000797359
# the same content as incident's p2 (fsck'd there): the superblock is enough here
debugfs -R 'stats -h' "$IMG?offset=$(fsoff 1)" 2>/dev/null | grepq '^Filesystem state: *clean$' || fail "mbr: p2 not clean"
blkid -p -O "$(fsoff 1)" "$IMG" | grepq 'UUID="0d6c4e57-7e41-493d-a531-809dda000002"' || fail "mbr: p2 UUID"
blkid -p -O "$(fsoff 0)" "$IMG" | grepq 'TYPE="vfat"' || fail "mbr: p1 FAT"
ok "mbr: 0xEF + 0x83 to LBA 4,000,797,359"
rm -f "$IMG"

# ---- none: ext4 on the whole disk ----
IMG="$TMP/none.img"
run 0 "$MKDISK" none "$IMG"
jeq .partition_table null
jeq .filesystem.offset_bytes 0
b=$(blkid -p "$IMG")
case "$b" in *'UUID="0d6c4e57-7e41-493d-a531-809dda000000"'*'TYPE="ext4"'*) ;; *) fail "none: $b";; esac
case "$b" in *PTTYPE*) fail "none has a partition table: $b";; esac
# written by the same code as incident's p2 (fsck'd there): the superblock is enough here
dumpe2fs -h "$IMG" 2>/dev/null | grepq '^Filesystem state: *clean$' || fail "none: not clean"
jeq .filesystem.block_count 500099670
ok "none: a whole-disk ext4"
rm -f "$IMG"

# ---- not-ext4: p2 is swap ----
IMG="$TMP/notext4.img"
run 0 "$MKDISK" not-ext4 "$IMG"
jeq '.partition_table.partitions[1].fs.type' swap
b=$(blkid -p -O "$(fsoff 1)" "$IMG" || true)
case "$b" in *'TYPE="swap"'*) ;; *) fail "not-ext4 p2: $b";; esac
if e2fsck -fn "$IMG?offset=$(fsoff 1)" >/dev/null 2>&1; then fail "e2fsck accepted the swap partition"; fi
ok "not-ext4: p2 holds swap, no ext superblock"
rm -f "$IMG"

# ---- three: p2 crosses the target's end (3,907,029,134) ----
IMG="$TMP/three.img"
run 0 "$MKDISK" three "$IMG"
sfdisk -d "$IMG" >"$TMP/sfd" 2>&1 || fail "sfdisk -d three"
grep -q 'img2 : start= *1050624, size= *3948949377,' "$TMP/sfd" || { cat "$TMP/sfd"; fail "three: p2"; }
grep -q 'img3 : start= *3950000001, size= *50797326,' "$TMP/sfd" || { cat "$TMP/sfd"; fail "three: p3"; }
jeq '.partition_table.partitions[1].end_lba' 3950000000
sgdisk -v "$IMG" 2>&1 | grepq "No problems found" || fail "sgdisk -v three"
fsck_clean "$IMG" "$(fsoff 2)"
blkid -p -O "$(fsoff 1)" "$IMG" | grepq 'UUID="0d6c4e57-7e41-493d-a531-809dda000002"' || fail "three: p2 fs"
ok "three: p2 ends at 3,950,000,000, p3 after it"
rm -f "$IMG"

# ---- toolarge: the data alone exceeds the 2,000,398,934,016-byte target ----
IMG="$TMP/toolarge.img"
run 0 "$MKDISK" toolarge "$IMG"
alloc=$(printf '%s' "$OUT" | jq .allocated_bytes)
[ "$alloc" -gt 2000398934016 ] || fail "toolarge allocates only $alloc"
min=$(resize2fs -P "$IMG?offset=$(fsoff 1)" 2>/dev/null | sed -n 's/^Estimated minimum size of the filesystem: //p')
# the target's largest p2: LBA 1,050,624 to its last usable LBA 3,907,029,134
[ $((min * 4096)) -gt $(((3907029134 - 1050624 + 1) * 512)) ] || fail "toolarge would fit: min $min blocks"
ok "toolarge: $alloc bytes allocated, minimum $min blocks: no fs clone"
rm -f "$IMG"

# ---- scaled: small and fast; deterministic; FAT checked by fsck.vfat ----
IMG="$TMP/scaled.img"
run 0 "$MKDISK" scaled "$IMG"
jeq .size_bytes 4294967296
jeq '.partition_table.partitions[0] | "\(.start_lba) \(.end_lba) \(.fs.version)"' "2048 133119 FAT16"
jeq '.partition_table.partitions[1] | "\(.start_lba) \(.end_lba)"' "133120 8388574"
first=$(printf '%s' "$OUT" | jq -S 'del(.path)')
alloc=$(printf '%s' "$OUT" | jq .allocated_bytes)
within "$alloc" 1462000000 1 || fail "scaled allocates $alloc"
sgdisk -v "$IMG" 2>&1 | grepq "No problems found" || fail "sgdisk -v scaled"
fsck_clean "$IMG" "$(fsoff 1)"
resize2fs -P "$IMG?offset=$(fsoff 1)" >/dev/null 2>&1 || fail "resize2fs -P scaled"
dd if="$IMG" of="$TMP/esp" bs=1M skip=1 count=64 status=none
fsck.vfat -n "$TMP/esp" >"$TMP/vf" 2>&1 || { cat "$TMP/vf"; fail "fsck.vfat on the ESP"; }
run 0 "$MKDISK" scaled "$TMP/scaled2.img"
[ "$(printf '%s' "$OUT" | jq -S 'del(.path)')" = "$first" ] || fail "two runs differ"
ok "scaled: 4 GiB, FAT16 + ext4 clean, same JSON on every run"
rm -f "$IMG" "$TMP/scaled2.img" "$TMP/esp"

# ---- --home and --written ----
IMG="$TMP/alice.img"
run 0 "$MKDISK" scaled "$IMG" --home /home/alice --written 1
jeq '[.files[] | select(.path | startswith("/home/alice/data/"))] | map(.size_bytes) | add' 1048576
jeq '[.files[] | select(.path | startswith("/home/nv"))] | length' 0
debugfs -R 'stat /home/alice/.config/flare/orbit/controller.key' "$IMG?offset=$(fsoff 1)" 2>/dev/null |
	grep -q 'User:  1000' || fail "--home: controller.key"
run 0 "$MKDISK" scaled "$IMG" --written 0
jeq '[.files[] | select(.path | startswith("/home/nv/data/"))] | length' 0
ok "--home moves the user's tree, --written sets the real data"
rm -f "$IMG"

# ---- --lba-size 4096: entries at LBA 2..5, first usable 6; read by fdisk -b 4096 ----
IMG="$TMP/k.img"
run 0 "$MKDISK" incident "$IMG" --lba-size 4096
jeq .lba_count 500099670
jeq .partition_table.first_usable_lba 6
jeq .partition_table.last_usable_lba 500099664
jeq '.partition_table.partitions[0] | "\(.start_lba) \(.end_lba)"' "256 131327"
jeq '.partition_table.partitions[1] | "\(.start_lba) \(.end_lba)"' "131328 500099664"
fdisk -b 4096 -l -x "$IMG" >"$TMP/fd" 2>&1 || fail "fdisk -b 4096"
for l in "First usable LBA: 6" "Last usable LBA: 500099664" "Alternative LBA: 500099669" \
	"Partition entries starting LBA: 2" "Partition entries ending LBA: 5"; do
	grep -q "^$l\$" "$TMP/fd" || { cat "$TMP/fd"; fail "fdisk -b 4096: no '$l'"; }
done
grep -Eq 'k\.img1 +256 +131327 ' "$TMP/fd" || fail "4096: p1"
grep -Eq 'k\.img2 +131328 +500099664 ' "$TMP/fd" || fail "4096: p2"
blkid -p -O 1048576 "$IMG" | grepq 'UUID="D6C4-0001"' || fail "4096: ESP not at 1 MiB"
blkid -p -O "$(fsoff 1)" "$IMG" | grepq 'TYPE="ext4"' || fail "4096: p2 not ext4"
[ "$(fsoff 1)" = $((131328 * 4096)) ] || fail "4096: p2 offset"
debugfs -R 'stats -h' "$IMG?offset=$(fsoff 1)" 2>/dev/null | grepq '^Filesystem state: *clean$' || fail "4096: p2 not clean"
# sgdisk reads 4096-byte LBAs only from a device: a read-only loop device when we may
if [ "$(id -u)" = 0 ] && losetup -f >/dev/null 2>&1; then
	# a kernel without loop sector sizes (LOOP_SET_BLOCK_SIZE, 4.14) cannot do this: not a failure
	if dev=$(losetup -f --show -r --sector-size 4096 "$IMG" 2>"$TMP/losetup.err"); then
		LOOPS+=("$dev")
		sgdisk -v "$dev" 2>&1 | grepq "No problems found" || fail "sgdisk -v on the 4096-byte loop device"
		losetup -d "$dev"
		LOOPS=()
		ok "4096: sgdisk -v clean on a 4096-byte loop device"
	else
		echo "# 4096: no 4096-byte loop device here ($(cat "$TMP/losetup.err")): sgdisk check left to fdisk -b 4096"
	fi
else
	echo "# 4096: no loop device here, sgdisk check left to fdisk -b 4096"
fi
rm -f "$IMG"
# the whole check on the small one: e2fsck, and fsck.vfat on a FAT with 4096-byte sectors
run 0 "$MKDISK" scaled "$IMG" --lba-size 4096
jeq '.partition_table.partitions[0] | "\(.start_lba) \(.end_lba)"' "256 16639"
fsck_clean "$IMG" "$(fsoff 1)"
dd if="$IMG" of="$TMP/esp" bs=1M skip=1 count=64 status=none
fsck.vfat -n "$TMP/esp" >"$TMP/vf" 2>&1 || { cat "$TMP/vf"; fail "fsck.vfat on the 4096-byte ESP"; }
ok "--lba-size 4096: GPT at 4096-byte LBAs, 1 MiB aligned, clean FAT and ext4"
rm -f "$IMG" "$TMP/esp"
