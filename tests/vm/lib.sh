# SPDX-License-Identifier: MIT
# The VM bench's host side: kernel, guest root, accelerator, drives, one boot. Sourced by tests/vm/run.
#
# Everything is cached under $VMDIR (BUILDDIR/vm): the kernel extracted from Debian's
# linux-image-cloud-amd64 (NVMe, ext4, io_uring and PCIe hotplug built in, so the guest needs no
# modules), the guest root as an uncompressed initramfs keyed by a hash of its inputs, and the
# accelerator found to work. Nothing is installed on the host.
# VM_ARCH=arm64 boots the nodes' architecture instead (below, and tests/vm/arm64.sh).

# Commands the guest runs: the scenarios' shell, the independent checkers, and what swaptool execs.
VM_TOOLS=(
	bash sh cat cp mv rm mkdir rmdir ls ln head tail sha256sum stat truncate dd sync sleep wc tr cut
	sort uniq date env id printf echo seq tee chmod chown touch basename dirname readlink realpath
	mktemp timeout kill true false test expr du df find xargs grep sed awk cmp od bc nproc uname
	jq tar gzip mkfs.vfat mke2fs mkfs.ext4 e2fsck e2undo fsck fsck.ext4 resize2fs tune2fs dumpe2fs debugfs
	sgdisk sfdisk blkid partx losetup lsblk findmnt blockdev wipefs mount umount stty
	nvme fio ssh-keygen insmod dmesg
)
# Plain files the tools read: mke2fs's defaults. (/etc/passwd and /etc/group are written: root,
# and nv, the node's user, for SUDO_USER and owners by name.)
VM_FILES=(/etc/mke2fs.conf)
. "$VMSRC/drives.sh"
. "$VMSRC/uefi.sh"

# The guest's architecture: the host's (dpkg's name for it), or VM_ARCH. What differs: QEMU, its
# machine (virt's GIC as the accelerator has it), the console, the multiarch directory, the CPU
# under TCG (arm64: QEMU's own pointer-authentication hash, not the architected QARMA, which
# costs TCG most of its time in Debian's kernel: scenario 1's boot and run took 43 and 51 s with
# it, 18 s without, alternating on this 2-core machine under a load of 6). A guest of another
# architecture than the host's (arm64 on this amd64 machine) gets its kernel and root from that
# architecture's packages (tests/vm/arm64.sh), cached in VM_CACHE (default
# /var/cache/swaptool/vm-arm64: they take minutes and the Debian archive to make, so a new build
# directory reuses them), results in BUILDDIR/vm-arm64, TCG only, and swaptool from the cross
# build (scripts/cross-arm64: build-arm64/swaptool); a step a scenario runs on the host uses
# HOST_SWAPTOOL, this machine's build. Debian 12's linux-image-cloud-arm64 has what the bench
# needs built in (NVMe, PCIe host generic/ECAM, PCIe port hotplug, pl011 console, ext4,
# io_uring); FUSE is a module, carried as for amd64 (virtio too, which the bench does not use).
VM_HOST_ARCH=$(dpkg --print-architecture 2>/dev/null || echo amd64)
VM_ARCH=${VM_ARCH:-$VM_HOST_ARCH}
case $VM_ARCH in
amd64) VM_QEMU=qemu-system-x86_64 VM_QEMU_PKG=qemu-system-x86 VM_MACHINE=q35 VM_CONSOLE=ttyS0 VM_TCG_CPU=max
	VM_MULTIARCH=x86_64-linux-gnu VM_ELF_MACHINE='Advanced Micro Devices X86-64' ;;
arm64) VM_QEMU=qemu-system-aarch64 VM_QEMU_PKG=qemu-system-arm VM_MACHINE=virt,gic-version=max VM_CONSOLE=ttyAMA0
	VM_TCG_CPU=${VM_TCG_CPU:-max,pauth-impdef=on}
	VM_MULTIARCH=aarch64-linux-gnu VM_ELF_MACHINE=AArch64 ;;
*) echo "VM_ARCH='$VM_ARCH': amd64 or arm64" >&2; exit 2 ;;
esac
HOST_SWAPTOOL=${HOST_SWAPTOOL:-$BUILDDIR/swaptool}
if [ "$VM_ARCH" = "$VM_HOST_ARCH" ]; then
	VM_FOREIGN=0
	VMDIR=$BUILDDIR/vm
	SWAPTOOL=${SWAPTOOL:-$HOST_SWAPTOOL}
	VM_CACHE=$VMDIR
else
	VM_FOREIGN=1
	VMDIR=$BUILDDIR/vm-$VM_ARCH
	SWAPTOOL=${SWAPTOOL:-$SRCDIR/build-$VM_ARCH/swaptool}
	VM_CACHE=${VM_CACHE:-/var/cache/swaptool/vm-$VM_ARCH}
fi
. "$VMSRC/arm64.sh"

vm_skip() { echo "SKIP: $*" >&2; exit 77; }
vm_fail() { echo "FAIL: $*" >&2; exit 1; }
vm_say() { echo "vm: $*" >&2; }

# vm_kernel_unpack METAPACKAGE DIR: the kernel image package METAPACKAGE depends on, for VM_ARCH,
# unpacked into DIR/x (boot/vmlinuz-*, lib/modules/VERSION); sets KPKG to its name. amd64: apt-get
# download from the host's lists; another architecture: mmdebstrap (tests/vm/arm64.sh). Removes
# DIR and skips when it cannot be had.
vm_kernel_unpack() {
	local meta=$1 d=$2
	if [ "$VM_FOREIGN" = 1 ]; then
		vm_foreign_extract "$d/x" "$meta" ||
			{ tail -5 "$d/x.log" >&2; rm -rf "$d"; vm_skip "mmdebstrap could not fetch $meta ($VM_SUITE from $VM_MIRROR)"; }
		KPKG=linux-image-$(ls "$d/x/lib/modules")
		return
	fi
	command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null ||
		{ rm -rf "$d"; vm_skip "no apt-get/dpkg-deb to fetch $meta; set VM_KERNEL to a kernel with NVMe built in"; }
	# apt-get download as root warns that _apt cannot write here; the download is still checked.
	chmod 755 "$d"
	(cd "$d" && apt-get download -q "$meta" >/dev/null 2>&1) ||
		{ rm -rf "$d"; vm_skip "apt-get download $meta failed (no network or no apt lists: apt-get update)"; }
	# The metapackage depends on exactly one versioned image package: that holds the kernel.
	KPKG=$(dpkg-deb -f "$d/${meta}"_*.deb Depends | sed 's/ .*//; s/,.*//')
	(cd "$d" && apt-get download -q "$KPKG" >/dev/null 2>&1) || { rm -rf "$d"; vm_skip "apt-get download $KPKG failed"; }
	dpkg-deb -x "$d/${KPKG}"_*.deb "$d/x" || { rm -rf "$d"; vm_fail "dpkg-deb -x $KPKG failed"; }
}

# vm_kernel: $VM_KERNEL, else Debian's cloud kernel for VM_ARCH, extracted once.
vm_kernel() {
	if [ -n "${VM_KERNEL:-}" ]; then
		[ -r "$VM_KERNEL" ] || vm_skip "VM_KERNEL='$VM_KERNEL' is not readable"
		KERNEL=$VM_KERNEL
		return
	fi
	KERNEL=$VM_CACHE/vmlinuz
	# the kernel and its fuse module (clone's shrink runs resize2fs through a FUSE file)
	[ -s "$KERNEL" ] && [ -e "$VM_CACHE/fuse-module.done" ] && return
	local d
	d=$(mktemp -d "$VM_CACHE/kernel.XXXXXX")
	vm_kernel_unpack "linux-image-cloud-$VM_ARCH" "$d"
	cp "$d"/x/boot/vmlinuz-* "$KERNEL.tmp" && mv "$KERNEL.tmp" "$KERNEL"
	rm -f "$VM_CACHE"/fuse.ko*
	find "$d/x/lib/modules" -name 'fuse.ko*' -exec cp {} "$VM_CACHE/" \; 2>/dev/null || true
	: >"$VM_CACHE/fuse-module.done"
	echo "$KPKG" >"$VM_CACHE/kernel-package"
	rm -rf "$d"
	vm_say "kernel: $KPKG"
}

# vm_kernel_generic: Debian's generic kernel (linux-image-ARCH) instead of the cloud one, for a
# scenario that needs what the cloud kernel leaves out: USB (xHCI, usb-storage, UAS). There NVMe,
# SCSI and USB are modules: VM_GENERIC_MODULES and what they depend on (modinfo) are kept in load
# order under $VM_CACHE/generic/modules, and the next boots carry them (the guest's init loads them
# before it waits for the NVMe drives; fuse for clone's shrink); the modules directory with depmod's
# modules.dep is kept as $VM_CACHE/generic/lib/modules/RELEASE (scenario 13's rescue stick). Cached,
# rebuilt when the list changes; sets KERNEL and VM_GENERIC.
VM_GENERIC_MODULES=(nvme xhci-pci sd_mod usb-storage uas fuse)
vm_kernel_generic() {
	local g=$VM_CACHE/generic d ver
	if [ ! -s "$g/vmlinuz" ] || [ ! -s "$g/modules/order" ] || [ "$(cat "$g/wanted" 2>/dev/null)" != "${VM_GENERIC_MODULES[*]}" ] ||
		! ls "$g"/lib/modules/*/modules.dep >/dev/null 2>&1; then
		command -v modinfo >/dev/null || vm_skip "no modinfo (kmod) to resolve the generic kernel's modules"
		rm -rf "$g"
		d=$(mktemp -d "$VM_CACHE/generic.XXXXXX")
		vm_kernel_unpack "linux-image-$VM_ARCH" "$d"
		ver=$(ls "$d/x/lib/modules")
		mkdir -p "$d/out/modules"
		cp "$d"/x/boot/vmlinuz-* "$d/out/vmlinuz"
		# depth-first over modinfo's "depends": every module after the ones it needs
		local -A seen=()
		want() {
			local m=$1 f n
			[ -n "${seen[$m]:-}" ] && return
			seen[$m]=1
			f=$(find "$d/x/lib/modules/$ver" -name "$m.ko*" -print -quit)
			if [ -z "$f" ]; then
				# built in: modules.builtin names it, nothing to load
				grep -q "/$m.ko" "$d/x/lib/modules/$ver/modules.builtin" || vm_fail "no module $m in $KPKG"
				return
			fi
			for n in $(modinfo -F depends "$f" | tr ',' ' '); do want "$n"; done
			cp "$f" "$d/out/modules/"
			echo "${f##*/}" >>"$d/out/modules/order"
		}
		for m in "${VM_GENERIC_MODULES[@]}"; do want "$m"; done
		# the modules directory as an installed kernel has it, for `swaptool rescue --modules`
		# (scenario 13): the package ships no modules.dep (its postinst runs depmod), so depmod
		# makes one; what no disk, USB or filesystem module needs is left behind (160 MB stay of 400)
		rm -rf "$d/x/lib/modules/$ver/kernel/"{sound,net} \
			"$d/x/lib/modules/$ver/kernel/drivers/"{gpu,net,media,infiniband,staging,bluetooth,iio,isdn}
		depmod -b "$d/x" "$ver" || { rm -rf "$d"; vm_fail "depmod -b for $KPKG failed"; }
		mkdir -p "$d/out/lib/modules"
		mv "$d/x/lib/modules/$ver" "$d/out/lib/modules/"
		echo "$KPKG" >"$d/out/kernel-package"
		echo "${VM_GENERIC_MODULES[*]}" >"$d/out/wanted"
		mv "$d/out" "$g"
		rm -rf "$d"
		vm_say "generic kernel: $KPKG, modules: $(tr '\n' ' ' <"$g/modules/order")"
	fi
	KERNEL=$g/vmlinuz
	VM_GENERIC=1
}

# vm_guest_inputs: every file the guest root is built from, one path a line (commands, their
# shared libraries as ldd names them, the dynamic loader, swaptool's libraries, plain files).
vm_guest_inputs() {
	local c p
	for c in "${VM_TOOLS[@]}"; do
		p=$(type -P "$c") || { echo "missing: $c" >&2; return 1; }
		echo "$p"
	done
	for f in "${VM_FILES[@]}"; do [ -r "$f" ] && echo "$f"; done
	# the C.UTF-8 locale swaptool sets for its tables ("°C" as UTF-8, not \xc2\xb0)
	[ -d /usr/lib/locale/C.utf8 ] && find /usr/lib/locale/C.utf8 -type f
	ls "$VM_CACHE"/fuse.ko* 2>/dev/null || true
	for c in "${VM_TOOLS[@]}"; do type -P "$c"; done | sort -u | xargs ldd 2>/dev/null |
		awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// && $1 !~ /:$/ { print $1 }'
	ldd "$SWAPTOOL" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// && $1 !~ /:$/ { print $1 }'
}

# vm_guest: the guest root as a newc cpio in $GUEST, rebuilt when any input file changes (the
# key hashes each input's path, size, mtime and inode, and tests/vm/init's content; for arm64 its
# package list: vm_guest_foreign, tests/vm/arm64.sh). swaptool itself travels in each boot's own
# small archive, so rebuilding swaptool does not rebuild this.
vm_guest() {
	command -v cpio >/dev/null || vm_skip "no cpio to build the guest root (apt-get install cpio)"
	local inputs key root f src from= unpack=
	local t0=$SECONDS
	if [ "$VM_FOREIGN" = 0 ]; then
		inputs=$(vm_guest_inputs | sort -u) || vm_skip "a tool the guest needs is missing here (scripts/install-deps)"
		key=$( { xargs stat -L -c '%n %s %Y %i' <<<"$inputs"; cat "$VMSRC/init"; } | sha256sum | cut -c1-16)
	else
		# the files come from the packages unpacked in $from (only on a cache miss)
		vm_guest_foreign
	fi
	GUEST=$VM_CACHE/guest-$key.cpio
	[ -s "$GUEST" ] && return
	root=$(mktemp -d "$VM_CACHE/root.XXXXXX")
	# Debian's merged /usr: /bin, /sbin, /lib and /lib64 are links into /usr, as on the host.
	mkdir -p "$root"/usr/{bin,sbin,lib,lib64} "$root"/{etc,proc,sys,dev,tmp,run,out,root,vm}
	ln -s usr/bin "$root/bin"; ln -s usr/sbin "$root/sbin"
	ln -s usr/lib "$root/lib"; ln -s usr/lib64 "$root/lib64"
	while read -r f; do
		src=$from$f
		case $f in /bin/*|/sbin/*|/lib/*|/lib64/*) f=/usr$f ;; esac
		mkdir -p "$root${f%/*}"
		cp -L "$src" "$root$f"
	done <<<"$inputs"
	[ -z "$unpack" ] || rm -rf "$unpack"
	printf 'root:x:0:0:root:/root:/bin/bash\nnv:x:1000:1000:nv:/home/nv:/bin/bash\n' >"$root/etc/passwd"
	printf 'root:x:0:\nnv:x:1000:\n' >"$root/etc/group"
	: >"$root/etc/fstab"
	install -m 755 "$VMSRC/init" "$root/init"
	cp "$VM_CACHE"/fuse.ko* "$root/vm/" 2>/dev/null || true
	(cd "$root" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc --quiet >"$GUEST.tmp") ||
		{ rm -rf "$root" "$GUEST.tmp"; vm_fail "cpio of the guest root failed"; }
	rm -rf "$root"
	find "$VM_CACHE" -maxdepth 1 -name 'guest-*.cpio' ! -name "${GUEST##*/}" -delete
	mv "$GUEST.tmp" "$GUEST"
	vm_say "guest root built in $((SECONDS - t0)) s: $(du -m "$GUEST" | cut -f1) MiB, key $key"
}

# vm_drive FILE SERIAL [PROPS]: an NVMe controller for the next boot, over FILE (raw), behind its
# own PCIe root port (so QMP device_del can unplug it); PROPS are more -device nvme properties.
# Controllers are numbered in this order in the guest (nvme0, nvme1, ...), the results drive last.
VM_DRIVES=()
VM_INPUTS=()
vm_drive() { VM_DRIVES+=("$1|$2|${3:-}"); }
# vm_usb FILE uas|storage SERIAL [VENDOR PRODUCT]: a USB disk over FILE for the next boot (needs
# vm_kernel_generic): UAS with a SCSI disk of those INQUIRY strings, or Bulk-Only usb-storage.
VM_USB=()
vm_usb() { VM_USB+=("$1|$2|$3|${4:-}|${5:-}"); }
# vm_input PATH...: files copied into the next boot's /vm/in.
vm_input() { VM_INPUTS+=("$@"); }

# vm_boot FUNC: boot the guest with the drives given so far and a 64 MiB results drive, run FUNC
# from the scenario file in it, wait (at most VM_TIMEOUT s) and unpack what it sent back into
# $VMOUT (BUILDDIR/vm/results/SCENARIO/FUNC, kept for a look afterwards and for the report
# scenario). Sets VM_RC to FUNC's exit status. Returns 1, after showing the console's end, when
# no results came back. With VM_BG=1 it returns at once with QEMU running (VM_PID) and QMP on
# $VMRUN/qmp.{in,out}: vm_qmp talks to it, vm_wait finishes the boot.
vm_boot() {
	local func=$1 i=0 d file serial props
	VMOUT=$VMDIR/results/${VM_NAME:-probe}/$func
	rm -rf "$VMOUT" "$VMRUN/extra"
	mkdir -p "$VMOUT" "$VMRUN/extra/vm/in"
	install -m 755 "$SWAPTOOL" "$VMRUN/extra/usr/local/bin/swaptool" -D
	cp "$VMSRC/guest.sh" "$VMSRC/drives.sh" "$VMRUN/extra/vm/"
	cp "$SCENARIO" "$VMRUN/extra/vm/scenario.sh"
	[ ${#VM_INPUTS[@]} -eq 0 ] || cp -r "${VM_INPUTS[@]}" "$VMRUN/extra/vm/in/"
	[ "${VM_GENERIC:-0}" = 0 ] || cp -r "$VM_CACHE/generic/modules" "$VMRUN/extra/vm/"
	(cd "$VMRUN/extra" && find . -mindepth 1 | cpio -o -H newc --quiet >"$VMRUN/extra.cpio") || vm_fail "cpio failed"
	# The kernel unpacks concatenated cpio archives one after the other into its root.
	cat "$GUEST" "$VMRUN/extra.cpio" >"$VMRUN/initrd"
	rm -f "$VMRUN/results.img"
	truncate -s 64M "$VMRUN/results.img"
	VM_DRIVES+=("$VMRUN/results.img|$RESULTS_SERIAL|")
	# With one vCPU, under TCG, the I/O queue of QEMU 7.2's emulated controller stopped taking
	# commands in most boots of scenario 06 on an idle 2-core host (December 2026; 1 in 7 on a
	# loaded one before): the kernel reports "I/O N QID 1 timeout, aborting" for every command
	# in flight, fio's reads set it off more than accept's, and a boot that stalled stalls
	# again, even after the kernel's controller reset. Neither ioeventfd=on nor aio=io_uring
	# changed that; two vCPUs (so two I/O queues) did: 0 stalls in 7 boots against 2 in 3 with
	# one, in the same hour. Should it come back, the kernel recovers with an abort after one
	# I/O timeout and a reset after a second: 10 s instead of the default 30 makes that cost
	# about 20 s, not a minute (5 s worked as well; 10 leaves a slow legitimate command room
	# under a loaded host), loglevel=5 puts the warnings on the console, where vm_finish counts
	# them, and scenarios that measure watch for them (run_watched, guest.sh).
	local args=(-machine "$VM_MACHINE" -smp "${VM_SMP:-2}" -m "${VM_MEM:-1536}" -nodefaults -display none -no-reboot
		-serial "file:$VMOUT/console.log" -kernel "$KERNEL" -initrd "$VMRUN/initrd"
		-append "console=$VM_CONSOLE panic=-1 loglevel=5 nvme_core.io_timeout=10 vm.run=$func vm.nvme=${#VM_DRIVES[@]}${VM_APPEND:+ $VM_APPEND}")
	if [ "$ACCEL" = kvm ]; then args+=(-accel kvm -cpu host); else args+=(-accel tcg -cpu "$VM_TCG_CPU"); fi
	for d in "${VM_DRIVES[@]}"; do
		IFS='|' read -r file serial props <<<"$d"
		i=$((i + 1))
		args+=(-device "pcie-root-port,id=rp$i,chassis=$i,slot=$i"
			-drive "file=$file,if=none,id=drive$i,format=raw"
			-device "nvme,id=nvme$((i - 1)),bus=rp$i,serial=$serial,drive=drive$i${props:+,$props}")
	done
	# USB disks on one xHCI controller: Bulk-Only (usb-storage) or UAS with a SCSI disk whose
	# INQUIRY strings and VPD serial a bridge would report
	[ ${#VM_USB[@]} -eq 0 ] || args+=(-device qemu-xhci,id=xhci)
	i=0
	for d in "${VM_USB[@]}"; do
		local kind vendor product
		IFS='|' read -r file kind serial vendor product <<<"$d"
		i=$((i + 1))
		args+=(-drive "file=$file,if=none,id=usb$i,format=raw")
		if [ "$kind" = uas ]; then
			args+=(-device "usb-uas,id=uas$i,bus=xhci.0"
				-device "scsi-hd,bus=uas$i.0,scsi-id=0,lun=0,drive=usb$i,serial=$serial,vendor=$vendor,product=$product")
		else
			args+=(-device "usb-storage,bus=xhci.0,drive=usb$i,serial=$serial")
		fi
	done
	VM_DRIVES=()
	VM_INPUTS=()
	VM_USB=()
	VM_T0=$SECONDS
	VM_FUNC=$func
	if [ "${VM_BG:-0}" = 1 ]; then
		rm -f "$VMRUN"/qmp.{in,out}
		mkfifo "$VMRUN/qmp.in" "$VMRUN/qmp.out"
		args+=(-chardev "pipe,id=qmp,path=$VMRUN/qmp" -mon chardev=qmp,mode=control)
		timeout -k 5 "${VM_TIMEOUT:-300}" "$VM_QEMU" "${args[@]}" >"$VMRUN/qemu.err" 2>&1 &
		VM_PID=$!
		# A scenario that fails before vm_wait leaves no QEMU behind (timeout passes the TERM on).
		trap 'kill "$VM_PID" 2>/dev/null || true; rm -rf "$VMRUN"' EXIT
		# Read-write opens of the FIFOs do not block, even when QEMU died before opening its ends.
		exec {VM_QIN}<>"$VMRUN/qmp.in" {VM_QOUT}<>"$VMRUN/qmp.out"
		vm_qmp '{"execute": "qmp_capabilities"}' >/dev/null || vm_fail "no QMP answer: $(tail -3 "$VMRUN/qemu.err")"
		return 0
	fi
	local rc=0
	timeout -k 5 "${VM_TIMEOUT:-300}" "$VM_QEMU" "${args[@]}" >"$VMRUN/qemu.err" 2>&1 || rc=$?
	vm_finish "$rc"
}

# vm_finish QEMU_STATUS: unpack the results of the boot that just ended; see vm_boot.
vm_finish() {
	local took=$((SECONDS - VM_T0))
	if [ "$1" = 124 ] || [ "$1" = 137 ]; then
		vm_say "$VM_FUNC: no power-off within ${VM_TIMEOUT:-300} s; QEMU killed"
	elif [ "$1" != 0 ]; then
		vm_say "$VM_FUNC: $VM_QEMU exited $1: $(tail -3 "$VMRUN/qemu.err")"
	fi
	local stalls
	stalls=$(grep -c "$NVME_TIMEOUT_RE" "$VMOUT/console.log" 2>/dev/null || true)
	[ "${stalls:-0}" = 0 ] || vm_say "$VM_FUNC: the kernel reported $stalls NVMe command timeouts: an emulated controller stalled (console.log)"
	if ! tar -xf "$VMRUN/results.img" -C "$VMOUT" 2>/dev/null || [ ! -s "$VMOUT/rc" ]; then
		vm_say "$VM_FUNC: no results came back; the console's end:"
		tail -25 "$VMOUT/console.log" >&2
		VM_RC=
		return 1
	fi
	VM_RC=$(cat "$VMOUT/rc")
	[ -r "$VMOUT/log" ] && sed "s/^/  [$VM_FUNC] /" "$VMOUT/log"
	vm_say "$VM_FUNC: exit $VM_RC, boot and run ${took} s ($ACCEL)"
}

# vm_qmp JSON: send one QMP command to the running guest, print its answer (events skipped).
vm_qmp() {
	local line
	printf '%s\n' "$1" >&"$VM_QIN"
	while IFS= read -r -t 60 line <&"$VM_QOUT"; do
		case $line in *'"return"'* | *'"error"'*) printf '%s\n' "$line"; return 0 ;; esac
	done
	return 1
}

# vm_wait: wait for a VM_BG=1 boot to power off, then as vm_finish.
vm_wait() {
	local rc=0
	wait "$VM_PID" || rc=$?
	trap 'rm -rf "$VMRUN"' EXIT
	exec {VM_QIN}>&- {VM_QOUT}<&-
	vm_finish "$rc"
}

# vm_console_wait TEXT [SECONDS]: wait until the guest's console shows TEXT (a line it printed).
vm_console_wait() {
	local i
	for i in $(seq $((${2:-120} * 10))); do
		grep -qF -- "$1" "$VMOUT/console.log" 2>/dev/null && return 0
		kill -0 "$VM_PID" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# vm_accel: kvm where a bounded boot under it completes, else tcg (VM_ACCEL forces one). On this
# project's build machine /dev/kvm exists but a guest hangs under it, hence the try, once per build.
vm_accel() {
	if [ -n "${VM_ACCEL:-}" ]; then ACCEL=$VM_ACCEL; return; fi
	if [ -s "$VMDIR/accel" ]; then ACCEL=$(cat "$VMDIR/accel"); return; fi
	ACCEL=tcg
	if [ "$VM_FOREIGN" = 0 ] && [ -r /dev/kvm ] && [ -w /dev/kvm ]; then
		ACCEL=kvm
		local save=${SCENARIO:-}
		SCENARIO=/dev/null
		if VM_TIMEOUT=${VM_KVM_TRY:-25} vm_boot true >/dev/null 2>&1 && [ "$VM_RC" = 0 ]; then
			vm_say "kvm works here"
		else
			ACCEL=tcg
			vm_say "a guest under kvm did not finish within ${VM_KVM_TRY:-25} s: using tcg"
		fi
		SCENARIO=$save
	fi
	echo "$ACCEL" >"$VMDIR/accel"
}

# vm_setup: everything a scenario needs before its first boot; skips (77) with the reason when
# QEMU or the kernel cannot be had.
vm_setup() {
	command -v "$VM_QEMU" >/dev/null || vm_skip "no $VM_QEMU (apt-get install $VM_QEMU_PKG)"
	if [ "$VM_FOREIGN" = 0 ]; then
		[ -x "$SWAPTOOL" ] || vm_skip "no swaptool at '$SWAPTOOL'; build first"
	else
		[ -x "$SWAPTOOL" ] || vm_skip "no $VM_ARCH swaptool at '$SWAPTOOL': scripts/cross-arm64 --no-deb builds it (or set SWAPTOOL)"
		local newer
		newer=$(find "$SRCDIR"/src "$SRCDIR"/steps "$SRCDIR"/cli -newer "$SWAPTOOL" -name '*.[ch]' -print -quit 2>/dev/null || true)
		[ -z "$newer" ] || vm_say "warning: ${newer#"$SRCDIR"/} is newer than $SWAPTOOL: scripts/cross-arm64 --no-deb rebuilds it"
	fi
	readelf -h "$SWAPTOOL" 2>/dev/null | grep -q "Machine: *$VM_ELF_MACHINE" ||
		vm_fail "$SWAPTOOL is not an $VM_ARCH program: $(readelf -h "$SWAPTOOL" 2>&1 | sed -n 's/ *Machine: *//p')"
	mkdir -p "$VMDIR" "$VM_CACHE"
	vm_kernel
	vm_guest
	VMRUN=$(mktemp -d "${TMPDIR:-/var/tmp}/swaptool-vm.XXXXXX")
	trap 'rm -rf "$VMRUN"' EXIT
	vm_accel
}

# src_fingerprint IMAGE: changes when QEMU writes the image (mtime) or its ends differ.
src_fingerprint() {
	stat -c '%s %Y' "$1"
	head -c 1M "$1" | sha256sum
	tail -c 1M "$1" | sha256sum
}

# Judging on the host what the guest kept (names as in tests/lib.sh, where they mean the same).
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok - $*"; }
# load NAME: $OUT and $ERR from the guest's /out/NAME.out and .err of the last boot.
load() {
	[ -r "$VMOUT/$1.out" ] || fail "the guest kept no output named '$1'"
	OUT=$(cat "$VMOUT/$1.out")
	ERR=$(cat "$VMOUT/$1.err" 2>/dev/null || true)
}
# jeq FILTER EXPECTED: the JSON in $OUT at FILTER equals EXPECTED (compared as jq -r text).
jeq() {
	local got
	got=$(printf '%s' "$OUT" | jq -r "$1") || fail "jq '$1' on output failed"
	[ "$got" = "$2" ] || fail "$1 = '$got', expected '$2'"
}
# contains TEXT: $OUT or $ERR holds TEXT.
contains() {
	case "$OUT$ERR" in *"$1"*) ;; *) echo "$OUT$ERR" >&2; fail "output lacks '$1'" ;; esac
}
