# SPDX-License-Identifier: MIT
# The VM bench's arm64 guest (VM_ARCH=arm64), from Debian's arm64 packages. Sourced by tests/vm/lib.sh.
#
# mmdebstrap's extract variant downloads packages of another architecture with their dependencies
# and unpacks them without running anything of theirs (no maintainer scripts, so no emulation on
# the host). The kernel comes from linux-image-cloud-arm64 (vm_kernel_unpack, lib.sh); the guest
# root from the packages behind VM_TOOLS, VM_FILES, the C.UTF-8 locale and the arm64 swaptool's
# libraries, named as this host's dpkg names their amd64 files (Debian names them the same in
# every architecture). From the unpacked tree only the tools, the files and what they load go
# into the guest (readelf: the program interpreter, NEEDED, RUNPATH), as the amd64 guest takes
# the host's tools and the libraries ldd names. Both are cached in $VM_CACHE (lib.sh).
VM_SUITE=${VM_SUITE:-bookworm}
VM_MIRROR=${VM_MIRROR:-http://deb.debian.org/debian}

# vm_foreign_extract DIR PACKAGE...: the PACKAGEs of VM_ARCH and their dependencies unpacked into
# DIR (which must not exist yet); mmdebstrap's output in DIR.log.
vm_foreign_extract() {
	local dir=$1
	shift
	command -v mmdebstrap >/dev/null ||
		vm_skip "no mmdebstrap to fetch Debian's $VM_ARCH packages (apt-get install mmdebstrap)"
	mmdebstrap --quiet --variant=extract --architectures="$VM_ARCH" --include="$(IFS=,; echo "$*")" \
		"$VM_SUITE" "$dir" "deb $VM_MIRROR $VM_SUITE main" >"$dir.log" 2>&1
}

# vm_guest_packages: the Debian packages the guest root is made of, one a line: those that hold
# the host's copies of the tools (the file an alternative resolves to: mawk for awk), of
# VM_FILES, of the C.UTF-8 locale, and of the libraries the arm64 swaptool names (its NEEDED).
vm_guest_packages() {
	local c p so paths=() owned files ldcache
	for c in "${VM_TOOLS[@]}"; do
		p=$(type -P "$c") || { echo "missing here: $c" >&2; return 1; }
		paths+=("$p")
	done
	mapfile -t paths < <(readlink -f "${paths[@]}")
	paths+=("${VM_FILES[@]}" /usr/lib/locale/C.utf8/LC_CTYPE)
	ldcache=$(ldconfig -p)
	for so in $(vm_needed "$SWAPTOOL"); do
		# the dynamic loader, which some programs name too, comes with libc6 (the host's has another name)
		case $so in ld-linux-*) continue ;; esac
		p=$(awk -v so="$so" '$1 == so { print $NF; exit }' <<<"$ldcache")
		[ -n "$p" ] || { echo "no $so on this host to name its package by" >&2; return 1; }
		paths+=("$p")
	done
	# dpkg knows a merged-/usr file by the path its package ships (/bin/bash, /usr/lib/.../libblkid.so.1):
	# ask for both; one dpkg call (each reads the whole database)
	owned=$(for p in "${paths[@]}"; do echo "/usr${p#/usr}"; echo "${p#/usr}"; done | xargs dpkg -S 2>/dev/null || true)
	files=$(sed 's/.*: //' <<<"$owned")
	for p in "${paths[@]}"; do
		grep -qxF -e "/usr${p#/usr}" -e "${p#/usr}" <<<"$files" || { echo "no package holds $p" >&2; return 1; }
	done
	sed 's/[:,].*//' <<<"$owned" | sort -u
}

# vm_needed ELF: the sonames ELF names as NEEDED, one a line (readelf reads every architecture).
vm_needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p'; }

# vm_foreign_libs TREE FILE...: what the FILEs (host paths) load, recursively, as paths inside the
# unpacked TREE, one a line: the program interpreter and every NEEDED library, looked up on the
# file's RUNPATH, then in the multiarch directories. A library the tree lacks fails.
vm_foreign_libs() {
	local t=$1 f so d found hdr runpath
	shift
	local -A seen=()
	local queue=("$@")
	while [ ${#queue[@]} -gt 0 ]; do
		f=${queue[0]}
		queue=("${queue[@]:1}")
		hdr=$(readelf -ld "$f" 2>/dev/null) || continue # not ELF: a script
		so=$(sed -n 's/.*Requesting program interpreter: \(.*\)\]$/\1/p' <<<"$hdr")
		if [ -n "$so" ] && [ -z "${seen[$so]:-}" ]; then
			seen[$so]=1
			echo "$so"
		fi
		runpath=$(sed -nE 's/.*\((RUNPATH|RPATH)\).*\[(.*)\]$/\2/p' <<<"$hdr" | tr ':' ' ')
		for so in $(sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p' <<<"$hdr"); do
			found=
			for d in $runpath "/lib/$VM_MULTIARCH" "/usr/lib/$VM_MULTIARCH" /lib /usr/lib; do
				[ -e "$t$d/$so" ] && { found=$d/$so; break; }
			done
			[ -n "$found" ] || { echo "no $so in the $VM_ARCH packages (needed by ${f#"$t"})" >&2; return 1; }
			[ -n "${seen[$found]:-}" ] && continue
			seen[$found]=1
			echo "$found"
			queue+=("$t$found")
		done
	done
}

# vm_foreign_inputs TREE: every file the guest root takes from the unpacked TREE, as a path inside
# it, one a line: the tools, VM_FILES, the C.UTF-8 locale and what the tools and swaptool load.
# A tool the packages ship only as an alternative (awk) gets the link the host has (to mawk).
vm_foreign_inputs() {
	local t=$1 c d p l tools=()
	# Absolute links (kmod's /sbin/insmod -> /bin/kmod) are made to point inside the tree, so that
	# cp -L and readelf follow them there and never to the host's own files.
	while read -r l; do
		p=$(readlink "$l")
		ln -sfn "$t$p" "$l"
	done < <(find "$t" -type l -lname '/*')
	for c in "${VM_TOOLS[@]}"; do
		p=
		for d in /usr/sbin /usr/bin /sbin /bin; do [ -e "$t$d/$c" ] && { p=$d/$c; break; }; done
		if [ -z "$p" ]; then
			l=$(readlink -f "$(type -P "$c")")
			for d in /usr/sbin /usr/bin /sbin /bin; do
				[ -e "$t$d/${l##*/}" ] && { ln -s "${l##*/}" "$t$d/$c"; p=$d/$c; break; }
			done
		fi
		[ -n "$p" ] || { echo "no $c in the $VM_ARCH packages" >&2; return 1; }
		echo "$p"
		tools+=("$t$p")
	done
	for p in "${VM_FILES[@]}"; do [ -r "$t$p" ] && echo "$p"; done
	(cd "$t" && find usr/lib/locale/C.utf8 -type f | sed 's|^|/|')
	vm_foreign_libs "$t" "${tools[@]}" "$SWAPTOOL"
}

# vm_guest_foreign: the guest root's key and inputs for VM_ARCH, for vm_guest: sets key, and on a
# cache miss unpack (a directory vm_guest removes), from (the unpacked tree in it) and inputs.
# The key is known before anything is fetched (the package list, the suite and mirror, the tools,
# the kernel whose fuse module the root carries, /init), so a cached root costs no download.
vm_guest_foreign() {
	local pkgs
	pkgs=$(vm_guest_packages) || vm_skip "cannot name the packages of the $VM_ARCH guest root (above)"
	key=$( { echo "$VM_ARCH $VM_SUITE $VM_MIRROR ${VM_TOOLS[*]} ${VM_FILES[*]}"; echo "$pkgs"
		cat "$VM_CACHE/kernel-package" 2>/dev/null; cat "$VMSRC/init"; } | sha256sum | cut -c1-16)
	[ -s "$VM_CACHE/guest-$key.cpio" ] && return
	unpack=$(mktemp -d "$VM_CACHE/unpack.XXXXXX")
	from=$unpack/root
	# shellcheck disable=SC2086 # one package a word
	vm_foreign_extract "$from" $pkgs || {
		tail -5 "$from.log" >&2
		rm -rf "$unpack"
		vm_skip "mmdebstrap could not fetch the $VM_ARCH packages ($VM_SUITE from $VM_MIRROR)"
	}
	vm_say "$VM_ARCH packages unpacked: ${pkgs//$'\n'/ }"
	inputs=$(vm_foreign_inputs "$from" | sort -u) ||
		{ rm -rf "$unpack"; vm_fail "the $VM_ARCH guest root is incomplete (above)"; }
}
