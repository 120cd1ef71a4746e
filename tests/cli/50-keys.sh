#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Signing keys: unencrypted loads, encrypted is refused without an agent and signs through a real
# ssh-agent, malformed key files are each a clear error (exit 3) and nothing is signed.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/fixtures/records-lib.sh"
command -v ssh-keygen >/dev/null || skip "no ssh-keygen"
command -v ssh-agent >/dev/null && command -v ssh-add >/dev/null || skip "no ssh-agent or ssh-add"

write_records "$STATE"
ssh-keygen -q -t ed25519 -N '' -C plain -f "$TMP/plain"
ssh-keygen -q -t ed25519 -N secret -C sealed -f "$TMP/sealed"

run 0 "$SWAPTOOL" --state "$STATE" report --key "$TMP/plain" --out "$TMP/p" --identity ops@dgx4
ssh-keygen -Y verify -f "$TMP/p/allowed_signers" -I ops@dgx4 -n swaptool-report -s "$TMP/p/report.json.sig" \
	<"$TMP/p/report.json" >/dev/null 2>&1 || fail "plain key: ssh-keygen rejects"
ok "unencrypted key (-N '') signs"

# encrypted, no agent: refused before anything is written
run 3 env -u SSH_AUTH_SOCK "$SWAPTOOL" --state "$STATE" report --key "$TMP/sealed" --out "$TMP/s"
contains "is encrypted and no ssh-agent is reachable"
contains "ssh-add $TMP/sealed"
[ ! -e "$TMP/s/report.json.sig" ] || fail "a signature was written without a key"
ok "encrypted key refused without an agent"

# encrypted, through a real ssh-agent
eval "$(ssh-agent -s -a "$TMP/agent.sock")" >/dev/null
trap 'kill "$SSH_AGENT_PID" 2>/dev/null || true; cleanup_test' EXIT
# the agent does not hold it yet
run 3 "$SWAPTOOL" --state "$STATE" report --key "$TMP/sealed" --out "$TMP/s"
contains "does not hold this key"
[ ! -e "$TMP/s/report.json.sig" ] || fail "a signature was written although the agent refused"
printf '#!/bin/sh\necho secret\n' >"$TMP/askpass"
chmod +x "$TMP/askpass"
SSH_ASKPASS="$TMP/askpass" SSH_ASKPASS_REQUIRE=force DISPLAY=none ssh-add "$TMP/sealed" </dev/null >/dev/null 2>&1 ||
	fail "ssh-add of the test key failed"
run 0 "$SWAPTOOL" --state "$STATE" report --key "$TMP/sealed" --out "$TMP/s" --identity ops@dgx4
ssh-keygen -Y verify -f "$TMP/s/allowed_signers" -I ops@dgx4 -n swaptool-report -s "$TMP/s/report.json.sig" \
	<"$TMP/s/report.json" >/dev/null 2>&1 || fail "agent-signed report: ssh-keygen rejects"
cp "$TMP/s/report.json.sig" "$TMP/agent.sig"
rm "$TMP/s/report.json.sig"
ssh-keygen -q -Y sign -n swaptool-report -f "$TMP/sealed" "$TMP/s/report.json" 2>/dev/null
cmp "$TMP/agent.sig" "$TMP/s/report.json.sig" || fail "agent signature differs from ssh-keygen's"
kill "$SSH_AGENT_PID" && wait "$SSH_AGENT_PID" 2>/dev/null || true
ok "encrypted key signs through ssh-agent after ssh-add, byte-identical"

# malformed key files: each a clear error, exit 3
bad_key() { # NAME EXPECTED-MESSAGE
	run 3 env -u SSH_AUTH_SOCK "$SWAPTOOL" --state "$STATE" report --key "$TMP/$1" --out "$TMP/bad"
	contains "$2"
	[ ! -e "$TMP/bad/report.json.sig" ] || fail "$1: signed anyway"
}
unarmour "$TMP/plain" "$TMP/raw"
# wrong magic
cp "$TMP/raw" "$TMP/r1"
printf 'X' | dd of="$TMP/r1" bs=1 seek=0 conv=notrunc status=none
armour "OPENSSH PRIVATE KEY" "$TMP/r1" "$TMP/magic"
bad_key magic "wrong magic: not an openssh-key-v1 key"
# checkint mismatch: the second checkint is at byte 102 (15 magic + 8 + 8 + 4 + 4 nkeys + 55 pub + 4 len + 4)
cp "$TMP/raw" "$TMP/r2"
flip_byte "$TMP/r2" 102
armour "OPENSSH PRIVATE KEY" "$TMP/r2" "$TMP/checkint"
bad_key checkint "checkints differ"
# truncated
head -c 120 "$TMP/raw" >"$TMP/r3"
armour "OPENSSH PRIVATE KEY" "$TMP/r3" "$TMP/trunc"
bad_key trunc "truncated"
head -3 "$TMP/plain" >"$TMP/nofooter"
bad_key nofooter "no armour footer"
# trailing data after the private section, and after the armour
cp "$TMP/raw" "$TMP/r4"
printf 'trailing' >>"$TMP/r4"
armour "OPENSSH PRIVATE KEY" "$TMP/r4" "$TMP/trail"
bad_key trail "trailing data after the private section"
{ cat "$TMP/plain"; echo junk; } >"$TMP/trail2"
bad_key trail2 "trailing data after the armour footer"
# not a key; not ed25519; missing
echo "hello" >"$TMP/text"
bad_key text "not an OpenSSH private key"
ssh-keygen -q -t ecdsa -N '' -f "$TMP/ecdsa"
bad_key ecdsa "an ECDSA key (ecdsa-sha2-*): swaptool signs with Ed25519 keys only"
ssh-keygen -q -t rsa -b 2048 -N '' -f "$TMP/rsa"
bad_key rsa "an RSA key (ssh-rsa): swaptool signs with Ed25519 keys only"
bad_key absent "cannot read the key file"
ok "malformed keys: wrong magic, checkint mismatch, truncated, trailing data, not ed25519"

# no key: as root the host key, else a usage error with the way out
HOSTKEY=/etc/ssh/ssh_host_ed25519_key
if [ "$(id -u)" != 0 ]; then
	run 2 "$SWAPTOOL" --state "$STATE" report --out "$TMP/n"
	contains "pass --key FILE"
elif [ -r "$HOSTKEY" ] && [ -r "$HOSTKEY.pub" ]; then
	run 0 "$SWAPTOOL" --state "$STATE" --json report --out "$TMP/h"
	jeq .signer.fingerprint "$(ssh-keygen -lf "$HOSTKEY.pub" | awk '{print $2}')"
else
	run 3 "$SWAPTOOL" --state "$STATE" report --out "$TMP/h"
	contains "cannot use key '$HOSTKEY'"
	contains "pass --key FILE"
fi
run 0 "$SWAPTOOL" --state "$STATE" --json report --no-sign --out "$TMP/n"
jeq .signer null
[ ! -e "$TMP/n/report.json.sig" ] || fail "--no-sign wrote a signature"
run 2 "$SWAPTOOL" --state "$STATE" report --no-sign --identity 'a b'
run 2 "$SWAPTOOL" --state "$STATE" report --no-sign --out "$STATE/"
contains "is the state directory"
ok "no key"
