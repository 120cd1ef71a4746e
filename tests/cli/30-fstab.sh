#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The fstab trap: an fstab (or crypttab) naming UUID=/PARTUUID=/LABEL= that do not resolve here
# (libblkid) is not restored: the current file stays, the old one goes to fstab.pre-swap, and
# each unresolved line is listed with what breaks at boot. With the seed image's filesystems
# attached (loop + partx), the same identifiers resolve and the file is restored.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/fixtures/backup-lib.sh"

D="$TMP/demo"
demo_root "$D"
mkdir -p "$STATE"
T="$TMP/b.tar.gz"
run 0 "$SWAPTOOL" --state "$STATE" backup --root "$D" --home /home/nv --out "$T"
blkid -U 0d6c4e57-7e41-493d-a531-809dda000002 >/dev/null 2>&1 &&
	skip "the seed image's UUID already resolves on this machine (a leaked loop device?)"

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
jeq '.fstab[0].unresolved[0].value' 0d6c4e57-7e41-493d-a531-809dda000002
jeq '.fstab[0].unresolved[0].target' /
jeq '.fstab[0].unresolved[1].line' 3
jeq '.fstab[0].unresolved[1].value' D6C4-0001
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
contains "line 2: UUID=0d6c4e57-7e41-493d-a531-809dda000002"
contains "the root filesystem is not found"
contains "line 3: UUID=D6C4-0001"
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

# ---- with the seed image attached, the same identifiers resolve ----
[ -n "${MKDISK:-}" ] || skip "MKDISK not set"
losetup -f >/dev/null 2>&1 && command -v partx >/dev/null || skip "no loop devices or partx"
"$MKDISK" scaled "$TMP/src.img" >/dev/null
L=$(losetup -f --show "$TMP/src.img") || skip "losetup failed"
LOOPS+=("$L")
partx -a "$L" 2>/dev/null || true
blkid -U 0d6c4e57-7e41-493d-a531-809dda000002 >/dev/null 2>&1 || skip "partitions of $L not visible to blkid"
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
PARTUUID=d6c40002-7e41-493d-a531-809dda000002 / ext4 defaults 0 1
LABEL=EFI /boot/efi vfat umask=0077 0 1
UUID=00000000-1111-2222-3333-444444444444 /data ext4 defaults,nofail 0 2
EOT
run 0 "$SWAPTOOL" --state "$STATE" backup --root "$D" --home /home/nv --out "$TMP/p.tar.gz"
run 0 "$SWAPTOOL" --json --state "$STATE" restore "$TMP/p.tar.gz" --root "$R" --dry-run
jeq '.fstab[0].identifiers' 3
jeq '.fstab[0].unresolved | length' 1
jeq '.fstab[0].unresolved[0].line' 3
jeq '.fstab[0].unresolved[0].breaks' "'/data' is not mounted (nofail: boot continues without it)"
ok "identifiers of the attached seed image resolve (UUID, PARTUUID, LABEL): fstab restored"
