#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The committed NVMe dumps are exactly what mknvmedump writes from each fixtures/nvme/*/values.txt,
# so the readable values are the truth and the binaries cannot drift from them.
. "$SRCDIR/tests/lib.sh"

: "${MKNVMEDUMP:?run through meson test}"
n=0
for dir in "$SRCDIR"/fixtures/nvme/*/; do
	name=$(basename "$dir")
	mkdir -p "$TMP/$name"
	"$MKNVMEDUMP" "$dir/values.txt" "$TMP/$name" || fail "mknvmedump on $name failed"
	for f in "$TMP/$name"/*.bin; do
		cmp "$f" "$dir/$(basename "$f")" || fail "$name/$(basename "$f") differs from its values.txt; regenerate it"
	done
	[ "$(ls "$dir"/*.bin | wc -l)" = "$(ls "$TMP/$name"/*.bin | wc -l)" ] || fail "$name has stray dumps"
	n=$((n + 1))
done
[ "$n" -ge 4 ] || fail "expected at least 4 NVMe fixtures, found $n"

# The sizes nvme-cli writes: id-ctrl and id-ns 4096, smart-log 512, error-log 64 per entry.
for dir in "$SRCDIR"/fixtures/nvme/*/; do
	[ "$(stat -c %s "$dir/id-ctrl.bin")" = 4096 ] || fail "$dir/id-ctrl.bin is not 4096 bytes"
	[ "$(stat -c %s "$dir/id-ns.bin")" = 4096 ] || fail "$dir/id-ns.bin is not 4096 bytes"
	[ "$(stat -c %s "$dir/smart-log.bin")" = 512 ] || fail "$dir/smart-log.bin is not 512 bytes"
	[ $(( $(stat -c %s "$dir/error-log.bin") % 64 )) = 0 ] || fail "$dir/error-log.bin is not 64-byte entries"
done

# Independent check of a few bytes with od (offsets from the NVMe base specification).
x=$SRCDIR/fixtures/nvme/xg7000
[ "$(od -An -tu2 -j0 -N2 "$x/id-ctrl.bin" | tr -d ' ')" = 7755 ] || fail "vid is not 0x1e4b"
[ "$(dd if="$x/id-ctrl.bin" bs=1 skip=24 count=15 2>/dev/null)" = "XG7000-2TB 2242" ] || fail "mn"
[ "$(dd if="$x/id-ctrl.bin" bs=1 skip=64 count=8 2>/dev/null)" = "GT0d9d63" ] || fail "fr"
[ "$(od -An -tu4 -j272 -N4 "$x/id-ctrl.bin" | tr -d ' ')" = 10240 ] || fail "hmpre"
[ "$(od -An -tu1 -j263 -N1 "$x/id-ctrl.bin" | tr -d ' ')" = 4 ] || fail "npss"
[ "$(od -An -tu8 -j0 -N8 "$x/id-ns.bin" | tr -d ' ')" = 4000797360 ] || fail "nsze"
[ "$(od -An -tu2 -j1 -N2 "$x/smart-log.bin" | tr -d ' ')" = 315 ] || fail "temperature (315 K = 42 °C)"
[ "$(od -An -tu8 -j128 -N8 "$x/smart-log.bin" | tr -d ' ')" = 96 ] || fail "power-on hours"
[ "$(od -An -tu8 -j32 -N8 "$x/smart-log.bin" | tr -d ' ')" = 107226563 ] || fail "data units read"
ok "nvme fixtures match their values ($n drives)"
