#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# restore: backup then restore into a fresh root reproduces every file bit for bit (independent
# walk: sha256sum, stat), owners by name (--map-user, the root's own /etc/passwd), dry run,
# idempotence, undo back to the state before, step records brought back, then verify.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/fixtures/backup-lib.sh"

D="$TMP/demo"
# the fstab names the mkdisk image attached below, so that it resolves (backup-lib.sh gives others ids of their own)
export FSTAB_ROOT_UUID=0d6c4e57-7e41-493d-a531-809dda000002 FSTAB_EFI_UUID=D6C4-0001
demo_root "$D"
# owners are named by the root's own etc/passwd and etc/group: this demo root names them as this host
cp /etc/passwd /etc/group "$D/etc/"
mkdir -p "$STATE"
printf '{"schema":"swaptool/1","step":"preflight","verdict":"warn","checks":[]}\n' >"$STATE/preflight.json"
T="$TMP/b.tar.gz"
run 0 "$SWAPTOOL" --state "$STATE" backup --root "$D" --home /home/nv --out "$T"

# the demo fstab names the seed-scale image's filesystems; attach one so they resolve here
resolved=no
if [ -n "${MKDISK:-}" ] && losetup -f >/dev/null 2>&1 && command -v partx >/dev/null; then
	"$MKDISK" scaled "$TMP/src.img" >/dev/null
	L=$(losetup -f --show "$TMP/src.img") || skip "losetup failed"
	LOOPS+=("$L")
	partx -a "$L" 2>/dev/null || true
	# this test's own partition, not whichever device another test has attached with that UUID
	[ "$(blkid -p -o value -s UUID "${L}p2" 2>/dev/null)" = 0d6c4e57-7e41-493d-a531-809dda000002 ] && resolved=yes
fi

# ---- dry run: says what it would do, writes nothing ----
F="$TMP/fresh"
mkdir -p "$F"
S2="$TMP/state2"
run 0 "$SWAPTOOL" --json --state "$S2" restore "$T" --root "$F" --dry-run
jeq .dry_run true
jeq '[.actions[] | select(.action == "create")] | length' "$(printf '%s' "$(manifest_of "$T")" | jq '.entries | length')"
[ -z "$(ls -A "$F")" ] || fail "dry run wrote into the root"
[ ! -e "$S2/preflight.json" ] || fail "dry run brought back the step records"
ok "dry run writes nothing"

# ---- the round trip ----
run 0 "$SWAPTOOL" --json --state "$S2" restore "$T" --root "$F"
jeq .counts.create 23
jeq '.state_restored | join(",")' preflight.json
cmp -s "$STATE/preflight.json" "$S2/preflight.json" || fail "step record not brought back"
[ -f "$S2/verify.json" ] || fail "restore did not run verify"
jeq .verify.verdict pass
UNDO1=$(printf '%s' "$OUT" | jq -r .undo.path)
[ -f "$UNDO1" ] || fail "no undo tarball"
# independent walk of both trees: sockets and FIFOs are not backed up
want=$(snapshot "$D" | grep -v -e ' socket$' -e ' fifo$' -e '^./etc/passwd ' -e '^./etc/group ')
if [ "$resolved" = yes ]; then
	jeq '.fstab[0].kept_as' null
	got=$(snapshot "$F")
else
	jeq '.fstab[0].kept_as' etc/fstab.pre-swap
	got=$(snapshot "$F" | sed 's|^\./etc/fstab\.pre-swap |./etc/fstab |')
fi
[ "$want" = "$got" ] || { diff <(echo "$want") <(echo "$got") >&2; fail "restored tree differs from the original"; }
getfacl -p "$F/home/nv/.config/flare/config.toml" 2>/dev/null | grepq '^user:daemon:r--' || fail "ACL not restored"
[ "$(getfattr --only-values -n user.flare.role "$F/home/nv/.config/flare/orbit/controller.key" 2>/dev/null)" = controller ] ||
	fail "xattr not restored"
ok "round trip: $(echo "$want" | wc -l) paths identical by sha256sum and stat (fstab resolved: $resolved)"

# ---- again: nothing to do ----
run 0 "$SWAPTOOL" --json --state "$S2" restore "$T" --root "$F"
jeq .counts.create 0
jeq .counts.replace 0
jeq .undo null
ok "second restore: everything unchanged"

# ---- replace and undo, bit for bit ----
G="$TMP/lived-in"
mkdir -p "$G/home/nv/.ssh" "$G/etc"
printf 'new install key\n' >"$G/home/nv/.ssh/id_ed25519"
chmod 644 "$G/home/nv/.ssh/id_ed25519"
printf '127.0.0.1 localhost\n127.0.1.1 %s\n' "$(hostname -s 2>/dev/null || hostname)" >"$G/etc/hosts"
printf '# fresh install\n' >"$G/etc/fstab"
chmod 755 "$G/home/nv/.ssh"
touch -d '2026-11-05 08:00:00 UTC' "$G/home/nv/.ssh/id_ed25519" "$G/etc/hosts" "$G/etc/fstab"
before=$(snapshot "$G")
run 0 "$SWAPTOOL" --json --state "$S2" restore "$T" --root "$G" --undo-out "$TMP/undo.tar.gz"
jeq .undo.path "$TMP/undo.tar.gz"
[ "$(printf '%s' "$OUT" | jq '.counts.replace')" -ge 3 ] || fail "expected at least 3 replaced entries"
cmp -s "$D/home/nv/.ssh/id_ed25519" "$G/home/nv/.ssh/id_ed25519" || fail "key not replaced"
[ "$(tar -tzf "$TMP/undo.tar.gz" | head -1)" = swaptool-manifest.json ] || fail "undo tarball has no manifest"
tar -xzOf "$TMP/undo.tar.gz" home/nv/.ssh/id_ed25519 | grepq 'new install key' || fail "undo tarball lacks the replaced key"
run 0 "$SWAPTOOL" --json --state "$S2" restore --undo "$TMP/undo.tar.gz" --root "$G"
after=$(snapshot "$G")
[ "$before" = "$after" ] || { diff <(echo "$before") <(echo "$after") >&2; fail "undo did not restore the tree"; }
run 3 "$SWAPTOOL" --state "$S2" restore "$TMP/undo.tar.gz" --root "$G"
contains "restore --undo"
run 3 "$SWAPTOOL" --state "$S2" restore --undo "$T" --root "$G"
contains "not an undo tarball"
ok "undo puts back the tree as it was, bit for bit"

# ---- owners by name: the root's /etc/passwd after a reinstall, --map-user ----
H="$TMP/reinstalled"
mkdir -p "$H/etc"
printf 'root:x:0:0:root:/root:/bin/bash\nnv:x:1500:1500::/home/nv:/bin/bash\n' >"$H/etc/passwd"
printf 'root:x:0:\nnv:x:1500:\n' >"$H/etc/group"
run 3 "$SWAPTOOL" --state "$S2" restore "$T" --root "$H"
contains "the user 'nobody'"
contains "--map-user nobody=NAME"
[ "$(ls -A "$H")" = etc ] || fail "an owner error wrote into the root"
run 0 "$SWAPTOOL" --json --state "$S2" restore "$T" --root "$H" --map-user nobody=nv --map-user nogroup=nv
[ "$(stat -c '%u:%g %a' "$H/home/nv/.config/flare/orbit/controller.key")" = "1500:1500 600" ] ||
	fail "controller.key is $(stat -c '%u:%g %a' "$H/home/nv/.config/flare/orbit/controller.key"), expected 1500:1500 600"
[ "$(stat -c '%u:%g' "$H/etc/netplan/50-cloud-init.yaml")" = "0:0" ] || fail "netplan owner wrong"
run 0 "$SWAPTOOL" --json --state "$S2" verify "$T" --root "$H" --map-user nobody=nv --map-user nogroup=nv
jeq '[.checks[] | select(.id == "entries-owner")][0].status' pass
ok "owners by name: nobody -> nv (uid 1500 in the root's /etc/passwd)"

run 2 "$SWAPTOOL" restore "$T" --map-user nobody
run 2 "$SWAPTOOL" restore
run 3 "$SWAPTOOL" --state "$S2" restore "$TMP/nonexistent.tar.gz" --root "$F"
ok "usage and missing tarball"
