#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# accept with no argument: the Engram shard found through the profile's target_glob (under the node
# user's home), else the whole disk that holds /; the record says which and why; nothing found is
# exit 3 listing what was looked for; the profile's 98G working set is clamped to a smaller shard.
. "$SRCDIR/tests/lib.sh"

D=$TMP
if [ "$(stat -f -c %T "$D")" = tmpfs ]; then
	D=$(mktemp -d /var/tmp/swaptool-accept.XXXXXX)
	trap 'rm -rf "$D"; cleanup_test' EXIT
fi
[ "$(stat -f -c %T "$D")" = tmpfs ] && skip "no disk-backed directory for O_DIRECT"
Q=(--duration 1 --ramp 0 --no-seq --inflight 4 --force)
run01() {
	local got=0
	"$@" >"$TMP/out" 2>"$TMP/err" || got=$?
	OUT=$(cat "$TMP/out")
	ERR=$(cat "$TMP/err")
	case $got in 0 | 1) ;; *) cat "$TMP/err" >&2; fail "'$*' exited $got, expected 0 or 1" ;; esac
}

# a fake home: two revisions of the package in flare's cache, the larger shard is the one measured
H=$D/home
mkdir -p "$H/.cache/flare/packages/rev1/weights" "$H/.cache/flare/packages/rev2/weights"
BIG=$H/.cache/flare/packages/rev2/weights/engram-27b-weights.safetensors
head -c 16M /dev/urandom >"$H/.cache/flare/packages/rev1/weights/engram-27b-weights.safetensors"
head -c 24M /dev/urandom >"$BIG"
sync "$BIG"

run01 "$SWAPTOOL" --json --state "$STATE" accept --home "$H" "${Q[@]}"
jeq '.target.path' "$BIG"
jeq '.target.chosen_by' profile-glob
jeq '.target.reason | test("largest of 2 files matching")' true
# the profile's 98G does not fit in 24 MiB: clamped to the whole shard, with a warning
jeq '.target.working_set_bytes' 25165824
jeq '.target.offset_bytes' 0
jeq '[.checks[] | select(.id == "working-set") | .status] | join(",")' warn
jeq '.runs[0].working_set_bytes' 25165824
ok "no argument: the largest shard under the home (default target_glob), working set clamped with a warning"

run01 "$SWAPTOOL" --no-color --state "$STATE" accept --home "$H" "${Q[@]}"
contains "accept $BIG"
contains "target chosen by profile-glob"
ok "the table output says which target and why"

# the profile's target_glob overrides the default; an absolute glob needs no home
cat >"$TMP/glob.ini" <<INI
[accept]
target_glob = $H/.cache/flare/packages/rev1/weights/engram-*-weights.safetensors
working_set = 8MiB
INI
run01 "$SWAPTOOL" --json --state "$STATE" --profile "$TMP/glob.ini" accept "${Q[@]}"
jeq '.target.path' "$H/.cache/flare/packages/rev1/weights/engram-27b-weights.safetensors"
jeq '.target.working_set_bytes' 8388608
jeq '[.checks[] | select(.id == "working-set")] | length' 0
ok "the profile's target_glob chooses the shard"

# a target on the command line is still the target, and its working set is never clamped
run 2 "$SWAPTOOL" --state "$STATE" accept "$BIG" "${Q[@]}"
contains "--working-set 24M or less"
run01 "$SWAPTOOL" --json --state "$STATE" accept "$BIG" --working-set 4M "${Q[@]}"
jeq '.target.chosen_by' argument
ok "an argument is measured as given"

cat >"$TMP/bad.ini" <<'INI'
[accept]
target_glob = relative/engram-*.safetensors
INI
run 2 "$SWAPTOOL" --state "$STATE" --profile "$TMP/bad.ini" accept
contains "target_glob"
ok "a relative target_glob is refused when the profile loads (exit 2)"

# no shard: the whole disk that holds /, found independently with findmnt and lsblk
cat >"$TMP/none.ini" <<INI
[accept]
target_glob = $D/nowhere/engram-*-weights.safetensors
INI
MM=$(findmnt -no MAJ:MIN / 2>/dev/null | head -1 | tr -d " " || true)
DISK=$(lsblk -rno MAJ:MIN,KNAME,PKNAME 2>/dev/null | awk -v mm="$MM" '$1 == mm { print ($3 != "" ? $3 : $2); exit }' || true)
if [ -z "$DISK" ] || [ ! -b "/dev/$DISK" ]; then
	echo "# / is not on a block device here: root-disk fallback not tested"
elif dd if="/dev/$DISK" of=/dev/null bs=4096 count=1 iflag=direct 2>/dev/null; then
	run01 "$SWAPTOOL" --json --state "$STATE" --profile "$TMP/none.ini" accept --working-set 4M "${Q[@]}"
	jeq '.target.path' "/dev/$DISK"
	jeq '.target.kind' block
	jeq '.target.chosen_by' root-disk
	jeq '.target.reason | test("no file matches")' true
	jeq ".target.reason | test(\"'/' is mounted from\")" true
	jeq '.target.size_bytes' "$(blockdev --getsize64 "/dev/$DISK")"
	ok "no shard: the whole disk that holds / (/dev/$DISK), read-only"
else
	# the device node exists but this container may not open it: the choice still shows in the error
	run 3 "$SWAPTOOL" --state "$STATE" --profile "$TMP/none.ini" accept --working-set 4M "${Q[@]}"
	contains "'/dev/$DISK'"
	contains "the whole disk that holds '/'"
	ok "no shard: the whole disk that holds / (/dev/$DISK) is chosen; not readable here (exit 3)"
fi

# nothing at all: a root that is a tmpfs (a private mount namespace and chroot) and no shard
command -v unshare >/dev/null && command -v ldd >/dev/null || skip "no unshare/ldd for the nothing-found case"
[ "$(id -u)" = 0 ] || skip "needs root for the nothing-found case"
R=$TMP/chroot
mkdir -p "$R"
cat >"$TMP/inner.sh" <<EOF2
set -e
mount -t tmpfs tmpfs "$R"
mkdir -p "$R/bin" "$R/proc" "$R/tmp" "$R/etc"
cp "$SWAPTOOL" "$R/bin/swaptool"
for l in \$(ldd "$SWAPTOOL" | grep -o '/[^ ]*'); do mkdir -p "$R\$(dirname "\$l")"; cp -L "\$l" "$R\$l"; done
printf '[accept]\ntarget_glob = /nowhere/engram-*-weights.safetensors\n' >"$R/etc/none.ini"
mount -t proc proc "$R/proc"
rc=0
chroot "$R" /bin/swaptool --no-color --state /tmp/state --profile /etc/none.ini accept >"$TMP/out" 2>"$TMP/err" || rc=\$?
echo \$rc >"$TMP/rc"
EOF2
unshare -m --propagation private bash "$TMP/inner.sh" 2>"$TMP/unshare.err" || skip "cannot build a tmpfs root here: $(cat "$TMP/unshare.err")"
OUT=$(cat "$TMP/out")
ERR=$(cat "$TMP/err")
[ "$(cat "$TMP/rc")" = 3 ] || fail "nothing to measure: exit $(cat "$TMP/rc"), expected 3 ($ERR)"
contains "no target found"
contains "/nowhere/engram-*-weights.safetensors"
contains "'/' is not mounted from a block device"
ok "nothing found: exit 3 listing the glob and the root disk it looked for"
