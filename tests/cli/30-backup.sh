#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# backup: the incident's set as a gzip pax tarball, manifest first, hashes checked with sha256sum,
# modes/owners/xattrs/ACLs read back by GNU tar, required files, unreadable files, sockets, links.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/fixtures/backup-lib.sh"

D="$TMP/demo"
demo_root "$D"
# owners are named by the root's own etc/passwd and etc/group: this demo root names them as this host
cp /etc/passwd /etc/group "$D/etc/"
mkdir -p "$STATE"
printf '{"schema":"swaptool/1","step":"preflight","verdict":"warn","source":{"path":"/dev/nonexistent"}}\n' >"$STATE/preflight.json"

# ---- the demo backup, as the README runs it ----
T="$TMP/o/dgx4-config.tar.gz"
mkdir -p "$TMP/o"
start=$(date +%s%N)
run 0 "$SWAPTOOL" --json --state "$STATE" backup --root "$D" --home /home/nv --out "$T"
ms=$(( ($(date +%s%N) - start) / 1000000 ))
[ "$ms" -lt 1000 ] || fail "backup of the demo set took ${ms} ms, not well under a second"
jeq .step backup
jeq .archive.path "$T"
jeq .archive.bytes "$(stat -c %s "$T")"
jeq .archive.sha256 "$(sha256sum <"$T" | cut -d' ' -f1)"
jeq '.required[0].path' /home/nv/.config/flare/orbit/controller.key
jeq '.required[0].found' true
jeq '[.skipped[].reason] | sort | join(",")' "fifo,socket"
jeq '[.skipped[].path | split("/") | last] | sort | join(",")' "cm-nv@dgx1:22,events.fifo"
jeq .state_records 1
jeq '[.checks[] | select(.id == "readback")][0].status' pass
[ -f "$STATE/backup.json" ] || fail "no backup record in the state directory"
ok "backup of the demo root in ${ms} ms, $(stat -c %s "$T") bytes"

# the file: gzip, mode 0600, owned by the node's user (the home's owner)
[ "$(stat -c '%a %U' "$T")" = "600 nobody" ] || fail "tarball is $(stat -c '%a %U' "$T"), expected 600 nobody"
[ "$(head -c2 "$T" | od -An -tx1 | tr -d ' ')" = 1f8b ] || fail "not gzip"
[ "$(tar -tzf "$T" | head -1)" = swaptool-manifest.json ] || fail "manifest is not the first entry"
ls "$TMP/o" | grepq tmp && fail "a temporary file was left beside the tarball"

# the manifest: schema, paths relative to the root, every file's hash equal to sha256sum's
M=$(manifest_of "$T")
OUT=$M
jeq .schema swaptool-manifest/1
jeq .home /home/nv
jeq .user nobody
jeq '[.entries[] | select(.path == "home/nv/.config/flare/orbit/controller.key")][0].mode' 0600
jeq '[.entries[] | select(.path == "home/nv/.config/flare/cache")][0].type' symlink
jeq '[.entries[] | select(.path == "home/nv/.config/flare/cache")][0].link' ../../.cache/flare
jeq '[.entries[] | select(.path | test("cm-nv|fifo"))] | length' 0
jeq '[.entries[] | select(.path | startswith("/"))] | length' 0
n=0
while read -r p sha size; do
	[ "$(sha256sum <"$D/$p" | cut -d' ' -f1)" = "$sha" ] || fail "manifest hash of '$p' differs from sha256sum"
	[ "$(stat -c %s "$D/$p")" = "$size" ] || fail "manifest size of '$p' differs from stat"
	n=$((n + 1))
done < <(printf '%s' "$M" | jq -r '.entries[] | select(.type == "file") | "\(.path) \(.sha256) \(.size)"')
[ "$n" -ge 10 ] || fail "only $n files in the manifest"
# every file of the set is in the manifest (independent walk, sockets and FIFOs aside)
want=$(cd "$D" && find home/nv/.config/flare home/nv/.ssh etc/netplan etc/fstab etc/hosts ! -type s ! -type p | sort)
got=$(printf '%s' "$M" | jq -r '.entries[] | select(.parent != true) | .path' | sort)
[ "$want" = "$got" ] || { diff <(echo "$want") <(echo "$got") >&2; fail "manifest paths differ from the tree"; }
# the step records ride along
tar -tzf "$T" | grepq -x 'swaptool-state/preflight.json' || fail "state record missing from the tarball"
ok "manifest: $n file hashes match sha256sum, paths match an independent walk"

# modes, owners, mtimes, xattrs and ACLs as GNU tar reads them back
X="$TMP/x"
mkdir -p "$X"
tar --xattrs --xattrs-include='*' --acls -xzpf "$T" -C "$X" 2>/dev/null
for p in home/nv/.config/flare/orbit/controller.key home/nv/.ssh/id_ed25519 home/nv/.ssh etc/netplan/50-cloud-init.yaml; do
	[ "$(stat -c '%a %U %G %Y' "$D/$p")" = "$(stat -c '%a %U %G %Y' "$X/$p")" ] ||
		fail "'$p': tar reads back $(stat -c '%a %U %G %Y' "$X/$p"), the tree has $(stat -c '%a %U %G %Y' "$D/$p")"
done
[ "$(getfattr --only-values -n user.flare.role "$X/home/nv/.config/flare/orbit/controller.key" 2>/dev/null)" = controller ] ||
	fail "xattr user.flare.role lost"
getfacl -p "$X/home/nv/.config/flare/config.toml" 2>/dev/null | grepq '^user:daemon:r--' || fail "ACL user:daemon:r-- lost"
[ "$(readlink "$X/home/nv/.ssh/id_current.pub")" = id_ed25519.pub ] || fail "symlink not stored as a link"
ok "GNU tar reads back modes, owners, mtimes, the xattr and the ACL"

# ---- the default path: ~/<host>-swap-backup-<YYYYMMDD>/<host>-config.tar.gz, under the root ----
run 0 "$SWAPTOOL" --json --state "$STATE" backup --root "$D" --home /home/nv
host=$(hostname -s 2>/dev/null || hostname)
jeq .archive.path "$D/home/nv/$host-swap-backup-$(date -u +%Y%m%d)/$host-config.tar.gz"
[ -f "$D/home/nv/$host-swap-backup-$(date -u +%Y%m%d)/$host-config.tar.gz" ] || fail "default tarball missing"
rm -rf "$D/home/nv/$host-swap-backup-"*
ok "default path"

# ---- --copy-to: synced copy with the same sha256 ----
run 0 "$SWAPTOOL" --json --state "$STATE" backup --root "$D" --home /home/nv --out "$TMP/c.tar.gz" --copy-to "$TMP/usb"
jeq '.copies[0].path' "$TMP/usb/c.tar.gz"
jeq '.copies[0].verified' true
[ "$(sha256sum <"$TMP/usb/c.tar.gz")" = "$(sha256sum <"$TMP/c.tar.gz")" ] || fail "copy differs"
ok "--copy-to"

# ---- the warning: the tarball lies on the drive being replaced ----
jeq '[.checks[] | select(.id == "location")][0].status' warn # /tmp shares the drive with / here
if losetup -f >/dev/null 2>&1 && command -v mkfs.ext4 >/dev/null; then
	truncate -s 16M "$TMP/src.img"
	mkfs.ext4 -q "$TMP/src.img"
	L=$(losetup -f --show "$TMP/src.img") || skip "losetup failed"
	LOOPS+=("$L")
	mkdir -p "$TMP/mnt"
	trap 'umount "$TMP/mnt" 2>/dev/null || true; cleanup_test' EXIT
	if mount "$L" "$TMP/mnt" 2>/dev/null; then
		# a verified copy off the drive of / clears the warning
		run 0 "$SWAPTOOL" --json --state "$STATE" backup --root "$D" --home /home/nv --out "$TMP/o/w.tar.gz" --copy-to "$TMP/mnt/usb"
		jeq '[.checks[] | select(.id == "location")][0].status' pass
		jeq .location.on_replaced_drive true
		jeq .location.copy_on_replaced_drive false
		rm -rf "$TMP/mnt/usb"
		printf '{"schema":"swaptool/1","step":"preflight","verdict":"warn","source":{"path":"%s"}}\n' "$L" >"$STATE/preflight.json"
		run 0 "$SWAPTOOL" --json --state "$STATE" backup --root "$D" --home /home/nv --out "$TMP/mnt/b.tar.gz"
		jeq '[.checks[] | select(.id == "location")][0].status' warn
		jeq .location.preflight_source "$L"
		jeq .location.on_replaced_drive true
		contains "the drive being replaced (preflight source"
		umount "$TMP/mnt"
		ok "warning when the tarball lies on the preflight source drive"
	fi
fi

# ---- required file: missing, empty, not regular => exit 1, no tarball ----
K="$D/home/nv/.config/flare/orbit/controller.key"
mv "$K" "$TMP/key.saved"
run 1 "$SWAPTOOL" --json --state "$STATE" backup --root "$D" --home /home/nv --out "$TMP/r1.tar.gz"
jeq '.required[0].found' false
jeq .archive null
contains "re-paired"
[ ! -e "$TMP/r1.tar.gz" ] || fail "tarball written without controller.key"
: >"$K"
run 1 "$SWAPTOOL" --state "$STATE" backup --root "$D" --home /home/nv --out "$TMP/r1.tar.gz"
contains "empty"
rm "$K"
mkdir "$K"
run 1 "$SWAPTOOL" --state "$STATE" backup --root "$D" --home /home/nv --out "$TMP/r1.tar.gz"
contains "not a regular file"
rmdir "$K"
ln -s /etc/hostname "$K"
run 1 "$SWAPTOOL" --state "$STATE" backup --root "$D" --home /home/nv --out "$TMP/r1.tar.gz"
contains "symbolic link"
rm "$K"
mv "$TMP/key.saved" "$K"
[ ! -e "$TMP/r1.tar.gz" ] || fail "tarball written without a usable controller.key"
ok "required file missing / empty / directory / symlink: exit 1, no tarball"

# ---- unreadable: exit 3 naming it; --skip-unreadable records it ----
if command -v setpriv >/dev/null; then
	U="$TMP/udemo"
	demo_root "$U"
	chown -R nobody:nogroup "$U/etc" "$U/home"
	chmod 000 "$U/home/nv/.ssh/known_hosts"
	chmod 755 "$TMP"
	as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups env HOME=/nonexistent "$@"; }
	as_nobody test -x "$TMP" || skip "'nobody' cannot enter $TMP (set TMPDIR to a directory others may enter)"
	# nobody gets its own copy of the binary: the build directory may lie under one only root may
	# enter (root's 0700 home, a mktemp -d). It links system libraries only (libswap is static).
	mkdir -p "$TMP/ubin"
	cp "$SWAPTOOL" "$TMP/ubin/swaptool"
	chmod 755 "$TMP/ubin" "$TMP/ubin/swaptool"
	USWAPTOOL=$TMP/ubin/swaptool
	mkdir -p "$TMP/ustate" "$TMP/uout" && chown nobody:nogroup "$TMP/ustate" "$TMP/uout"
	run 3 as_nobody "$USWAPTOOL" --state "$TMP/ustate" backup --root "$U" --home /home/nv --out "$TMP/uout/u.tar.gz"
	contains "known_hosts"
	contains "--skip-unreadable"
	[ ! -e "$TMP/uout/u.tar.gz" ] || fail "tarball written despite an unreadable file"
	run 0 as_nobody "$USWAPTOOL" --json --state "$TMP/ustate" backup --root "$U" --home /home/nv --out "$TMP/uout/u.tar.gz" --skip-unreadable
	jeq '[.skipped[] | select(.reason | startswith("unreadable"))][0].path' "$U/home/nv/.ssh/known_hosts"
	jeq '[.checks[] | select(.id == "skipped")][0].status' warn
	tar -tzf "$TMP/uout/u.tar.gz" | grepq known_hosts && fail "unreadable file in the tarball"
	ok "unreadable file: exit 3 naming it, --skip-unreadable records it"
fi

# ---- usage ----
run 2 "$SWAPTOOL" backup --frobnicate
run 2 "$SWAPTOOL" backup --root "$TMP/nonexistent" --home /home/nv
ok "usage errors"
