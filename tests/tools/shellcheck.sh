#!/bin/bash
# Every shell script of the tree through shellcheck, with the house settings
# of .shellcheckrc (each switched-off check says why there). A finding fails;
# so does a missing shellcheck (scripts/deps.sh installs it).
#   tests/tools/shellcheck.sh [SRCDIR]   (default $LOOM_SRCDIR, else the tree above)
set -uo pipefail
src=${1:-${LOOM_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}}
command -v shellcheck >/dev/null || { echo "shellcheck: FAIL shellcheck is not installed (scripts/deps.sh installs it)"; exit 1; }
[ -f "$src/.shellcheckrc" ] || { echo "shellcheck: FAIL no $src/.shellcheckrc"; exit 1; }
# Loom's own scripts: not libtool's (build-aux/) nor build trees'.
dirs=()
for d in scripts tests bench packaging examples sdk etc doc demo; do [ -d "$src/$d" ] && dirs+=("$d"); done
mapfile -t scripts < <(cd "$src" && { find "${dirs[@]}" -name '*.sh' -not -path '*/_build*'; ls autogen.sh 2>/dev/null; } | sort)
[ "${#scripts[@]}" -ge 50 ] || { echo "shellcheck: FAIL only ${#scripts[@]} scripts found under $src"; exit 1; }
out=$(cd "$src" && shellcheck -f gcc "${scripts[@]}" 2>&1)
rc=$?
[ -z "$out" ] || printf '%s\n' "$out"
findings=$(grep -c ': \(error\|warning\|note\|info\|style\):' <<<"$out")
if [ $rc != 0 ] || [ "$findings" != 0 ]; then
	echo "shellcheck: FAIL $findings findings in ${#scripts[@]} scripts (exit $rc)"
	exit 1
fi
echo "shellcheck: ok, ${#scripts[@]} scripts, no finding"
