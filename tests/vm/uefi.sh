# SPDX-License-Identifier: MIT
# The VM bench's bootable Debian disk and its boot under OVMF: what a clone must still boot. Sourced by tests/vm/lib.sh.
#
# How a scenario uses it (host side; tests/vm/scenarios/10-boot-nvme.sh is the example):
#
#   uefi_source_image         builds the bootable source once and reuses it after; sets UEFI_IMG (the
#                             image: never boot or write it, copy it: cp --sparse=always "$UEFI_IMG" X)
#                             and UEFI_META (JSON: the node's identity, the UUIDs, the layout, where
#                             the data past the cut lies). Skips (77) saying why when it cannot be had.
#   uefi_boot IMAGE [PROPS]   boots IMAGE alone as an NVMe drive under OVMF (PROPS: more `-device nvme`
#                             properties, e.g. logical_block_size=4096,physical_block_size=4096) and
#                             waits for the disk's marker line; sets UEFI_MARKER (its JSON) and
#                             UEFI_CONSOLE (the serial console's log); returns 1 with the console's end
#                             when no marker came (no boot, emergency mode, timeout).
#   uefi_marker_is_source     fails (exit 1) unless UEFI_MARKER reports UEFI_META's node: hostname,
#                             machine-id, controller.key and the data past the cut, from its own ext4
#                             root found by UUID and its FAT ESP mounted at /boot/efi.
#
# The disk (UEFI_BYTES, 4 GiB, sparse, about 380 MiB used): GPT, p1 a 128 MiB FAT32 ESP of 512-byte
# sectors holding GRUB as EFI/BOOT/BOOTX64.EFI (the removable-media path OVMF falls back to with
# empty NVRAM) and EFI/debian/grubx64.efi; p2 an ext4 root to the disk's end: Debian 12 (minbase,
# systemd, udev, linux-image-cloud-amd64: NVMe and ext4 built in, vfat a module), fstab by UUID
# (/ and /boot/efi), the node's user nv with ~/.config/flare/orbit/controller.key where backup and
# verify look for it (src/profile.c), a hostname and a machine-id of its own, and 48 MiB of random
# data placed past UEFI_CUT_BYTES (3 GiB), so a clone onto a target of 3 GiB or less must move it.
# GRUB's config is embedded in its image: it finds the root by the ext4's UUID (search --fs-uuid)
# and boots /vmlinuz with root=UUID=, as a Debian install does through its initramfs. A oneshot
# unit, ordered after local-fs.target, prints the marker on ttyS0 and powers off; a disk whose
# ESP or root does not mount stops in emergency mode and prints no marker.
#
# Built without mounting anything (this host has no vfat module): mmdebstrap from the Debian
# archive into a tarball, the ESP by mkfs.vfat and mtools, the root by mke2fs -d, the data by
# debugfs, each filesystem in a file of its own, then copied into the GPT image sparse. Cached
# under $UEFI_CACHE (default /var/cache/swaptool/vm-boot, outside the build directory, as
# scripts/cross-arm64's chroot: the rootfs takes minutes to fetch): the rootfs tarball keyed by
# what mmdebstrap is given, the image keyed by that and by this file's build functions. A new
# image is booted once under OVMF before it is kept, so a scenario's failure is the clone's, never
# the image's. VM_MIRROR changes the Debian mirror.

UEFI_CACHE=${UEFI_CACHE:-/var/cache/swaptool/vm-boot}
UEFI_SUITE=bookworm
UEFI_MIRROR=${VM_MIRROR:-http://deb.debian.org/debian}
UEFI_PACKAGES=systemd-sysv,udev,linux-image-cloud-amd64,grub-efi-amd64-bin,dosfstools
UEFI_BYTES=4294967296
UEFI_CUT_BYTES=3221225472
UEFI_ESP_MIB=128
UEFI_DATA_MIB=48
UEFI_HOST=gx10-node07
# OVMF from Debian's ovmf package (its 2 MiB build; OVMF_VARS.fd is copied for each boot)
UEFI_OVMF_CODE=${UEFI_OVMF_CODE:-/usr/share/OVMF/OVMF_CODE.fd}
UEFI_OVMF_VARS=${UEFI_OVMF_VARS:-/usr/share/OVMF/OVMF_VARS.fd}
UEFI_NODE_KEY=home/nv/.config/flare/orbit/controller.key
UEFI_DATA=srv/past-the-cut.bin

# uefi_rootfs: the Debian tree as a tarball ($UEFI_ROOTFS), made by mmdebstrap once per key.
uefi_rootfs() {
	local key
	key=$( { echo "$UEFI_SUITE $UEFI_MIRROR $UEFI_PACKAGES"; declare -f uefi_mmdebstrap; } | sha256sum | cut -c1-16)
	UEFI_ROOTFS=$UEFI_CACHE/rootfs-$key.tar
	[ -s "$UEFI_ROOTFS" ] && return
	command -v mmdebstrap >/dev/null || vm_skip "no mmdebstrap to make the bootable source (apt-get install mmdebstrap)"
	local t0=$SECONDS
	vm_say "making the bootable source's Debian tree with mmdebstrap ($UEFI_SUITE, $UEFI_MIRROR): minutes, once"
	if ! uefi_mmdebstrap "$UEFI_ROOTFS.tmp" >"$UEFI_CACHE/mmdebstrap.log" 2>&1; then
		tail -5 "$UEFI_CACHE/mmdebstrap.log" >&2
		rm -f "$UEFI_ROOTFS.tmp"
		vm_skip "mmdebstrap $UEFI_SUITE failed (no Debian mirror reachable? $UEFI_CACHE/mmdebstrap.log)"
	fi
	find "$UEFI_CACHE" -maxdepth 1 -name 'rootfs-*.tar' -delete
	mv "$UEFI_ROOTFS.tmp" "$UEFI_ROOTFS"
	vm_say "Debian tree made in $((SECONDS - t0)) s: $(du -m "$UEFI_ROOTFS" | cut -f1) MiB"
}

# uefi_mmdebstrap OUT: what the rootfs key hashes (with the suite, mirror and packages). The kernel
# package brings initramfs-tools: its initramfs is the one a Debian install has (MODULES=most).
uefi_mmdebstrap() {
	nice mmdebstrap --variant=minbase --format=tar --include="$UEFI_PACKAGES" \
		--dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
		--dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/info/*' \
		"$UEFI_SUITE" "$1" "$UEFI_MIRROR"
}

# uefi_source_image: see the top of this file. Holds $UEFI_CACHE/.lock while it builds, so that
# parallel runs build it once.
uefi_source_image() {
	command -v qemu-system-x86_64 >/dev/null || vm_skip "no qemu-system-x86_64 (apt-get install qemu-system-x86)"
	[ -r "$UEFI_OVMF_CODE" ] && [ -r "$UEFI_OVMF_VARS" ] || vm_skip "no OVMF at $UEFI_OVMF_CODE (apt-get install ovmf)"
	local tool
	for tool in sgdisk mkfs.vfat mmd mcopy mke2fs debugfs dumpe2fs e2fsck; do
		command -v "$tool" >/dev/null || vm_skip "no $tool to build the bootable source (scripts/install-deps: gdisk, dosfstools, mtools, e2fsprogs)"
	done
	mkdir -p "$UEFI_CACHE"
	local lock
	exec {lock}>"$UEFI_CACHE/.lock"
	flock "$lock"
	uefi_rootfs
	local key
	key=$( { echo "$UEFI_ROOTFS"; declare -p UEFI_BYTES UEFI_CUT_BYTES UEFI_ESP_MIB UEFI_DATA_MIB UEFI_HOST UEFI_NODE_KEY UEFI_DATA
		declare -f uefi_image_build uefi_tree uefi_past_cut; } | sha256sum | cut -c1-16)
	UEFI_IMG=$UEFI_CACHE/source-$key.img
	UEFI_META=$UEFI_CACHE/source-$key.json
	if [ ! -s "$UEFI_IMG" ] || [ ! -s "$UEFI_META" ]; then
		local t0=$SECONDS d
		# what a killed build left (the lock is ours: no other build is running)
		rm -rf "$UEFI_CACHE"/build.*
		d=$(mktemp -d "$UEFI_CACHE/build.XXXXXX")
		uefi_image_build "$d" || { rm -rf "$d"; exec {lock}>&-; vm_fail "building the bootable source failed"; }
		vm_say "bootable source built in $((SECONDS - t0)) s; booting it once under OVMF before keeping it"
		cp --sparse=always "$d/disk.img" "$d/try.img"
		UEFI_META=$d/meta.json
		if ! uefi_boot "$d/try.img" || ! (uefi_marker_is_source); then
			cp "$UEFI_CONSOLE" "$UEFI_CACHE/failed-boot.log" 2>/dev/null || true
			rm -rf "$d"
			exec {lock}>&-
			vm_fail "the freshly built source does not boot under OVMF ($UEFI_CACHE/failed-boot.log)"
		fi
		jq --argjson s "$((SECONDS - t0))" '. + {build_and_boot_s: $s}' "$d/meta.json" >"$d/meta.tmp"
		find "$UEFI_CACHE" -maxdepth 1 -name 'source-*' -delete
		mv "$d/disk.img" "$UEFI_CACHE/source-$key.img"
		mv "$d/meta.tmp" "$UEFI_CACHE/source-$key.json"
		rm -rf "$d"
		UEFI_META=$UEFI_CACHE/source-$key.json
		vm_say "bootable source kept: $UEFI_IMG ($(du -m "$UEFI_IMG" | cut -f1) MiB used), built and booted in $((SECONDS - t0)) s"
	fi
	exec {lock}>&-
}

# uefi_image_build DIR: DIR/disk.img and DIR/meta.json from the rootfs tarball (see the top).
uefi_image_build() {
	local d=$1 root_uuid esp_id machine_id
	root_uuid=$(cat /proc/sys/kernel/random/uuid)
	esp_id=$(od -An -tx4 -N4 /dev/urandom | tr -d ' ')
	esp_id=${esp_id^^}
	machine_id=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
	mkdir "$d/root"
	tar -C "$d/root" --xattrs --xattrs-include='*' -xpf "$UEFI_ROOTFS" || return 1
	uefi_tree "$d" "$root_uuid" "${esp_id:0:4}-${esp_id:4:4}" "$machine_id" || return 1

	# the ESP: FAT32 of 512-byte sectors, GRUB at the fallback path and at Debian's
	local esp=$d/esp.img sector0=2048
	truncate -s "${UEFI_ESP_MIB}M" "$esp"
	mkfs.vfat -F 32 -S 512 -i "$esp_id" -n EFI "$esp" >/dev/null || return 1
	MTOOLS_SKIP_CHECK=1 mmd -i "$esp" ::/EFI ::/EFI/BOOT ::/EFI/debian &&
		MTOOLS_SKIP_CHECK=1 mcopy -i "$esp" "$d/grubx64.efi" ::/EFI/BOOT/BOOTX64.EFI &&
		MTOOLS_SKIP_CHECK=1 mcopy -i "$esp" "$d/grubx64.efi" ::/EFI/debian/grubx64.efi || return 1

	# the GPT: p1 the ESP at 1 MiB, p2 the root to the end
	local img=$d/disk.img root_off root_blocks
	truncate -s "$UEFI_BYTES" "$img"
	sgdisk -n "1:$sector0:+${UEFI_ESP_MIB}M" -t 1:ef00 -c '1:EFI System Partition' \
		-n 2:0:0 -t 2:8300 -c 2:root "$img" >/dev/null || return 1
	root_off=$(( $(sgdisk -i 2 "$img" | sed -n 's/^First sector: \([0-9]*\).*/\1/p') * 512 ))
	root_blocks=$(( ($(sgdisk -i 2 "$img" | sed -n 's/^Last sector: \([0-9]*\).*/\1/p') * 512 + 512 - root_off) / 4096 ))

	# the root: mke2fs -d from the tree, then the data past the cut (debugfs)
	local fs=$d/root.ext4 first
	truncate -s $((root_blocks * 4096)) "$fs"
	mke2fs -q -t ext4 -F -b 4096 -U "$root_uuid" -L root -E nodiscard -d "$d/root" "$fs" "$root_blocks" || return 1
	first=$(uefi_past_cut "$fs" $(( (UEFI_CUT_BYTES - root_off) / 4096 )) "$d/data.bin") || return 1
	e2fsck -fn "$fs" >"$d/fsck.log" 2>&1 || { cat "$d/fsck.log" >&2; return 1; }

	dd if="$esp" of="$img" bs=1M seek=$((sector0 / 2048)) conv=sparse,notrunc status=none || return 1
	dd if="$fs" of="$img" bs=4096 seek=$((root_off / 4096)) conv=sparse,notrunc status=none || return 1
	jq -n --arg host "$UEFI_HOST" --arg mid "$machine_id" --arg root "$root_uuid" \
		--arg esp "${esp_id:0:4}-${esp_id:4:4}" \
		--arg key "$(sha256sum <"$d/root/$UEFI_NODE_KEY" | cut -c1-64)" \
		--arg data "$(sha256sum <"$d/data.bin" | cut -c1-64)" --arg kernel "$(ls "$d/root/boot" | sed -n 's/^vmlinuz-//p')" \
		--argjson size "$UEFI_BYTES" --argjson root_off "$root_off" --argjson esp_off $((sector0 * 512)) \
		--argjson data_first $((root_off + first * 4096)) --argjson cut "$UEFI_CUT_BYTES" \
		'{hostname: $host, machine_id: $mid, controller_key_sha256: $key, data_sha256: $data,
		  root_uuid: $root, esp_uuid: $esp, kernel: $kernel, size_bytes: $size, esp_offset_bytes: $esp_off,
		  root_offset_bytes: $root_off, cut_bytes: $cut, data_first_byte: $data_first}' >"$d/meta.json"
}

# uefi_tree DIR ROOT_UUID ESP_UUID MACHINE_ID: the node's identity, fstab, the marker unit and GRUB
# (made by the tree's own grub-mkimage, so the loader is Debian's, not this host's) in DIR/root.
uefi_tree() {
	local d=$1 r=$1/root
	echo "$UEFI_HOST" >"$r/etc/hostname"
	printf '127.0.0.1\tlocalhost\n127.0.1.1\t%s\n' "$UEFI_HOST" >"$r/etc/hosts"
	echo "$4" >"$r/etc/machine-id"
	printf 'UUID=%s / ext4 errors=remount-ro 0 1\nUUID=%s /boot/efi vfat umask=0077 0 1\n' "$2" "$3" >"$r/etc/fstab"
	mkdir -p "$r/boot/efi"
	useradd -R "$r" -m -u 1000 -U -s /bin/bash nv || return 1
	mkdir -p "$r/${UEFI_NODE_KEY%/*}"
	head -c 64 /dev/urandom >"$r/$UEFI_NODE_KEY"
	chmod 600 "$r/$UEFI_NODE_KEY"
	chown -R 1000:1000 "$r/home/nv"
	head -c "${UEFI_DATA_MIB}M" /dev/urandom >"$d/data.bin"
	# The marker: one line of JSON on the serial port, from the booted system's own view.
	cat >"$r/usr/local/sbin/swaptool-boot-marker" <<-EOF
	#!/bin/sh
	# The VM bench (tests/vm/uefi.sh): this disk booted; say who it is, then power off.
	set -u
	sum() { sha256sum "\$1" 2>/dev/null | cut -c1-64; }
	mnt() { while read -r dev dir type rest; do [ "\$dir" = "\$1" ] && { echo "\$dev \$type"; return; }; done </proc/self/mounts; }
	printf 'swaptool-boot-marker {"hostname":"%s","machine_id":"%s","controller_key_sha256":"%s","data_sha256":"%s","root":"%s","esp":"%s","cmdline":"%s"}\n' \\
		"\$(cat /proc/sys/kernel/hostname)" "\$(cat /etc/machine-id)" "\$(sum /$UEFI_NODE_KEY)" "\$(sum /$UEFI_DATA)" \\
		"\$(mnt /)" "\$(mnt /boot/efi)" "\$(cat /proc/cmdline)" >/dev/ttyS0
	systemctl poweroff --no-block
	EOF
	chmod 755 "$r/usr/local/sbin/swaptool-boot-marker"
	cat >"$r/etc/systemd/system/swaptool-boot-marker.service" <<-'EOF'
	[Unit]
	Description=swaptool VM bench: report this disk's identity on ttyS0, then power off
	After=local-fs.target

	[Service]
	Type=oneshot
	ExecStart=/usr/local/sbin/swaptool-boot-marker

	[Install]
	WantedBy=multi-user.target
	EOF
	ln -s /etc/systemd/system/swaptool-boot-marker.service "$r/etc/systemd/system/multi-user.target.wants/"
	# GRUB finds the root by the ext4's UUID, as Debian's grub.cfg does. nvme_core.io_timeout=10: as
	# the bench's other guests (tests/vm/lib.sh, vm_boot), should QEMU's controller stall under TCG.
	cat >"$r/tmp/grub.cfg" <<-EOF
	set timeout=0
	search --no-floppy --fs-uuid --set=root $2
	echo "swaptool-boot: GRUB found the root $2 on (\$root)"
	linux /vmlinuz root=UUID=$2 ro console=ttyS0,115200 loglevel=4 nvme_core.io_timeout=10
	initrd /initrd.img
	boot
	EOF
	chroot "$r" grub-mkimage -O x86_64-efi -o /tmp/grubx64.efi -p /EFI/debian -c /tmp/grub.cfg \
		part_gpt fat ext2 search search_fs_uuid linux boot echo normal gzio serial terminal test || return 1
	mv "$r/tmp/grubx64.efi" "$d/"
	rm -f "$r/tmp/grub.cfg"
}

# uefi_past_cut FS CUT DATA: writes DATA into the ext4 image FS as /$UEFI_DATA with every block at
# or past block CUT: the free blocks below CUT are marked used while debugfs writes it, then freed
# again (the group counts never change: setb and freeb touch only the bitmap). Prints its first block.
uefi_past_cut() {
	local fs=$1 cut=$2 ranges first
	ranges=$(dumpe2fs "$fs" 2>/dev/null | sed -n 's/^  Free blocks: //p' | tr ',' '\n' |
		awk -v cut="$cut" -F- 'NF && $1 < cut { e = ($2 == "" ? $1 : $2); if (e >= cut) e = cut - 1; print $1, e - $1 + 1 }')
	{
		awk '{ print "setb", $1, $2 }' <<<"$ranges"
		echo "write $3 /$UEFI_DATA"
		awk '{ print "freeb", $1, $2 }' <<<"$ranges"
	} >"${fs%/*}/debugfs.cmd"
	debugfs -w -f "${fs%/*}/debugfs.cmd" "$fs" >/dev/null 2>&1 || return 1
	first=$(debugfs -R "bmap /$UEFI_DATA 0" "$fs" 2>/dev/null)
	[[ $first =~ ^[0-9]+$ ]] && [ "$first" -ge "$cut" ] ||
		{ echo "the data landed at block '$first', before the cut at $cut" >&2; return 1; }
	echo "$first"
}

# uefi_boot IMAGE [PROPS]: see the top. VM_BOOT_TIMEOUT (s, default 420) bounds the wait.
uefi_boot() {
	local img=$1 props=${2:-} dir line
	dir=$(mktemp -d "${VMRUN:-${TMPDIR:-/var/tmp}}/uefi.XXXXXX")
	UEFI_CONSOLE=$dir/console.log
	UEFI_MARKER=
	cp "$UEFI_OVMF_VARS" "$dir/vars.fd"
	local args=(-machine q35 -smp "${VM_SMP:-2}" -m 1024 -nodefaults -display none -no-reboot
		-drive "if=pflash,format=raw,unit=0,readonly=on,file=$UEFI_OVMF_CODE"
		-drive "if=pflash,format=raw,unit=1,file=$dir/vars.fd"
		-serial "file:$UEFI_CONSOLE"
		-drive "file=$img,if=none,id=boot,format=raw" -device "nvme,serial=UEFIBOOT0001,drive=boot${props:+,$props}")
	if [ "${ACCEL:-tcg}" = kvm ]; then args+=(-accel kvm -cpu host); else args+=(-accel tcg -cpu max); fi
	local t0=$SECONDS pid
	timeout -k 5 "${VM_BOOT_TIMEOUT:-420}" qemu-system-x86_64 "${args[@]}" >"$dir/qemu.err" 2>&1 &
	pid=$!
	# the marker, or the end: QEMU gone (power-off, a reboot under -no-reboot, the timeout) or
	# systemd's emergency shell, which would wait for a root password until the timeout
	while kill -0 "$pid" 2>/dev/null; do
		grep -aq 'swaptool-boot-marker {' "$UEFI_CONSOLE" 2>/dev/null && break
		grep -aq 'You are in emergency mode' "$UEFI_CONSOLE" 2>/dev/null && break
		sleep 0.5
	done
	line=$(grep -ao 'swaptool-boot-marker {.*}' "$UEFI_CONSOLE" | head -1 | sed 's/^swaptool-boot-marker //') || true
	# the marker's unit powers off: wait for it (10 s at most), then end QEMU
	for _ in $(seq 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	if [ -z "$line" ] || ! UEFI_MARKER=$(jq -c . <<<"$line" 2>/dev/null); then
		UEFI_MARKER=
		vm_say "uefi boot of ${img##*/}: no marker after $((SECONDS - t0)) s; the console's end ($UEFI_CONSOLE):"
		tr -d '\r' <"$UEFI_CONSOLE" | tail -25 >&2
		return 1
	fi
	UEFI_BOOT_S=$((SECONDS - t0))
	vm_say "uefi boot of ${img##*/}: marker after $UEFI_BOOT_S s (${ACCEL:-tcg})"
}

# uefi_marker_is_source: see the top.
uefi_marker_is_source() {
	local k want got
	for k in hostname machine_id controller_key_sha256 data_sha256; do
		want=$(jq -r ".$k" "$UEFI_META")
		got=$(jq -r ".$k" <<<"$UEFI_MARKER")
		[ "$got" = "$want" ] || fail "the booted disk reports $k '$got', the source's is '$want'"
	done
	[[ $(jq -r .root <<<"$UEFI_MARKER") == "/dev/nvme0n1p2 ext4" ]] || fail "the root is not the NVMe's p2 as ext4: $UEFI_MARKER"
	[[ $(jq -r .esp <<<"$UEFI_MARKER") == "/dev/nvme0n1p1 vfat" ]] || fail "the ESP is not mounted from the NVMe's p1: $UEFI_MARKER"
	[[ $(jq -r .cmdline <<<"$UEFI_MARKER") == *"root=UUID=$(jq -r .root_uuid "$UEFI_META") "* ]] ||
		fail "the kernel did not boot with the source's root=UUID: $UEFI_MARKER"
}

# uefi_esp_4k IMG: re-makes the ESP of IMG (a copy of UEFI_IMG) as a FAT of 4096-byte sectors with
# the same files, label and volume id, as an install on a 4Kn drive has it (FAT16: 128 MiB holds
# too few 4 KiB clusters for FAT32; OVMF and Linux mount either). Such a source may be cloned onto a
# 4096-byte-LBA target (swaptool-plan(1), LBA sizes).
uefi_esp_4k() {
	local img=$1 off d
	off=$(jq .esp_offset_bytes "$UEFI_META")
	d=$(mktemp -d "$VMRUN/esp.XXXXXX")
	MTOOLS_SKIP_CHECK=1 mcopy -s -i "$img@@$off" ::/EFI "$d/" || fail "mcopy could not read the ESP of $img"
	mkfs.vfat -I --offset $((off / 4096)) -S 4096 --mbr=n -F 16 -i "$(jq -r '.esp_uuid | sub("-"; "")' "$UEFI_META")" \
		-n EFI "$img" $((UEFI_ESP_MIB << 10)) >/dev/null 2>&1 || fail "mkfs.vfat -S 4096 on the ESP of $img"
	MTOOLS_SKIP_CHECK=1 mcopy -s -i "$img@@$off" "$d/EFI" :: || fail "mcopy could not write the 4096-byte-sector ESP"
	rm -rf "$d"
	[ "$(od -An -tu2 -j $((off + 11)) -N2 "$img" | tr -d ' ')" = 4096 ] || fail "the re-made ESP has not 4096 bytes per sector"
	[ "$(blkid -p -s UUID -o value -O "$off" "$img")" = "$(jq -r .esp_uuid "$UEFI_META")" ] || fail "the re-made ESP lost its volume id"
}

# uefi_clone_boots SRC TGT [LBA_SIZE]: the clone TGT of SRC (a copy of UEFI_IMG), judged on the host
# after the guest ran `clone` (its output kept as clone): the record (pass, the source not written,
# the data past the cut moved), then independent tools (sgdisk -v, the ESP byte for byte with cmp,
# e2fsck -fn and blkid on the root), then TGT booted alone as NVMe under OVMF, reporting the source's
# node. LBA_SIZE (default 512) is the target's: a GPT of 4096-byte LBAs is read through a read-only
# loop device of that sector size, and TGT boots as a namespace of 4096-byte LBAs.
uefi_clone_boots() {
	local src=$1 tgt=$2 lba=${3:-512} dev=$2 loop='' v moved sp tp p1 p2
	load clone
	jeq .verdict pass
	jeq .clone.source_written false
	moved=$(printf '%s' "$OUT" | jq -r '.clone.actions[] | .detail // empty' |
		sed -n 's/.*; \([0-9,]*\) B in use past the new end moved.*/\1/p' | tr -d ,)
	[ "${moved:-0}" -ge $((UEFI_DATA_MIB << 20)) ] ||
		fail "the clone moved '${moved:-nothing}' B from past the new end, less than the ${UEFI_DATA_MIB} MiB placed there"
	ok "clone: pass, the source not written, $moved B in use past the new end moved"
	if [ "$lba" != 512 ]; then
		loop=$(losetup -f --show -r --sector-size "$lba" "$tgt") || vm_skip "losetup --sector-size $lba failed: cannot read the target's GPT back here"
		dev=$loop
	fi
	v=$(sgdisk -v "$dev" 2>&1) || true
	p1=$(sgdisk -i 1 "$dev" | sed -n 's/^First sector: \([0-9]*\).*/\1/p') || true
	p2=$(sgdisk -i 2 "$dev" | sed -n 's/^First sector: \([0-9]*\).*/\1/p') || true
	[ -z "$loop" ] || losetup -d "$loop"
	grep -q 'No problems found' <<<"$v" || fail "sgdisk -v finds problems on the target at $lba-byte LBAs: $v"
	[ -n "$p1" ] && [ -n "$p2" ] || fail "sgdisk finds no partitions 1 and 2 on the target at $lba-byte LBAs"
	sp=$(jq .esp_offset_bytes "$UEFI_META")
	cmp -s -i "$sp:$((p1 * lba))" -n $((UEFI_ESP_MIB << 20)) "$src" "$tgt" || fail "the target's ESP differs from the source's"
	tp=$((p2 * lba))
	e2fsck -fn "$tgt?offset=$tp" >"$VMRUN/fsck.log" 2>&1 || { cat "$VMRUN/fsck.log"; fail "e2fsck -fn on the target's root"; }
	[ "$(blkid -p -s UUID -o value -O "$tp" "$tgt")" = "$(jq -r .root_uuid "$UEFI_META")" ] ||
		fail "the target's root has not the source's UUID"
	ok "on the host: sgdisk -v clean at $lba-byte LBAs, the ESP byte for byte the source's, e2fsck -fn clean, the root's UUID kept"
	uefi_boot "$tgt" "$([ "$lba" = 512 ] || echo "logical_block_size=$lba,physical_block_size=$lba")" ||
		fail "the clone does not boot alone as NVMe ($lba-byte LBAs) under OVMF"
	uefi_marker_is_source
	ok "the clone booted alone as NVMe of $lba-byte LBAs under OVMF in $UEFI_BOOT_S s: $(jq -r '"\(.hostname), machine-id \(.machine_id), controller.key sha256 \(.controller_key_sha256[:16])..., the data past the cut intact, root \(.root), ESP \(.esp)"' <<<"$UEFI_MARKER")"
}
