# SPDX-License-Identifier: MIT
# scenario: path 1 for real, across the swap: backup on the old drive, fresh install and restore on the new one

# Boot one, the node before the swap: nvme0 the incident's drive, its ext4 mounted as the node's
# root (/node), nvme1 a 64 MiB stick. preflight names the drive being replaced; backup writes the
# tarball on it and copies it to the stick. Boot two, after the swap: the old drive is gone,
# nvme0 is the new 2,000,398,934,016-B drive. A fresh install (GPT, EFI vfat, 1.8 TiB ext4, an
# fstab naming the new filesystems' UUIDs, the user nv) then restore from the stick and verify.
# The old fstab names the old drive's UUIDs, which resolve nowhere now: the trap. restore keeps
# the fresh fstab (the old one as fstab.pre-swap) and verify resolves the fresh one against the
# new drive's real filesystems, through libblkid in the guest.
OLD_ROOT_UUID=0d6c4e57-7e41-493d-a531-809dda000002
OLD_EFI_UUID=D6C4-0001

host() {
	"$MKDISK" incident "$VMRUN/src.img" >"$VMRUN/layout.json"
	truncate -s "$TARGET_BYTES" "$VMRUN/tgt.img"
	truncate -s 64M "$VMRUN/stick.img"
	vm_drive "$VMRUN/src.img" "$SOURCE_SERIAL"
	vm_drive "$VMRUN/stick.img" STICK0001
	vm_boot before_swap || exit 1
	[ "$VM_RC" = 0 ] || fail "boot one failed"
	local one=$VMOUT
	load backup
	jeq .verdict pass
	jeq .required[0].path /home/nv/.config/flare/orbit/controller.key
	jeq .required[0].found true
	jeq .archive.path /node/home/nv/dgx4-config.tar.gz
	jeq .copies[0].path /stick/dgx4-config.tar.gz
	jeq .copies[0].verified true
	jeq .location.on_replaced_drive true
	jeq .location.copy_on_replaced_drive false
	jeq '.checks[] | select(.id == "location") | .status' pass
	[ "$(sha256sum <"$one/dgx4-config.tar.gz" | cut -d' ' -f1)" = "$(printf '%s' "$OUT" | jq -r .archive.sha256)" ] ||
		fail "the tarball that came back differs from the record's sha256"
	local key
	key=$(jq -r '.files[] | select(.path | endswith("/controller.key")) | .sha256' "$VMRUN/layout.json")
	[ "$(tar -xzOf "$one/dgx4-config.tar.gz" home/nv/.config/flare/orbit/controller.key | sha256sum | cut -d' ' -f1)" = "$key" ] ||
		fail "controller.key in the tarball differs from mkdisk's"
	ok "boot one: backup on the old drive (nvme0n1p2), copy on the stick, controller.key as mkdisk wrote it"

	# Boot two: the old drive removed; the stick and the state directory come along.
	vm_drive "$VMRUN/tgt.img" "$TARGET_SERIAL"
	vm_drive "$VMRUN/stick.img" STICK0001
	vm_input "$one/state"
	vm_boot after_swap || exit 1
	[ "$VM_RC" = 0 ] || fail "boot two failed"
	local root_uuid efi_uuid
	root_uuid=$(sed -n 's/^UUID=//p' "$VMOUT/root.blkid")
	efi_uuid=$(sed -n 's/^UUID=//p' "$VMOUT/efi.blkid")
	[ -n "$root_uuid" ] && [ "$root_uuid" != "$OLD_ROOT_UUID" ] && [ -n "$efi_uuid" ] || fail "no new UUIDs"

	load restore
	jeq .fstab[0].path etc/fstab
	jeq .fstab[0].kept_as etc/fstab.pre-swap
	jeq '.fstab[0].unresolved | length' 2
	jeq .fstab[0].unresolved[0].value "$OLD_ROOT_UUID"
	jeq .fstab[0].unresolved[0].target /
	jeq .fstab[0].unresolved[1].value "$OLD_EFI_UUID"
	jeq .fstab[0].unresolved[1].target /boot/efi
	jeq '.verify.checks[] | select(.id == "fstab-ids") | .status' pass
	grep -q "^UUID=$root_uuid[[:space:]]/[[:space:]]" "$VMOUT/fstab" || fail "the fresh fstab was not kept"
	grep -q "^UUID=$OLD_ROOT_UUID[[:space:]]" "$VMOUT/fstab.pre-swap" || fail "fstab.pre-swap is not the old fstab"
	ok "boot two: restore kept the fresh fstab (UUID=$root_uuid), the old one as fstab.pre-swap, its 2 dead lines named"

	load verify
	jeq .verdict pass
	jeq '[.checks[] | select(.status != "pass" and .status != "skip") | .id] | join(" ")' ""
	jeq '.checks[] | select(.id == "fstab-ids") | .status' pass
	jeq '.checks[] | select(.id == "fstab-ids") | .summary' "'/etc/fstab': 2 identifier(s), all resolve on this machine"
	jeq '.checks[] | select(.id == "required") | .status' pass
	[ "$(cat "$VMOUT/key.sha256")" = "$key" ] || fail "controller.key on the new drive differs from mkdisk's"
	ok "verify passes on the new drive; the fstab resolves against its real UUIDs; controller.key as before"
}

before_swap() {
	expect_ctrl nvme0 "$SOURCE_SERIAL"
	expect_ctrl nvme1 STICK0001
	mkdir -p /node /stick
	mount /dev/nvme0n1p2 /node
	mkfs.ext4 -q -L STICK /dev/nvme1n1
	mount /dev/nvme1n1 /stick
	export SUDO_USER=nv
	# The namespace's block device: backup's location check compares block devices (given the
	# controller, /dev/nvme0, it does not see that the tarball lies on nvme0n1).
	run preflight 4 swaptool --state "$STATE" --json preflight /dev/nvme0n1 --target 2000398934016
	run backup 0 swaptool --state "$STATE" --json backup --root /node --home /home/nv \
		--out /node/home/nv/dgx4-config.tar.gz --copy-to /stick
	cp /stick/dgx4-config.tar.gz /out/
	umount /stick /node
}

after_swap() {
	expect_ctrl nvme0 "$TARGET_SERIAL"
	expect_ctrl nvme1 STICK0001
	cp -a /vm/in/state "$STATE"
	# The fresh install: the installer's partitions, filesystems, fstab and user.
	run sgdisk 0 sgdisk -n1:2048:+512M -t1:ef00 -c1:'EFI System' -n2:0:0 -t2:8300 /dev/nvme0n1
	run mkfs-efi 0 mkfs.vfat -F 32 -n EFI /dev/nvme0n1p1
	# nodiscard: on this project's build machine (QEMU 1:7.2+dfsg-7+deb12u18) the emulated
	# controller stopped after one of mke2fs's Dataset Management deallocates, every time (QEMU's
	# trace: the DSM arrives, nothing after it), and the kernel's retries outlast VM_TIMEOUT.
	# The scenario proves restore and verify on a fresh filesystem, not discard.
	run mkfs-root 0 mkfs.ext4 -q -E nodiscard,lazy_itable_init=1,lazy_journal_init=1 /dev/nvme0n1p2
	blkid -o export /dev/nvme0n1p2 >/out/root.blkid
	blkid -o export /dev/nvme0n1p1 >/out/efi.blkid
	local root=/newroot ru eu
	ru=$(sed -n 's/^UUID=//p' /out/root.blkid)
	eu=$(sed -n 's/^UUID=//p' /out/efi.blkid)
	mkdir -p $root
	mount /dev/nvme0n1p2 $root
	mkdir -p $root/boot/efi $root/etc $root/home/nv $root/root
	# (vfat is a module in the cloud kernel: the EFI partition is made and named, not mounted.)
	printf '# /etc/fstab: written by the installer\nUUID=%s\t/\text4\terrors=remount-ro\t0\t1\nUUID=%s\t/boot/efi\tvfat\tumask=0077\t0\t1\n' \
		"$ru" "$eu" >$root/etc/fstab
	printf 'root:x:0:0:root:/root:/bin/bash\nnv:x:1000:1000:nv:/home/nv:/bin/bash\n' >$root/etc/passwd
	printf 'root:x:0:\nnv:x:1000:\n' >$root/etc/group
	printf '127.0.0.1\tlocalhost\n127.0.1.1\tdgx4\n' >$root/etc/hosts
	chown 1000:1000 $root/home/nv
	mkdir -p /stick
	mount -o ro /dev/nvme1n1 /stick
	run restore 0 swaptool --state "$STATE" --json restore /stick/dgx4-config.tar.gz --root $root
	run verify 0 swaptool --state "$STATE" --json verify /stick/dgx4-config.tar.gz --root $root
	cp $root/etc/fstab $root/etc/fstab.pre-swap /out/
	sha256sum <$root/home/nv/.config/flare/orbit/controller.key | cut -d' ' -f1 >/out/key.sha256
	umount /stick $root
}
