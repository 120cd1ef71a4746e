#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The fstab trap: an fstab (or crypttab) naming UUID=/PARTUUID=/LABEL= that do not resolve here
# (libblkid) is not restored: the current file stays, the old one goes to fstab.pre-swap, and
# each unresolved line is listed with what breaks at boot. With a disk holding those filesystems
# attached (loop + partx), the same identifiers resolve and the file is restored.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/fixtures/backup-lib.sh"

# Identifiers of this run only: other tests attach the seed image (mkdisk) at the same time,
# so its UUIDs may or may not resolve here; these cannot, until this test attaches its image.
rnd() { od -An -N"$1" -tx1 /dev/urandom | tr -d ' \n'; }
RU=$(cat /proc/sys/kernel/random/uuid)
VOL=$(rnd 4 | tr a-f A-F)
EV="${VOL:0:4}-${VOL:4:4}"
PU=$(cat /proc/sys/kernel/random/uuid)
LB="SWT$(rnd 3 | tr a-f A-F)"
D="$TMP/demo"
FSTAB_ROOT_UUID=$RU FSTAB_EFI_UUID=$EV "$SRCDIR/tests/fixtures/make-demo-root.sh" "$D" >/dev/null
mkdir -p "$STATE"
T="$TMP/b.tar.gz"
run 0 "$SWAPTOOL" --state "$STATE" backup --root "$D" --home /home/nv --out "$T"

# ---- the trap fires: a fresh install's fstab names other UUIDs ----
F="$TMP/fresh"
mkdir -p "$F/etc"
printf '# fresh DGX OS install on the MP600 Mini\nUUID=%s / ext4 defaults 0 1\n' "$(cat /proc/sys/kernel/random/uuid)" >"$F/etc/fstab"
cur=$(sha256sum <"$F/etc/fstab")
run 0 "$SWAPTOOL" --state "$STATE" restore "$T" --root "$F" --dry-run
contains "/etc/fstab kept"
[ ! -e "$F/etc/fstab.pre-swap" ] || fail "dry run wrote fstab.pre-swap"
# exit 1: verify then finds that the current fstab's own UUID does not resolve here either
run 1 "$SWAPTOOL" --json --state "$STATE" restore "$T" --root "$F"
jeq '[.verify.checks[] | select(.id == "fstab-ids")][0].unresolved[0].line' 2
jeq '.fstab[0].path' etc/fstab
jeq '.fstab[0].kept_as' etc/fstab.pre-swap
jeq '.fstab[0].unresolved | length' 2
jeq '.fstab[0].unresolved[0].line' 2
jeq '.fstab[0].unresolved[0].tag' UUID
jeq '.fstab[0].unresolved[0].value' "$RU"
jeq '.fstab[0].unresolved[0].target' /
jeq '.fstab[0].unresolved[1].line' 3
jeq '.fstab[0].unresolved[1].value' "$EV"
jeq '.fstab[0].unresolved[1].target' /boot/efi
jeq '[.checks[] | select(.id == "fstab")][0].status' warn
[ "$(sha256sum <"$F/etc/fstab")" = "$cur" ] || fail "the current fstab was replaced"
cmp -s "$D/etc/fstab" "$F/etc/fstab.pre-swap" || fail "fstab.pre-swap is not the old fstab bit for bit"
jeq '[.verify.checks[] | select(.id == "entries-content")][0].status' pass
ok "trap: current fstab kept, old one in fstab.pre-swap, 2 lines reported"

# the human output lists each line with what breaks at boot
G="$TMP/fresh2"
mkdir -p "$G/etc"
cp "$F/etc/fstab" "$G/etc/fstab"
run 1 "$SWAPTOOL" --state "$STATE" restore "$T" --root "$G"
contains "line 2: UUID=$RU"
contains "the root filesystem is not found"
contains "line 3: UUID=$EV"
contains "'/boot/efi' is not mounted"
ok "human output lists each unresolved line"

# verify flags identifiers that do not resolve in the live fstab
cp "$D/etc/fstab" "$G/etc/fstab"
run 1 "$SWAPTOOL" --json --state "$STATE" verify "$T" --root "$G"
jeq '[.checks[] | select(.id == "fstab-ids")][0].status' fail
jeq '[.checks[] | select(.id == "fstab-ids")][0].unresolved | length' 2
ok "verify fails on unresolved fstab identifiers"

# ---- crypttab through the profile ----
printf 'cryptdata UUID=%s none luks,discard\n' "$(cat /proc/sys/kernel/random/uuid)" >"$D/etc/crypttab"
cat >"$TMP/profile.ini" <<EOT
[backup]
path = ~/.config/flare/
path = /etc/fstab
path = /etc/crypttab
path = /etc/hosts
fstab = /etc/fstab
fstab = /etc/crypttab
EOT
run 0 "$SWAPTOOL" --profile "$TMP/profile.ini" --state "$STATE" backup --root "$D" --home /home/nv --out "$TMP/c.tar.gz"
C="$TMP/fresh3"
mkdir -p "$C/etc"
run 0 "$SWAPTOOL" --json --profile "$TMP/profile.ini" --state "$STATE" restore "$TMP/c.tar.gz" --root "$C"
jeq '[.fstab[] | select(.path == "etc/crypttab")][0].kept_as' etc/crypttab.pre-swap
jeq '[.fstab[] | select(.path == "etc/crypttab")][0].unresolved[0].target' cryptdata
contains "is not unlocked"
[ ! -e "$C/etc/crypttab" ] || fail "crypttab restored although its device is not here"
ok "crypttab: kept, old one in crypttab.pre-swap"

# ---- with a disk holding these filesystems attached, the same identifiers resolve ----
for t in sgdisk mkfs.vfat mkfs.ext4 partx; do command -v $t >/dev/null || skip "'$t' missing"; done
losetup -f >/dev/null 2>&1 || skip "no loop devices"
truncate -s 64M "$TMP/disk.img"
sgdisk -o -n1:2048:+16M -t1:ef00 -n2:0:0 -t2:8300 -u2:"$PU" "$TMP/disk.img" >/dev/null
L=$(losetup -f --show "$TMP/disk.img") || skip "losetup failed"
LOOPS+=("$L")
partx -a "$L" 2>/dev/null || true
[ -b "${L}p2" ] || skip "no partition nodes for $L"
mkfs.vfat -i "$VOL" -n "$LB" "${L}p1" >/dev/null
mkfs.ext4 -q -U "$RU" "${L}p2"
blkid -U "$RU" >/dev/null 2>&1 || skip "partitions of $L not visible to blkid"
R="$TMP/fresh4"
mkdir -p "$R/etc"
printf '# fresh\n' >"$R/etc/fstab"
run 0 "$SWAPTOOL" --json --state "$STATE" restore "$T" --root "$R"
jeq '.fstab[0].kept_as' null
jeq '.fstab[0].identifiers' 2
cmp -s "$D/etc/fstab" "$R/etc/fstab" || fail "fstab not restored although it resolves"
[ ! -e "$R/etc/fstab.pre-swap" ] || fail "fstab.pre-swap written although it resolves"
jeq '[.verify.checks[] | select(.id == "fstab-ids")][0].status' pass
# PARTUUID= and LABEL= resolve too; a nofail line that does not is reported as such
cat >"$D/etc/fstab" <<EOT
PARTUUID=$PU / ext4 defaults 0 1
LABEL=$LB /boot/efi vfat umask=0077 0 1
UUID=$(cat /proc/sys/kernel/random/uuid) /data ext4 defaults,nofail 0 2
EOT
run 0 "$SWAPTOOL" --state "$STATE" backup --root "$D" --home /home/nv --out "$TMP/p.tar.gz"
run 0 "$SWAPTOOL" --json --state "$STATE" restore "$TMP/p.tar.gz" --root "$R" --dry-run
jeq '.fstab[0].identifiers' 3
jeq '.fstab[0].unresolved | length' 1
jeq '.fstab[0].unresolved[0].line' 3
jeq '.fstab[0].unresolved[0].breaks' "'/data' is not mounted (nofail: boot continues without it)"
ok "identifiers of the attached disk resolve (UUID, PARTUUID, LABEL): fstab restored"
