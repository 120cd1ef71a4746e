#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Crash safety: backup, restore and report are killed with SIGKILL at every file-changing system
# call of a complete run (strace injects the signal at the Nth call of each kind), and after each
# kill every output is its old or its new complete self, the inputs are unchanged and every record
# in the state directory is valid; the next complete run leaves no temporary behind in the state
# directory, beside --out, under --root or in the report's directory, and the report's signature
# belongs to its report.json at every kill point but the one between their two renames. clone is
# killed at its forks, its unmount and writes spread over the run (below).
. "$SRCDIR/tests/lib.sh"
need_root
command -v strace >/dev/null || skip "no strace"
strace -f -qq -o /dev/null -e trace=getpid true 2>/dev/null || skip "strace cannot trace here (no ptrace)"

SET=openat,creat,write,pwrite64,writev,rename,renameat,renameat2,fsync,fdatasync,unlink,unlinkat,mkdir,mkdirat
SET=$SET,fchmod,fchmodat,fchown,fchownat,lchown,ftruncate,linkat,symlinkat,utimensat,fsetxattr,setxattr,lsetxattr

# points CMD...: the kill points of a complete run of CMD, "SYSCALL N" for the Nth call of each kind
points() {
	strace -f -qq -o "$TMP/trace" -e trace="$SET" -- "$@" >/dev/null 2>&1 || true
	# every call that changes something, and one in four opens (most only read: enough to kill
	# between each pair of writes without a run per read)
	sed -E 's/^[0-9]+ +//; s/\(.*//' "$TMP/trace" | grep -E '^[a-z0-9_]+$' |
		awk '{ c[$1]++; if ($1 != "openat" || c[$1] % 4 == 1) print $1, c[$1] }'
}
# killat SYSCALL N CMD...: run CMD, SIGKILLed on entry to its Nth SYSCALL (before the call runs)
killat() {
	local sc=$1 n=$2
	shift 2
	# through sh: strace dies of its tracee's SIGKILL, and sh's "Killed" notice goes to /dev/null
	sh -c '"$@" >/dev/null 2>&1; exit 0' sh \
		strace -f -qq -o /dev/null -e trace="$sc" -e inject="$sc":signal=KILL:when="$n" -- "$@" 2>/dev/null || true
}
tree_sum() { (cd "$1" && find . -printf '%p %y %m %s %l\n' | sort && find . -type f -print0 | sort -z | xargs -0r sha256sum); }
# every record in the state directory parses and is the record of the step it is named after
check_records() {
	local f s
	for f in "$STATE"/*.json; do
		[ -e "$f" ] || continue
		s=$(basename "$f" .json)
		jq -e --arg s "$s" '.schema == "swaptool/1" and .step == $s and (.verdict | type == "string")' "$f" >/dev/null ||
			fail "after a kill at $1: $f is not a valid $s record: $(head -c 300 "$f")"
	done
}
# after the next complete run: no temporary left in the state directory (or its report/)
check_state_temps() {
	local t
	t=$(find "$STATE" -name '*.tmp.*' 2>/dev/null)
	[ -z "$t" ] || fail "$1: temporaries left in the state directory: $t"
}

# ---- the node's root and a key
R=$TMP/root
mkdir -p "$R/home/nv/.config/flare/orbit" "$R/home/nv/.ssh" "$R/etc/netplan"
for i in 1 2 3; do head -c 3000 /dev/urandom | base64 >"$R/home/nv/.config/flare/orbit/file$i.json"; done
echo "controller-key-$RANDOM" >"$R/home/nv/.config/flare/orbit/controller.key"
chmod 600 "$R/home/nv/.config/flare/orbit/controller.key"
ssh-keygen -q -t ed25519 -N '' -C crash@test -f "$TMP/key"
cp "$TMP/key.pub" "$R/home/nv/.ssh/authorized_keys"
chmod 700 "$R/home/nv/.ssh"
printf 'network:\n  version: 2\n' >"$R/etc/netplan/01.yaml"
printf 'tmpfs /tmp tmpfs defaults 0 0\n' >"$R/etc/fstab"
printf '127.0.0.1 localhost\n127.0.1.1 %s\n' "$(hostname)" >"$R/etc/hosts"
B=(--root "$R" --home /home/nv)

# ---- backup: OUT is the old tarball or a whole new one
mkdir -p "$TMP/out"
OUT=$TMP/out/b.tar.gz
"$SWAPTOOL" --state "$STATE" backup "${B[@]}" --out "$OUT" >/dev/null || fail "first backup failed"
old=$(sha256sum <"$OUT")
echo "changed-$RANDOM" >>"$R/etc/netplan/01.yaml" # the new backup differs from the old one
src=$(tree_sum "$R")
mapfile -t P < <(points "$SWAPTOOL" --state "$STATE" backup "${B[@]}" --out "$OUT")
[ "${#P[@]}" -gt 20 ] || fail "only ${#P[@]} kill points traced for backup"
cp "$OUT" "$TMP/old.tar.gz"
for p in "${P[@]}"; do
	cp "$TMP/old.tar.gz" "$OUT"
	killat $p "$SWAPTOOL" --state "$STATE" backup "${B[@]}" --out "$OUT"
	if [ "$(sha256sum <"$OUT")" != "$old" ]; then
		gzip -t "$OUT" 2>/dev/null || fail "backup killed at $p: '$OUT' is neither the old tarball nor a whole gzip"
		"$SWAPTOOL" --state "$TMP/check" restore "$OUT" --root "$TMP/out" --dry-run >/dev/null 2>&1 ||
			fail "backup killed at $p: '$OUT' is neither the old tarball nor a whole new one"
	fi
	[ "$(tree_sum "$R")" = "$src" ] || fail "backup killed at $p changed its source tree"
	check_records "backup $p"
done
"$SWAPTOOL" --state "$STATE" backup "${B[@]}" --out "$OUT" >/dev/null || fail "backup after the kills failed"
check_state_temps "backup after ${#P[@]} kills"
strays=$(find "$TMP/out" -name 'b.tar.gz.?*' | wc -l)
[ "$strays" = 0 ] || fail "backup: $strays OUT.tmp.* temporaries of killed runs stay beside --out after the next run"
ok "backup killed at ${#P[@]} points: tarball old or new, source unchanged, records valid"

# ---- restore: each file of the set is old or new, the tarball unchanged, the undo whole or absent
N0=$TMP/node0
mkdir -p "$N0/home/nv/.config/flare/orbit" "$N0/etc"
echo old-key >"$N0/home/nv/.config/flare/orbit/controller.key"
echo old-file >"$N0/home/nv/.config/flare/orbit/file1.json"
printf '127.0.0.1 localhost\n' >"$N0/etc/hosts"
tarsum=$(sha256sum <"$OUT")
N=$TMP/node
U=$TMP/undo.tar.gz
rm -rf "$N" && cp -a "$N0" "$N"
mapfile -t P < <(points "$SWAPTOOL" --state "$STATE" restore "$OUT" --root "$N" --undo-out "$U")
[ "${#P[@]}" -gt 20 ] || fail "only ${#P[@]} kill points traced for restore"
mapfile -t SETF < <(cd "$R" && find . -type f | sed 's|^\./||')
restore_strays=0
for p in "${P[@]}"; do
	rm -rf "$N" "$U" && cp -a "$N0" "$N"
	killat $p "$SWAPTOOL" --state "$STATE" restore "$OUT" --root "$N" --undo-out "$U"
	for f in "${SETF[@]}"; do
		[ -e "$N/$f" ] || [ ! -e "$N0/$f" ] || fail "restore killed at $p: '$f' vanished"
		[ -e "$N/$f" ] || continue
		cmp -s "$N/$f" "$R/$f" || cmp -s "$N/$f" "$N0/$f" 2>/dev/null ||
			fail "restore killed at $p: '$f' is neither old nor new"
	done
	[ ! -e "$U" ] || gzip -t "$U" 2>/dev/null || fail "restore killed at $p: the undo '$U' is a partial file"
	[ "$(sha256sum <"$OUT")" = "$tarsum" ] || fail "restore killed at $p changed the tarball"
	check_records "restore $p"
	restore_strays=$((restore_strays + $(find "$N" -name '.swaptool-restore.*' | wc -l)))
done
# the next complete run after a kill in the middle of the writes
mid=${P[$((${#P[@]} * 2 / 3))]}
rm -rf "$N" "$U" && cp -a "$N0" "$N"
killat $mid "$SWAPTOOL" --state "$STATE" restore "$OUT" --root "$N" --undo-out "$U"
rm -f "$U"
"$SWAPTOOL" --state "$STATE" restore "$OUT" --root "$N" --undo-out "$U" >/dev/null 2>&1 || true
check_records "restore rerun"
check_state_temps "restore after ${#P[@]} kills"
left=$(find "$N" -name '.swaptool-restore.*' | wc -l)
[ "$left" = 0 ] || fail "restore: $left .swaptool-restore.* temporaries stay under --root after the next run (killed at $mid)"
[ "$restore_strays" = 0 ] || echo "# restore: killed runs left $restore_strays temporaries in all"
ok "restore killed at ${#P[@]} points: every file old or new, tarball unchanged, undo whole or absent"

# ---- report: each output old or whole; records valid
REP=$TMP/rep
"$SWAPTOOL" --state "$STATE" report --key "$TMP/key" --out "$REP" --identity crash@test >/dev/null 2>&1 || true
[ -s "$REP/report.json" ] || fail "first report wrote no report.json"
cp -a "$REP" "$TMP/rep0"
mapfile -t P < <(points "$SWAPTOOL" --state "$STATE" report --key "$TMP/key" --out "$REP" --identity crash@test)
[ "${#P[@]}" -gt 10 ] || fail "only ${#P[@]} kill points traced for report"
unpaired=0
for p in "${P[@]}"; do
	rm -rf "$REP" && cp -a "$TMP/rep0" "$REP"
	killat $p "$SWAPTOOL" --state "$STATE" report --key "$TMP/key" --out "$REP" --identity crash@test
	for f in report.json report.json.sig report.txt report.html allowed_signers; do
		[ -e "$REP/$f" ] || continue
		cmp -s "$REP/$f" "$TMP/rep0/$f" && continue
		case $f in
		report.json) jq -e '.schema and .verdict' "$REP/$f" >/dev/null 2>&1 ;;
		report.json.sig) tail -n1 "$REP/$f" | grepq -- '-----END SSH SIGNATURE-----' ;;
		report.html) grep -q '</html>' "$REP/$f" ;;
		*) [ -s "$REP/$f" ] && [ "$(tail -c1 "$REP/$f" | od -An -c | tr -d ' ')" = '\n' ] ;;
		esac || fail "report killed at $p: $f is neither old nor whole"
	done
	if [ -e "$REP/report.json.sig" ] && ! ssh-keygen -Y verify -f "$REP/allowed_signers" -I crash@test \
		-n swaptool-report -s "$REP/report.json.sig" <"$REP/report.json" >/dev/null 2>&1; then
		unpaired=$((unpaired + 1))
	fi
	check_records "report $p"
done
"$SWAPTOOL" --state "$STATE" report --key "$TMP/key" --out "$REP" --identity crash@test >/dev/null 2>&1 || true
check_state_temps "report after ${#P[@]} kills"
# The outputs are renamed into place one after another (with signals held and a rollback on
# failure): a SIGKILL between the two renames leaves the new report.json beside the old
# signature, at most one kill point; swaptool-report(1) says so. More would be a failure.
[ "$unpaired" -le 1 ] || fail "report: after $unpaired of ${#P[@]} kills report.json.sig does not verify report.json (outputs not replaced together)"
strays=$(find "$REP" -name '*.tmp.*' | wc -l)
[ "$strays" = 0 ] || fail "report: $strays temporaries stay in --out after the next run"
ok "report killed at ${#P[@]} points: every output old or whole, records valid"

# ---- clone: the source byte-identical, the records valid, and a rerun completes with a target
# that passes sgdisk -v and e2fsck -fn, leaving no scratch directory, FUSE mount or composite file.
# A spread fixture on a smaller target: the shrink runs (file extents moved through the composite,
# then resize2fs on it), so there are kill points while the composite is mounted and its server
# and resize2fs run. strace without -f: the signal is injected into swaptool itself, at the Nth
# call of each kind in the run's own order (by progress: the Nth write, fork, wait), never into
# its children, which must then go with it.
: "${MKDISK:?run through meson test (tests/run)}"
command -v sgdisk >/dev/null && command -v e2fsck >/dev/null || skip "sgdisk or e2fsck missing"
CS=$TMP/clone-src.img
"$MKDISK" scaled-spread "$CS" --written 64 >"$TMP/clone-src.json"
p2=$(jq -r '.partition_table.partitions[1].fs.offset_bytes' "$TMP/clone-src.json")
# swaptool's composite directories go to TMPDIR: one of the test's own, checked empty
CT=$TMP/ctmp
mkdir -p "$CT"
CSET=openat,write,pwrite64,fallocate,ftruncate,fsync,fdatasync,rename,unlink,mkdir,umount2,clone,clone3,waitid,wait4,flock
# clone_points EVEN SPECIAL CMD...: kill points of a complete run of CMD: every call whose name
# matches SPECIAL (forks, the unmount, renames...) and EVEN more spread evenly over the others
clone_points() {
	local even=$1 special=$2
	shift 2
	strace -qq -o "$TMP/ctrace" -e trace="$CSET" -- "$@" >/dev/null 2>&1 || true
	sed -E 's/\(.*//' "$TMP/ctrace" | grep -E '^[a-z0-9_]+$' |
		awk -v even="$even" -v special="^($special)\$" '
			{ c[$1]++; k[NR] = $1; n[NR] = c[$1] }
			END { step = int(NR / even) + 1
			      for (i = 1; i <= NR; i++)
				      if (k[i] ~ special || i % step == 0)
					      print k[i], n[i] }'
}
# kill_clone SYSCALL N CMD...: CMD SIGKILLed on entry to its own Nth SYSCALL; true when it was (a
# wait for a tool is counted by time: a run may make fewer calls than the traced one)
kill_clone() {
	local sc=$1 n=$2
	shift 2
	[ "$(sh -c '"$@" >/dev/null 2>&1; echo $?' sh \
		strace -qq -o /dev/null -e trace="$sc" -e inject="$sc":signal=KILL:when="$n" -- "$@" 2>/dev/null)" = 137 ]
}
composite_mounts() { grep -c " $CT/" /proc/mounts || true; }
no_composite_mount() { [ "$(composite_mounts)" = 0 ]; }
# clone_matrix LABEL TARGET EVEN SPECIAL: kill a clone of $CS to TARGET at each point, check, rerun,
# check
clone_matrix() {
	local label=$1 tgt=$2 even=$3 special=$4 p pts=0 killed=0 left
	local C=(env TMPDIR="$CT" "$SWAPTOOL" --state "$STATE" clone "$CS" "$tgt" --yes)
	"${C[@]}" >/dev/null 2>&1 || fail "clone ($label): the first complete run failed"
	mapfile -t P < <(clone_points "$even" "$special" "${C[@]}")
	[ "${#P[@]}" -gt "$even" ] || fail "clone ($label): only ${#P[@]} kill points traced"
	for p in "${P[@]}"; do
		! kill_clone $p "${C[@]}" || killed=$((killed + 1))
		# the composite's server follows swaptool (PR_SET_PDEATHSIG) and unmounts itself
		wait_for 20 no_composite_mount ||
			fail "clone ($label) killed at $p: the composite is still mounted: $(grep " $CT/" /proc/mounts)"
		[ "$(sparse_digest "$CS")" = "$csrc" ] || fail "clone ($label) killed at $p changed the source"
		check_records "clone ($label) $p"
		"${C[@]}" >"$TMP/cout" 2>&1 || fail "clone ($label): the rerun after a kill at $p failed: $(tail -n 5 "$TMP/cout")"
		sgdisk -v "$tgt" 2>&1 | grepq "No problems found" || fail "clone ($label) rerun after $p: sgdisk -v: $(sgdisk -v "$tgt" 2>&1 | tail -n 3)"
		e2fsck -fn "$tgt?offset=$p2" >/dev/null 2>&1 || fail "clone ($label) rerun after $p: e2fsck -fn failed on partition 2"
		left=$(find "$CT" -mindepth 1 | head -n 3)
		[ -z "$left" ] || fail "clone ($label) rerun after $p: scratch left in TMPDIR: $left"
		no_composite_mount || fail "clone ($label) rerun after $p: a composite mount is left: $(grep " $CT/" /proc/mounts)"
		check_state_temps "clone ($label) rerun after $p"
		pts=$((pts + 1))
	done
	[ "$(sparse_digest "$CS")" = "$csrc" ] || fail "clone ($label): the last rerun changed the source"
	[ $((killed * 3)) -ge $((pts * 2)) ] || fail "clone ($label): only $killed of $pts runs were killed (the points missed)"
	ok "clone ($label) killed at $killed of $pts points: source unchanged, records valid, each rerun sgdisk/e2fsck clean, nothing left"
}
sync "$CS"
csrc=$(sparse_digest "$CS")
truncate -s 3670016000 "$TMP/clone-tgt.img"
clone_matrix image "$TMP/clone-tgt.img" 6 'clone|clone3|mkdir|umount2|rename|unlink|flock|ftruncate'
# a loop device target, where the holds are O_EXCL claims and not locks (fewer points)
if losetup -f >/dev/null 2>&1; then
	rm -f "$TMP/clone-tgt.img"
	truncate -s 3670016000 "$TMP/clone-tgt.img"
	LT=$(losetup -f --show "$TMP/clone-tgt.img") || fail "losetup of the clone target failed"
	LOOPS+=("$LT")
	clone_matrix loop "$LT" 2 'clone|clone3|umount2'
else
	echo "# no free loop device: the loop-device target is not checked"
fi
