#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# swaptool import (issue 30): the records a rescue stick kept cross the swap. A stick image written by
# swaptool rescue, a clone record added to its state partition (debugfs, as the stick's clone would
# leave it), then imported from the image, from a loop device and from a directory: written 0600,
# byte for byte, a newer record here kept, the same one "already here"; report signs preflight, backup,
# plan and clone as one chain and verify-report and ssh-keygen -Y verify accept it. Refused with exit 3
# and nothing written: records of another node, a clone that did not carry out the stick's plan, a
# record of the wrong shape, a symlink on the stick, an image that is no stick, a FIFO.
. "$SRCDIR/tests/lib.sh"
need_root
for t in debugfs jq ssh-keygen; do command -v $t >/dev/null || skip "$t missing (scripts/install-deps)"; done
. "$SRCDIR/tests/fixtures/rescue-lib.sh"
stick_inputs "$TMP"
HOST=$(hostname | cut -d. -f1)

# The node's records before the swap, as records of this host; the clone the stick will have made.
mkdir -m 0700 "$STATE"
for s in preflight backup plan; do
	"$MKRECORD" "$s" "$TMP/$s.json"
	jq --arg h "$HOST" '.host = $h' "$TMP/$s.json" >"$STATE/$s.json"
	chmod 600 "$STATE/$s.json"
done
FP=$(jq -r .plan.fingerprint "$STATE/plan.json")
"$MKRECORD" clone "$TMP/c.json"
jq --arg h "$HOST" --arg fp "$FP" '.host = $h | .fingerprint = $fp' "$TMP/c.json" >"$TMP/clone.json"

# stick IMAGE [CLONE]: a stick image carrying the state's records, CLONE put on it as swaptool/clone.json
stick() {
	run 0 "$SWAPTOOL" --state "$STATE" --json rescue --out "$1" "${K[@]}"
	OFF=$(($(jq -r '.rescue.partitions[1].start_lba' <<<"$OUT") * 512))
	[ -z "${2:-}" ] || debugfs -w -R "write $2 swaptool/clone.json" "$1?offset=$OFF" >/dev/null 2>&1 ||
		fail "debugfs could not add the clone record"
}
stick "$TMP/stick.img" "$TMP/clone.json"

# ---- the node after the swap: its own state (the clone copied it) plus the stick's clone
cp -a "$STATE" "$TMP/node"
run 0 "$SWAPTOOL" --state "$TMP/node" --json import "$TMP/stick.img"
jeq .verdict pass
jeq .import.kind image
jeq '[.import.records[] | "\(.step)=\(.action)"] | join(",")' \
	"preflight=already here,backup=already here,plan=already here,clone=imported"
jeq '.checks[] | select(.id == "chain") | .status' pass
cmp "$TMP/node/clone.json" "$TMP/clone.json" || fail "the imported clone record is not the stick's, byte for byte"
[ "$(stat -c %a "$TMP/node/clone.json")" = 600 ] || fail "the imported record is not 0600"
[ "$(jq -r '.import.records[3].sha256' <<<"$OUT")" = "$(sha256sum <"$TMP/clone.json" | cut -c1-64)" ] ||
	fail "the record's sha256 is not the file's"
ok "image: the stick's clone imported byte for byte (0600, its sha256 in the record); the node's own records already here"
run 0 "$SWAPTOOL" --state "$TMP/node" status --path clone
contains "clone      PASS"

# report: preflight, backup, plan and clone as one signed chain
ssh-keygen -q -t ed25519 -N '' -C ops -f "$TMP/key"
run 0 "$SWAPTOOL" --state "$TMP/node" --json report --key "$TMP/key" --out "$TMP/r" --identity ops@swaptool
R=$TMP/r/report.json
[ "$(jq -r '[.records[] | .step] | join(",")' "$R")" = preflight,backup,plan,clone ] ||
	fail "the report does not sign preflight, backup, plan and clone: $(jq -c '[.records[] | .step]' "$R")"
[ "$(jq -r '.records[] | select(.step == "clone") | .file_sha256' "$R")" = "$(sha256sum <"$TMP/clone.json" | cut -c1-64)" ] ||
	fail "the report's clone record is not the file the stick held"
jq -e '.steps.clone.fingerprint == "'"$FP"'"' "$R" >/dev/null || fail "the report's clone is not the stick's"
run 0 "$SWAPTOOL" verify-report "$R" --allowed-signers "$TMP/r/allowed_signers" --identity ops@swaptool
ssh-keygen -Y verify -f "$TMP/r/allowed_signers" -I ops@swaptool -n swaptool-report -s "$R.sig" <"$R" >/dev/null 2>&1 ||
	fail "ssh-keygen -Y verify rejects the report"
ok "report: the stick's clone signed with preflight, backup and plan; verify-report and ssh-keygen -Y verify accept it"

# ---- a loop device, a directory; a newer record here is kept
need_loop
cp "$TMP/stick.img" "$TMP/usb.img"
attach "$TMP/usb.img"
cp -a "$STATE" "$TMP/node2"
jq '.finished = "2099-01-01T00:00:00Z"' "$TMP/node2/plan.json" >"$TMP/p" && cat "$TMP/p" >"$TMP/node2/plan.json"
run 0 "$SWAPTOOL" --state "$TMP/node2" --json import "$DEV"
jeq .import.kind device
jeq '.import.records[] | select(.step == "plan") | .action' "kept: newer here"
jeq '.import.records[] | select(.step == "clone") | .action' imported
[ "$(jq -r .finished "$TMP/node2/plan.json")" = 2099-01-01T00:00:00Z ] || fail "the newer plan here was replaced"
mkdir -p "$TMP/mnt"
mount -o ro "${DEV}p2" "$TMP/mnt" 2>/dev/null || mount -o ro,offset=$OFF "$TMP/stick.img" "$TMP/mnt"
run 0 "$SWAPTOOL" --state "$TMP/node3" --json import "$TMP/mnt"
umount "$TMP/mnt"
jeq .import.kind directory
jeq '[.import.records[] | .action] | unique | join(",")' imported
cmp "$TMP/node3/clone.json" "$TMP/clone.json" || fail "the clone record imported from the directory differs"
ok "loop device and mounted directory: imported; a record that finished later here is kept"

# ---- refusals: exit 3, nothing written
refused() { # TEXT STICK: import into a fresh state directory exits 3 saying TEXT; nothing is written there
	local n=$RANDOM
	run 3 "$SWAPTOOL" --state "$TMP/ref$n" import "$2"
	contains "$1"
	[ -z "$(ls "$TMP/ref$n" 2>/dev/null | grep -v '^\.lock$' || true)" ] || fail "a refused import wrote: $(ls "$TMP/ref$n")"
}
jq '.host = "dgx5"' "$TMP/clone.json" >"$TMP/other.json"
stick "$TMP/other.img" "$TMP/other.json"
refused "is of node 'dgx5', this is '$HOST'" "$TMP/other.img"
jq '.fingerprint = "0000000000000000"' "$TMP/clone.json" >"$TMP/unchained.json"
stick "$TMP/unchained.img" "$TMP/unchained.json"
refused "did not carry out its plan" "$TMP/unchained.img"
jq '.clone = "not an object" | .checks = 7' "$TMP/clone.json" >"$TMP/shape.json"
stick "$TMP/shape.img" "$TMP/shape.json"
refused "the stick's clone record cannot be taken" "$TMP/shape.img"
stick "$TMP/link.img"
debugfs -w -R "symlink swaptool/clone.json /etc/passwd" "$TMP/link.img?offset=$OFF" >/dev/null 2>&1
refused "is not a regular file" "$TMP/link.img"
head -c 8M /dev/urandom >"$TMP/noise.img"
refused "holds no ext4 labelled SWAPTOOL-STATE" "$TMP/noise.img"
mkfifo "$TMP/fifo"
refused "is a FIFO" "$TMP/fifo"
run 2 "$SWAPTOOL" --state "$TMP/x" import
contains "import needs STICK"
says_json 3 "is of node 'dgx5'" "$SWAPTOOL" --state "$TMP/x" --json import "$TMP/other.img"
ok "refused: records of another node, a clone that did not carry out the stick's plan, a record of the wrong shape, a symlink, no stick, a FIFO (3); no STICK (2)"
