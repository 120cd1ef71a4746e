#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Bad inputs that docs/swaptool-safety.7 lists and no other test covers: empty, truncated and
# non-regular files as the tarball, the undo tarball, a record, a compare input, the signature,
# allowed_signers, the key and the profile; a FIFO or /dev/zero as SOURCE. Each case runs under
# timeout 20 (a hang fails) and asserts the exit code and the message.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/fixtures/records-lib.sh"
command -v mkfifo >/dev/null || skip "mkfifo missing"
command -v jq >/dev/null || skip "jq missing"

mkdir -p "$STATE" "$TMP/root/home/nv"
R=$TMP/root
mkfifo "$TMP/fifo"
: >"$TMP/empty"
head -c 3 /dev/zero >"$TMP/three.tar.gz"

# ---- the backup tarball: empty or truncated to three bytes
for f in "$TMP/empty" "$TMP/three.tar.gz"; do
	says 3 "is not gzip-compressed" "$SWAPTOOL" --state "$STATE" restore "$f" --root "$R"
	contains "nothing was written"
	says 3 "is not gzip-compressed" "$SWAPTOOL" --state "$STATE" verify "$f" --root "$R"
	says_json 3 "is not gzip-compressed" "$SWAPTOOL" --json --state "$STATE" restore "$f" --root "$R"
done
[ -z "$(ls -A "$R/home/nv")" ] || fail "a refused tarball wrote into the root"
ok "an empty or truncated tarball: exit 3, 'is not gzip-compressed', nothing written"

# ---- the undo tarball: FIFO, /dev/zero, empty
says 3 "is a FIFO, not a tarball" "$SWAPTOOL" --state "$STATE" restore --undo "$TMP/fifo" --root "$R"
says 3 "is a character device, not a tarball" "$SWAPTOOL" --state "$STATE" restore --undo /dev/zero --root "$R"
says 3 "is not gzip-compressed" "$SWAPTOOL" --state "$STATE" restore --undo "$TMP/empty" --root "$R"
says_json 3 "is a FIFO" "$SWAPTOOL" --json --state "$STATE" restore --undo "$TMP/fifo" --root "$R"
ok "restore --undo: a FIFO, /dev/zero or an empty file refused (exit 3), no hang"

# ---- a step record in the state directory that is empty
S2=$TMP/s2
mkdir -p "$S2"
: >"$S2/accept.json"
says 3 "cannot read the record '$S2/accept.json': it is not JSON" "$SWAPTOOL" --state "$S2" status
says_json 3 "it is not JSON" "$SWAPTOOL" --state "$S2" --json status
ok "an empty step record: exit 3 naming it"

# ---- compare inputs: empty, missing
says 3 "cannot read '$TMP/empty': it is not JSON" "$SWAPTOOL" compare "$TMP/empty" "$TMP/empty"
says 3 "No such file or directory" "$SWAPTOOL" compare "$TMP/missing.json" "$TMP/empty"
says_json 3 "it is not JSON" "$SWAPTOOL" --json compare "$TMP/empty" "$TMP/empty"
ok "compare: an empty or missing input is exit 3"

# ---- the profile: missing (usage error, as a bad profile is)
says 2 "cannot read profile '$TMP/missing.ini'" "$SWAPTOOL" --state "$STATE" --profile "$TMP/missing.ini" status
says_json 2 "cannot read profile" "$SWAPTOOL" --state "$STATE" --json --profile "$TMP/missing.ini" status
ok "a missing --profile: exit 2"

# ---- SOURCE: a FIFO, /dev/zero
says 2 "is not a disk or an image file" "$SWAPTOOL" --state "$STATE" preflight "$TMP/fifo" --target 2TB
says 2 "is a character device but not an NVMe controller" "$SWAPTOOL" --state "$STATE" preflight /dev/zero --target 2TB
says 2 "is not a disk or an image file" "$SWAPTOOL" --state "$STATE" plan "$TMP/fifo" --target 2TB
ok "SOURCE as a FIFO or /dev/zero: exit 2, no hang"

# ---- signatures, allowed_signers, keys: empty, missing, not regular
if command -v ssh-keygen >/dev/null; then
	ssh-keygen -q -t ed25519 -N '' -C t -f "$TMP/key"
	S3=$TMP/s3
	write_records "$S3"
	run 0 "$SWAPTOOL" --state "$S3" report --key "$TMP/key" --out "$TMP/rep" --identity t@x
	J=$TMP/rep/report.json
	run 0 timeout 20 "$SWAPTOOL" verify-report "$J"
	says 3 "not an SSH signature" "$SWAPTOOL" verify-report "$J" --sig "$TMP/empty"
	cp "$J" "$TMP/nosig.json"
	says 3 "cannot read the signature '$TMP/nosig.json.sig'" "$SWAPTOOL" verify-report "$TMP/nosig.json"
	head -c 100 "$J" >"$TMP/short.json"
	says 1 "do not trust this report" "$SWAPTOOL" verify-report "$TMP/short.json" --sig "$J.sig"
	run 1 timeout 20 "$SWAPTOOL" --json verify-report "$J" --allowed-signers "$TMP/empty" --identity t@x
	jeq '[.checks[] | select(.status == "fail")] | length > 0' true
	says 3 "not an OpenSSH private key" env -u SSH_AUTH_SOCK "$SWAPTOOL" --state "$S3" report --key "$TMP/empty" --out "$TMP/r2"
	says 3 "not a regular file" env -u SSH_AUTH_SOCK "$SWAPTOOL" --state "$S3" report --key /dev/zero --out "$TMP/r2"
	[ ! -e "$TMP/r2/report.json" ] || fail "a report was written with a bad key"
	ok "empty or missing .sig, truncated report, empty allowed_signers, empty key or /dev/zero as key"
fi
