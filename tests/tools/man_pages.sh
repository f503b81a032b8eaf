#!/bin/bash
# Every man page loom installs formats without a warning (groff -ww), and
# every plugin, program and configuration file has one.
set -uo pipefail
src=${LOOM_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
command -v groff >/dev/null || { echo "man_pages: groff not found (apt-get install groff-base)"; exit 1; }
fail=0
pages=("$src"/doc/*.[1-8])
[ ${#pages[@]} -ge 10 ] || { echo "FAIL: only ${#pages[@]} man pages in $src/doc"; exit 1; }
for p in "${pages[@]}"; do
	out=$(groff -man -Tutf8 -ww -z "$p" 2>&1)
	if [ -n "$out" ]; then
		echo "FAIL: $(basename "$p"): $out"
		fail=1
	fi
	# NAME line as whatis/apropos read it: "name \- what".
	name_sec=$(sed -n '/^\.SH NAME/,/^\.SH/p' "$p")
	if ! grep -q '\\-' <<<"$name_sec"; then
		echo "FAIL: $(basename "$p"): no 'name \\- description' line under .SH NAME"
		fail=1
	fi
done
# A page for each plugin and each installed program.
for d in "$src"/plugins/*/; do
	name=$(basename "$d")
	[ "$name" = common ] && continue
	[ -f "$src/doc/$name.8" ] || { echo "FAIL: plugin $name has no doc/$name.8"; fail=1; }
done
for page in loom.1 loom-sim.1 loom-topo.1 loom-place.1 loom-health.1 loom-ckpt.1 loom-topo.conf.5 loom-health.conf.5; do
	[ -f "$src/doc/$page" ] || { echo "FAIL: doc/$page missing"; fail=1; }
done
[ $fail = 0 ] && echo "man_pages: ${#pages[@]} pages format cleanly"
exit $fail
