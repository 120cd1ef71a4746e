#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# --root R is resolved as if R were "/": a symlinked ancestor inside R pointing at this host's
# directories (which hold a decoy controller.key) is followed inside R, never out to the host;
# owners are named by R/etc/passwd and R/etc/group, not by the host's (uid 1 is 'daemon' here,
# 'nvx' in R); the undo tarball names owners as the root does, so --undo puts them back.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/fixtures/backup-lib.sh"

mkdir -p "$STATE"
# a root whose uid/gid 1 are 'nvx'/'nvg' (this host calls them daemon/daemon)
R="$TMP/r1"
"$SRCDIR/tests/fixtures/make-demo-root.sh" "$R" 1:1 >/dev/null
printf 'root:x:0:0:root:/root:/bin/bash\nnvx:x:1:1::/home/nv:/bin/bash\nnobody:x:65534:65534::/:/bin/false\n' >"$R/etc/passwd"
printf 'root:x:0:\nnvg:x:1:\nnogroup:x:65534:\n' >"$R/etc/group"
T="$TMP/r1.tar.gz"
run 0 "$SWAPTOOL" --json --state "$TMP/s1" backup --root "$R" --home /home/nv --out "$T"
jeq .user nvx
m=$(manifest_of "$T")
[ "$(printf '%s' "$m" | jq -r '.entries[] | select(.path == "home/nv/.config/flare/orbit/controller.key") | .user + ":" + .group')" = nvx:nvg ] ||
	fail "controller.key is not named nvx:nvg in the manifest"
listing=$(tar -tvzf "$T" 2>/dev/null)
grep -q ' nvx/nvg ' <<<"$listing" || fail "the tar headers do not name the owner nvx/nvg"
grep -q 'daemon/' <<<"$listing" && fail "the tar headers name this host's 'daemon'"
ok "owners named by R/etc/passwd and R/etc/group (nvx:nvg for uid 1), in the manifest and the tar headers"

# ---- a symlinked ancestor pointing at this host's directory with a decoy controller.key ----
HOSTDIR="$TMP/hostcfg"
mkdir -p "$HOSTDIR/flare/orbit"
echo "DECOY host key $RANDOM" >"$HOSTDIR/flare/orbit/controller.key"
R2="$TMP/r2"
"$SRCDIR/tests/fixtures/make-demo-root.sh" "$R2" >/dev/null
cp /etc/passwd /etc/group "$R2/etc/"
rm -rf "$R2/home/nv/.config"
ln -s "$HOSTDIR" "$R2/home/nv/.config"
run 1 "$SWAPTOOL" --json --state "$TMP/s2" backup --root "$R2" --home /home/nv --out "$TMP/r2.tar.gz"
jeq '.required[0].found' false
jeq .archive null
[ ! -e "$TMP/r2.tar.gz" ] || fail "a tarball was written with the host's key"
ok "a symlinked ~/.config -> $HOSTDIR resolves inside R: the host's decoy key is not taken"

# the same link with the target inside R: absolute targets are R-relative, so this one works
mkdir -p "$R2$HOSTDIR/flare/orbit"
echo "the node's own key" >"$R2$HOSTDIR/flare/orbit/controller.key"
chmod 600 "$R2$HOSTDIR/flare/orbit/controller.key"
chown nobody:nogroup "$R2$HOSTDIR/flare/orbit/controller.key"
run 0 "$SWAPTOOL" --json --state "$TMP/s2" backup --root "$R2" --home /home/nv --out "$TMP/r2.tar.gz"
got=$(tar -xzOf "$TMP/r2.tar.gz" home/nv/.config/flare/orbit/controller.key)
[ "$got" = "the node's own key" ] || fail "backed up '$got', expected the key inside R"
# Exit 1 when the demo fstab's filesystems are not on this machine, 0 when a parallel test has an
# image with the same fixed UUIDs attached: the checks below are what this test is about.
verify_r2() {
	local got=0
	"$SWAPTOOL" --json --state "$TMP/s2" verify "$TMP/r2.tar.gz" --root "$R2" >"$TMP/out" 2>"$TMP/err" || got=$?
	OUT=$(cat "$TMP/out")
	case $got in 0|1) ;; *) cat "$TMP/err" >&2; fail "verify of r2 exited $got, expected 0 or 1";; esac
}
verify_r2
for c in entries-present entries-type entries-content; do
	jeq "[.checks[] | select(.id == \"$c\")][0].status" pass
done
jeq '[.checks[] | select(.id == "required")][0].status' pass
# and verify does not follow it out either: the host's decoy differs, R's copy matches
echo "changed inside R" >"$R2$HOSTDIR/flare/orbit/controller.key"
verify_r2
jeq '[.checks[] | select(.id == "entries-content")][0].failures[0].path' home/nv/.config/flare/orbit/controller.key
ok "an absolute link inside R resolves to R$HOSTDIR for backup and verify"

# ---- restore into a root with other ids, and --undo back ----
R4="$TMP/r4"
mkdir -p "$R4/etc" "$R4/home/nv/.ssh"
printf 'root:x:0:0:root:/root:/bin/bash\nnvx:x:1500:1500::/home/nv:/bin/bash\nbob:x:2:2::/:/bin/false\n' >"$R4/etc/passwd"
printf 'root:x:0:\nnvg:x:1500:\nbobg:x:2:\n' >"$R4/etc/group"
echo "fresh install key" >"$R4/home/nv/.ssh/id_ed25519"
chown 2:2 "$R4/home/nv/.ssh/id_ed25519"
chmod 600 "$R4/home/nv/.ssh/id_ed25519"
before=$(stat -c '%u:%g %a %s' "$R4/home/nv/.ssh/id_ed25519")
run 0 "$SWAPTOOL" --json --state "$TMP/s4" restore "$T" --root "$R4" --undo-out "$TMP/undo4.tar.gz" --map-user nobody=root --map-user nogroup=root
[ "$(stat -c '%u:%g' "$R4/home/nv/.config/flare/orbit/controller.key")" = 1500:1500 ] ||
	fail "controller.key is $(stat -c '%u:%g' "$R4/home/nv/.config/flare/orbit/controller.key") in R4, expected nvx:nvg = 1500:1500"
um=$(tar -xzOf "$TMP/undo4.tar.gz" swaptool-manifest.json)
[ "$(printf '%s' "$um" | jq -r '.entries[] | select(.path == "home/nv/.ssh/id_ed25519") | .user + ":" + .group')" = bob:bobg ] ||
	fail "the undo names the replaced key's owner as this host does, not as R4 does"
run 0 "$SWAPTOOL" --json --state "$TMP/s4" restore --undo "$TMP/undo4.tar.gz" --root "$R4"
[ "$(stat -c '%u:%g %a %s' "$R4/home/nv/.ssh/id_ed25519")" = "$before" ] || fail "--undo did not put the key back as it was"
grep -q 'fresh install key' "$R4/home/nv/.ssh/id_ed25519" || fail "--undo did not put the content back"
ok "restore maps nvx to 1500 by R4's passwd; the undo names owners as R4 does and puts uid 2 back"
