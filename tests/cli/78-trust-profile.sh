#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Root never runs commands from a profile another user can change (src/trust.h): a profile owned by
# nobody, writable by group or others, in a directory nobody owns or anyone may write, or reached
# through such a symlink, is refused (exit 2) naming the file and the owner or mode, from --profile,
# $SWAPTOOL_PROFILE and the site profile alike; accept runs none of its [engine] commands.
# --trust-unsafe-profile takes it; config shows the verdict (table and JSON); a user other than root
# keeps today's behaviour. Both users are real: root and the system user nobody.
. "$SRCDIR/tests/lib.sh"

need_root
id nobody >/dev/null 2>&1 || skip "no user nobody"
command -v runuser >/dev/null || skip "no runuser"
NOBODY=$(id -u nobody)
export SWAPTOOL_SYSCONFDIR="$TMP/etc" # no site profile unless this test writes one
chmod 0711 "$TMP" # nobody may pass through (not list, not write) to the directories it owns below
mkdir -p "$STATE" # status reads it, and names one that does not exist (exit 3)
S=(--state "$STATE")

# profile FILE [MARK]: a valid profile; with MARK, an [engine] gate that touches MARK
profile() {
	printf '[run rand16]\nmin_iops = 1\nmax_p50_us = 100000000\n[run rand64]\nmin_iops = 1\n' >"$1"
	[ -z "${2:-}" ] || printf '[engine mark]\ncommand = touch %s\ntimeout = 10\n' "$2" >>"$1"
	chmod 0644 "$1"
}

# the safe cases: root's file in root's directory, under the sticky /tmp as mktemp makes it
mkdir "$TMP/safe"
profile "$TMP/safe/p.ini"
run 0 "$SWAPTOOL" "${S[@]}" --profile "$TMP/safe/p.ini" status
mkdir -m 1777 "$TMP/sticky"
profile "$TMP/sticky/p.ini"
run 0 "$SWAPTOOL" "${S[@]}" --profile "$TMP/sticky/p.ini" status
ok "root's profile in root's directory is used, under a sticky directory too"

# refused FILE TEXT: every way of naming FILE is refused as root with exit 2 and TEXT
refused() {
	says 2 "$2" "$SWAPTOOL" "${S[@]}" --profile "$1" status
	contains "profile '$1' (--profile) can be changed by a user other than root"
	contains "--trust-unsafe-profile"
	says_json 2 "$2" "$SWAPTOOL" --json "${S[@]}" --profile "$1" status
	SWAPTOOL_PROFILE=$1 says 2 "$2" "$SWAPTOOL" "${S[@]}" status
	contains "(SWAPTOOL_PROFILE)"
}

# owned by nobody, in root's directory
mkdir "$TMP/p1"
profile "$TMP/p1/p.ini"
chown nobody "$TMP/p1/p.ini"
refused "$TMP/p1/p.ini" "file '$TMP/p1/p.ini' is owned by uid $NOBODY (nobody), not by root"
ok "a profile owned by nobody is refused (exit 2), naming the file and its owner"

# writable by group, by others
chown root "$TMP/p1/p.ini"
chmod 0664 "$TMP/p1/p.ini"
refused "$TMP/p1/p.ini" "file '$TMP/p1/p.ini' is writable by its group (mode 0664)"
chmod 0666 "$TMP/p1/p.ini"
refused "$TMP/p1/p.ini" "is writable by group and others (mode 0666)"
ok "a profile of mode 0664 or 0666 is refused, naming the mode"

# root's file in a directory nobody owns: nobody made it there and can replace it
mkdir "$TMP/nob"
chown nobody "$TMP/nob"
runuser -u nobody -- sh -c "printf '[run rand16]\nmin_iops = 1\n' >'$TMP/nob/made.ini'"
refused "$TMP/nob/made.ini" "directory '$TMP/nob' is owned by uid $NOBODY (nobody), not by root"
profile "$TMP/nob/p.ini"
refused "$TMP/nob/p.ini" "directory '$TMP/nob' is owned by uid $NOBODY (nobody)"
# in a directory anyone may write (not sticky), and two levels below one
mkdir -m 0777 "$TMP/open"
chmod 0777 "$TMP/open"
mkdir -p "$TMP/open/deeper"
profile "$TMP/open/deeper/p.ini"
refused "$TMP/open/deeper/p.ini" "directory '$TMP/open' is writable by group and others (mode 0777)"
ok "a profile in a directory nobody owns, or below a 0777 one, is refused, naming the directory"

# a symlink: root's own link to an unsafe file is judged by its target; nobody's link in a sticky
# directory is nobody's
ln -s "$TMP/open/deeper/p.ini" "$TMP/safe/link.ini"
refused "$TMP/safe/link.ini" "directory '$TMP/open' is writable"
ln -s "$TMP/safe/p.ini" "$TMP/sticky/nobodys.ini"
chown -h nobody "$TMP/sticky/nobodys.ini"
refused "$TMP/sticky/nobodys.ini" "the symbolic link '$TMP/sticky/nobodys.ini' is owned by uid $NOBODY"
ok "a symlink is judged with its target: to an unsafe file, or nobody's own link, refused"

# the site profile (SYSCONFDIR/swaptool/profile.ini) too
mkdir -p "$TMP/etc/swaptool"
profile "$TMP/etc/swaptool/profile.ini"
chown nobody "$TMP/etc/swaptool/profile.ini"
says 2 "profile '$TMP/etc/swaptool/profile.ini' (site) can be changed by a user other than root" \
	"$SWAPTOOL" "${S[@]}" status
contains "owned by uid $NOBODY (nobody)"
rm -rf "$TMP/etc/swaptool"
ok "the site profile is judged the same way"

# config shows the verdict and is not refused (it runs nothing)
run 0 "$SWAPTOOL" "${S[@]}" --profile "$TMP/p1/p.ini" config
contains "trust: not trusted: file '$TMP/p1/p.ini' is writable by group and others (mode 0666)"
run 0 "$SWAPTOOL" --json "${S[@]}" --profile "$TMP/p1/p.ini" config
jeq .profile.trusted false
jeq '.profile.untrusted_because | contains("mode 0666")' true
run 0 "$SWAPTOOL" --json "${S[@]}" --profile "$TMP/safe/p.ini" config
jeq .profile.trusted true
jeq '.profile | has("untrusted_because")' false
run 0 "$SWAPTOOL" "${S[@]}" --profile "$TMP/safe/p.ini" config
contains "trust: trusted"
ok "config shows the verdict in its table and JSON"

# the explicit option takes it
run 0 "$SWAPTOOL" "${S[@]}" --trust-unsafe-profile --profile "$TMP/p1/p.ini" status
run 0 "$SWAPTOOL" "${S[@]}" --profile "$TMP/nob/made.ini" status --trust-unsafe-profile
ok "--trust-unsafe-profile takes an unsafe profile"

# a user other than root keeps today's behaviour: its own 0666 profile in its own directory is used
runuser -u nobody -- sh -c "printf '[run rand16]\nmin_iops = 1\n' >'$TMP/nob/mine.ini'; chmod 0666 '$TMP/nob/mine.ini'"
OUT=$(runuser -u nobody -- env XDG_STATE_HOME="$TMP/nob/xdg" "$SWAPTOOL" --profile "$TMP/nob/mine.ini" status 2>&1) ||
	fail "nobody's own profile refused to nobody: $OUT"
OUT=$(runuser -u nobody -- "$SWAPTOOL" --json --profile "$TMP/nob/mine.ini" config) || fail "config as nobody failed"
jeq .profile.trusted false
ok "as another user the profile is used as before; config still says it is not trusted"

# accept: the engine command of an unsafe profile never runs as root; with the option it does
D=$TMP
if [ "$(stat -f -c %T "$D")" = tmpfs ]; then
	D=$(mktemp -d /var/tmp/swaptool-trust.XXXXXX)
	trap 'rm -rf "$D"; cleanup_test' EXIT
fi
[ "$(stat -f -c %T "$D")" = tmpfs ] && { echo "# no disk-backed directory: accept not run"; exit 0; }
need_odirect "$D"
need_io_uring
F=$D/shard
head -c 8M /dev/urandom >"$F"
sync "$F"
A=(accept "$F" --force --working-set 4M --duration 1 --ramp 0 --no-seq --inflight 4)
profile "$TMP/nob/engine.ini" "$TMP/ran"
chown nobody "$TMP/nob/engine.ini"
says 2 "is owned by uid $NOBODY (nobody)" "$SWAPTOOL" "${S[@]}" --profile "$TMP/nob/engine.ini" "${A[@]}"
[ ! -e "$TMP/ran" ] || fail "accept ran the [engine] command of nobody's profile as root"
[ ! -e "$STATE/accept.json" ] || fail "a refused accept saved a record"
rc=0
"$SWAPTOOL" "${S[@]}" --trust-unsafe-profile --profile "$TMP/nob/engine.ini" "${A[@]}" >"$TMP/acc.out" 2>&1 || rc=$?
[ "$rc" = 0 ] || [ "$rc" = 1 ] || { cat "$TMP/acc.out" >&2; fail "accept with --trust-unsafe-profile exited $rc"; }
[ -e "$TMP/ran" ] || fail "accept with --trust-unsafe-profile did not run the [engine] command"
ok "accept runs no [engine] command of nobody's profile (exit 2); with --trust-unsafe-profile it does"
