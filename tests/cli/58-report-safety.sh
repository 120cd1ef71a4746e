#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# report refuses what would make its signature mean less or lose files: a private key others can
# read, an identity that is a pattern or holds control characters, an --out that is (or holds) an
# input; and its files appear together or not at all.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/fixtures/records-lib.sh"
command -v ssh-keygen >/dev/null || skip "no ssh-keygen"
ssh-keygen -q -t ed25519 -N '' -C t -f "$TMP/key"
write_records "$STATE"
R=(--state "$STATE" report --key "$TMP/key")

# ---- a private key group or others may read: refused as ssh-keygen refuses it ----
for m in 644 640 604 660; do
	chmod "$m" "$TMP/key"
	run 3 env -u SSH_AUTH_SOCK "$SWAPTOOL" "${R[@]}" --out "$TMP/perm" --identity t@x
	contains "UNPROTECTED PRIVATE KEY FILE: permissions 0$m are too open"
	contains "chmod 600"
	[ ! -e "$TMP/perm/report.json" ] || fail "mode $m: a report was written"
	# ssh-keygen agrees that such a key is not to be used
	if ssh-keygen -Y sign -n swaptool-report -f "$TMP/key" </dev/null >/dev/null 2>"$TMP/kg"; then
		fail "ssh-keygen signed with a mode $m key (the rule differs)"
	fi
	grep -q "UNPROTECTED PRIVATE KEY FILE" "$TMP/kg" || fail "ssh-keygen: $(cat "$TMP/kg")"
done
run 3 "$SWAPTOOL" --json "${R[@]}" --out "$TMP/perm"
jeq '.error.exit_code' 3
chmod 600 "$TMP/key"
run 0 "$SWAPTOOL" "${R[@]}" --out "$TMP/perm" --identity t@x
# a FIFO or a directory given as the key: refused at once, not waited on
mkfifo -m 600 "$TMP/fifo-key"
got=0
timeout 10 "$SWAPTOOL" --state "$STATE" report --key "$TMP/fifo-key" --out "$TMP/fifo" >"$TMP/out" 2>"$TMP/err" || got=$?
[ "$got" = 3 ] || fail "a FIFO as the key: exit $got, expected 3"
grep -q "not a regular file" "$TMP/err" || fail "a FIFO as the key: $(cat "$TMP/err")"
run 3 "$SWAPTOOL" --state "$STATE" report --key "$TMP" --out "$TMP/dir"
ok "private key readable by group or others: exit 3, nothing written"

# ---- --identity: only a plain principal, never a pattern or control characters ----
for id in '*' 'ops@*' 'ops?' 'a,b' '!ops' 'a b' 'a"b' "a'b" $'a\tb' $'a\nb' $'a\001b' $'ops\033[2J' '-x' '' \
	"$(printf 'a%.0s' $(seq 257))"; do
	run 2 "$SWAPTOOL" "${R[@]}" --out "$TMP/id" --identity "$id"
	contains "bad identity"
	case "$ERR" in *$'\033'* | *$'\001'*) fail "the message echoes a control character" ;; esac
	[ ! -e "$TMP/id/allowed_signers" ] || fail "identity '$id': allowed_signers written"
done
run 2 "$SWAPTOOL" --json "${R[@]}" --out "$TMP/id" --identity 'ops@*'
jeq '.error.exit_code' 2
run 0 "$SWAPTOOL" "${R[@]}" --out "$TMP/id" --identity ops.team_1+b@dgx4-a.example
ssh-keygen -Y verify -f "$TMP/id/allowed_signers" -I ops.team_1+b@dgx4-a.example -n swaptool-report \
	-s "$TMP/id/report.json.sig" <"$TMP/id/report.json" >/dev/null 2>&1 || fail "plain identity: ssh-keygen rejects"
ok "identity with wildcards, separators, quotes or control characters: exit 2"

# ---- --out naming an input, by identity ----
ln -s "$STATE" "$TMP/state-link"
run 2 "$SWAPTOOL" "${R[@]}" --out "$TMP/state-link"
contains "is the state directory"
run 2 "$SWAPTOOL" "${R[@]}" --out "$STATE/../$(basename "$STATE")/."
contains "is the state directory"
if mkdir -p "$TMP/bind" && mount --bind "$STATE" "$TMP/bind" 2>/dev/null; then
	run 2 "$SWAPTOOL" "${R[@]}" --out "$TMP/bind" || { umount "$TMP/bind"; false; }
	umount "$TMP/bind"
	contains "is the state directory"
fi
# the key file itself, or a key named like an output in the out directory
run 2 "$SWAPTOOL" "${R[@]}" --out "$TMP/key"
contains "is the signing key"
mkdir -p "$TMP/k"
cp -p "$TMP/key" "$TMP/k/report.json"
cp -p "$TMP/key.pub" "$TMP/k/report.json.pub"
run 2 "$SWAPTOOL" --state "$STATE" report --key "$TMP/k/report.json" --out "$TMP/k"
contains "is the signing key"
cmp -s "$TMP/key" "$TMP/k/report.json" || fail "the key was overwritten"
# a record hard-linked under an output's name
mkdir -p "$TMP/h"
ln "$STATE/accept.json" "$TMP/h/report.txt"
run 2 "$SWAPTOOL" "${R[@]}" --out "$TMP/h"
contains "is the accept record"
[ ! -e "$TMP/h/report.json" ] || fail "report.json written next to a hard-linked record"
ok "--out that is the state directory (symlink, other spelling, bind mount), the key, or holds an input: exit 2"

# ---- the set appears together or not at all ----
O=$TMP/set
run 0 "$SWAPTOOL" "${R[@]}" --out "$O" --identity t@x
mkdir "$TMP/old"
cp -p "$O"/report.json "$O"/report.json.sig "$O"/report.txt "$O"/report.html "$O"/allowed_signers "$TMP/old/"
# a new report that cannot be completed: report.html cannot be replaced (a directory holds its name)
jq '.finished = "2026-11-06T00:00:00Z"' "$STATE/verify.json" >"$TMP/v" && mv "$TMP/v" "$STATE/verify.json"
rm "$O/report.html"
mkdir -p "$O/report.html/x"
run 3 "$SWAPTOOL" "${R[@]}" --out "$O" --identity t@x
contains "the old report in '$O' is left as it was"
for f in report.json report.json.sig report.txt allowed_signers; do
	cmp -s "$TMP/old/$f" "$O/$f" || fail "$f changed although the report failed"
done
ssh-keygen -Y verify -f "$O/allowed_signers" -I t@x -n swaptool-report -s "$O/report.json.sig" \
	<"$O/report.json" >/dev/null 2>&1 || fail "the old report no longer verifies"
[ -z "$(find "$O" -maxdepth 1 -name '.*' ! -name . -print -quit)" ] || fail "temporaries left: $(ls -A "$O")"
# the last file of the set fails (the signature's name is taken): the ones already renamed go back
rm -r "$O/report.html"
cp -p "$TMP/old/report.html" "$O/report.html"
rm "$O/report.json.sig"
mkdir -p "$O/report.json.sig/x"
run 3 "$SWAPTOOL" "${R[@]}" --out "$O" --identity t@x
for f in report.json report.txt report.html allowed_signers; do
	cmp -s "$TMP/old/$f" "$O/$f" || fail "$f not put back after the signature failed"
done
[ -z "$(find "$O" -maxdepth 1 -name '.*' ! -name . -print -quit)" ] || fail "temporaries left: $(ls -A "$O")"
# and once the way is clear the whole new set is there, signed
rm -r "$O/report.json.sig"
run 0 "$SWAPTOOL" "${R[@]}" --out "$O" --identity t@x
cmp -s "$TMP/old/report.json" "$O/report.json" && fail "report.json not replaced"
ssh-keygen -Y verify -f "$O/allowed_signers" -I t@x -n swaptool-report -s "$O/report.json.sig" \
	<"$O/report.json" >/dev/null 2>&1 || fail "the new report does not verify"
# --no-sign replaces the set and takes the old signature away with the report it signed
run 0 "$SWAPTOOL" --state "$STATE" report --no-sign --out "$O"
[ ! -e "$O/report.json.sig" ] || fail "a signature of the previous report.json was left"
[ -z "$(find "$O" -maxdepth 1 -name '.*' ! -name . -print -quit)" ] || fail "temporaries left: $(ls -A "$O")"
ok "report files: all or nothing (old set kept whole on failure, no temporaries left)"
