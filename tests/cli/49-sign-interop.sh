#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# SSHSIG interop with the real ssh-keygen, both directions, and the rejections both must agree on.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/fixtures/records-lib.sh"
command -v ssh-keygen >/dev/null || skip "no ssh-keygen"

write_records "$STATE"
ssh-keygen -q -t ed25519 -N '' -C demo@swaptool -f "$TMP/key"
ID=demo@swaptool
NS=swaptool-report

# swaptool signs; ssh-keygen verifies; the signature is byte-identical to ssh-keygen's.
run 0 "$SWAPTOOL" --state "$STATE" report --key "$TMP/key" --out "$TMP/o" --identity $ID
R=$TMP/o/report.json
contains "ssh-keygen -Y verify -f $TMP/o/allowed_signers -I $ID -n $NS -s $R.sig < $R"
contains "$ID namespaces=\"$NS\" ssh-ed25519 "
[ "$(head -1 "$R.sig")" = "-----BEGIN SSH SIGNATURE-----" ] || fail "armour header"
awk 'NR>1 && !/^-----/ && length($0) > 70 { exit 1 }' "$R.sig" || fail "armour wider than 70 columns"
grep -q $'\r' "$R.sig" && fail "CR in our armour"
ssh-keygen -Y verify -f "$TMP/o/allowed_signers" -I $ID -n $NS -s "$R.sig" <"$R" >/dev/null 2>&1 ||
	fail "ssh-keygen -Y verify rejects our signature"
ssh-keygen -Y check-novalidate -n $NS -s "$R.sig" <"$R" >/dev/null 2>&1 || fail "ssh-keygen -Y check-novalidate rejects it"
cp "$R.sig" "$TMP/ours.sig"
cp "$R" "$TMP/msg.json"
ssh-keygen -q -Y sign -n $NS -f "$TMP/key" "$TMP/msg.json" 2>/dev/null
cmp "$TMP/ours.sig" "$TMP/msg.json.sig" || fail "our .sig differs from ssh-keygen's for the same key and file"
fp=$(ssh-keygen -lf "$TMP/key.pub" | awk '{print $2}')
run 0 "$SWAPTOOL" --json verify-report "$R" --allowed-signers "$TMP/o/allowed_signers" --identity $ID
jeq .signature.fingerprint "$fp"
jeq '.checks | map(.status) | join(",")' "pass,pass,pass,pass"
jeq '.checks | map(.id) | join(",")' "signature,allowed-signer,records,verdict"
ok "swaptool signs, ssh-keygen verifies, byte-identical"

# ssh-keygen signs (sha512 and sha256); verify-report accepts.
cp "$R" "$TMP/k.json"
ssh-keygen -q -Y sign -n $NS -f "$TMP/key" "$TMP/k.json" 2>/dev/null
run 0 "$SWAPTOOL" --json verify-report "$TMP/k.json" --allowed-signers "$TMP/o/allowed_signers" --identity $ID
jeq .signature.hashalg sha512
rm "$TMP/k.json.sig"
ssh-keygen -q -Y sign -n $NS -O hashalg=sha256 -f "$TMP/key" "$TMP/k.json" 2>/dev/null
run 0 "$SWAPTOOL" --json verify-report "$TMP/k.json" --allowed-signers "$TMP/o/allowed_signers" --identity $ID
jeq .signature.hashalg sha256
# any armour width and CRLF
unarmour "$TMP/k.json.sig" "$TMP/raw"
{ echo "-----BEGIN SSH SIGNATURE-----"; base64 -w 64 "$TMP/raw"; echo "-----END SSH SIGNATURE-----"; } |
	sed 's/$/\r/' >"$TMP/crlf.sig"
run 0 "$SWAPTOOL" verify-report "$TMP/k.json" --sig "$TMP/crlf.sig"
ok "ssh-keygen signs (sha512, sha256), verify-report accepts, any width, CRLF"

# both reject: the same verdict from ssh-keygen and from us
both_reject() { # SIG MSG ALLOWED IDENTITY
	if ssh-keygen -Y verify -f "$3" -I "$4" -n $NS -s "$1" <"$2" >/dev/null 2>&1; then
		fail "ssh-keygen accepted $*"
	fi
	run 1 "$SWAPTOOL" verify-report "$2" --sig "$1" --allowed-signers "$3" --identity "$4"
}
AS=$TMP/o/allowed_signers
cp "$R" "$TMP/flip.json"
flip_byte "$TMP/flip.json" 200
both_reject "$R.sig" "$TMP/flip.json" "$AS" $ID
contains "bad signature"
unarmour "$R.sig" "$TMP/raw"
flip_byte "$TMP/raw" -1
armour "SSH SIGNATURE" "$TMP/raw" "$TMP/flip.sig"
both_reject "$TMP/flip.sig" "$R" "$AS" $ID
head -c -1 "$R" >"$TMP/nonl.json"
both_reject "$R.sig" "$TMP/nonl.json" "$AS" $ID
cp "$R" "$TMP/ns.json"
ssh-keygen -q -Y sign -n other-namespace -f "$TMP/key" "$TMP/ns.json" 2>/dev/null
both_reject "$TMP/ns.json.sig" "$TMP/ns.json" "$AS" $ID
contains "namespace 'other-namespace'"
both_reject "$R.sig" "$R" "$AS" mallory@swaptool
contains "not for this identity"
echo "$ID namespaces=\"other\" $(cat "$TMP/key.pub")" >"$TMP/other_ns"
both_reject "$R.sig" "$R" "$TMP/other_ns" $ID
contains "not for this namespace"
ok "flipped message byte, flipped signature byte, no trailing newline, wrong namespace, wrong identity, namespaces=other"

# malformed or unreadable signatures: 3
run 3 "$SWAPTOOL" verify-report "$R" --sig "$TMP/none.sig"
contains "cannot read the signature"
head -c 100 "$R.sig" >"$TMP/trunc.sig"
run 3 "$SWAPTOOL" verify-report "$R" --sig "$TMP/trunc.sig"
contains "malformed signature"
unarmour "$R.sig" "$TMP/raw"
printf 'x' >>"$TMP/raw"
armour "SSH SIGNATURE" "$TMP/raw" "$TMP/long.sig"
run 3 "$SWAPTOOL" verify-report "$R" --sig "$TMP/long.sig"
contains "trailing data after the signature"
ssh-keygen -q -t ecdsa -N '' -f "$TMP/ecdsa"
cp "$R" "$TMP/ec.json"
ssh-keygen -q -Y sign -n $NS -f "$TMP/ecdsa" "$TMP/ec.json" 2>/dev/null
run 3 "$SWAPTOOL" verify-report "$TMP/ec.json"
contains "unsupported signature"
run 3 "$SWAPTOOL" --json verify-report "$TMP/none.json"
jeq .error.exit_code 3
run 2 "$SWAPTOOL" verify-report "$R" --identity $ID
ok "malformed signatures exit 3, usage 2"
