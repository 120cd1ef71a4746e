#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# verify: the live tree against the manifest, one check per concern, exit 1 when any fails:
# content, mode, owner, link target, missing entries, controller.key, ~/.ssh, /etc/hosts.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/fixtures/backup-lib.sh"

D="$TMP/demo"
demo_root "$D"
# owners are named by the root's own etc/passwd and etc/group: this demo root names them as this host
cp /etc/passwd /etc/group "$D/etc/"
mkdir -p "$STATE"
T="$TMP/b.tar.gz"
# the demo fstab's identifiers do not resolve here (no image attached, 31-fstab covers them): drop it
rm "$D/etc/fstab"
printf '[backup]\npath = ~/.config/flare/\npath = ~/.ssh/\npath = /etc/netplan/\npath = /etc/hosts\n' >"$TMP/p.ini"
run 0 "$SWAPTOOL" --profile "$TMP/p.ini" --state "$STATE" backup --root "$D" --home /home/nv --out "$T"

# status ID: the status of check ID in $OUT
st() { printf '%s' "$OUT" | jq -r "[.checks[] | select(.id == \"$1\")][0].status"; }

run 0 "$SWAPTOOL" --json --profile "$TMP/p.ini" --state "$STATE" verify "$T" --root "$D"
for c in entries-present entries-type entries-content entries-mode entries-owner entries-links required ssh-perms hosts; do
	[ "$(st $c)" = pass ] || fail "check $c is $(st $c) on the untouched tree"
done
[ -f "$STATE/verify.json" ] || fail "no verify record"
run 0 "$SWAPTOOL" --profile "$TMP/p.ini" --state "$STATE" verify "$T" --root "$D"
contains "PASS    entries-content"
ok "untouched tree: every check passes"

# bend ACTION, expect CHECK to fail, then put it back with UNDO
bend() {
	local action=$1 check=$2 undo=$3
	eval "$action"
	run 1 "$SWAPTOOL" --json --profile "$TMP/p.ini" --state "$STATE" verify "$T" --root "$D"
	[ "$(st "$check")" = fail ] || fail "'$action' did not fail $check"
	eval "$undo"
	ok "'$action' fails $check"
}
K="$D/home/nv/.config/flare/orbit/controller.key"
bend "chmod 644 '$K'" required "chmod 600 '$K'"
bend "chmod 644 '$K'" entries-mode "chmod 600 '$K'"
bend "chown daemon '$K'" required "chown nobody '$K'"
bend "chown daemon '$K'" entries-owner "chown nobody '$K'"
bend "cp '$K' '$TMP/k' && echo x >>'$K'" entries-content "cp '$TMP/k' '$K'"
bend "mv '$K' '$TMP/k2'" entries-present "mv '$TMP/k2' '$K'"
bend "chmod 755 '$D/home/nv/.ssh'" ssh-perms "chmod 700 '$D/home/nv/.ssh'"
bend "chmod 640 '$D/home/nv/.ssh/id_ed25519'" ssh-perms "chmod 600 '$D/home/nv/.ssh/id_ed25519'"
bend "ln -sfn /etc/passwd '$D/home/nv/.config/flare/cache'" entries-links \
	"ln -sfn ../../.cache/flare '$D/home/nv/.config/flare/cache' && chown -h nobody:nogroup '$D/home/nv/.config/flare/cache'"
bend "cp '$D/etc/hosts' '$TMP/h' && sed -i '/127.0.1.1/d' '$D/etc/hosts'" hosts "cp '$TMP/h' '$D/etc/hosts'"
bend "mv '$D/etc/netplan/50-cloud-init.yaml' '$TMP/n' && mkdir '$D/etc/netplan/50-cloud-init.yaml'" entries-type \
	"rmdir '$D/etc/netplan/50-cloud-init.yaml' && mv '$TMP/n' '$D/etc/netplan/50-cloud-init.yaml'"
run 0 "$SWAPTOOL" --json --profile "$TMP/p.ini" --state "$STATE" verify "$T" --root "$D"
ok "back to pass after each bend"

run 2 "$SWAPTOOL" verify
run 2 "$SWAPTOOL" verify "$T" --frobnicate
run 3 "$SWAPTOOL" --state "$STATE" verify "$TMP/missing.tar.gz"
