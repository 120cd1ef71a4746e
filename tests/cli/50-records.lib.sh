# SPDX-License-Identifier: MIT
# Step records with the incident's numbers for the report tests (tests/tools/records.c): sourced.

# The records are built by tests/tools/records.c through src/record.c with the names src/schema.h
# declares (mkrecord), so a fixture cannot drift from what the steps write and read; `mkrecord list`
# names them, `mkrecord check FILE...` validates any record (tests/cli/50-fixtures-schema.sh).
MKRECORD=${MKRECORD:-${BUILDDIR:?run through meson test (tests/run)}/tests/mkrecord}

# write_records DIR: a finished fresh-install swap of dgx4 that passes everything: preflight
# (the clone-trap finding: verdict trap, raw clone impossible, both other paths possible),
# backup, restore, verify, and accept with the engine gates run.
write_records() {
	"$MKRECORD" set "$1"
}

# dgx4_accept FILE: the incident's dgx4 XG7000 numbers at 98 GB (the failing candidate), no engine gates.
dgx4_accept() {
	"$MKRECORD" dgx4-accept "$1"
}

# dgx5_accept FILE: the reference node (ESL01), as a passing accept record.
dgx5_accept() {
	"$MKRECORD" dgx5-accept "$1"
}

# flip_byte FILE OFFSET: xor one byte of FILE with 1 (OFFSET from the start; negative from the end).
flip_byte() {
	local f=$1 off=$2 n b
	n=$(stat -c %s "$f")
	[ "$off" -lt 0 ] && off=$((n + off))
	b=$(od -An -tu1 -j "$off" -N1 "$f" | tr -d ' ')
	printf "$(printf '\\%03o' $((b ^ 1)))" | dd of="$f" bs=1 seek="$off" conv=notrunc status=none
}

# unarmour FILE OUT / armour KIND IN OUT: between an OpenSSH armour and its raw bytes.
unarmour() { sed '1d;$d' "$1" | tr -d '\r\n' | base64 -d >"$2"; }
armour() {
	{ echo "-----BEGIN $1-----"; base64 -w 70 "$2"; echo "-----END $1-----"; } >"$3"
}
