#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Outside inputs that are not regular files (a FIFO nobody writes, /dev/zero, a directory) given as
# an nvme dump, --sig, a report, a compare input, a record or the profile: a message and exit 3 (2
# for the profile, an option), never a hang. A result that cannot be written (stdout on /dev/full,
# closed, or a pipe whose reader left) is exit 3 with a message. --json alone prints its error
# document; --target values that overflow or name a directory or FIFO are usage errors; JSON is
# valid UTF-8 whatever bytes a name holds.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/fixtures/records-lib.sh"

write_records "$STATE"
dgx5_accept "$TMP/ref.json"
mkfifo "$TMP/fifo"

# ---- inputs
for bad in "$TMP/fifo" /dev/zero "$TMP"; do
	kind=$(case $bad in "$TMP/fifo") echo "a FIFO";; /dev/zero) echo "a character device";; *) echo "a directory";; esac)
	says 3 "$kind" "$SWAPTOOL" compare "$bad" "$TMP/ref.json"
	says 3 "$kind" "$SWAPTOOL" compare "$TMP/ref.json" "$bad"
	says_json 3 "$kind" "$SWAPTOOL" --json compare "$bad" "$TMP/ref.json"
	says 2 "$kind" "$SWAPTOOL" --state "$STATE" --profile "$bad" status
	says_json 2 "$kind" "$SWAPTOOL" --state "$STATE" --json --profile "$bad" status
done
ok "compare inputs and --profile: FIFO, /dev/zero, directory refused"

# verify-report: a good signed report first, then each input replaced
if command -v ssh-keygen >/dev/null; then
	ssh-keygen -q -t ed25519 -N '' -C t -f "$TMP/key"
	run 0 "$SWAPTOOL" --state "$STATE" report --key "$TMP/key" --out "$TMP/rep" --identity t@x
	R=$TMP/rep/report.json
	run 0 timeout 20 "$SWAPTOOL" verify-report "$R"
	for bad in "$TMP/fifo" /dev/zero; do
		says 3 "cannot read the signature '$bad'" "$SWAPTOOL" verify-report "$R" --sig "$bad"
		says_json 3 "cannot read the signature" "$SWAPTOOL" --json verify-report "$R" --sig "$bad"
		says 3 "cannot read the report '$bad'" "$SWAPTOOL" verify-report "$bad" --sig "$R.sig"
		says 3 "cannot read the allowed signers file '$bad'" "$SWAPTOOL" verify-report "$R" --allowed-signers "$bad" --identity t@x
	done
	ok "verify-report: FIFO and /dev/zero as report, --sig, --allowed-signers refused"
fi

# a record in the state directory that is a FIFO or a device
S2=$TMP/s2
write_records "$S2"
rm "$S2/accept.json"
mkfifo "$S2/accept.json"
says 3 "cannot read the record '$S2/accept.json': it is a FIFO" "$SWAPTOOL" --state "$S2" status
says_json 3 "it is a FIFO" "$SWAPTOOL" --state "$S2" --json status
run 3 timeout 20 "$SWAPTOOL" --state "$S2" report --no-sign --out "$TMP/r2"
rm "$S2/accept.json"
ln -s /dev/zero "$S2/accept.json"
says 3 "it is a character device" "$SWAPTOOL" --state "$S2" status
ok "records: FIFO and /dev/zero in the state directory refused"

# nvme-cli dumps
if command -v sgdisk >/dev/null; then
	img=$TMP/src.img
	truncate -s 64M "$img"
	sgdisk -n1:2048:0 -t1:8300 "$img" >/dev/null
	D=$TMP/d
	mkdir "$D"
	cp "$SRCDIR"/fixtures/nvme/xg7000/*.bin "$D/"
	run 0 timeout 20 "$SWAPTOOL" --state "$TMP/s3" preflight "$img" --target 2000398934016 --from-dumps "$D"
	for f in id-ctrl.bin smart-log.bin error-log.bin; do
		mv "$D/$f" "$D/$f.good"
		mkfifo "$D/$f"
		says 3 "dump '$D/$f' cannot be used: it is a FIFO" \
			"$SWAPTOOL" --state "$TMP/s3" preflight "$img" --target 2000398934016 --from-dumps "$D"
		says_json 3 "it is a FIFO" "$SWAPTOOL" --state "$TMP/s3" --json preflight "$img" --target 2000398934016 --from-dumps "$D"
		rm "$D/$f"
		if [ "$(id -u)" = 0 ]; then
			mknod "$D/$f" c 1 5 # /dev/zero's numbers
			says 3 "it is a character device" \
				"$SWAPTOOL" --state "$TMP/s3" preflight "$img" --target 2000398934016 --from-dumps "$D"
			rm "$D/$f"
		fi
		mv "$D/$f.good" "$D/$f"
	done
	ok "nvme dumps: FIFO and character device refused"
fi

# ---- outputs: the result could not be written
for j in "" --json; do
	run 3 sh -c "'$SWAPTOOL' --state '$STATE' $j status >/dev/full"
	contains "cannot write the result to standard output: No space left on device"
	run 3 sh -c "'$SWAPTOOL' --state '$STATE' $j compare '$TMP/ref.json' '$TMP/ref.json' >/dev/full"
	contains "No space left on device"
	run 3 sh -c "'$SWAPTOOL' --state '$STATE' $j status >&-"
	contains "standard output is closed"
	# the reader is gone before swaptool writes: EPIPE (SIGPIPE is ignored), exit 3; the pipe's
	# read end is closed before swaptool starts, so there is no race to wait out
	rc=0
	python3 -c 'import os, subprocess, sys
r, w = os.pipe()
os.close(r)
sys.exit(subprocess.call(sys.argv[1:], stdout=w))' "$SWAPTOOL" --state "$STATE" $j status 2>"$TMP/err" || rc=$?
	[ "$rc" = 3 ] || fail "status into a closed pipe exited $rc"
	grep -q "cannot write the result to standard output: Broken pipe" "$TMP/err" || fail "no EPIPE message: $(cat "$TMP/err")"
done
# a usage error with stdout on /dev/full keeps its own code
run 2 sh -c "'$SWAPTOOL' --state '$STATE' status --path nowhere >/dev/full"
# a closed stdout must not become the record file: nothing is run, no record is written
run 3 sh -c "'$SWAPTOOL' --state '$TMP/s4' --json verify /nonexistent >&-"
[ ! -e "$TMP/s4/verify.json" ] || fail "a record was written with stdout closed"
ok "stdout on /dev/full, closed, or a closed pipe: exit 3 with a message"

# ---- words and codes
# a restore that changed the root but cannot save its record says so, and where the undo is
mkdir -p "$TMP/root/home/nv/.config/flare/orbit" "$TMP/root/etc" "$TMP/s6"
echo secret >"$TMP/root/home/nv/.config/flare/orbit/controller.key"
echo '127.0.0.1 localhost' >"$TMP/root/etc/hosts"
run 0 "$SWAPTOOL" --state "$TMP/s6" backup --root "$TMP/root" --home /home/nv --out "$TMP/b.tar.gz"
mkdir -p "$TMP/new/etc"
echo 'old' >"$TMP/new/etc/hosts"
touch "$TMP/notadir"
run 3 "$SWAPTOOL" --state "$TMP/notadir/state" restore "$TMP/b.tar.gz" --root "$TMP/new" --undo-out "$TMP/undo.tar.gz"
contains "the restore is complete and the root '$TMP/new' has changed, but its record cannot be saved"
contains "'swaptool restore --undo $TMP/undo.tar.gz' puts the root back"
[ -s "$TMP/undo.tar.gz" ] || fail "no undo tarball"
ok "a restore whose record cannot be saved names the undo"
run 2 "$SWAPTOOL" --json
[ "$(printf '%s' "$OUT" | jq -s length)" = 1 ] || fail "--json alone: not one JSON document"
jeq .error.exit_code 2
jeq '.error.message | test("no step")' true
run 2 "$SWAPTOOL" --json help nosuchstep
jeq .error.exit_code 2
run 0 "$SWAPTOOL" --json --version
jeq .version "$("$SWAPTOOL" --version | cut -d' ' -f2)"
truncate -s 64M "$TMP/small.img"
for tg in 99999999999999999999 18446744073709551616 18446744073709551615 9223372036854775808 "$TMP" "$TMP/fifo" \
	"$TMP/missing.img"; do
	run 2 timeout 20 "$SWAPTOOL" --state "$TMP/s5" preflight "$TMP/small.img" --target "$tg"
	contains "bad --target"
	run 2 timeout 20 "$SWAPTOOL" --state "$TMP/s5" plan "$TMP/small.img" --target "$tg"
done
ok "--json alone, overflowing and non-disk --target: usage errors (exit 2)"

# JSON is UTF-8: a name with bytes that are not (here a path) comes out as U+FFFD, raw bytes in hex
bad=$(printf '%s/\xff\xfe.json' "$TMP")
cp "$TMP/ref.json" "$bad"
printf '{"schema":"swaptool/1","step":"accept","verdict":"pass","checks":[]}' >"$TMP/x.json"
run 0 "$SWAPTOOL" --json compare "$bad" "$TMP/x.json"
printf '%s' "$OUT" | iconv -f UTF-8 -t UTF-8 >/dev/null || fail "compare --json: not valid UTF-8"
jeq '.a.file | endswith("/\ufffd\ufffd.json")' true
jeq '.a.file_hex | endswith("2ffffe2e6a736f6e")' true
run 3 "$SWAPTOOL" --json compare "$bad.missing" "$TMP/x.json"
printf '%s' "$OUT" | iconv -f UTF-8 -t UTF-8 >/dev/null || fail "error document: not valid UTF-8"
ok "JSON stays valid UTF-8"

# numbers: a ratio that overflows is null, not the bare word Infinity that no JSON reader takes
jq '.runs[0].iops = 1e-300' "$TMP/ref.json" >"$TMP/tiny.json"
jq '.runs[0].iops = 1e300' "$TMP/ref.json" >"$TMP/huge.json"
run 0 "$SWAPTOOL" --json compare "$TMP/tiny.json" "$TMP/huge.json"
jeq '.runs[0].iops_ratio' null
run 0 "$SWAPTOOL" compare "$TMP/tiny.json" "$TMP/huge.json"
ok "non-finite numbers are null"
