#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# swaptool's NVMe identity and health against nvme-cli on the real drives of this machine, field by field.
#
# usage: tests/nvme-real.sh [BUILDDIR]     (root; exit 77 where there is no NVMe drive or no nvme-cli)
#
# For each controller under /sys/class/nvme it runs `swaptool preflight /dev/nvmeN` (read-only) and
# compares .source_identity with `nvme id-ctrl -o json` and `nvme smart-log -o json` of the same
# controller. SMART counters that move while the drive works (data units, commands, temperature,
# power-on hours) must lie between an nvme-cli read before and one after swaptool's.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
SWAPTOOL=${SWAPTOOL:-$build/swaptool}
skip() { echo "SKIP: $*"; exit 77; }

[ "$(id -u)" = 0 ] || skip "needs root (identify and get-log-page are admin commands)"
command -v nvme >/dev/null || skip "no nvme-cli"
command -v jq >/dev/null || skip "no jq"
[ -x "$SWAPTOOL" ] || skip "no swaptool at '$SWAPTOOL'; build first"
ctrls=$(for c in /sys/class/nvme/nvme*; do [[ "${c##*/}" =~ ^nvme[0-9]+$ ]] && echo "${c##*/}"; done; true)
[ -n "$ctrls" ] || skip "no NVMe controller on this machine"

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fails=0 compared=0

# num JSON PATH: a number from JSON text (nvme-cli prints 128-bit counters as numbers or strings).
num() { jq -r "$2 | if type == \"string\" then (sub(\"^\\\\s+\"; \"\") | tonumber) else . end" <<<"$1"; }
str() { jq -r "$2 // \"\" | sub(\"\\\\s+$\"; \"\")" <<<"$1"; }
same() { # NAME OURS THEIRS
	compared=$((compared + 1))
	if [ "$2" = "$3" ]; then echo "  ok   $1 = $2"; else echo "  FAIL $1: swaptool '$2', nvme-cli '$3'"; fails=$((fails + 1)); fi
}
between() { # NAME OURS BEFORE AFTER [SLACK]
	local s=${5:-0}
	compared=$((compared + 1))
	if [ "$2" -ge $(($3 - s)) ] && [ "$2" -le $(($4 + s)) ]; then
		echo "  ok   $1 = $2 (nvme-cli $3..$4)"
	else
		echo "  FAIL $1: swaptool $2, nvme-cli $3..$4"
		fails=$((fails + 1))
	fi
}

for c in $ctrls; do
	dev=/dev/$c
	[ -c "$dev" ] || continue
	echo "$dev: $(cat /sys/class/nvme/$c/model 2>/dev/null | sed 's/ *$//')"
	idc=$(nvme id-ctrl "$dev" -o json) || { echo "  nvme id-ctrl failed; skipping $dev"; continue; }
	before=$(nvme smart-log "$dev" -o json)
	rc=0
	"$SWAPTOOL" --json --state "$TMP/state" preflight "$dev" --target 2000398934016 >"$TMP/out.json" || rc=$?
	after=$(nvme smart-log "$dev" -o json)
	if [ "$rc" -gt 1 ] && [ "$rc" != 4 ]; then # 4: the clone trap, a path exists (a finding)
		echo "  FAIL swaptool preflight $dev exited $rc: $(jq -r .error.message "$TMP/out.json")"
		fails=$((fails + 1))
		continue
	fi
	ours=$(jq .source_identity "$TMP/out.json")
	[ "$(jq -r .nvme <<<"$ours")" = true ] || { echo "  FAIL no NVMe identity: $(jq -r .reason <<<"$ours")"; fails=$((fails + 1)); continue; }

	for f in vid ssvid tnvmcap hmpre hmmin npss apsta wctemp cctemp; do
		same "id-ctrl $f" "$(num "$ours" ".id_ctrl.$f")" "$(num "$idc" ".$f")"
	done
	for f in sn mn fr; do
		same "id-ctrl $f" "$(str "$ours" ".id_ctrl.$f")" "$(str "$idc" ".$f")"
	done
	same "model (sysfs)" "$(str "$ours" .model)" "$(sed 's/ *$//' /sys/class/nvme/$c/model)"
	same "firmware (sysfs)" "$(str "$ours" .firmware)" "$(sed 's/ *$//' /sys/class/nvme/$c/firmware_rev)"

	for f in critical_warning avail_spare spare_thresh percent_used media_errors num_err_log_entries \
		 unsafe_shutdowns power_cycles thm_temp1_trans_count thm_temp2_trans_count; do
		between "smart $f" "$(num "$ours" ".smart.$f")" "$(num "$before" ".$f")" "$(num "$after" ".$f")"
	done
	for f in data_units_read data_units_written host_read_commands host_write_commands power_on_hours \
		 warning_temp_time critical_comp_time thm_temp1_total_time thm_temp2_total_time; do
		between "smart $f" "$(num "$ours" ".smart.$f")" "$(num "$before" ".$f")" "$(num "$after" ".$f")"
	done
	t0=$(num "$before" .temperature) t1=$(num "$after" .temperature)
	between "smart temperature (K)" "$(num "$ours" .smart.temperature)" $((t0 < t1 ? t0 : t1)) $((t0 > t1 ? t0 : t1)) 2
	same "temperature_c = K - 273" "$(num "$ours" .smart.temperature_c)" $(( $(num "$ours" .smart.temperature) - 273 ))
	same "hmb_mb = hmpre / 256" "$(num "$ours" .hmb_mb)" $(( ($(num "$idc" .hmpre) + 128) / 256 ))
	same "data_read_bytes = units x 512000" "$(num "$ours" .smart.data_read_bytes)" \
		$(( $(num "$ours" .smart.data_units_read) * 512000 ))

	# Namespaces: sizes and LBA sizes against nvme id-ns of each.
	for nsid in $(jq -r '.namespaces[].nsid' <<<"$ours"); do
		idns=$(nvme id-ns "$dev" -n "$nsid" -o json) || continue
		fl=$(( $(num "$idns" .flbas) & 15 ))
		same "ns $nsid nsze" "$(num "$ours" ".namespaces[] | select(.nsid == $nsid) | .nsze")" "$(num "$idns" .nsze)"
		same "ns $nsid lba_size" "$(num "$ours" ".namespaces[] | select(.nsid == $nsid) | .lba_size")" \
			$((1 << $(num "$idns" ".lbafs[$fl].ds")))
	done

	# PCIe link against sysfs.
	d=/sys/class/nvme/$c/device
	if [ -r "$d/current_link_speed" ]; then
		same "pcie current_speed" "$(str "$ours" .pcie.current_speed)" "$(cat "$d/current_link_speed")"
		same "pcie current_width" "$(num "$ours" .pcie.current_width)" "$(cat "$d/current_link_width")"
		same "pcie max_speed" "$(str "$ours" .pcie.max_speed)" "$(cat "$d/max_link_speed")"
	fi
	# Error log: used entries (non-zero error_count) against nvme error-log.
	if el=$(nvme error-log "$dev" -o json 2>/dev/null); then
		same "error-log used entries" "$(num "$ours" .error_log.entries)" \
			"$(jq '[.errors[]? | select(.error_count != 0)] | length' <<<"$el")"
	fi
done

echo "$compared fields compared, $fails differ"
[ "$compared" -gt 0 ] || skip "no readable NVMe controller"
[ "$fails" -eq 0 ]
