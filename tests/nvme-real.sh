#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# swaptool's NVMe identity and health against nvme-cli on real NVMe controllers, field by field.
#
# usage: tests/nvme-real.sh [BUILDDIR]     (root; exit 77 where there is no NVMe drive or no nvme-cli)
#
# For each controller under /sys/class/nvme (or those NVME_REAL_CTRLS names, e.g. "nvme0 nvme1")
# it runs `swaptool preflight /dev/nvmeN` (read-only) and compares every field of .source_identity
# with `nvme id-ctrl`, `id-ns`, `smart-log` and `error-log` in -o json of the same controller, and
# with sysfs. SMART counters that move while the drive works (data units, commands, temperature,
# power-on hours) must lie between an nvme-cli read before and one after swaptool's.
# A machine without NVMe drives runs it on QEMU's controllers in the VM bench: tests/vm/run 2.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
SWAPTOOL=${SWAPTOOL:-$build/swaptool}
skip() { echo "SKIP: $*"; exit 77; }

[ "$(id -u)" = 0 ] || skip "needs root (identify and get-log-page are admin commands)"
command -v nvme >/dev/null || skip "no nvme-cli"
command -v jq >/dev/null || skip "no jq"
[ -x "$SWAPTOOL" ] || skip "no swaptool at '$SWAPTOOL'; build first"
ctrls=${NVME_REAL_CTRLS:-$(for c in /sys/class/nvme/nvme*; do [[ "${c##*/}" =~ ^nvme[0-9]+$ ]] && echo "${c##*/}"; done; true)}
[ -n "$ctrls" ] || skip "no NVMe controller on this machine"

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fails=0 compared=0

# flat NAME JSON [FILTER]: every scalar of JSON (or of FILTER applied to it) into the associative
# array NAME, keyed by its path (a.b.0.c), text trimmed (nvme-cli pads sn, mn and fr and prints
# 128-bit counters as strings). One jq a document, not one a field: in the VM bench's guest each
# process costs most of a second.
flat() {
	local -n _m=$1
	local k v
	_m=()
	while IFS=$'\t' read -r k v; do
		_m[$k]=$v
	done < <(jq -r "${3:-.}"' | paths(type != "object" and type != "array") as $p
		| [($p | map(tostring) | join(".")), (getpath($p) | tostring | sub("^\\s+"; "") | sub("\\s+$"; ""))]
		| @tsv' <<<"$2")
}
# sysfs FILE: a sysfs attribute, trailing blanks dropped (empty when absent).
sysfs() { local v=; [ -r "$1" ] && read -r v <"$1"; printf '%s' "${v%"${v##*[! ]}"}"; }
same() { # NAME OURS THEIRS
	compared=$((compared + 1))
	if [ "$2" = "$3" ]; then echo "  ok   $1 = $2"; else echo "  FAIL $1: swaptool '$2', nvme-cli '$3'"; fails=$((fails + 1)); fi
}
between() { # NAME OURS BEFORE AFTER [SLACK]
	local s=${5:-0}
	compared=$((compared + 1))
	if [[ "$2" =~ ^[0-9]+$ ]] && [ "$2" -ge $(($3 - s)) ] && [ "$2" -le $(($4 + s)) ]; then
		echo "  ok   $1 = $2 (nvme-cli $3..$4)"
	else
		echo "  FAIL $1: swaptool '$2', nvme-cli $3..$4"
		fails=$((fails + 1))
	fi
}
tb() { awk -v b="$1" 'BEGIN { printf "%.3f TB", b / 1e12 }'; }

declare -A O I B A N E
for c in $ctrls; do
	dev=/dev/$c
	[ -c "$dev" ] || continue
	echo "$dev: $(sysfs /sys/class/nvme/$c/model)"
	flat I "$(nvme id-ctrl "$dev" -o json)" || { echo "  nvme id-ctrl failed; skipping $dev"; continue; }
	flat B "$(nvme smart-log "$dev" -o json)"
	rc=0
	"$SWAPTOOL" --json --state "$TMP/state" preflight "$dev" --target 2000398934016 >"$TMP/out.json" || rc=$?
	flat A "$(nvme smart-log "$dev" -o json)"
	if [ "$rc" -gt 1 ] && [ "$rc" != 4 ]; then # 4: the clone trap, a path exists (a finding)
		echo "  FAIL swaptool preflight $dev exited $rc: $(jq -r .error.message "$TMP/out.json")"
		fails=$((fails + 1))
		continue
	fi
	flat O "$(<"$TMP/out.json")" .source_identity
	[ "${O[nvme]}" = true ] || { echo "  FAIL no NVMe identity: ${O[reason]:-}"; fails=$((fails + 1)); continue; }

	# Identify Controller, and what swaptool derives from it.
	for f in vid ssvid tnvmcap hmpre hmmin npss apsta wctemp cctemp sn mn fr; do
		same "id-ctrl $f" "${O[id_ctrl.$f]}" "${I[$f]}"
	done
	same "vid (hex)" "${O[vid]}" "$(printf '0x%04x' "${I[vid]}")"
	same "serial" "${O[serial]}" "${I[sn]}"
	same "model (sysfs)" "${O[model]}" "$(sysfs /sys/class/nvme/$c/model)"
	same "firmware (sysfs)" "${O[firmware]}" "$(sysfs /sys/class/nvme/$c/firmware_rev)"
	same "serial (sysfs)" "${O[serial]}" "$(sysfs /sys/class/nvme/$c/serial)"
	same "controller" "${O[controller]}" "$c"
	same "hmb_bytes = hmpre x 4096" "${O[hmb_bytes]}" $((I[hmpre] * 4096))
	same "hmb_min_bytes = hmmin x 4096" "${O[hmb_min_bytes]}" $((I[hmmin] * 4096))
	same "hmb_mb = hmpre / 256" "${O[hmb_mb]}" $(((I[hmpre] + 128) / 256))
	same "power_states = npss + 1" "${O[power_states]}" $((I[npss] + 1))
	same "apst = apsta bit 0" "${O[apst]}" "$( ((I[apsta] & 1)) && echo true || echo false)"
	same "wctemp_c = wctemp - 273" "${O[wctemp_c]}" $((I[wctemp] - 273))
	same "cctemp_c = cctemp - 273" "${O[cctemp_c]}" $((I[cctemp] - 273))
	same "tnvmcap_bytes" "${O[tnvmcap_bytes]}" "${I[tnvmcap]}"

	# SMART / Health: counters that cannot move during the run equal both reads; the others lie between.
	for f in critical_warning avail_spare spare_thresh percent_used media_errors num_err_log_entries \
		 unsafe_shutdowns power_cycles thm_temp1_trans_count thm_temp2_trans_count; do
		between "smart $f" "${O[smart.$f]}" "${B[$f]}" "${A[$f]}"
	done
	for f in data_units_read data_units_written host_read_commands host_write_commands power_on_hours \
		 warning_temp_time critical_comp_time thm_temp1_total_time thm_temp2_total_time; do
		between "smart $f" "${O[smart.$f]}" "${B[$f]}" "${A[$f]}"
	done
	t0=${B[temperature]} t1=${A[temperature]}
	between "smart temperature (K)" "${O[smart.temperature]}" $((t0 < t1 ? t0 : t1)) $((t0 > t1 ? t0 : t1)) 2
	same "temperature_c = K - 273" "${O[smart.temperature_c]}" $((O[smart.temperature] - 273))
	same "data_read_bytes = units x 512000" "${O[smart.data_read_bytes]}" $((O[smart.data_units_read] * 512000))
	same "data_written_bytes = units x 512000" "${O[smart.data_written_bytes]}" $((O[smart.data_units_written] * 512000))
	same "data_read" "${O[smart.data_read]}" "$(tb "${O[smart.data_read_bytes]}")"
	same "data_written" "${O[smart.data_written]}" "$(tb "${O[smart.data_written_bytes]}")"

	# Namespaces: each against nvme id-ns, and the judged one's size against the block device.
	i=0
	while [ -n "${O[namespaces.$i.nsid]:-}" ]; do
		nsid=${O[namespaces.$i.nsid]}
		if flat N "$(nvme id-ns "$dev" -n "$nsid" -o json)"; then
			fl=$((N[flbas] & 15))
			for f in nsze ncap nuse; do
				same "ns $nsid $f" "${O[namespaces.$i.$f]}" "${N[$f]}"
			done
			same "ns $nsid lba_format" "${O[namespaces.$i.lba_format]}" "$fl"
			same "ns $nsid lba_size" "${O[namespaces.$i.lba_size]}" $((1 << N[lbafs.$fl.ds]))
			same "ns $nsid metadata_size" "${O[namespaces.$i.metadata_size]}" "${N[lbafs.$fl.ms]}"
			same "ns $nsid size_bytes" "${O[namespaces.$i.size_bytes]}" $((N[nsze] << N[lbafs.$fl.ds]))
		fi
		i=$((i + 1))
	done
	[ "$i" -gt 0 ] || { echo "  FAIL no namespace reported"; fails=$((fails + 1)); }
	j=${O[judged_nsid]:-}
	if [ -n "$j" ] && [ -r /sys/block/${c}n$j/size ]; then
		k=0
		while [ -n "${O[namespaces.$k.nsid]:-}" ] && [ "${O[namespaces.$k.nsid]}" != "$j" ]; do k=$((k + 1)); done
		same "ns $j size_bytes (sysfs)" "${O[namespaces.$k.size_bytes]}" $(($(sysfs /sys/block/${c}n$j/size) * 512))
	fi

	# PCIe link against sysfs.
	d=/sys/class/nvme/$c/device
	if [ -r "$d/current_link_speed" ]; then
		same "pcie current_speed" "${O[pcie.current_speed]}" "$(sysfs "$d/current_link_speed")"
		same "pcie current_width" "${O[pcie.current_width]}" "$(sysfs "$d/current_link_width")"
		same "pcie max_speed" "${O[pcie.max_speed]}" "$(sysfs "$d/max_link_speed")"
		same "pcie max_width" "${O[pcie.max_width]}" "$(sysfs "$d/max_link_width")"
	fi
	# Error log: slots (elpe + 1), used entries (non-zero error_count), and the benign ones apart
	# (status Invalid Field in Command; nvme-cli prints status_field without the phase bit).
	same "error-log slots = elpe + 1" "${O[error_log.slots]}" $((I[elpe] + 1))
	if el=$(nvme error-log "$dev" -o json 2>/dev/null); then
		flat E "$el" '[.errors[]? | select(.error_count != 0)]
			| {used: length, benign: [.[] | select(.status_field % 2048 == 2)] | length}'
		same "error-log used entries" "${O[error_log.entries]}" "${E[used]}"
		same "error-log benign (Invalid Field)" "${O[error_log.benign_invalid_field]}" "${E[benign]}"
		same "error-log other" "${O[error_log.other]}" $((E[used] - E[benign]))
	fi
done

echo "$compared fields compared, $fails differ"
[ "$compared" -gt 0 ] || skip "no readable NVMe controller"
[ "$fails" -eq 0 ]
