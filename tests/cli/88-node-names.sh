#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Two nodes with one host name stay two (issue 27 class 2): --node NAME=FILE keys a record by the
# collector's name whatever host it claims, the claim shown beside it; records that claim one host
# (or are given one NAME) but show different drives are refused (exit 3) naming both files; a bad
# NAME is exit 2. metrics --out that is one of its inputs (name, symlink, hard link) is exit 2 with
# the input unchanged (issue 27 class 7).
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/fixtures/records-lib.sh"

# two nodes cloned from one image: both say host "ubuntu"; a's accept fails (the incident's dgx4),
# b's passes and is newer, so keyed by host b's record would hide a's failure
dgx4_accept "$TMP/a4.json"
dgx5_accept "$TMP/a5.json"
jq '.host = "ubuntu" | .drive = {disk: "nvme0n1", model: "XG7000-2TB 2242", serial: "SER-A", size_bytes: 2048408248320}' \
	"$TMP/a4.json" >"$TMP/a.json"
jq '.host = "ubuntu" | .finished = "2026-12-01T00:00:00Z"
	| .drive = {disk: "nvme0n1", model: "XG7000-2TB 2242", serial: "SER-B", size_bytes: 2048408248320}' \
	"$TMP/a5.json" >"$TMP/b.json"

run 1 "$SWAPTOOL" --json fleet --node gpu-a="$TMP/a.json" --node gpu-b="$TMP/b.json"
jeq '[.nodes[].host] | join(",")' "gpu-a,gpu-b"
jeq '[.nodes[].claimed_hosts[]] | join(",")' "ubuntu,ubuntu"
jeq '[.nodes[].status] | join(",")' "fail,pass"
jeq '[.checks[] | .host + ":" + .status] | join(",")' "gpu-a:fail,gpu-b:pass"
jeq '[.inputs[] | .node + "/" + .host] | join(",")' "gpu-a/ubuntu,gpu-b/ubuntu"
run 1 "$SWAPTOOL" fleet --node gpu-a="$TMP/a.json" --node gpu-b="$TMP/b.json" --reference gpu-b
contains "gpu-a (claims ubuntu)"
run 0 "$SWAPTOOL" metrics --node gpu-a="$TMP/a.json" --node gpu-b="$TMP/b.json"
printf '%s\n' "$OUT" >"$TMP/m.prom"
grep -qxF 'swaptool_accept_verdict{host="gpu-a",claimed_host="ubuntu",device="nvme0n1",verdict="fail"} 1' "$TMP/m.prom" ||
	fail "metrics lack gpu-a's failed accept: $(grep accept_verdict "$TMP/m.prom")"
grep -qxF 'swaptool_accept_verdict{host="gpu-b",claimed_host="ubuntu",device="nvme0n1",verdict="pass"} 1' "$TMP/m.prom" ||
	fail "metrics lack gpu-b's accept"
grep -qxF 'swaptool_drive_info{host="gpu-b",claimed_host="ubuntu",device="nvme0n1",role="measured",model="XG7000-2TB 2242",serial="SER-B",firmware=""} 1' "$TMP/m.prom" ||
	fail "metrics lack gpu-b's drive: $(grep drive_info "$TMP/m.prom")"
if command -v promtool >/dev/null; then
	promtool check metrics <"$TMP/m.prom" || fail "promtool rejects the metrics"
fi
# a name that is the record's own host: no claim shown, no label
run 0 "$SWAPTOOL" --json fleet --node dgx5="$TMP/a5.json"
jeq '.nodes[0].claimed_hosts | length' 0
ok "two nodes with one host name: --node names keep both, the failing one fails the fleet"

# the same host name, different drives: refused, naming both files, the host and the difference
for step in fleet metrics; do
	run 3 "$SWAPTOOL" "$step" "$TMP/a.json" "$TMP/b.json"
	contains "'$TMP/a.json' and '$TMP/b.json' both claim host 'ubuntu' but show different drives (measured serial 'SER-A' against 'SER-B')"
	contains "--node NAME=FILE"
	[ "$step" = fleet ] || [ -z "$OUT" ] || fail "metrics printed series for a refused set"
	# one --node NAME twice with different drives: refused the same way
	run 3 "$SWAPTOOL" "$step" --node x="$TMP/a.json" --node x="$TMP/b.json"
	contains "are both given for node 'x' but show different drives (measured serial 'SER-A' against 'SER-B')"
done
# preflight records of two nodes: the source drive's serial differs
"$MKRECORD" preflight "$TMP/p.json"
jq '.host = "ubuntu" | .source.serial = "SRC-A"' "$TMP/p.json" >"$TMP/pa.json"
jq '.host = "ubuntu" | .source.serial = "SRC-B"' "$TMP/p.json" >"$TMP/pb.json"
run 3 "$SWAPTOOL" fleet "$TMP/pa.json" "$TMP/pb.json"
contains "(source serial 'SRC-A' against 'SRC-B')"
# one host, one drive: the newer record counts, as before
jq '.finished = "2026-12-02T00:00:00Z" | .verdict = "pass" | .gates |= map(.status = "pass")' "$TMP/a.json" >"$TMP/a-new.json"
run 0 "$SWAPTOOL" --json fleet "$TMP/a.json" "$TMP/a-new.json"
jeq '.nodes | length' 1
jeq '.nodes[0].accept.finished' "2026-12-02T00:00:00Z"
ok "records of one host or one --node NAME with different drives: exit 3 naming both files"

# bad NAMEs: exit 2, nothing read
for bad in "" "a b" $'a\033]0;x\007' "-x" "a'b" "a/b"; do
	for step in fleet metrics; do
		run 2 "$SWAPTOOL" "$step" --node "$bad=$TMP/a.json"
	done
done
run 2 "$SWAPTOOL" fleet --node "gpu-a"
contains "is not NAME=FILE"
run 2 "$SWAPTOOL" metrics --node "gpu-a="
ok "--node: a NAME that is no host name, or no FILE: exit 2"

# metrics --out onto an input: by name, through a symlink, through a hard link
sum=$(sha256sum <"$TMP/a5.json")
ln -s "$TMP/a5.json" "$TMP/link.prom"
ln "$TMP/a5.json" "$TMP/hard.prom"
for o in "$TMP/a5.json" "$TMP/link.prom" "$TMP/hard.prom"; do
	run 2 "$SWAPTOOL" metrics "$TMP/a4.json" --out "$o" "$TMP/a5.json"
	contains "is '$TMP/a5.json', one of the inputs"
	[ "$(sha256sum <"$TMP/a5.json")" = "$sum" ] || fail "--out $o changed the input"
done
run 2 "$SWAPTOOL" metrics --out "$TMP/hard.prom" --node n="$TMP/a5.json"
[ -L "$TMP/link.prom" ] || fail "the symlink was replaced"
[ "$(sha256sum <"$TMP/a5.json")" = "$sum" ] || fail "an input changed"
ok "metrics --out that is an input (name, symlink, hard link): exit 2, the input unchanged"
