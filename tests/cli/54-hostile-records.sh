#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Hostile records: every field of real records (preflight, plan, backup, verify, accept, report)
# turned into each other JSON type or removed; status, report and compare over them never die of a
# signal, exit 0-3 and print exactly one JSON document. Records of an unknown schema are refused.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/fixtures/records-lib.sh"
: "${MKDISK:?run through meson test (tests/run)}"
command -v ssh-keygen >/dev/null || skip "no ssh-keygen"
ssh-keygen -q -t ed25519 -N '' -C t -f "$TMP/key"

# ---- real records of a run (swaptool's own output), the synthetic full swap for what is missing
G=$TMP/good
write_records "$G"
"$MKDISK" scaled "$TMP/src.img" >/dev/null
size=$(stat -c %s "$TMP/src.img")
run 4 "$SWAPTOOL" --state "$G" --json preflight "$TMP/src.img" --target $((size - 1048576))
run 0 "$SWAPTOOL" --state "$G" --json plan "$TMP/src.img" --target $((size - 1048576))
R=$TMP/root
mkdir -p "$R/home/nv/.config/flare/orbit" "$R/etc" "$R/home/nv/.ssh"
echo secret >"$R/home/nv/.config/flare/orbit/controller.key"
echo 'UUID=1 / ext4 defaults 0 1' >"$R/etc/fstab"
echo '127.0.0.1 localhost' >"$R/etc/hosts"
run 0 "$SWAPTOOL" --state "$G" --json backup --root "$R" --home /home/nv --out "$TMP/b.tar.gz"
got=0
"$SWAPTOOL" --state "$G" --json verify "$TMP/b.tar.gz" --root "$R" >/dev/null 2>&1 || got=$?
[ "$got" -le 1 ] || fail "verify of the demo root exited $got"
# accept: a real run on a small file when O_DIRECT works here, else the synthetic record stays
head -c 8M /dev/urandom >"$TMP/shard"
cp "$G/accept.json" "$TMP/accept-synthetic.json"
got=0
"$SWAPTOOL" --state "$TMP/acc" --json accept "$TMP/shard" --working-set 8M --duration 1 --ramp 0 --no-seq \
	--inflight 4 --threads 1 >/dev/null 2>&1 || got=$?
[ "$got" -le 1 ] && cp "$TMP/acc/accept.json" "$G/accept.json"
got=0
"$SWAPTOOL" --state "$G" --json report --key "$TMP/key" --out "$TMP/rep" --identity t@x >/dev/null 2>&1 || got=$?
[ "$got" -le 1 ] || fail "report of the real records exited $got"
[ -s "$G/report.json" ] || fail "no report record"
dgx5_accept "$TMP/ref.json"
# every record a step wrote is one status reads
got=0
"$SWAPTOOL" --state "$G" --json status >"$TMP/st.json" 2>&1 || got=$?
[ "$got" -le 1 ] || { cat "$TMP/st.json" >&2; fail "status of the real records exited $got"; }
[ "$(jq -r '[.steps[] | select(.state == "missing") | .step] | join(",")' "$TMP/st.json")" = "" ] ||
	fail "status misses records: $(cat "$TMP/st.json")"
ok "real records: $(cd "$G" && echo *.json)"

# mutations FILE: fields (array elements past the second skipped: they repeat the first two's shape)
# changed, one document a line. An object or an array becomes a string, a number, an array, an
# object, null, or is removed (json-c asserts when its array and object calls meet another type);
# a scalar becomes, in turn from field to field, each of those (scalars are read through json-c's
# lenient getters, so one change each is enough).
mutations() {
	jq -c '. as $d | [paths | select(all(.[]; type == "string" or . < 2))] | to_entries[] | .key as $i | .value as $p |
		($d | getpath($p) | type | . == "object" or . == "array") as $c |
		(if $c then ("s", "n", "a", "o", "z", "d") else ["a", "s", "o", "n", "d", "z"][$i % 6] end) as $m |
		$d | if $m == "d" then delpaths([$p]) else setpath($p;
			{"s": "x\u00e9", "n": -7, "a": [1, "x"], "o": {"k": 1}, "z": null}[$m]) end' "$1"
}

# try WHAT CMD...: CMD must exit 0-3 (no signal, no hang); its stdout is kept to be checked as one
# JSON document by check_outputs (one jq for all: a jq per run would cost more than the runs).
OUTS=$TMP/outs
mkdir -p "$OUTS"
k=0
try() {
	local what=$1 rc=0
	shift
	k=$((k + 1))
	timeout 20 "$@" >"$OUTS/$k" 2>"$TMP/err" || rc=$?
	echo "$what" >"$OUTS/$k.what"
	if [ "$rc" -gt 3 ]; then
		cat "$TMP/err" >&2
		cp -r "$S" "$TMP/failed-state" 2>/dev/null || true
		fail "$what: exit $rc"
	fi
}
check_outputs() {
	local counts f
	counts=$(cd "$OUTS" && jq -rn 'reduce inputs as $x ({}; .[input_filename] += 1) | [.[]] | [length, all(. == 1)] | @tsv' \
		$(ls | grep -v what)) || counts=bad
	if [ "$counts" != "$(printf '%s\ttrue' "$k")" ]; then
		for f in $(cd "$OUTS" && ls | grep -v what); do
			[ "$(jq -s length "$OUTS/$f" 2>/dev/null)" = 1 ] ||
				{ head -c 400 "$OUTS/$f" >&2; fail "$(cat "$OUTS/$f.what"): not exactly one JSON document"; }
		done
		fail "outputs: $counts"
	fi
	rm -f "$OUTS"/*
	k=0
}

# Round i mutates the i-th change of every record at once (each reader meets one bad field in
# each record), so that the run stays short: status, report and compare read them all.
S=$TMP/s
cp -r "$G" "$S"
STEPS=()
max=0
for f in "$G"/*.json; do
	step=$(basename "$f" .json)
	STEPS+=("$step")
	mutations "$f" >"$TMP/mut-$step"
	c=$(wc -l <"$TMP/mut-$step")
	[ "$c" -gt "$max" ] && max=$c
	total=$((${total:-0} + c))
done
for i in $(seq "$max"); do
	for step in "${STEPS[@]}"; do
		doc=$(sed -n "${i}p" "$TMP/mut-$step")
		if [ -n "$doc" ]; then printf '%s\n' "$doc" >"$S/$step.json"; else cp "$G/$step.json" "$S/"; fi
	done
	try "status, round $i" "$SWAPTOOL" --state "$S" --json status
	try "report, round $i" "$SWAPTOOL" --state "$S" --json report --no-sign --out "$S/out"
	try "compare, round $i" "$SWAPTOOL" --json compare "$S/accept.json" "$TMP/ref.json"
	try "compare B, round $i" "$SWAPTOOL" --json compare "$TMP/ref.json" "$S/accept.json"
	[ $((i % 100)) = 0 ] && check_outputs
done
check_outputs
ok "$total mutated records in $max rounds: status, report and compare exit 0-3 with one JSON document"

# the signed report.json, mutated at its top and in its accept record, as a compare input
RJ=$TMP/rep/report.json
[ -s "$RJ" ] || fail "no report.json"
jq '{schema, steps: {accept: .steps.accept}, records, summary, verdict}' "$RJ" >"$TMP/rj.json"
mutations "$TMP/rj.json" >"$TMP/mut"
i=0
while IFS= read -r doc; do
	i=$((i + 1))
	printf '%s\n' "$doc" >"$TMP/m.json"
	try "compare report #$i" "$SWAPTOOL" --json compare "$TMP/m.json" "$TMP/ref.json"
done <"$TMP/mut"
check_outputs
ok "$i mutated reports: compare exits 0-3 with one JSON document"

# ---- records of a newer schema: refused, naming the file and the version, never read as current
for step in accept preflight; do
	rm -rf "$S"
	cp -r "$G" "$S"
	jq '.schema = "swaptool/9"' "$G/$step.json" >"$S/$step.json"
	run 3 "$SWAPTOOL" --state "$S" status
	contains "$S/$step.json"
	contains "swaptool/9"
	run 3 "$SWAPTOOL" --state "$S" --json status
	jeq .error.exit_code 3
	jeq '.error.message | test("swaptool/9")' true
	run 3 "$SWAPTOOL" --state "$S" --json report --key "$TMP/key" --out "$S/out" --identity t@x
done
jq '.schema = "swaptool/9"' "$G/accept.json" >"$TMP/a9.json"
run 3 "$SWAPTOOL" compare "$TMP/a9.json" "$TMP/ref.json"
contains "swaptool/9"
contains "$TMP/a9.json"
run 3 "$SWAPTOOL" compare "$TMP/ref.json" "$TMP/a9.json"
jq '.schema = "swaptool-report/9"' "$RJ" >"$TMP/r9.json"
run 3 "$SWAPTOOL" compare "$TMP/r9.json" "$TMP/ref.json"
contains "swaptool-report/9"
# verify-report: a report of a newer schema, validly signed, is refused naming the version
ssh-keygen -q -Y sign -f "$TMP/key" -n swaptool-report "$TMP/r9.json"
run 3 "$SWAPTOOL" verify-report "$TMP/r9.json"
contains "swaptool-report/9"
run 3 "$SWAPTOOL" --json verify-report "$TMP/r9.json"
jeq '.error.message | test("swaptool-report/9")' true
# not a record at all, two documents, another step's record under this step's name
rm -rf "$S"
cp -r "$G" "$S"
echo '[1,2]' >"$S/accept.json"
run 3 "$SWAPTOOL" --state "$S" status
contains "not a JSON object"
cat "$G/accept.json" "$G/accept.json" >"$S/accept.json"
run 3 "$SWAPTOOL" --state "$S" status
contains "more than one JSON document"
cp "$G/backup.json" "$S/accept.json"
run 3 "$SWAPTOOL" --state "$S" status
contains "the record of 'backup', not of 'accept'"
run 3 "$SWAPTOOL" compare "$S/accept.json" "$TMP/ref.json"
ok "unknown schema versions and non-records refused (exit 3), naming file and version"
