#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Outside inputs of restore and verify never hang and are typed before they are read: a FIFO,
# /dev/zero or a tty as the tarball, a FIFO planted where verify compares a file (a
# known_hosts.pre-swap, /etc/hosts, an fstab), a 2 TB sparse image passed by mistake. Each
# command runs under `timeout 20`: a hang fails the test instead of blocking it; under --json
# every refusal is exactly one JSON document.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/fixtures/backup-lib.sh"
command -v mkfifo >/dev/null || skip "mkfifo missing"

mkdir -p "$STATE"
R="$TMP/root"
mkdir -p "$R/home/nv"

# one JSON document on stdout, whatever the exit code
one_doc() {
	[ "$(printf '%s' "$OUT" | jq -s 'length')" = 1 ] || fail "stdout is not exactly one JSON document: $OUT"
	printf '%s' "$OUT" | jq -e . >/dev/null || fail "stdout is not JSON"
}

# refused_input STEP PATH 'REASON': exit 3 within 20 s, the reason named, one document
refused_input() {
	local step=$1 path=$2 why=$3 extra=()
	[ "$step" = restore ] && extra=(--dry-run)
	run 3 timeout 20 "$SWAPTOOL" --json --state "$STATE" "$step" "$path" --root "$R" "${extra[@]}"
	one_doc
	jeq .error.exit_code 3
	contains "$why"
}

mkfifo "$TMP/fifo.tar.gz"
for step in restore verify; do
	refused_input $step "$TMP/fifo.tar.gz" "is a FIFO, not a tarball"
	refused_input $step /dev/zero "is a character device, not a tarball"
	refused_input $step "$TMP" "is a directory, not a tarball"
done
ok "a FIFO, /dev/zero and a directory as the tarball are refused at once"

# a 2 TB sparse image passed by mistake: refused by its size before a byte is hashed
truncate -s 2T "$TMP/disk.img" 2>/dev/null || skip "no sparse 2 TB file on this filesystem"
start=$(date +%s%N)
refused_input restore "$TMP/disk.img" "more than the 1073741824 a backup tarball may have"
# the same under the cap: typed by its magic (not gzip), not hashed first
printf 'not a tarball at all\n' >"$TMP/text.tar.gz"
refused_input verify "$TMP/text.tar.gz" "is not gzip-compressed"
ms=$(( ($(date +%s%N) - start) / 1000000 ))
[ "$ms" -lt 5000 ] || fail "refusing a 2 TB image took $ms ms"
rm -f "$TMP/disk.img"
ok "a 2 TB image is refused by size, a text file by its magic ($ms ms)"

# ---- FIFOs planted where verify compares files ----
D="$TMP/demo"
demo_root "$D"
cp /etc/passwd /etc/group "$D/etc/"
T="$TMP/b.tar.gz"
run 0 "$SWAPTOOL" --state "$STATE" backup --root "$D" --home /home/nv --out "$T"
# known_hosts gone, a FIFO planted under the name verify looks at for a kept file
KH="$D/home/nv/.ssh/known_hosts"
[ -f "$KH" ] || fail "the demo root has no known_hosts"
mv "$KH" "$TMP/known_hosts.saved"
mkfifo "$KH.pre-swap"
run 1 timeout 20 "$SWAPTOOL" --json --state "$STATE" verify "$T" --root "$D"
one_doc
jeq '[.checks[] | select(.id == "entries-present")][0].status' fail
rm "$KH.pre-swap"
mv "$TMP/known_hosts.saved" "$KH"
ok "a FIFO planted as known_hosts.pre-swap: verify reports the file missing, no hang"

# /etc/hosts and /etc/fstab replaced by FIFOs
for f in etc/hosts etc/fstab; do
	mv "$D/$f" "$TMP/saved"
	mkfifo "$D/$f"
	run 1 timeout 20 "$SWAPTOOL" --json --state "$STATE" verify "$T" --root "$D"
	one_doc
	jeq '[.checks[] | select(.id == "entries-type")][0].status' fail
	rm "$D/$f"
	mv "$TMP/saved" "$D/$f"
done
ok "/etc/hosts and /etc/fstab as FIFOs: verify fails them, no hang"

# a FIFO named like a step record in the state directory: backup skips it, no hang
mkfifo "$STATE/planted.json"
run 0 timeout 20 "$SWAPTOOL" --json --state "$STATE" backup --root "$D" --home /home/nv --out "$TMP/c.tar.gz"
one_doc
tar -tzf "$TMP/c.tar.gz" | grepq planted && fail "the FIFO went into the tarball"
rm "$STATE/planted.json"
ok "a FIFO in the state directory is skipped by backup"
