#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bash completion (completion/swaptool): steps, every option `swaptool help STEP` lists, option values
# and operands by kind (devices, files, directories, word lists); the example profile loads.
. "$SRCDIR/tests/lib.sh"

BC=/usr/share/bash-completion/bash_completion
[ -r "$BC" ] || skip "bash-completion is not installed"
# shellcheck disable=SC1090
. "$BC"
. "$SRCDIR/completion/swaptool"
set +u # bash-completion's helpers read unset variables

# comp LINE: complete LINE (cursor at its end) as bash would; the candidates, sorted, in $OUT.
comp() {
	local line="$SWAPTOOL $1"
	COMP_LINE=$line
	COMP_POINT=${#line}
	read -r -a COMP_WORDS <<<"$line"
	[[ $line == *' ' ]] && COMP_WORDS+=("")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMPREPLY=()
	_swaptool swaptool "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}" || true
	OUT=$(printf '%s\n' "${COMPREPLY[@]}" | sort)
}
# has WORD / hasnt WORD: WORD is (not) a candidate.
has() { grep -qxF -- "$1" <<<"$OUT" || fail "completing '$LAST' lacks '$1'; got: $(echo $OUT)"; }
hasnt() { ! grep -qxF -- "$1" <<<"$OUT" || fail "completing '$LAST' offers '$1'"; }
c() { LAST=$1; comp "$1"; }

# every step and every option its help lists: the completion reads them from the binary, and this
# compares against help text parsed independently here
steps=$("$SWAPTOOL" --help | sed -n '/^steps:/,/^$/p' | sed '1d;$d' | awk '{print $1}')
[ "$(echo "$steps" | wc -l)" -ge 11 ] || fail "--help lists too few steps: $steps"
c ""
for s in $steps help; do has "$s"; done
for s in $steps; do
	c "$s --"
	for o in $("$SWAPTOOL" help "$s" | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u); do has "$o"; done
	has --json
	has --state
done
c "pl"; [ "$OUT" = plan ] || fail "'pl' completes to '$OUT'"
c "help verify"; has verify; has verify-report; hasnt plan
c "--json --state /tmp pre"; [ "$OUT" = preflight ] || fail "global options before the step: '$OUT'"
c "--"; hasnt --rehearse
for o in $("$TEST_STEPS" --globals); do has "$o"; done
# a pipeline that ends before its writer fails now and then under pipefail (this test runs with it)
if grep -nE '\| *(grep -[a-zA-Z]*[qm]|head)|\{ *exit *\}' "$SRCDIR/completion/swaptool"; then
	fail "the completion has a pipeline that can end before its writer (above)"
fi
ok "completion: steps and every step's options"

# values by metavariable
c "plan /dev/x --path "; [ "$(echo $OUT)" = "clone fresh" ] || fail "--path: '$OUT'"
c "status --path=f"; [ "$OUT" = fresh ] || fail "--path=f: '$OUT'"
c "accept x --inflight "; [ -z "$OUT" ] || fail "--inflight offers '$OUT'"
c "clone a b --fingerprint "; [ -z "$OUT" ] || fail "--fingerprint offers '$OUT'"
mkdir -p "$TMP/d/sub"
touch "$TMP/d/a.json" "$TMP/d/b.tar.gz"
c "backup --root $TMP/d/"; has "$TMP/d/sub"; hasnt "$TMP/d/a.json"
c "report --out $TMP/d/"; has "$TMP/d/sub"; hasnt "$TMP/d/a.json"
c "backup --out $TMP/d/"; has "$TMP/d/a.json"
c "--profile $TMP/d/"; has "$TMP/d/a.json"
c "--state $TMP/d/"; has "$TMP/d/sub"; hasnt "$TMP/d/a.json"
c "restore $TMP/d/"; has "$TMP/d/b.tar.gz"
c "restore --undo $TMP/d/"; has "$TMP/d/b.tar.gz"
c "compare $TMP/d/a.json $TMP/d/"; has "$TMP/d/a.json"
c "verify-report $TMP/d/"; has "$TMP/d/a.json"
c "metrics $TMP/d/"; has "$TMP/d/a.json"
c "fleet x y z $TMP/d/"; has "$TMP/d/a.json" # RECORD... repeats
c "fleet --reference "; [ -z "$OUT" ] || fail "--reference offers '$OUT'"
c "metrics --out $TMP/d/"; has "$TMP/d/a.json"
# no operand after the last one
c "compare x y $TMP/d/"; [ -z "$OUT" ] || fail "a third compare operand offers '$OUT'"
# devices where a step reads one: block devices and NVMe controllers, next to image files
dev=$(for b in /sys/class/block/*; do [ -b "/dev/${b##*/}" ] && echo "/dev/${b##*/}" && break; done)
if [ -n "$dev" ]; then
	cd "$TMP/d"
	c "preflight "; has "$dev"; has a.json
	c "accept "; has "$dev"
	c "plan x --target "; has "$dev"
	c "clone x "; has "$dev"
	c "restore "; hasnt "$dev"; has b.tar.gz
	c "backup --root "; hasnt "$dev"; has sub
	cd - >/dev/null
fi
c "preflight $TMP/d/"; has "$TMP/d/a.json"
# under /dev: exactly the block devices and NVMe controllers (find(1) is the judge), not the ttys,
# null and zero that /dev's files would add
want=$({ find /dev -maxdepth 1 -type b; find /dev -maxdepth 1 -type c -regex '/dev/nvme[0-9]+'; } | sort)
for s in "preflight /dev/" "accept /dev/" "plan x --target /dev/"; do
	c "$s"
	hasnt /dev/null; hasnt /dev/zero; hasnt /dev/tty
	[ "$OUT" = "$want" ] || fail "completing '$s': $(diff <(echo "$want") <(echo "$OUT") | head)"
done
byid=$(ls /dev/disk/by-id 2>/dev/null || true)
if [ -n "$byid" ]; then
	c "preflight /dev/disk/by-id/"; has "/dev/disk/by-id/${byid%%$'\n'*}"
fi
ok "completion: option values and operands by kind"

# the example profile restates the built-in defaults: it loads, and plan's record is the same with it
# (on a target both paths fit: the 1.688 GB of path 1 fit neither path on the 500 MB one it had)
"$MKDISK" scaled "$TMP/src.img" >/dev/null
run 0 "$SWAPTOOL" --state "$TMP/s1" --json plan "$TMP/src.img" --target 3758096384
a=$(jq -S 'del(.started, .finished)' <<<"$OUT")
run 0 "$SWAPTOOL" --state "$TMP/s2" --profile "$SRCDIR/docs/profile.example.ini" --json plan "$TMP/src.img" --target 3758096384
b=$(jq -S 'del(.started, .finished)' <<<"$OUT")
[ "$a" = "$b" ] || fail "plan differs with the example profile: $(diff <(echo "$a") <(echo "$b") | head)"
# and its commented-out sections are valid too
sed 's/^;\(\[\|[a-z_]* = \)/\1/' "$SRCDIR/docs/profile.example.ini" >"$TMP/all.ini"
grep -q '^\[engine cold-boot-157k\]' "$TMP/all.ini" || fail "uncommenting the example failed"
run 0 "$SWAPTOOL" --state "$TMP/s3" --profile "$TMP/all.ini" --json plan "$TMP/src.img" --target 3758096384
ok "example profile: the built-in values, and its commented sections load"
