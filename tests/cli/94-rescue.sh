#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# swaptool rescue (issue 30): the stick written to an image and to a loop device, and checked with
# independent tools: sgdisk -v, fsck.fat -n on the ESP's bytes, mdir/mcopy, e2fsck -fn and debugfs on
# the state partition, cpio -t of the initramfs, and its closure (every DT_NEEDED of every ELF inside
# resolves inside, as readelf names them; swaptool and e2fsck run in a chroot of it). Then hostile and
# careless input, each exit 3 (2 for usage) with nothing written: a stick that is the running root, one
# holding a mounted filesystem, a partition, one too small, a missing program, an existing file, no
# --yes, a kernel that is no EFI executable or of another release, modules without modules.dep or
# without a needed module, a corrupt record, a control byte in --append, not root.
# The kernel and modules are stand-ins (a PE header, depmod-shaped text, small .ko files): nothing
# boots here; tests/vm/scenarios/13-rescue-stick.sh boots a real one.
. "$SRCDIR/tests/lib.sh"
need_root
for t in sgdisk fsck.vfat mdir mcopy e2fsck debugfs cpio zcat readelf chroot; do
	command -v $t >/dev/null || skip "$t missing (scripts/install-deps)"
done
. "$SRCDIR/tests/fixtures/rescue-lib.sh"
stick_inputs "$TMP"
# the records so far, as the node made them (the incident's, from tests/tools/records.c)
mkdir -m 0700 "$STATE"
for s in preflight backup plan; do "$MKRECORD" "$s" "$STATE/$s.json"; done

# ---- an image file
IMG=$TMP/stick.img
t0=$SECONDS
run 0 "$SWAPTOOL" --state "$STATE" --json rescue --out "$IMG" "${K[@]}" --append "console=ttyS0 swaptool.wait=5"
took=$((SECONDS - t0))
J=$OUT
# no warning but Secure Boot's (on where this machine's firmware says so; a skip in a container)
jeq '[.checks[] | select(.status == "fail" or (.status == "warn" and .id != "secure-boot"))] | length' 0
for c in programs modules records gpt esp state; do jeq ".checks[] | select(.id == \"$c\") | .status" pass; done
jeq .rescue.kind file
jeq .rescue.efi_boot_file "$EFI"
jeq '.rescue.records | join(",")' preflight,backup,plan
jeq .rescue.kernel.release "$REL"
jeq '.rescue.modules | index("kernel/drivers/scsi/scsi_mod.ko") < index("kernel/drivers/usb/storage/uas.ko")' true
jeq '.rescue.modules_builtin | join(",")' crc32c_generic
BYTES=$(jq -r .rescue.bytes <<<"$J")
[ "$(stat -c %s "$IMG")" = "$BYTES" ] || fail "the image is $(stat -c %s "$IMG") bytes, the record says $BYTES"
[ -z "$(ls "$TMP" | grep 'stick.img.tmp')" ] || fail "a temporary file was left: $(ls "$TMP")"
ok "image: $BYTES bytes in $took s, every check passes, records preflight, backup, plan carried"

ESP0=$(jq -r '.rescue.partitions[0].start_lba' <<<"$J")
ESP1=$(jq -r '.rescue.partitions[0].end_lba' <<<"$J")
ST0=$(jq -r '.rescue.partitions[1].start_lba' <<<"$J")
# (read whole, then matched: under pipefail a `| grep -q` can kill sgdisk with SIGPIPE on a match)
v=$(sgdisk -v "$IMG")
grep -q 'No problems found' <<<"$v" || fail "sgdisk -v: $v"
[ "$(sgdisk -i 1 "$IMG" | sed -n 's/^Partition GUID code: \([^ ]*\).*/\1/p')" = C12A7328-F81F-11D2-BA4B-00A0C93EC93B ] ||
	fail "p1 is not an EFI system partition"
[ "$(sgdisk -i 2 "$IMG" | sed -n "s/^Partition name: '\(.*\)'/\1/p")" = SWAPTOOL-STATE ] || fail "p2 is not named SWAPTOOL-STATE"
dd if="$IMG" of="$TMP/esp.img" bs=512 skip="$ESP0" count=$((ESP1 - ESP0 + 1)) status=none
fsck.vfat -n "$TMP/esp.img" >"$TMP/fsck" 2>&1 || { cat "$TMP/fsck"; fail "fsck.vfat -n on the ESP"; }
grep -q 'FAT32\|clusters' "$TMP/fsck" || true
list=$(mdir -i "$IMG@@$((ESP0 * 512))" -/ -b ::/ | sed 's|^::/||' | sort | tr '\n' ' ')
[ "$list" = "EFI/ EFI/BOOT/ EFI/BOOT/$EFI loader/ loader/entries/ loader/entries/swaptool-rescue.conf loader/loader.conf swaptool/ swaptool/initrd.img swaptool/vmlinuz " ] ||
	fail "the ESP holds: $list"
mcopy -i "$IMG@@$((ESP0 * 512))" ::/EFI/BOOT/$EFI - | cmp - "$LOADER" || fail "the ESP's loader is not $LOADER"
mcopy -i "$IMG@@$((ESP0 * 512))" ::/swaptool/vmlinuz - | cmp - "$TMP/vmlinuz" || fail "the ESP's kernel differs"
for f in EFI/BOOT/$EFI swaptool/initrd.img swaptool/vmlinuz loader/entries/swaptool-rescue.conf; do
	[ "$(mcopy -i "$IMG@@$((ESP0 * 512))" "::/$f" - | sha256sum | cut -c1-64)" = "$(jq -r ".rescue.esp_files[] | select(.path == \"$f\") | .sha256" <<<"$J")" ] ||
		fail "$f: mcopy's sha256 is not the record's"
done
entry=$(mcopy -i "$IMG@@$((ESP0 * 512))" ::/loader/entries/swaptool-rescue.conf -)
grep -q '^linux   /swaptool/vmlinuz$' <<<"$entry" && grep -q '^initrd  /swaptool/initrd.img$' <<<"$entry" &&
	grep -q '^options .*console=ttyS0 swaptool.wait=5$' <<<"$entry" || fail "the loader entry: $entry"
ok "ESP: sgdisk -v clean, fsck.vfat -n clean, mdir lists the loader as $EFI, the entry, kernel and initramfs; mcopy's hashes are the record's"

e2fsck -fn "$IMG?offset=$((ST0 * 512))" >"$TMP/e2fsck" 2>&1 || { cat "$TMP/e2fsck"; fail "e2fsck -fn of the state partition"; }
[ "$(blkid -p -s LABEL -o value -O $((ST0 * 512)) "$IMG")" = SWAPTOOL-STATE ] || fail "the state partition's label"
for s in preflight backup plan; do
	debugfs -R "dump /swaptool/$s.json $TMP/back.json" "$IMG?offset=$((ST0 * 512))" >/dev/null 2>&1
	cmp -s "$TMP/back.json" "$STATE/$s.json" || fail "the stick's $s record differs from the state's"
done
[ "$(debugfs -R 'stat /swaptool' "$IMG?offset=$((ST0 * 512))" 2>/dev/null | sed -n 's/.*Mode: *\([0-7]*\).*/\1/p')" = 0700 ] ||
	fail "the stick's state directory is not 0700"
ok "state: e2fsck -fn clean, labelled SWAPTOOL-STATE, swaptool/ 0700 with the three records byte for byte (debugfs)"

mkdir "$TMP/root"
mcopy -i "$IMG@@$((ESP0 * 512))" ::/swaptool/initrd.img - | zcat >"$TMP/initrd.cpio"
cpio -t --quiet <"$TMP/initrd.cpio" >"$TMP/list"
for f in init usr/bin/swaptool dev/console etc/hostname etc/swaptool/modules usr/sbin/e2fsck usr/sbin/sgdisk \
	usr/share/swaptool/records/plan.json "usr/lib/modules/$REL/kernel/drivers/usb/storage/uas.ko"; do
	grep -qx "$f" "$TMP/list" || fail "the initramfs lacks $f"
done
(cd "$TMP/root" && cpio -idm --quiet <"$TMP/initrd.cpio")
cmp "$TMP/root/init" "$SRCDIR/rescue/init" || fail "the stick's /init is not rescue/init"
[ "$(cat "$TMP/root/etc/swaptool/modules" | head -1)" = kernel/drivers/nvme/host/nvme-core.ko ] || fail "modules not in load order"
# the closure, as readelf sees it: every NEEDED of every ELF inside is a file inside, in a directory
# the loader searches, and every interpreter is there
libdirs=$(cd "$TMP/root" && find usr/lib usr/lib64 -type d 2>/dev/null)
nelf=0
while read -r f; do
	readelf -h "$TMP/root/$f" >/dev/null 2>&1 || continue
	nelf=$((nelf + 1))
	interp=$(readelf -l "$TMP/root/$f" 2>/dev/null | sed -n 's/.*Requesting program interpreter: \(.*\)\]/\1/p')
	[ -z "$interp" ] || [ -e "$TMP/root$interp" ] || fail "$f: its interpreter $interp is not inside"
	for n in $(readelf -d "$TMP/root/$f" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
		found=
		for d in $libdirs; do [ -e "$TMP/root/$d/$n" ] && { found=1; break; }; done
		[ -n "$found" ] || fail "$f needs $n, which is not inside the stick"
	done
done < <(cd "$TMP/root" && find usr -type f \( -path 'usr/bin/*' -o -path 'usr/sbin/*' -o -name '*.so*' \))
[ "$nelf" -ge 40 ] || fail "only $nelf ELF files in the initramfs"
# in a mount namespace of its own, with /proc as the stick's /init mounts it (a sanitizer build reads it)
inroot() { unshare -m --propagation private chroot "$TMP/root" /bin/bash -c "mount -t proc proc /proc && $1"; }
inroot '/usr/bin/swaptool --version' >"$TMP/v" 2>&1 || { cat "$TMP/v"; fail "swaptool does not run inside the stick's root"; }
inroot '/usr/sbin/e2fsck -V' >/dev/null 2>&1 || fail "e2fsck does not run inside the stick's root"
inroot 'sgdisk --version && lsblk --version && nvme version' >/dev/null 2>&1 ||
	fail "sgdisk, lsblk or nvme does not run inside the stick's root"
ok "initramfs: cpio -t lists init, swaptool, the tools, modules and records; all $nelf ELF files' NEEDED resolve inside (readelf); swaptool, e2fsck, sgdisk, lsblk, nvme run in a chroot of it"

# ---- a loop device: written in place, read back, found again by import's reader
need_loop
truncate -s 300M "$TMP/usb.img"
attach "$TMP/usb.img"
USB=$DEV
run 3 "$SWAPTOOL" --state "$STATE" rescue --out "$USB" "${K[@]}"
contains "without --yes"
run 0 "$SWAPTOOL" --state "$STATE" --json rescue --out "$USB" --yes "${K[@]}"
jeq .rescue.kind device
jeq .rescue.device_bytes $((300 << 20))
jeq '[.checks[] | select(.status == "fail")] | length' 0
v=$(sgdisk -v "$USB")
grep -q 'No problems found' <<<"$v" || fail "sgdisk -v $USB: $v"
[ "$(sgdisk -p "$USB" | sed -n 's/^Disk .*: \([0-9]*\) sectors.*/\1/p')" = $((300 << 11)) ] || fail "the table is not the drive's size"
e2fsck -fn "$USB?offset=$((ST0 * 512))" >/dev/null 2>&1 || fail "e2fsck -fn of the state partition on $USB"
ok "loop device: written in place with --yes (refused without), sgdisk -v clean with the backup table at the drive's end, e2fsck -fn clean"

# ---- refusals: exit 3, nothing written
SUM=$(sha256sum <"$USB")
refused() { # TEXT ARGS...: rescue exits 3 saying TEXT
	local text=$1
	shift
	run 3 "$SWAPTOOL" --state "$STATE" rescue "$@"
	contains "$text"
}
refused "exists: name a new file, or add --force" --out "$IMG" "${K[@]}"
run 0 "$SWAPTOOL" --state "$STATE" -q rescue --out "$IMG" --force "${K[@]}"
ln "$TMP/vmlinuz" "$TMP/kernel-link"
refused "is the kernel the stick is made from" --out "$TMP/kernel-link" --force "${K[@]}"
refused "is a directory" --out "$TMP" "${K[@]}"
mkfifo "$TMP/fifo"
refused "is a FIFO" --out "$TMP/fifo" "${K[@]}"
# a partition of the stick, then the stick while one of its partitions is mounted
partx -a "$USB" 2>/dev/null || true
wait_for 5 test -b "${USB}p2" || skip "no partition nodes for $USB"
refused "is a partition: name the whole drive" --out "${USB}p2" --yes "${K[@]}"
mkdir "$TMP/m"
mount -o ro "${USB}p2" "$TMP/m"
refused "holds a mounted filesystem" --out "$USB" --yes "${K[@]}"
umount "$TMP/m"
[ "$(sha256sum <"$USB")" = "$SUM" ] || fail "a refused rescue changed $USB"
ok "refused: an existing file (--force replaces it, but not when it is the kernel by another name), a directory, a FIFO, a partition, a drive with a mounted filesystem; the drive unchanged"
# too small: a 64 MiB drive
truncate -s 64M "$TMP/small.img"
attach "$TMP/small.img"
refused "the stick needs" --out "$DEV" --yes "${K[@]}"
contains "use a USB drive of at least that"
ok "refused: a drive too small, naming the bytes the stick needs"
# the running root: a loop device whose filesystem is / of a chroot swaptool runs in
truncate -s 200M "$TMP/rootfs.img"
mkfs.ext4 -q -F -d "$TMP/root" "$TMP/rootfs.img"
attach "$TMP/rootfs.img"
ROOTDEV=$DEV
mkdir -p "$TMP/r"
unshare -m --propagation private bash -c "
	mount '$ROOTDEV' '$TMP/r' && mkdir -p '$TMP/r/k' && cp -r '$TMP/vmlinuz' '$TMP/mods' '$TMP/r/k/' &&
	mount --bind /dev '$TMP/r/dev' && mount -t proc proc '$TMP/r/proc' && mount -t sysfs sys '$TMP/r/sys' &&
	chroot '$TMP/r' /usr/bin/swaptool --state /run/st rescue --out '$ROOTDEV' --yes --kernel /k/vmlinuz --modules /k/mods/$REL
" >"$TMP/out" 2>"$TMP/err" && fail "rescue onto the running root's drive succeeded"
grep -q "holds the running root filesystem" "$TMP/err" || { cat "$TMP/out" "$TMP/err"; fail "the running root: not refused as such"; }
ok "refused: the drive that holds the running root filesystem (a chroot on a loop device), by identity"

# a missing program, named with its package: PATH with every program but sgdisk
mkdir "$TMP/bin"
for p in $(jq -r '.rescue.programs[].name' <<<"$J"); do
	[ "$p" = sgdisk ] || ln -s "$(type -P "$p")" "$TMP/bin/$p"
done
run 3 env PATH="$TMP/bin" "$SWAPTOOL" --state "$STATE" rescue --out "$TMP/x.img" "${K[@]}"
contains "the program 'sgdisk' is not on this machine's PATH"
contains "install the package gdisk"
[ ! -e "$TMP/x.img" ] || fail "a refused rescue left $TMP/x.img"
ok "refused: a missing program, named with its package (sgdisk, gdisk)"

# kernels and modules that are no good
printf 'not a kernel' >"$TMP/bad-kernel"
refused "is not an EFI executable" --out "$TMP/x.img" --kernel "$TMP/bad-kernel" --modules "$TMP/mods/$REL"
if [ "$EFI" = BOOTX64.EFI ]; then
	# a bzImage setup header naming another release (kernel_version at 0x20e, +0x200)
	cp "$TMP/vmlinuz" "$TMP/other-kernel"
	printf 'HdrS' | dd of="$TMP/other-kernel" bs=1 seek=$((0x202)) conv=notrunc status=none
	printf '\x00\x08' | dd of="$TMP/other-kernel" bs=1 seek=$((0x20e)) conv=notrunc status=none
	printf '6.1.0-1-amd64 (x) #1' | dd of="$TMP/other-kernel" bs=1 seek=$((0xa00)) conv=notrunc status=none
	refused "is release 6.1.0-1-amd64, the modules in" --out "$TMP/x.img" --kernel "$TMP/other-kernel" --modules "$TMP/mods/$REL"
fi
cp -r "$TMP/mods" "$TMP/mods2"
rm "$TMP/mods2/$REL/modules.dep"
refused "run 'depmod'" --out "$TMP/x.img" --kernel "$TMP/vmlinuz" --modules "$TMP/mods2/$REL"
grep -v '^kernel/drivers/scsi/sd_mod.ko' "$TMP/mods/$REL/modules.dep" >"$TMP/mods2/$REL/modules.dep"
refused "has no module 'sd_mod'" --out "$TMP/x.img" --kernel "$TMP/vmlinuz" --modules "$TMP/mods2/$REL"
printf '/etc/shadow.ko:\n' >"$TMP/mods2/$REL/modules.dep"
refused "not a module inside the directory" --out "$TMP/x.img" --kernel "$TMP/vmlinuz" --modules "$TMP/mods2/$REL"
run 2 "$SWAPTOOL" --state "$STATE" rescue --out "$TMP/x.img" --kernel "$TMP/vmlinuz"
contains "--kernel and --modules go together"
run 2 "$SWAPTOOL" --state "$STATE" rescue --out "$TMP/x.img" "${K[@]}" --append "$(printf 'quiet\nroot=/dev/sda')"
contains "--append holds a control"
run 2 "$SWAPTOOL" --state "$STATE" rescue "${K[@]}"
contains "rescue needs --out"
[ ! -e "$TMP/x.img" ] || fail "a refused rescue left $TMP/x.img"
ok "refused: a kernel that is no EFI executable or of another release, no modules.dep, a needed module missing, a hostile modules.dep (3); --kernel alone, a newline in --append, no --out (2)"

# a corrupt record in the state directory is not carried
cp -r "$STATE" "$TMP/st2"
printf '{"schema": "swaptool/1", "step": "plan", "plan": "x"}\n' >"$TMP/st2/plan.json"
run 3 "$SWAPTOOL" --state "$TMP/st2" rescue --out "$TMP/x.img" "${K[@]}"
contains "the record '$TMP/st2/plan.json' cannot go onto the stick"
says_json 3 "cannot go onto the stick" "$SWAPTOOL" --state "$TMP/st2" --json rescue --out "$TMP/x.img" "${K[@]}"
# not root
if command -v setpriv >/dev/null; then
	chmod 755 "$TMP"
	mkdir "$TMP/nobody"
	chown 65534:65534 "$TMP/nobody"
	run 3 setpriv --reuid=65534 --regid=65534 --clear-groups "$SWAPTOOL" --state "$TMP/nobody" rescue --out "$TMP/x.img" "${K[@]}"
	contains "rescue runs as root"
fi
ok "refused: a record that fails its check (also as one JSON error), not root"
