#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Free text beside the tables is escaped as their cells are: records of other nodes and names from the
# node user's home carry ESC and BEL (a terminal's title set, a screen cleared), and no raw control byte
# of theirs reaches status, fleet, compare, report (stdout and report.txt) or backup's error
# (docs/swaptool-safety.7, WHAT THE TERMINAL GETS).
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/fixtures/records-lib.sh"

EVIL=$'\e]0;owned\a\e[2J\x9b\xff'
# raw FILE WHAT: FILE holds no ESC, BEL, CSI (C1, as UTF-8 or alone) or other control but newline and tab
raw() {
	if LC_ALL=C grep -qP '[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]|\x9b' "$1"; then
		LC_ALL=C grep -naP '[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]|\x9b' "$1" | cat -v >&2
		fail "$2: a raw control byte reached the terminal"
	fi
}
both() { raw "$TMP/out" "$1 (stdout)"; raw "$TMP/err" "$1 (stderr)"; }
# evil FILE KEY...: the record FILE with KEY set to the hostile text (as a record of another node has it)
evil() {
	local f=$1 k
	shift
	for k; do jq --arg e "dgx4$EVIL" "$k = \$e" "$f" >"$TMP/e" && mv "$TMP/e" "$f"; done
}

# status: the host column is a table cell; the next: hint and path line are free text
write_records "$TMP/s"
for f in "$TMP"/s/*.json; do evil "$f" .host; done
evil "$TMP/s/accept.json" '.checks[0].summary'
rm "$TMP/s/verify.json"
run 0 "$SWAPTOOL" --state "$TMP/s" status
both status
contains 'dgx4\x1b]0;owned\x07'
ok "status: no raw control byte"

# compare: the A:/B: headers name the records' hosts and targets
dgx5_accept "$TMP/a5.json"
dgx4_accept "$TMP/a4.json"
evil "$TMP/a4.json" .host .target.path
run 1 "$SWAPTOOL" compare "$TMP/a5.json" "$TMP/a4.json"
both compare
grep -q '^B: .*dgx4\\x1b\]0;owned\\x07' "$TMP/out" || fail "compare: B header lacks the escaped host"
ok "compare: no raw control byte"

# fleet: the headline names the reference's host, the verdict line the records' summaries
cp "$TMP/a5.json" "$TMP/f5.json"
evil "$TMP/f5.json" '.checks[0].summary'
run 1 "$SWAPTOOL" fleet "$TMP/a4.json" "$TMP/f5.json" --reference dgx5
both fleet
run 2 "$SWAPTOOL" fleet "$TMP/a4.json" --reference dgx9
both "fleet's error"
contains 'dgx4\x1b]0;owned\x07'
ok "fleet: no raw control byte"

# report: stdout and report.txt, the reference node's line among them
if command -v ssh-keygen >/dev/null; then
	ssh-keygen -q -t ed25519 -N '' -C t -f "$TMP/key"
	write_records "$TMP/r"
	for f in "$TMP"/r/*.json; do evil "$f" .host; done
	evil "$TMP/r/backup.json" .archive.path
	evil "$TMP/r/accept.json" .target.path
	cp "$TMP/a5.json" "$TMP/ref.json"
	evil "$TMP/ref.json" .host
	run 0 "$SWAPTOOL" --state "$TMP/r" report --key "$TMP/key" --out "$TMP/r/out" --identity t@x \
		--reference "$TMP/ref.json"
	both report
	raw "$TMP/r/out/report.txt" report.txt
	grep -q 'reference node dgx4\\x1b\]0;owned\\x07' "$TMP/r/out/report.txt" || fail "report.txt: reference line"
	ok "report: no raw control byte on stdout or in report.txt"
fi

# backup: its error quotes the file name it was given (here a directory, not a tarball)
. "$SRCDIR/tests/fixtures/backup-lib.sh"
demo_root "$TMP/root"
mkdir "$TMP/o$EVIL"
"$SWAPTOOL" --state "$TMP/st" backup --root "$TMP/root" --home /home/nv --out "$TMP/o$EVIL" \
	>"$TMP/out" 2>"$TMP/err" && fail "backup onto a directory passed"
grep -q 'o\\x1b\]0;owned' "$TMP/err" || { cat "$TMP/err" >&2; fail "backup's error does not name the file"; }
both "backup's error"
ok "backup: no raw control byte in its error"
