#!/bin/bash
# Every C and C++ source of the tree is as clang-format leaves it, with the
# house settings of .clang-format (tables that read better aligned by hand
# are fenced by "clang-format off/on" comments). A file that differs fails, and
# so does a missing clang-format or one of another major release: layouts
# change between releases, and the tree is formatted with Debian 12's (14),
# which scripts/deps.sh installs. LOOM_CLANG_FORMAT names another binary.
#   tests/tools/clang_format.sh [SRCDIR]   (default $LOOM_SRCDIR, else the tree above)
# To format a file: clang-format -i FILE (from the tree, so .clang-format applies).
set -uo pipefail
src=${1:-${LOOM_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}}
want_major=14
cf=${LOOM_CLANG_FORMAT:-}
if [ -z "$cf" ]; then
	for c in clang-format-$want_major clang-format; do
		command -v "$c" >/dev/null && { cf=$c; break; }
	done
fi
[ -n "$cf" ] || { echo "clang_format: FAIL clang-format is not installed (scripts/deps.sh installs it)"; exit 1; }
version=$("$cf" --version 2>/dev/null | sed -n 's/.*clang-format version \([0-9][0-9]*\)\..*/\1/p')
[ "$version" = "$want_major" ] || {
	echo "clang_format: FAIL $cf is release ${version:-unknown}; the tree is formatted with $want_major (set LOOM_CLANG_FORMAT)"
	exit 1
}
[ -f "$src/.clang-format" ] || { echo "clang_format: FAIL no $src/.clang-format"; exit 1; }
# Loom's own sources: not build trees' nor generated ones.
dirs=()
for d in lib plugins tools tests bench sdk examples; do [ -d "$src/$d" ] && dirs+=("$d"); done
mapfile -t files < <(cd "$src" && find "${dirs[@]}" -type f \( -name '*.cpp' -o -name '*.hpp' -o -name '*.c' -o -name '*.h' \) \
	-not -path '*/_build*' -not -path '*/corpus/*' -not -path 'tests/data/*' | sort)
[ "${#files[@]}" -ge 200 ] || { echo "clang_format: FAIL only ${#files[@]} sources found under $src"; exit 1; }
bad=0
for f in "${files[@]}"; do
	if ! out=$(cd "$src" && "$cf" --style=file "$f" 2>&1 | diff -u --label "$f" --label "$f (clang-format)" "$f" -); then
		printf '%s\n' "$out" | head -20
		bad=$((bad + 1))
	fi
done
if [ "$bad" != 0 ]; then
	echo "clang_format: FAIL $bad of ${#files[@]} sources differ from clang-format's layout (clang-format -i FILE)"
	exit 1
fi
echo "clang_format: ok, ${#files[@]} sources as clang-format $version leaves them"
