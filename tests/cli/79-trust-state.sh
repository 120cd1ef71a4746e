#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Root signs what it finds in the state directory, so it must be root's alone (src/trust.h): a state
# directory owned by nobody, of mode 0777, or below a directory nobody owns is refused (exit 3) with
# the reason and what to do, and nothing is written there; a record planted in a safe directory but
# owned by nobody is refused by status and report; a .lock that is a hard link to another file leaves
# that file's bytes as they were and the step is refused (exit 3). Root and the user nobody are real.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/fixtures/records-lib.sh"

need_root
id nobody >/dev/null 2>&1 || skip "no user nobody"
command -v runuser >/dev/null || skip "no runuser"
NOBODY=$(id -u nobody)
chmod 0711 "$TMP" # nobody may pass through to the directories it owns below
R=(report --no-sign --out "$TMP/rep")

# the safe case: records root wrote in root's 0700 directory
write_records "$STATE"
run 0 "$SWAPTOOL" --state "$STATE" status
"$SWAPTOOL" --state "$STATE" "${R[@]}" >/dev/null 2>&1 || fail "report on root's own records failed"
rm -rf "$TMP/rep"
ok "root's own state directory is used"

# refused_state DIR TEXT: status (a reader) and report (a writer) refuse DIR, exit 3, naming TEXT
refused_state() {
	says 3 "$2" "$SWAPTOOL" --state "$1" status
	contains "state directory '$1' can be changed by a user other than root"
	contains "chmod 0700 DIR"
	says_json 3 "$2" "$SWAPTOOL" --json --state "$1" "${R[@]}"
	[ ! -e "$TMP/rep" ] || fail "a report was written from '$1'"
	[ ! -e "$1/.lock" ] || fail "a lock file was made in '$1'"
	[ ! -e "$1/report.json" ] || fail "a report record was saved in '$1'"
}

# owned by nobody, with records nobody planted (signed 'accepted' by root's key before)
mkdir "$TMP/nob"
chown nobody "$TMP/nob"
runuser -u nobody -- "$MKRECORD" set "$TMP/nob/state"
refused_state "$TMP/nob/state" "directory '$TMP/nob' is owned by uid $NOBODY (nobody), not by root"
mkdir -m 0700 "$TMP/nobstate"
write_records "$TMP/nobstate"
chown nobody "$TMP/nobstate"
refused_state "$TMP/nobstate" "directory '$TMP/nobstate' is owned by uid $NOBODY (nobody), not by root"
ok "a state directory owned by nobody, or below one, is refused (exit 3), nothing written"

# 0777, and a 1777 (sticky) one as the state directory itself
mkdir "$TMP/open"
write_records "$TMP/open"
chmod 0777 "$TMP/open"
refused_state "$TMP/open" "directory '$TMP/open' is writable by group and others (mode 0777)"
chmod 1777 "$TMP/open"
refused_state "$TMP/open" "(mode 1777)"
# one that does not exist yet is judged by what exists above it
chmod 0777 "$TMP/open"
refused_state "$TMP/open/new/state" "directory '$TMP/open' is writable by group and others"
[ ! -e "$TMP/open/new" ] || fail "the refused state directory was made"
ok "a state directory of mode 0777 or 1777, or to be made below a 0777 one, is refused (exit 3)"

# a record planted in a safe directory but owned by nobody
mkdir -m 0700 "$TMP/safe"
write_records "$TMP/safe"
chown nobody "$TMP/safe/accept.json"
says 3 "cannot read the record '$TMP/safe/accept.json': it is owned by uid $NOBODY (nobody), not by root" \
	"$SWAPTOOL" --state "$TMP/safe" status
says 3 "it is owned by uid $NOBODY (nobody)" "$SWAPTOOL" --state "$TMP/safe" "${R[@]}"
[ ! -e "$TMP/rep/report.json" ] || fail "a report was built from nobody's record"
chown root "$TMP/safe/accept.json"
chmod 0622 "$TMP/safe/accept.json"
says 3 "it is writable by group and others (mode 0622)" "$SWAPTOOL" --state "$TMP/safe" status
chmod 0600 "$TMP/safe/accept.json"
run 0 "$SWAPTOOL" --state "$TMP/safe" status
rm -rf "$TMP/rep"
ok "a record owned by nobody, or writable by others, in root's directory is refused (exit 3) naming its owner"

# STATE/.lock a hard link to another file: that file is not truncated nor written, the step refused
mkdir -m 0700 "$TMP/lk"
write_records "$TMP/lk"
printf 'precious bytes\n' >"$TMP/victim"
cp "$TMP/victim" "$TMP/victim.want"
ln "$TMP/victim" "$TMP/lk/.lock"
says 3 "lock file '$TMP/lk/.lock' has 2 hard links" "$SWAPTOOL" --state "$TMP/lk" "${R[@]}"
contains "rm '$TMP/lk/.lock'"
cmp -s "$TMP/victim" "$TMP/victim.want" || fail "the file the .lock links to was changed: '$(cat "$TMP/victim")'"
[ ! -e "$TMP/rep" ] || fail "a refused report wrote '$TMP/rep'"
rm "$TMP/lk/.lock"
# a .lock another user put there (one link)
printf 'nobody was here\n' >"$TMP/lk/.lock"
chown nobody "$TMP/lk/.lock"
says 3 "lock file '$TMP/lk/.lock' is owned by uid $NOBODY" "$SWAPTOOL" --state "$TMP/lk" "${R[@]}"
[ "$(cat "$TMP/lk/.lock")" = "nobody was here" ] || fail "nobody's .lock was written"
rm "$TMP/lk/.lock"
"$SWAPTOOL" --state "$TMP/lk" "${R[@]}" >/dev/null 2>&1 || fail "report failed once the .lock was gone"
ok "a .lock that is a hard link (its target's bytes unchanged) or another user's is refused (exit 3)"

# a user other than root keeps today's behaviour: its own 0777 state directory is used
runuser -u nobody -- sh -c "mkdir -m 0777 '$TMP/nob/mine' && chmod 0777 '$TMP/nob/mine'"
runuser -u nobody -- "$MKRECORD" set "$TMP/nob/mine"
OUT=$(runuser -u nobody -- "$SWAPTOOL" --state "$TMP/nob/mine" status 2>&1) || fail "nobody's own state refused to nobody: $OUT"
ok "as another user its own state directory is used as before"
