#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# An interrupted restore leaves nothing behind unreported: after SIGKILL mid-restore (3,000
# files, caught while its .swaptool-restore.* temporaries exist), verify fails "strays" and
# lists them, the next restore removes them, and so does `restore --undo`; SIGINT mid-restore
# stops cleanly: exit 130, one JSON document, no temporary left, no file replaced.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/fixtures/backup-lib.sh"

D="$TMP/demo"
demo_root "$D"
cp /etc/passwd /etc/group "$D/etc/"
M="home/nv/.config/flare/many"
mkdir -p "$D/$M"
python3 - "$D/$M" <<'PY'
import os, sys
for i in range(3000):
    open(os.path.join(sys.argv[1], "f%04d" % i), "wb").write(os.urandom(64) * 64)
PY
chown -R nobody:nogroup "$D/$M"
mkdir -p "$STATE"
T="$TMP/b.tar.gz"
run 0 "$SWAPTOOL" --state "$TMP/bstate" backup --root "$D" --home /home/nv --out "$T"

strays() { find "$1" -name '.swaptool-restore.*' | wc -l; }

# start_and_catch ROOT STATE [ARGS]: start a restore, stop it (SIGSTOP) while its temporaries
# exist; $PID is the stopped process. Retries: on a fast machine the window is short.
start_and_catch() {
	local root=$1 state=$2 try
	shift 2
	for try in 1 2 3 4 5; do
		rm -rf "$root" "$state"
		mkdir -p "$root"
		"$SWAPTOOL" --json --state "$state" restore "$T" --root "$root" "$@" >"$TMP/bg.out" 2>"$TMP/bg.err" &
		PID=$!
		while kill -0 "$PID" 2>/dev/null; do
			if compgen -G "$root/$M/.swaptool-restore.*" >/dev/null; then
				kill -STOP "$PID"
				return 0
			fi
		done
		wait "$PID" || true
	done
	skip "could not catch a restore while its temporaries exist (5 tries)"
}

# ---- SIGKILL: strays found by verify, removed by the next restore ----
F="$TMP/fresh"
start_and_catch "$F" "$TMP/s1"
kill -KILL "$PID"
wait "$PID" 2>/dev/null || true
n=$(strays "$F")
[ "$n" -gt 0 ] || fail "no temporaries after SIGKILL"
run 1 "$SWAPTOOL" --json --state "$TMP/s1" verify "$T" --root "$F"
jeq '[.checks[] | select(.id == "strays")][0].status' fail
jeq '[.checks[] | select(.id == "strays")][0].paths | length' "$n"
ok "SIGKILL left $n temporaries: verify fails 'strays' and lists each"
run 0 "$SWAPTOOL" --json --state "$TMP/s1" restore "$T" --root "$F" --dry-run
jeq '.strays | length' "$n"
[ "$(strays "$F")" = "$n" ] || fail "a dry run removed temporaries"
echo "a replaced key" >"$TMP/s1/restore-undo-20261105T080000Z-42.tar.gz.tmp.Qw3rTy"
run 0 "$SWAPTOOL" --json --state "$TMP/s1" restore "$T" --root "$F"
jeq '.strays | length' "$n"
[ ! -e "$TMP/s1/restore-undo-20261105T080000Z-42.tar.gz.tmp.Qw3rTy" ] || fail "a killed undo's temporary is still there"
[ "$(strays "$F")" = 0 ] || fail "$(strays "$F") temporaries remain after the rerun"
jeq '[.verify.checks[] | select(.id == "strays")][0].status' pass
cmp -s "$D/$M/f2999" "$F/$M/f2999" || fail "the rerun did not restore the files"
ok "the next restore removes them all and restores the files"

# ---- SIGKILL, then restore --undo: the strays go with the directories restore made ----
G="$TMP/fresh2"
start_and_catch "$G" "$TMP/s2"
kill -KILL "$PID"
wait "$PID" 2>/dev/null || true
[ "$(strays "$G")" -gt 0 ] || fail "no temporaries after SIGKILL"
U=$(ls "$TMP/s2"/restore-undo-*.tar.gz)
run 0 "$SWAPTOOL" --json --state "$TMP/s2" restore --undo "$U" --root "$G"
[ "$(strays "$G")" = 0 ] || fail "temporaries remain after --undo"
[ ! -e "$G/$M" ] || fail "--undo did not remove the directory the restore made"
ok "restore --undo removes the temporaries and the directories"

# ---- SIGINT: a clean stop, one document, nothing left ----
H="$TMP/fresh3"
start_and_catch "$H" "$TMP/s3"
kill -INT "$PID"
kill -CONT "$PID"
code=0
wait "$PID" || code=$?
[ "$code" = 130 ] || { cat "$TMP/bg.out" "$TMP/bg.err" >&2; fail "SIGINT: exit $code, expected 130"; }
OUT=$(cat "$TMP/bg.out")
[ "$(printf '%s' "$OUT" | jq -s length)" = 1 ] || fail "SIGINT: stdout is not one JSON document: $OUT"
jeq .error.exit_code 130
contains "no file was replaced"
[ "$(strays "$H")" = 0 ] || fail "SIGINT left $(strays "$H") temporaries"
[ -z "$(find "$H" -type f)" ] || fail "SIGINT: files were put in place"
ok "SIGINT: exit 130, one JSON document, no temporary and no file left"

# ---- what a killed backup left beside its output (a copy of the keys) goes with the next run ----
echo "a copy of controller.key" >"$TMP/b.tar.gz.tmp.Ab12Zx"
echo "an operator's file" >"$TMP/b.tar.gz.tmp.notours"
run 0 "$SWAPTOOL" --state "$TMP/bstate" backup --root "$D" --home /home/nv --out "$T"
[ ! -e "$TMP/b.tar.gz.tmp.Ab12Zx" ] || fail "the killed backup's temporary is still there"
[ -e "$TMP/b.tar.gz.tmp.notours" ] || fail "a file that is not a swaptool temporary was removed"
ok "a killed backup's temporary is removed by the next backup, other names are left alone"
