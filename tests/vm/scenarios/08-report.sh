# SPDX-License-Identifier: MIT
# scenario: the report: signed in the guest over the records of scenarios 1, 5 and 6, verified on the host

# The records are those the guest wrote in scenario 1 (preflight, the usage line), 5 (backup
# before the swap; restore and verify after it) and 6 (accept on /dev/nvme1n1), as they came back;
# a scenario whose records are missing or older than swaptool runs first. In the guest:
# ssh-keygen makes the signing key, swaptool report signs. On the host: swaptool verify-report and
# ssh-keygen -Y verify accept the signature, and each embedded record is the one the guest wrote.
# The verdict is 'rejected': the emulated drive misses accept's gates (exit 1).
RECORDS=("01-usage-line usage_line" "05-path1 after_swap" "06-accept accept_nvme")

# need SCENARIO FUNC: the state directory of FUNC's boot in SCENARIO, from a passing run that is
# newer than swaptool; else SCENARIO runs now.
need() {
	local d=$VMDIR/results/$1
	if [ ! -e "$d/passed" ] || [ "$SWAPTOOL" -nt "$d/passed" ] || [ ! -d "$d/$2/state" ]; then
		echo "== $1 first, for its records"
		# A failure there ends this scenario too (errexit holds in the subshell: no || after it).
		# in a run directory of its own, as tests/vm/run gives each scenario
		(VM_NAME=$1 SCENARIO=$VMSRC/scenarios/$1.sh VMRUN=$VMRUN/$1; mkdir "$VMRUN"; . "$SCENARIO"; host)
		touch "$d/passed"
	fi
}

host() {
	local r s f
	mkdir -p "$VMRUN/records"
	for r in "${RECORDS[@]}"; do
		set -- $r
		need "$1" "$2"
		cp "$VMDIR/results/$1/$2/state/"*.json "$VMRUN/records/"
	done
	# preflight: the usage line's record (scenario 1), not boot one's of scenario 5.
	cp "$VMDIR/results/01-usage-line/usage_line/state/preflight.json" "$VMRUN/records/"
	vm_input "$VMRUN/records"
	vm_boot report_guest || exit 1
	[ "$VM_RC" = 0 ] || fail "the guest part failed"

	local R=$VMOUT/r/report.json
	load report
	jeq .step report
	jeq .host dgx4
	[ "$(jq -r '.steps | keys | join(",")' "$R")" = "accept,backup,preflight,restore,verify" ] ||
		fail "embedded steps: $(jq -r '.steps | keys | join(",")' "$R")"
	for s in preflight backup restore verify accept; do
		f=$VMRUN/records/$s.json
		[ "$(jq -S ".steps.$s" "$R")" = "$(jq -S . "$f")" ] || fail "the report's $s differs from the guest's record"
	done
	jeq '.checks[] | select(.id == "preflight") | .summary | startswith("clone trap found")' true
	jeq '.checks[] | select(.id == "verify") | .status' pass
	jeq '.checks[] | select(.id == "signature") | .status' pass
	# An emulated drive misses accept's gates: the report rejects it, as it should (exit 1).
	jeq '.checks[] | select(.id == "accept") | .status' fail
	jeq .report_verdict rejected
	grep -q "GPT backup header at LBA 4,000,797,359 on the old drive; the new drive's last LBA is 3,907,029,167" \
		"$VMOUT/r/report.txt" || fail "report.txt: the clone trap's figures"
	grep -q "nvme1n1" "$VMOUT/r/report.txt" || fail "report.txt does not name the measured NVMe namespace"
	ok "report over the guest's records: preflight (the usage line), backup, restore, verify, accept on nvme1n1"

	run_host 0 "$HOST_SWAPTOOL" verify-report "$R" --allowed-signers "$VMOUT/r/allowed_signers" --identity ops@dgx4
	ssh-keygen -Y verify -f "$VMOUT/r/allowed_signers" -I ops@dgx4 -n swaptool-report -s "$R.sig" <"$R" >/dev/null 2>&1 ||
		fail "ssh-keygen -Y verify rejects the report"
	# A record changed after signing is caught.
	jq -c '.steps.preflight.delta_bytes = 0' "$R" >"$VMRUN/forged.json"
	cp "$R.sig" "$VMRUN/forged.json.sig"
	run_host 1 "$HOST_SWAPTOOL" verify-report "$VMRUN/forged.json" --allowed-signers "$VMOUT/r/allowed_signers" --identity ops@dgx4
	! ssh-keygen -Y verify -f "$VMOUT/r/allowed_signers" -I ops@dgx4 -n swaptool-report -s "$VMRUN/forged.json.sig" \
		<"$VMRUN/forged.json" >/dev/null 2>&1 || fail "ssh-keygen accepts a forged report"
	ok "on the host: verify-report and ssh-keygen -Y verify accept the guest's signature, and reject a changed record"
}

# run_host CODE CMD...: CMD exits CODE; output in $OUT, $ERR.
run_host() {
	local want=$1 got=0
	shift
	"$@" >"$VMRUN/o" 2>"$VMRUN/e" || got=$?
	OUT=$(cat "$VMRUN/o") ERR=$(cat "$VMRUN/e")
	[ "$got" = "$want" ] || { cat "$VMRUN/o" "$VMRUN/e" >&2; fail "'$*' exited $got, expected $want"; }
}

report_guest() {
	mkdir -p "$STATE"
	cp /vm/in/records/*.json "$STATE/"
	ssh-keygen -q -t ed25519 -N '' -C ops@dgx4 -f /tmp/key
	run report 1 swaptool --state "$STATE" --json report --key /tmp/key --out /out/r --identity ops@dgx4
}
