#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# plan on the incident's images: both paths with the write-up's exact figures, the fingerprint,
# --script (bash -n, guarded), path 2 refused with its reason, 4096-byte targets, bad input.
. "$SRCDIR/tests/lib.sh"
: "${MKDISK:?run through meson test (tests/run)}"

"$MKDISK" incident "$TMP/src.img" >"$TMP/src.json"
P=(--state "$STATE")

run 0 "$SWAPTOOL" "${P[@]}" --json plan "$TMP/src.img" --target 2000398934016 --home /home/nv
jeq .step plan
jeq .plan.source.size_bytes 2048408248320
jeq .plan.target.size_bytes 2000398934016
jeq .plan.target.lba_count 3907029168
jeq .plan.target.last_lba 3907029167
jeq .plan.target.last_usable_lba 3907029134
jeq .plan.delta_bytes -48009314304
jeq .plan.paths.raw_clone.possible false
jeq .plan.paths.fs_clone.possible true
jeq .plan.paths.fs_clone.needs_shrink true
jeq '.plan.paths.fs_clone.partitions[1].new_end_lba' 3907029134
jeq '.plan.paths.fs_clone.partitions[1].new_block_count' 488247313
jeq '.plan.paths.fs_clone.partitions[1].block_count' 499968337
jeq '.plan.paths.fs_clone.partitions[1].part_guid' D6C40002-7E41-493D-A531-809DDA000002
jeq '.plan.paths.fs_clone.partitions[0].new_end_lba' 1050623
jeq '[.plan.paths.fs_clone.actions[].action] | join(",")' \
	check,e2fsck,copy-raw,copy-used-blocks,shrink,fsck,write-table,verify,manual
jeq '.plan.paths.fs_clone.actions[] | select(.action=="shrink") | .blocks_to' 488247313
jeq '.plan.paths.fs_clone.actions[] | select(.action=="copy-raw") | .bytes' 536870912
jeq '.plan.paths.fs_clone.actions[] | select(.action=="write-table") | .command | test("last-lba: 3907029134")' true
jeq '.plan.paths.fresh_install.recommended' true
RF=$(printf '%s' "$OUT" | jq -r .plan.paths.fresh_install.refetchable_bytes)
# the write-up's 1,215 GB of package store (mkdisk's 477 + 738 GB plus their directories)
[ "$RF" -ge 1215000158208 ] && [ "$RF" -lt 1215001000000 ] || fail "refetchable_bytes $RF"
jeq '[.plan.paths.fresh_install.steps[].command] | map(select(. != null)) | join("\n") | test("swaptool backup")' true
jeq '[.plan.paths.fresh_install.steps[].note] | map(select(. != null)) | join(" ") | test("never rsync")' true
jeq '[.plan.paths.fresh_install.steps[].title] | join(" ") | test("~50 min")' true
jeq '.checks[] | select(.id=="fs-clone") | .backup_header_lba' 3907029167
FP=$(printf '%s' "$OUT" | jq -r .fingerprint)
[ ${#FP} = 64 ] || fail "fingerprint '$FP'"
[ -f "$STATE/plan.json" ] || fail "plan record not saved"
# the same figures as preflight (one layout analysis for both)
PF=$("$SWAPTOOL" --state "$TMP/pf" --json preflight "$TMP/src.img" --target 2000398934016 --home /home/nv || true)
[ "$(printf '%s' "$PF" | jq -r '.paths.fresh_install.refetchable_bytes')" = "$RF" ] || fail "preflight and plan disagree on refetchable bytes"
[ "$(printf '%s' "$PF" | jq -r '.paths.fs_clone.partitions[1].new_block_count')" = 488247313 ] || fail "preflight's new_block_count"
ok "incident figures"

# The same source and target give the same fingerprint; another target size another one.
run 0 "$SWAPTOOL" "${P[@]}" --json plan "$TMP/src.img" --target 3907029168s
jeq .fingerprint "$FP"
run 0 "$SWAPTOOL" "${P[@]}" --json plan "$TMP/src.img" --target 2TB
[ "$(printf '%s' "$OUT" | jq -r .fingerprint)" != "$FP" ] || fail "fingerprint ignores the target size"
ok "fingerprint"

# Human output: both paths, the figures, the verdict.
run 0 "$SWAPTOOL" "${P[@]}" plan "$TMP/src.img" --target 2000398934016 --home /home/nv
contains "path 1: fresh install + restore (recommended)"
contains "path 2: filesystem-aware clone with shrink"
contains "499,968,337 -> 488,247,313 blocks"
contains "-48,009,314,304"
contains "3,907,029,167"
run 0 "$SWAPTOOL" "${P[@]}" plan "$TMP/src.img" --target 2000398934016 --path fresh
case "$OUT" in *"path 2: filesystem-aware"*) fail "--path fresh shows path 2";; esac
ok "human output"

# --script: bash, set -euo pipefail, a guard before each destructive command.
run 0 "$SWAPTOOL" "${P[@]}" plan "$TMP/src.img" --target 2000398934016 --script "$TMP/clone.sh"
[ -x "$TMP/clone.sh" ] || fail "script not executable"
bash -n "$TMP/clone.sh" || fail "script does not parse"
grep -q '^set -euo pipefail$' "$TMP/clone.sh" || fail "no set -euo pipefail"
grep -q "^FINGERPRINT=$FP$" "$TMP/clone.sh" || fail "fingerprint not in the script"
# The shrink happens on the way to the target, which no standard tool does without writing the
# source: the script hands the ext4 partition to swaptool clone, and never runs resize2fs itself.
for cmd in dd sfdisk '"$SWAPTOOL" clone'; do
	line=$(grep -nF "$cmd " "$TMP/clone.sh" | grep -v ':#' | head -1 | cut -d: -f1)
	[ -n "$line" ] || fail "$cmd missing from the script"
	[ "$(sed -n "$((line - 1))p;$((line - 2))p" "$TMP/clone.sh" | grep -c '^guard$')" -ge 1 ] || fail "$cmd not guarded"
done
if grep -q '^resize2fs\|e2undo\|UNDO' "$TMP/clone.sh"; then fail "the script writes the source (resize2fs/e2undo)"; fi
# The guard stops at the first surprise: a target of the wrong size.
truncate -s 1000000000000 "$TMP/wrong.img"
got=0
SWAPTOOL="$SWAPTOOL" bash "$TMP/clone.sh" "$TMP/wrong.img" >"$TMP/o" 2>&1 || got=$?
[ "$got" = 3 ] || { cat "$TMP/o"; fail "script ran against a wrong-size target (exit $got)"; }
grep -q "is not 2000398934016 bytes" "$TMP/o" || fail "script's stop message: $(cat "$TMP/o")"
ok "script"

# 4096-byte target LBAs: the table in the target's LBAs, but the ESP's FAT of 512-byte sectors does
# not mount on such a drive (issue 29): path 2 refused with a failed check, the figures still shown.
run 1 "$SWAPTOOL" "${P[@]}" --json plan "$TMP/src.img" --target 2000398934016 --target-lba-size 4096
jeq .plan.paths.fs_clone.possible false
jeq '.checks[] | select(.id=="lba-format") | .status' fail
jeq .plan.target.lba_count 488378646
jeq .plan.target.last_usable_lba 488378640
jeq '.plan.paths.fs_clone.partitions[0].new_start_lba' 256
jeq '.plan.paths.fs_clone.partitions[1].new_start_lba' 131328
jeq '.plan.paths.fs_clone.partitions[1].new_end_lba' 488378640
jeq '.plan.paths.fs_clone.partitions[1].new_block_count' 488247313
ok "4096-byte target"

# Path 2 impossible: its last partition is swap, not ext4, so it cannot shrink; path 1 fits
# (the ESP's 512 MiB; swap is the installer's): only path 1, with the reason.
"$MKDISK" not-ext4 "$TMP/swap.img" >/dev/null
run 0 "$SWAPTOOL" "${P[@]}" --json plan "$TMP/swap.img" --target 2000398934016
jeq .plan.paths.fs_clone.possible false
jeq .plan.paths.fresh_install.possible true
jeq .plan.paths.fresh_install.need_bytes 536870912
jeq '.checks[] | select(.id=="fs-clone") | .status' warn
jeq '.checks[] | select(.id=="fresh-install") | .status' pass
run 1 "$SWAPTOOL" "${P[@]}" plan "$TMP/swap.img" --target 2000398934016 --script "$TMP/no.sh"
[ ! -e "$TMP/no.sh" ] || fail "a script was written for an impossible path"
contains "only path 1"
ok "path 2 impossible"

# Neither path: the data (2.040 TB of used blocks) fits neither a shrunk p2 nor a fresh install
# on 2 TB: exit 1, both checks fail, and plan says so (it said "only path 1 is possible").
"$MKDISK" toolarge "$TMP/big.img" >/dev/null
run 1 "$SWAPTOOL" "${P[@]}" --json plan "$TMP/big.img" --target 2000398934016
jeq .plan.paths.fs_clone.possible false
jeq '.plan.paths.fs_clone.actions | length' 0
jeq '.plan.paths.fs_clone.why_not | test("needs [0-9]+ blocks")' true
jeq .plan.paths.fresh_install.possible false
jeq '.plan.paths.fresh_install.need_bytes > .plan.paths.fresh_install.target_usable_bytes' true
jeq '.checks[] | select(.id=="fs-clone") | .status' fail
jeq '.checks[] | select(.id=="fresh-install") | .status' fail
run 1 "$SWAPTOOL" "${P[@]}" plan "$TMP/big.img" --target 2000398934016 --script "$TMP/no.sh"
[ ! -e "$TMP/no.sh" ] || fail "a script was written for an impossible path"
contains "no path fits this target"
ok "neither path fits"

# Bad input.
run 2 "$SWAPTOOL" "${P[@]}" plan
run 2 "$SWAPTOOL" "${P[@]}" plan "$TMP/src.img"
contains "no --target"
run 2 "$SWAPTOOL" "${P[@]}" plan "$TMP/src.img" --target 1.819TiB
run 2 "$SWAPTOOL" "${P[@]}" plan "$TMP/src.img" --target 2000398934016 --path both
run 2 "$SWAPTOOL" "${P[@]}" plan "$TMP/src.img" --target 2000398934016 --frobnicate
run 2 "$SWAPTOOL" "${P[@]}" --json plan "$TMP/src.img" --target 2000398934016 --rehearse --path fresh
jeq .error.exit_code 2
run 3 "$SWAPTOOL" "${P[@]}" plan "$TMP/nonexistent.img" --target 2000398934016
ok "bad input"
