# SPDX-License-Identifier: MIT
# scenario: the rescue stick: written by swaptool rescue, booted under OVMF from USB, it clones the bootable NVMe source onto a USB UAS disk by itself; that disk boots alone as NVMe to the source's node; the stick's records imported, signed and verified

# Path 2 as an operator runs it (README, "Path 2 from the rescue stick"), with QEMU's drives. On the
# host (the node before the swap): preflight of the source and a backup (the demo node root stands
# for its files), then `swaptool rescue --out stick.img` from Debian's generic kernel and its modules
# (tests/vm/lib.sh vm_kernel_generic keeps its modules directory with depmod's modules.dep), the
# kernel argument swaptool.auto= naming the source and the target by serial. QEMU boots OVMF on q35
# with no -kernel: the firmware starts the stick from an emulated USB disk (usb-storage, boot index
# 0), systemd-boot starts the kernel and the stick's initramfs; the stick's /init loads its modules,
# mounts its state partition, shows the drives with their serials, runs preflight, plan and clone of
# /dev/nvme0n1, the bench's bootable Debian (tests/vm/uefi.sh: 4 GiB, 48 MiB of data past 3 GiB),
# onto the 3 GiB disk behind QEMU's UAS bridge, keeps the records and its log on the stick and powers
# off. On the host: `swaptool import stick.img` takes the stick's records; the clone's record and
# the target are judged as in 11-boot-usb (tests/vm/uefi.sh uefi_clone_boots: independent tools,
# then the target booted alone as NVMe under OVMF reports the source's hostname, machine-id,
# controller.key and data); accept runs on a file; `swaptool report` signs preflight, backup, plan,
# clone and accept, and verify-report and ssh-keygen -Y verify accept it.
USB_SERIAL=A5KFB2400001MINI

host() {
	[ "$(uname -m)" = x86_64 ] || vm_skip "the bench boots x86_64 guests"
	vm_kernel_generic
	uefi_source_image
	local g=$VM_CACHE/generic rel node=$VMRUN/node t0 took_stick took_boot rc=0
	rel=$(ls "$g/lib/modules")
	mkdir -m 0700 "$node"
	VMOUT=$VMDIR/results/$VM_NAME/stick
	rm -rf "$VMOUT"
	mkdir -p "$VMOUT"

	cp --sparse=always "$UEFI_IMG" "$VMRUN/src.img"
	truncate -s "$UEFI_CUT_BYTES" "$VMRUN/tgt.img"
	src_fingerprint "$VMRUN/src.img" >"$VMRUN/src.before"
	# the node before the swap: its preflight (4: the clone trap, a path exists) and backup (the demo
	# node root stands for its files)
	rc=0
	"$SWAPTOOL" --state "$node" -q preflight "$VMRUN/src.img" --target "$UEFI_CUT_BYTES" >/dev/null || rc=$?
	[ "$rc" = 4 ] || fail "preflight on the host exited $rc, expected 4 (the clone trap)"
	rc=0
	"$SRCDIR/tests/fixtures/make-demo-root.sh" "$VMRUN/root" >/dev/null
	"$SWAPTOOL" --state "$node" -q backup --root "$VMRUN/root" --home /home/nv --out "$VMRUN/backup.tar.gz" >/dev/null ||
		fail "backup on the host failed"

	# the stick, timed
	t0=$SECONDS
	"$SWAPTOOL" --state "$node" --json rescue --out "$VMRUN/stick.img" --kernel "$g/vmlinuz" --modules "$g/lib/modules/$rel" \
		--append "console=ttyS0 nvme_core.io_timeout=10 swaptool.auto=/dev/nvme0n1,$USB_SERIAL swaptool.after=poweroff" \
		>"$VMOUT/rescue.json" 2>"$VMOUT/rescue.err" || { cat "$VMOUT/rescue.err"; fail "swaptool rescue failed"; }
	took_stick=$((SECONDS - t0))
	OUT=$(cat "$VMOUT/rescue.json")
	jeq '[.checks[] | select(.status == "fail")] | length' 0
	jeq '.checks[] | select(.id == "records") | .summary | test("carries preflight, backup from")' true
	ok "stick written in $took_stick s: $(jq -r '.rescue.bytes' <<<"$OUT") bytes, Linux $rel, $(jq -r '.rescue.modules | length' <<<"$OUT") modules, initramfs $(jq -r '.rescue.initramfs.bytes' <<<"$OUT") bytes; gpt, esp and state read back"

	# the boot: firmware, loader, kernel and the stick's /init, nothing of the bench's own
	cp "$UEFI_OVMF_VARS" "$VMRUN/vars.fd"
	local args=(-machine q35 -smp "${VM_SMP:-2}" -m "${VM_MEM:-1536}" -nodefaults -display none -no-reboot
		-drive "if=pflash,format=raw,unit=0,readonly=on,file=$UEFI_OVMF_CODE" -drive "if=pflash,format=raw,unit=1,file=$VMRUN/vars.fd"
		-serial "file:$VMOUT/console.log"
		-device pcie-root-port,id=rp1,chassis=1,slot=1 -drive "file=$VMRUN/src.img,if=none,id=src,format=raw"
		-device "nvme,bus=rp1,serial=$SOURCE_SERIAL,drive=src"
		-device qemu-xhci,id=xhci
		-drive "file=$VMRUN/stick.img,if=none,id=stick,format=raw" -device usb-storage,bus=xhci.0,drive=stick,bootindex=0
		-drive "file=$VMRUN/tgt.img,if=none,id=tgt,format=raw" -device usb-uas,id=uas,bus=xhci.0
		-device "scsi-hd,bus=uas.0,scsi-id=0,lun=0,drive=tgt,serial=$USB_SERIAL,vendor=Realtek,product=RTL9210B-CG")
	if [ "$ACCEL" = kvm ]; then args+=(-accel kvm -cpu host); else args+=(-accel tcg -cpu max); fi
	t0=$SECONDS
	timeout -k 5 "${VM_TIMEOUT:-600}" qemu-system-x86_64 "${args[@]}" >"$VMOUT/qemu.err" 2>&1 || rc=$?
	took_boot=$((SECONDS - t0))
	[ "$rc" = 0 ] || { tail -30 "$VMOUT/console.log" >&2; fail "QEMU exited $rc after $took_boot s ($(tail -2 "$VMOUT/qemu.err"))"; }
	tr -d '\r' <"$VMOUT/console.log" | sed 's/\x1b\[[0-9;=]*[A-Za-z]//g' >"$VMOUT/console.txt"
	local con
	con=$(cat "$VMOUT/console.txt")
	grep -q 'BdsDxe: starting .*USB' <<<"$con" || fail "the firmware did not start the stick from USB"
	grep -q "swaptool-rescue: state: /dev/sd.2 (SWAPTOOL-STATE) on /state" <<<"$con" || fail "the stick did not mount its state partition"
	grep -qE "^nvme0n1 +nvme .*$SOURCE_SERIAL" <<<"$con" || fail "the stick's drive list lacks the NVMe source"
	grep -qE "^sd[a-z] +usb .*$USB_SERIAL" <<<"$con" || fail "the stick's drive list lacks the UAS target with its serial"
	grep -q "swaptool-rescue: unattended run exited 0" <<<"$con" || { tail -40 "$VMOUT/console.txt" >&2; fail "the stick's unattended run failed"; }
	ok "booted under OVMF ($ACCEL) from USB: systemd-boot, Linux $rel, the stick's /init; drives, records and next step shown; preflight, plan and clone ran; powered off after $took_boot s"

	# after the swap: the stick's records into the node's state
	OUT=$("$SWAPTOOL" --state "$node" --json import "$VMRUN/stick.img") || { echo "$OUT"; fail "import failed"; }
	jeq '.checks[] | select(.id == "chain") | .status' pass
	jeq '[.import.records[] | select(.action | startswith("imported")) | .step] | join(",")' preflight,plan,clone
	OUT=$(cat "$node/clone.json")
	jeq .clone.target "/dev/$(sed -n "s|^\(sd[a-z]\) \+usb .*$USB_SERIAL.*|\1|p" "$VMOUT/console.txt" | head -1)"
	src_fingerprint "$VMRUN/src.img" | cmp -s - "$VMRUN/src.before" || fail "the source image changed"
	ok "import: the stick's preflight, plan and clone of the NVMe source onto the UAS disk in the node's state; the source unchanged"
	# the clone as the stick recorded it, the target by independent tools, then booted alone as NVMe
	cp "$node/clone.json" "$VMOUT/clone.out"
	uefi_clone_boots "$VMRUN/src.img" "$VMRUN/tgt.img"

	# accept, the report
	head -c 64M /dev/urandom >"$VMRUN/acc.img"
	rc=0
	"$SWAPTOOL" --state "$node" -q accept "$VMRUN/acc.img" --working-set 16M --no-seq --duration 1 --ramp 0 >/dev/null 2>&1 || rc=$?
	[ "$rc" = 0 ] || [ "$rc" = 1 ] || fail "accept on the host exited $rc"
	ssh-keygen -q -t ed25519 -N '' -C ops -f "$VMRUN/key"
	# signed whatever its verdict: 1 when rejected (accept measured a file on this machine, not the
	# new drive in the slot), 0 when accepted or incomplete
	rc=0
	"$SWAPTOOL" --state "$node" -q report --key "$VMRUN/key" --out "$VMRUN/report" --identity ops@swaptool \
		>"$VMOUT/report.out" 2>&1 || rc=$?
	[ "$rc" = 0 ] || [ "$rc" = 1 ] || { cat "$VMOUT/report.out"; fail "report exited $rc"; }
	local R=$VMRUN/report/report.json
	[ "$(jq -r '[.records[] | .step] | join(",")' "$R")" = preflight,backup,plan,clone,accept ] ||
		fail "the report signs $(jq -r '[.records[] | .step] | join(",")' "$R"), not preflight, backup, plan, clone, accept"
	"$SWAPTOOL" verify-report "$R" --allowed-signers "$VMRUN/report/allowed_signers" --identity ops@swaptool >/dev/null ||
		fail "verify-report rejects the report"
	ssh-keygen -Y verify -f "$VMRUN/report/allowed_signers" -I ops@swaptool -n swaptool-report -s "$R.sig" <"$R" >/dev/null 2>&1 ||
		fail "ssh-keygen -Y verify rejects the report"
	cp "$R" "$VMOUT/"
	ok "report: preflight, backup, plan, clone and accept signed as one chain ($(jq -r .verdict "$R")); verify-report and ssh-keygen -Y verify accept it"
	echo "  times: stick written in $took_stick s, its boot to power-off $took_boot s ($ACCEL)"
}
