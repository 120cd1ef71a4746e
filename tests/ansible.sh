#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The Ansible role (ansible/roles/swaptool) with ansible-core against localhost (-c local): three
# nodes on small demo disk images (dgx1 serving, dgx4 the XG7000 with the clone trap, dgx5 the
# reference), this run's records kept, the fleet view and metrics built; outcomes judged by exit
# codes; a second run changes nothing, check mode shows the outcomes, a record the node could not
# save is not replaced by the one it kept from before.
# Each node runs swaptool in its own UTS namespace with its own host name, as three machines would.
# With SWAPTOOL_DEB=FILE the role also installs that package (and the test removes it afterwards).
. "$SRCDIR/tests/lib.sh"
command -v ansible-playbook >/dev/null || skip "ansible-playbook (Debian package ansible-core) is not installed"
need_root
unshare --uts true 2>/dev/null || skip "cannot make a UTS namespace (unshare --uts)"

# accept reads with O_DIRECT, which a tmpfs /tmp may refuse: the shard lies under /var/tmp
W=$(mktemp -d /var/tmp/swaptool-ansible.XXXXXX)
trap 'cleanup_test; rm -rf "$W"; [ -z "${removedeb:-}" ] || { dpkg -r swaptool >/dev/null 2>&1; rm -f "/var/cache/apt/archives/${SWAPTOOL_DEB##*/}"; }' EXIT
dd if=/dev/urandom of="$W/shard.bin" bs=1M count=64 status=none conv=fsync

real=$SWAPTOOL
if [ -n "${SWAPTOOL_DEB:-}" ]; then
	dpkg-query -W -f='${Status}' swaptool 2>/dev/null | grepq 'install ok installed' &&
		skip "the swaptool package is already installed; not replacing it"
	removedeb=1
	real=/usr/bin/swaptool
fi
mkdir -p "$TMP/bin"
for h in dgx1 dgx4 dgx5; do
	"$MKDISK" scaled "$TMP/$h.img" >/dev/null
	# swaptool as host $h: a UTS namespace whose host name is $h
	printf '#!/bin/sh\nexec unshare --uts sh -c '"'"'hostname "$0" && exec "$@"'"'"' %s %s "$@"\n' "$h" "$real" >"$TMP/bin/$h"
	chmod +x "$TMP/bin/$h"
done
# the controller's swaptool, logging its arguments (fleet and metrics get --node HOST=FILE or files)
printf '#!/bin/sh\necho "$*" >>%s\nexec %s "$@"\n' "$TMP/controller.log" "$real" >"$TMP/bin/controller"
chmod +x "$TMP/bin/controller"
N=$SRCDIR/fixtures/nvme
cat >"$TMP/inventory.ini" <<INI
[gpu]
dgx1 swaptool_serving=true swaptool_preflight_args='["--from-dumps", "$N/mp600-mini"]'
dgx4 swaptool_target=4000000000 swaptool_preflight_args='["--from-dumps", "$N/xg7000"]'
dgx5 swaptool_preflight_args='["--from-dumps", "$N/esl01"]'

[gpu:vars]
ansible_connection=local
ansible_python_interpreter=/usr/bin/python3
ansible_become=false
swaptool_deb=${SWAPTOOL_DEB:-}
swaptool_bin=$TMP/bin/{{ inventory_hostname }}
swaptool_controller_bin=$TMP/bin/controller
swaptool_state_dir=$TMP/state/{{ inventory_hostname }}
swaptool_source=$TMP/{{ inventory_hostname }}.img
swaptool_target=2000398934016
swaptool_accept_path=$W/shard.bin
swaptool_accept_args='["--working-set", "32M", "--duration", "1", "--ramp", "0", "--seq-bytes", "16M", "--force"]'
swaptool_fetch_dir=$TMP/records
swaptool_reference=dgx5
INI
# One fork: the three "nodes" share this machine, and its dpkg lock when the role installs the package.
play() {
	ANSIBLE_FORKS=1 ANSIBLE_ROLES_PATH="$SRCDIR/ansible/roles" ANSIBLE_NOCOLOR=1 ANSIBLE_RETRY_FILES_ENABLED=0 \
		ANSIBLE_LOCALHOST_WARNING=0 ANSIBLE_INVENTORY_UNPARSED_WARNING=0 \
		ansible-playbook -c local -i "$TMP/inventory.ini" "$SRCDIR/ansible/playbook.yml" "$@"
}

run 0 play
# preflight everywhere; dgx4's clone trap (exit 4) is a finding, not a failed task
for h in dgx1 dgx4 dgx5; do
	contains "$h"
	[ "$(jq -r .host "$TMP/records/$h/preflight.json")" = "$h" ] || fail "$h's preflight record names another host"
done
grep -qE 'dgx4 +: ok=[0-9]+ +changed=[0-9]+ +unreachable=0 +failed=0' <<<"$OUT" || fail "dgx4 is not ok: $(grep dgx4 <<<"$OUT" | tail -1)"
[ "$(jq -r .verdict "$TMP/records/dgx4/preflight.json")" = trap ] || fail "dgx4's preflight did not find the clone trap"
# accept where not serving
[ ! -e "$TMP/records/dgx1/accept.json" ] || fail "accept ran on dgx1, which is serving"
for h in dgx4 dgx5; do
	[ "$(jq -r .step "$TMP/records/$h/accept.json")" = accept ] || fail "no accept record fetched from $h"
done
ok "ansible: preflight on every node, accept where not serving, records fetched"

# the fleet view on the controller
F=$TMP/records/fleet.json
[ "$(jq -r '[.nodes[].host] | join(",")' "$F")" = dgx1,dgx4,dgx5 ] || fail "fleet nodes: $(jq -c '[.nodes[].host]' "$F")"
[ "$(jq -r .reference.host "$F")" = dgx5 ] || fail "fleet reference"
[ "$(jq -r '.nodes[1].drive.class' "$F")" = "KingSpec XG7000" ] || fail "dgx4's drive class"
[ "$(jq -r '.nodes[1].delta_bytes' "$F")" = -294967296 ] || fail "dgx4's delta"
[ "$(jq -r '.nodes[0].accept' "$F")" = null ] || fail "dgx1 has accept figures"
[ "$(jq -r '.nodes[2].accept.runs[0].iops_ratio' "$F")" = 1 ] || fail "the reference's ratio is not 1"
jq -e '.nodes[1].accept.runs[0].iops_ratio | type == "number"' "$F" >/dev/null || fail "dgx4 has no ratio"
grep -q "KingSpec XG7000 (avoid)" "$TMP/records/fleet.txt" || fail "fleet.txt lacks dgx4's class"
[ "$(stat -c %a "$TMP/records/fleet.prom")" = 644 ] || fail "fleet.prom mode"
grep -q '^swaptool_preflight_delta_bytes{host="dgx4"[,}].* -294967296$' "$TMP/records/fleet.prom" || fail "fleet.prom lacks dgx4's delta"
if command -v promtool >/dev/null; then
	promtool check metrics <"$TMP/records/fleet.prom" || fail "promtool rejects fleet.prom"
fi
ok "ansible: fleet.json, fleet.txt and fleet.prom on the controller"

# fleet and metrics get each record as --node HOST=FILE where the controller's swaptool has the
# option, the files alone where it does not
R=$TMP/records
if "$real" fleet --help | grepq -e --node && "$real" metrics --help | grepq -e --node; then
	n() { printf -- '--node %s=%s/%s/%s.json' "$1" "$R" "$1" "$2"; }
else
	n() { printf '%s/%s/%s.json' "$R" "$1" "$2"; }
fi
recs="$(n dgx1 preflight) $(n dgx4 preflight) $(n dgx4 accept) $(n dgx5 preflight) $(n dgx5 accept)"
grep -qFx -e "--json fleet $recs --reference dgx5" "$TMP/controller.log" || fail "fleet's arguments: $(cat "$TMP/controller.log")"
grep -qFx -e "metrics --out $R/fleet.prom $recs" "$TMP/controller.log" || fail "metrics' arguments: $(cat "$TMP/controller.log")"
ok "ansible: fleet and metrics get each node's records ($(n dgx4 accept))"

if command -v ansible-lint >/dev/null; then
	(cd "$SRCDIR/ansible" && HOME=$TMP NO_COLOR=1 ansible-lint --offline -q playbook.yml roles/swaptool) >"$TMP/lint" 2>&1 ||
		fail "ansible-lint: $(cat "$TMP/lint")"
	ok "ansible: ansible-lint finds nothing in the playbook and the role"
fi

# measuring is not a change: a second identical run reports changed=0 on every node
recap() { # HOST WHAT: HOST's PLAY RECAP line in $OUT has WHAT after ok=N
	grepq -E "^$1 +: ok=[0-9]+ +$2" <<<"$OUT" || fail "$1: $(grep "^$1 " <<<"$OUT" | tail -1), expected $2"
}
run 0 play
for h in dgx1 dgx4 dgx5; do recap "$h" 'changed=0 +unreachable=0 +failed=0'; done
ok "ansible: a second identical run changes nothing (changed=0)"

# check mode runs the read-only steps and shows their outcome; it writes no record and no view
cp "$R/fleet.json" "$TMP/fleet.before"
run 0 play --check
for h in dgx1 dgx4 dgx5; do recap "$h" 'changed=0 +unreachable=0 +failed=0'; done
grepq -F '"preflight": "trap"' <<<"$OUT" || fail "check mode does not show dgx4's clone trap"
contains "check mode: preflight and accept ran"
cmp -s "$R/fleet.json" "$TMP/fleet.before" || fail "check mode rewrote fleet.json"
ok "ansible: check mode shows each node's outcome and says why there is no fleet view"

# A read-only step (preflight) that cannot save its record (a drive gone read-only, a full /var)
# warns and still exits with its result's code, the node's STATE/preflight.json being the previous
# run's: the role uses this run's output. dgx4 keeps a passing preflight from a larger target, then
# runs preflight alone (accept, which fails when it cannot save, marked off by swaptool_serving) on a
# state directory mounted read-only.
S=$TMP/state/dgx4
"$TMP/bin/dgx4" --json --state "$S" preflight "$TMP/dgx4.img" --target 8000000000 --from-dumps "$N/xg7000" >/dev/null ||
	fail "cannot plant dgx4's earlier preflight"
[ "$(jq -r .delta_bytes "$S/preflight.json")" = 3705032704 ] || fail "the planted preflight's delta"
if unshare --mount sh -c 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" "$0" && ! touch "$0/x" 2>/dev/null' "$S"; then
	cp "$TMP/bin/dgx4" "$TMP/dgx4.rw"
	printf '#!/bin/sh\nexec unshare --uts --mount sh -c '"'"'hostname dgx4 && mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" "$0" && exec "$@"'"'"' %s %s "$@"\n' \
		"$S" "$real" >"$TMP/bin/dgx4"
	sed -i 's/^dgx4 /dgx4 swaptool_serving=true /' "$TMP/inventory.ini"
	run 0 play
	mv "$TMP/dgx4.rw" "$TMP/bin/dgx4"
	sed -i 's/^dgx4 swaptool_serving=true /dgx4 /' "$TMP/inventory.ini"
	contains "cannot write the record to '$S'"
	[ "$(jq -r .delta_bytes "$S/preflight.json")" = 3705032704 ] || fail "dgx4's preflight was saved after all"
	[ "$(jq -r .verdict "$R/dgx4/preflight.json")" = trap ] || fail "the role kept dgx4's earlier preflight"
	[ "$(jq -r '.nodes[1].delta_bytes' "$R/fleet.json")" = -294967296 ] || fail "the fleet view shows dgx4's earlier preflight"
	ok "ansible: a record the node could not save is this run's output, not the node's earlier record"
else
	echo "# cannot mount a state directory read-only here (unshare --mount): the unsaved-record case is not run"
fi

# a usage error (exit 2) fails that node's task, by exit code; the others go on
sed -i 's/^dgx5 /dgx5 swaptool_target=sideways /' "$TMP/inventory.ini"
run 2 play
grep -qE 'dgx5 +: ok=[0-9]+ +changed=[0-9]+ +unreachable=0 +failed=1' <<<"$OUT" || fail "dgx5 did not fail: $(grep dgx5 <<<"$OUT" | tail -1)"
grep -qE 'dgx4 +: ok=[0-9]+ +changed=[0-9]+ +unreachable=0 +failed=0' <<<"$OUT" || fail "dgx4 failed too"
[ "$(jq -r '[.nodes[].host] | join(",")' "$TMP/records/fleet.json")" = dgx1,dgx4 ] || fail "the failed node is in the fleet view"
# asked to fail on a failing node: the play fails when fleet exits 1 (dgx4's accept gates, or not)
sed -i 's/^dgx5 swaptool_target=sideways /dgx5 /' "$TMP/inventory.ini"
rc=0
play -e swaptool_fail_on_finding=true >"$TMP/p3" 2>&1 || rc=$?
frc=0
"$SWAPTOOL" fleet "$TMP"/records/dgx*/preflight.json "$TMP"/records/dgx[45]/accept.json --reference dgx5 >/dev/null || frc=$?
case $frc in
0) [ "$rc" = 0 ] || fail "play failed though every node passes (rc $rc)" ;;
1) [ "$rc" = 2 ] && grep -q "swaptool fleet found a failing node" "$TMP/p3" || fail "play did not fail on a failing node (rc $rc)" ;;
*) fail "fleet exited $frc" ;;
esac
ok "ansible: exit codes decide (usage error fails the node; a finding fails the play only when asked)"
if [ -n "${SWAPTOOL_DEB:-}" ]; then
	[ -x /usr/bin/swaptool ] || fail "the role did not install $SWAPTOOL_DEB"
	ok "ansible: the role installed the package"
fi
