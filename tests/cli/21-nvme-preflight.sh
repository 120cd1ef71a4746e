#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# preflight --from-dumps: identity, drive class, health and exit code for each NVMe fixture,
# on an image file and (as root) on a loop device; the target judged from --target-model.
. "$SRCDIR/tests/lib.sh"

img="$TMP/src.img"
truncate -s 64M "$img"
sgdisk -n1:2048:0 -t1:8300 "$img" >/dev/null || skip "sgdisk failed"
N=$SRCDIR/fixtures/nvme
pf() { "$SWAPTOOL" --state "$STATE" preflight "$@"; }
check() { jeq "[.checks[] | select(.id == \"$1\") | .status][0]" "$2"; }

# The incident's drive, with the incident's numbers: wrong class (warn), healthy (pass), exit 0.
run 0 pf "$img" --target 2000398934016 --from-dumps "$N/xg7000" --json
check drive-class warn
check health pass
jeq .source.model "XG7000-2TB 2242"
jeq .source.firmware GT0d9d63
jeq .source_identity.vid 0x1e4b
jeq .source_identity.id_ctrl.vid 7755
jeq .source_identity.id_ctrl.hmpre 10240
jeq .source_identity.id_ctrl.hmmin 10240
jeq .source_identity.hmb_mb 40
jeq .source_identity.hmb_bytes 41943040
jeq .source_identity.power_states 5
jeq '.source_identity.namespaces[0].nsze' 4000797360
jeq '.source_identity.namespaces[0].lba_size' 512
jeq '.source_identity.namespaces[0].size_bytes' 2048408248320
jeq .source_identity.smart.power_on_hours 96
jeq .source_identity.smart.temperature_c 42
jeq .source_identity.smart.temperature 315
jeq .source_identity.smart.data_read "54.900 TB"
jeq .source_identity.smart.data_written "13.400 TB"
jeq .source_identity.smart.data_written_bytes 13400000000000
jeq .source_identity.smart.media_errors 0
jeq .source_identity.error_log.entries 0
jeq .source_identity.class.name "KingSpec XG7000"
jeq .source_identity.class.verdict avoid
jeq .source_identity.class.controller "Maxio MAP1602A"
jeq '[.checks[] | select(.id == "drive-class")][0].source.verdict' avoid
jeq '[.checks[] | select(.id == "health")][0].source.media_errors' 0
jeq .source_identity.dumps_match_source false
jeq .source_identity.namespace_note null
jeq .source.vid 0x1e4b
ok "xg7000: avoid, healthy"

# The same for people: the identity table and the incident's units.
run 0 pf "$img" --target 2000398934016 --from-dumps "$N/xg7000" --no-color
contains "XG7000-2TB 2242"
contains "40 MB (hmpre 10240)"
contains "54.900 TB read / 13.400 TB written"
contains "42 °C"
contains "KingSpec XG7000: avoid"

# The reference drive: reference class, healthy with two benign error-log entries counted apart.
run 0 pf "$img" --target 2000398934016 --from-dumps "$N/esl01" --json
check drive-class pass
check health pass
jeq .source_identity.class.verdict reference
jeq .source_identity.hmb_mb 64
jeq .source_identity.error_log.entries 2
jeq .source_identity.error_log.benign_invalid_field 2
jeq .source_identity.error_log.other 0
ok "esl01: reference, healthy, benign errors apart"

# The replacement: measure, not assume (warn), with the naming-trap note.
run 0 pf "$img" --target 2000398934016 --from-dumps "$N/mp600-mini" --json
check drive-class warn
check health pass
jeq .source_identity.class.verdict measure
jeq '.source_identity.namespaces[0].nsze' 3907029168
contains "MP600 Micro"
ok "mp600-mini: measure"

# A sick drive: media errors fail the health check (exit 1); the heat and the real error are said.
run 1 pf "$img" --target 2000398934016 --from-dumps "$N/sick" --json
check health fail
check drive-class warn
jeq .verdict fail
jeq .source_identity.smart.media_errors 12
jeq '[.checks[] | select(.id == "health")][0].source.temperature_c' 81
jeq '[.checks[] | select(.id == "health")][0].source.wctemp_c' 80
jeq '[.checks[] | select(.id == "health")][0].source.error_log_other' 1
jeq .source_identity.class.known false
jeq .source_identity.class.verdict measure
contains "12 media errors"
contains "at or above the warning threshold of 80 °C"
contains "thermal throttling: 7 T1"
contains "32 MB host memory buffer"
# Its namespace is smaller than the drive's total capacity (tnvmcap): said.
jeq .source_identity.namespace_note "namespace 1 is 1.000 TB of the drive's 1.024 TB (tnvmcap)"
jeq .source_identity.tnvmcap_bytes 1024209543168
ok "sick: health fail, exit 1"

# Without dumps an image has no NVMe identity: said, skipped, not an error.
run 0 pf "$img" --target 2000398934016 --json
check drive-class skip
check health skip
jeq .source_identity.nvme false
contains "not an NVMe device"
ok "image without dumps: skip"

# The target judged from its model name: the MP600 Mini 2TB is exactly 3,907,029,168 LBAs.
run 0 pf "$img" --target 2000398934016 --from-dumps "$N/xg7000" --target-model "Corsair MP600 Mini 2TB" --json
jeq .target_identity.class.name "Corsair MP600 Mini"
jeq .target_identity.class.verdict measure
jeq .target_identity.from model
jeq '[.checks[] | select(.id == "drive-class")][0].target.verdict' measure
contains "check the label says Mini"
# The naming trap: the Micro is named as such.
run 0 pf "$img" --target 2000398934016 --target-model "Corsair MP600 Micro 2TB" --json
jeq .target_identity.class.verdict avoid
check drive-class warn
contains "naming trap"
# A model whose known size disagrees with --target: usage error naming both.
run 2 pf "$img" --target 2048408248320 --target-model "Corsair MP600 Mini 2TB"
contains "3,907,029,168 LBAs"
contains "2,048,408,248,320"
# Suited drive as target, nothing else judged: pass.
run 0 pf "$img" --target 2000398934016 --target-model "Samsung PM9A3 1.92TB" --json
check drive-class pass
ok "--target-model"

# A loop device (root): the same identity from dumps; without dumps, "not an NVMe device (loopN)".
if [ "$(id -u)" = 0 ] && losetup -f >/dev/null 2>&1; then
	attach --read-only "$img"
	dev=$DEV
	run 0 pf "$dev" --target 2000398934016 --from-dumps "$N/xg7000" --json
	check drive-class warn
	check health pass
	jeq .source.model "XG7000-2TB 2242"
	run 1 pf "$dev" --target 2000398934016 --from-dumps "$N/sick" --json
	check health fail
	run 0 pf "$dev" --target 2000398934016 --json
	check health skip
	contains "not an NVMe device ($(basename "$dev"))"
	ok "loop device"
else
	echo "# loop device part skipped: needs root and a free loop device"
fi
