#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Outputs never clobber inputs, by identity: --undo-out naming the backup or an existing file,
# or a path the restore writes; backup --out naming the live controller.key or a step record;
# a copy landing on a file of the set; an archive entry colliding with the fstab.pre-swap the
# trap keeps. Both outputs of a backup appear together or not at all. Messages say the true
# cause: a full disk is "no space left", and a record that cannot be saved after a completed
# restore says the root changed and where the undo is.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/fixtures/backup-lib.sh"

D="$TMP/demo"
demo_root "$D"
cp /etc/passwd /etc/group "$D/etc/"
mkdir -p "$STATE"
printf '{"schema":"swaptool/1","step":"preflight","verdict":"warn","checks":[]}\n' >"$STATE/preflight.json"
T="$TMP/b.tar.gz"
run 0 "$SWAPTOOL" --state "$STATE" backup --root "$D" --home /home/nv --out "$T"
K="$D/home/nv/.config/flare/orbit/controller.key"
key=$(sha256sum <"$K")
tsum=$(sha256sum <"$T")
one_doc() { [ "$(printf '%s' "$OUT" | jq -s 'length')" = 1 ] || fail "stdout is not exactly one JSON document: $OUT"; }

# ---- restore --undo-out ----
F="$TMP/fresh"
mkdir -p "$F/home/nv/.ssh"
echo "new install key" >"$F/home/nv/.ssh/id_ed25519"
before=$(snapshot "$F")
run 3 "$SWAPTOOL" --json --state "$TMP/s1" restore "$T" --root "$F" --undo-out "$T"
one_doc
contains "is the backup"
ln "$T" "$TMP/hardlink.tar.gz"
run 3 "$SWAPTOOL" --json --state "$TMP/s1" restore "$T" --root "$F" --undo-out "$TMP/hardlink.tar.gz"
contains "is the backup"
[ "$(sha256sum <"$T")" = "$tsum" ] || fail "the backup changed"
echo "operator notes" >"$TMP/notes.txt"
run 3 "$SWAPTOOL" --json --state "$TMP/s1" restore "$T" --root "$F" --undo-out "$TMP/notes.txt"
contains "already exists"
[ "$(cat "$TMP/notes.txt")" = "operator notes" ] || fail "the operator's file changed"
run 3 "$SWAPTOOL" --json --state "$TMP/s1" restore "$T" --root "$F" --undo-out "$F/home/nv/.ssh/id_current.pub"
contains "a path this restore writes"
[ "$(snapshot "$F")" = "$before" ] || fail "a refused restore changed the root"
ok "--undo-out: the backup itself (by name and by hard link), an existing file, a restored path: refused"

# ---- backup --out and --copy-to ----
run 3 "$SWAPTOOL" --json --state "$STATE" backup --root "$D" --home /home/nv --out "$K"
one_doc
contains "a file this backup reads"
[ "$(sha256sum <"$K")" = "$key" ] || fail "the live controller.key was overwritten"
ln "$K" "$TMP/key-link"
run 3 "$SWAPTOOL" --json --state "$STATE" backup --root "$D" --home /home/nv --out "$TMP/key-link"
contains "a file this backup reads"
run 3 "$SWAPTOOL" --json --state "$STATE" backup --root "$D" --home /home/nv --out "$STATE/preflight.json"
contains "a file this backup reads"
jq -e .step "$STATE/preflight.json" >/dev/null || fail "the preflight record was overwritten"
# the copy would land on the live key: refused before either output exists
run 3 "$SWAPTOOL" --json --state "$STATE" backup --root "$D" --home /home/nv --out "$TMP/out/controller.key" \
	--copy-to "$(dirname "$K")"
[ "$(sha256sum <"$K")" = "$key" ] || fail "the copy overwrote the live controller.key"
[ ! -e "$TMP/out/controller.key" ] || fail "the tarball was written although its copy was refused"
# a copy that cannot be made (DIR is a file): no tarball either
echo x >"$TMP/not-a-dir"
run 3 "$SWAPTOOL" --json --state "$STATE" backup --root "$D" --home /home/nv --out "$TMP/c.tar.gz" --copy-to "$TMP/not-a-dir"
one_doc
[ ! -e "$TMP/c.tar.gz" ] || fail "the tarball is there although its copy failed"
[ -z "$(ls "$TMP" | grep '\.tmp\.')" ] || fail "temporaries left beside the outputs"
ok "backup --out/--copy-to onto controller.key (by name, by hard link) or a step record: refused; both outputs or none"

# the default output directory in the user's home, planted as a link to a root-owned directory:
# backup neither chowns nor writes through it
host=$(hostname -s 2>/dev/null || hostname)
mkdir -p "$TMP/elsewhere"
ln -s "$TMP/elsewhere" "$D/home/nv/$host-swap-backup-$(date -u +%Y%m%d)"
run 3 "$SWAPTOOL" --json --state "$TMP/s5" backup --root "$D" --home /home/nv
one_doc
contains "is not a directory"
[ "$(stat -c %U "$TMP/elsewhere")" = root ] || fail "backup chowned the link's target"
[ -z "$(ls -A "$TMP/elsewhere")" ] || fail "backup wrote through the planted link"
rm "$D/home/nv/$host-swap-backup-$(date -u +%Y%m%d)"
ok "a link planted as the default output directory: refused, its target untouched"

# ---- an entry colliding with the kept fstab.pre-swap ----
H="$TMP/hostile"
python3 "$SRCDIR/tests/fixtures/make-hostile.py" "$H" "$TMP/outside" >/dev/null
G="$TMP/g"
mkdir -p "$G/etc"
echo "# the fresh install's fstab" >"$G/etc/fstab"
before=$(snapshot "$G")
run 3 "$SWAPTOOL" --json --state "$TMP/s2" restore "$H/fstab-pre-swap.tar.gz" --root "$G"
one_doc
contains "two of its entries would be written to 'etc/fstab.pre-swap'"
[ "$(snapshot "$G")" = "$before" ] || fail "the root changed"
run 3 "$SWAPTOOL" --json --state "$TMP/s2" restore "$H/restore-temporary.tar.gz" --root "$G"
contains "reserved for swaptool"
ok "an archive entry on the fstab.pre-swap the trap keeps, or on a restore temporary: refused whole"

# ---- true causes: a full disk, a record that cannot be saved ----
trap 'umount "$TMP/small" 2>/dev/null || true; cleanup_test' EXIT
# mode 0700: the tmpfs is also a state directory below, and root refuses a 1777 one (swaptool-safety(7))
if mkdir -p "$TMP/small" && mount -t tmpfs -o size=64k,mode=0700 tmpfs "$TMP/small" 2>/dev/null; then
	head -c 1M /dev/urandom >"$D/home/nv/.config/flare/big.bin"
	run 3 "$SWAPTOOL" --json --state "$TMP/s3" backup --root "$D" --home /home/nv --out "$TMP/small/b.tar.gz"
	one_doc
	contains "no space left"
	[ -z "$(ls -A "$TMP/small")" ] || { ls -la "$TMP/small" >&2; umount "$TMP/small"; fail "the full disk holds leftovers"; }
	rm "$D/home/nv/.config/flare/big.bin"
	mount -o remount,ro "$TMP/small"
	mkdir -p "$TMP/r"
	run 0 "$SWAPTOOL" --state "$TMP/empty-state" backup --root "$D" --home /home/nv --out "$TMP/norecords.tar.gz"
	run 3 "$SWAPTOOL" --json --state "$TMP/small" restore "$TMP/norecords.tar.gz" --root "$TMP/r" --undo-out "$TMP/undo-r.tar.gz"
	one_doc
	contains "the restore is complete and the root '$TMP/r' has changed"
	contains "swaptool restore --undo $TMP/undo-r.tar.gz"
	[ -f "$TMP/r/home/nv/.config/flare/orbit/controller.key" ] || fail "the restore did not write"
	umount "$TMP/small"
	ok "a full disk says 'no space left'; an unsavable record after a restore names the change and the undo"
else
	echo "# no tmpfs mount here: the full-disk and read-only cases are not run"
fi
