# SPDX-License-Identifier: MIT
# scenario: path 2 for real: plan, plan --rehearse and clone from nvme0 to the empty, smaller nvme1 (at 1/1000 scale); the source is never written

# nvme0 holds mkdisk's `scaled` image (the incident's layout at 1/1000: GPT, vfat ESP, ext4 with
# controller.key, the node's configuration and 8 MiB of written data); nvme1 is 3,899,999,744 B,
# smaller than the source but large enough for its data: the clone trap in small, as
# tests/cli/64-clone-loop.sh does on loop devices. Not the incident's full size: from a block
# device the rehearsal's scratch copies of the 1.86 TiB ext4 take 16 GB and 150 s natively, and
# the clone's used blocks include 32 GB of inode tables, all read through the emulated drive:
# far past the bench's budget under TCG.
# In the guest: plan /dev/nvme0n1 --target /dev/nvme1n1, plan --rehearse, and clone --yes as the
# plan says (the ext4 shrinks on its way to the target; the source is only read). Then
# sgdisk -v and blkid on the namespaces and the files' hashes through the kernel's ext4 on both.
# On the host, after power-off: sgdisk -v, e2fsck -fn and blkid on both images, hashes against
# mkdisk's, and the source image byte for byte as it was.
VARIANT=scaled
TGT_BYTES=3899999744

host() {
	"$MKDISK" "$VARIANT" "$VMRUN/src.img" >"$VMRUN/layout.json"
	truncate -s "$TGT_BYTES" "$VMRUN/tgt.img"
	sha256sum <"$VMRUN/src.img" >"$VMRUN/src.before"
	vm_drive "$VMRUN/src.img" "$SOURCE_SERIAL"
	vm_drive "$VMRUN/tgt.img" "$TARGET_SERIAL"
	vm_input "$VMRUN/layout.json"
	vm_boot path2 || exit 1
	[ "$VM_RC" = 0 ] || fail "the guest part failed"

	load plan
	jeq .plan.paths.raw_clone.possible false
	jeq .plan.paths.fs_clone.needs_shrink true
	local blocks
	blocks=$(printf '%s' "$OUT" | jq '.plan.paths.fs_clone.partitions[-1].new_block_count')
	jeq .plan.target.path /dev/nvme1n1
	jeq .plan.source.serial "$SOURCE_SERIAL"
	load rehearse
	jeq .rehearsal.ok true
	ok "plan and plan --rehearse on the namespaces: raw clone impossible, shrink to $blocks blocks, rehearsal ok"
	load clone
	jeq .verdict pass
	jeq '[.clone.actions[] | select(.status != "pass")] | length' 0
	jeq .clone.source_written false
	ok "clone --yes: $(printf '%s' "$OUT" | jq -r '[.clone.actions[] | .action] | join(", ")'), all pass"

	# Independent checks on the host, on what the guest's NVMe driver wrote.
	# (read whole, then matched: under pipefail a `| grep -q` can kill sgdisk with SIGPIPE on a match)
	local v
	v=$(sgdisk -v "$VMRUN/tgt.img")
	grep -q 'No problems found' <<<"$v" || fail "sgdisk -v finds problems on the target: $v"
	local off n sp tp
	n=$(jq '.partition_table.partitions | length' "$VMRUN/layout.json")
	off=$(jq '.partition_table.partitions[-1].fs.offset_bytes' "$VMRUN/layout.json")
	e2fsck -fn "$VMRUN/tgt.img?offset=$off" >"$VMRUN/fsck.log" 2>&1 || { cat "$VMRUN/fsck.log"; fail "e2fsck -fn on the target's p$n"; }
	sha256sum <"$VMRUN/src.img" | cmp -s - "$VMRUN/src.before" || fail "the source image changed"
	[ "$(debugfs -R 'stats -h' "$VMRUN/tgt.img?offset=$off" 2>/dev/null | sed -n 's/^Block count: *//p')" = "$blocks" ] ||
		fail "the target's ext4 is not the planned $blocks blocks"
	for i in $(seq "$n"); do
		sp=$(jq -r ".partition_table.partitions[$((i - 1))].part_guid" "$VMRUN/layout.json")
		tp=$(sgdisk -i "$i" "$VMRUN/tgt.img" | sed -n 's/^Partition unique GUID: //p')
		[ "$sp" = "$tp" ] || fail "p$i PARTUUID $tp on the target, $sp on the source"
	done
	[ "$(blkid -p -s UUID -o value -O "$off" "$VMRUN/tgt.img")" = "$(jq -r '.partition_table.partitions[-1].fs.uuid' "$VMRUN/layout.json")" ] ||
		fail "the target's ext4 UUID differs from the source's"
	ok "on the host: sgdisk -v clean, e2fsck -fn clean on the target, PARTUUIDs and the ext4 UUID kept, target at $blocks blocks, source unchanged (sha256)"

	# In the guest: the kernel's view of the same.
	grep -q 'No problems found' "$VMOUT/sgdisk.out" || fail "sgdisk -v in the guest finds problems on /dev/nvme1n1"
	for i in $(seq "$n"); do
		[ "$(sed -n "s|^/dev/nvme0n1p$i: .*PARTUUID=\"\([^\"]*\)\".*|\1|p" "$VMOUT/blkid.out")" = \
		  "$(sed -n "s|^/dev/nvme1n1p$i: .*PARTUUID=\"\([^\"]*\)\".*|\1|p" "$VMOUT/blkid.out")" ] ||
			fail "blkid in the guest: p$i PARTUUIDs differ"
	done
	# Every real file mkdisk wrote, hashed through ext4 on the cloned namespace, is mkdisk's.
	jq -r '.files[] | "\(.sha256)  .\(.path)"' "$VMRUN/layout.json" | sort -k2 >"$VMRUN/want"
	sort -k2 "$VMOUT/tgt.sha256" | diff "$VMRUN/want" - || fail "files on the cloned ext4 differ from mkdisk's"
	sort -k2 "$VMOUT/src.sha256" | diff "$VMRUN/want" - || fail "files on the source differ from mkdisk's"
	ok "in the guest: sgdisk -v clean, PARTUUIDs equal, $(wc -l <"$VMRUN/want") files (controller.key, written data) equal mkdisk's"
}

path2() {
	expect_ctrl nvme0 "$SOURCE_SERIAL"
	expect_ctrl nvme1 "$TARGET_SERIAL"
	run plan 0 swaptool --state "$STATE" --json plan /dev/nvme0n1 --target /dev/nvme1n1
	run rehearse 0 swaptool --state "$STATE" --json plan /dev/nvme0n1 --target /dev/nvme1n1 --rehearse --scratch /tmp
	run clone 0 swaptool --state "$STATE" --json clone /dev/nvme0n1 /dev/nvme1n1 --yes
	run sgdisk 0 sgdisk -v /dev/nvme1n1
	local n
	n=$(jq '.partition_table.partitions | length' /vm/in/layout.json)
	run blkid 0 blkid -p /dev/nvme0n1p1 /dev/nvme0n1p$n /dev/nvme1n1p1 /dev/nvme1n1p$n
	mkdir -p /mnt/src /mnt/tgt
	mount -o ro,noload /dev/nvme0n1p$n /mnt/src
	mount -o ro,noload /dev/nvme1n1p$n /mnt/tgt
	jq -r '.files[] | ".\(.path)"' /vm/in/layout.json >/tmp/files
	(cd /mnt/src && xargs -d '\n' sha256sum </tmp/files >/out/src.sha256)
	(cd /mnt/tgt && xargs -d '\n' sha256sum </tmp/files >/out/tgt.sha256)
	umount /mnt/src /mnt/tgt
}
