#!/bin/bash
# Every key of loom-health.conf, loom-topo.conf and the placement weights
# file is listed in the man page that owns the format, with its default, and
# every key a page lists is known to the program that reads the file
# (tests/tools/man_keys.py).
#   man_keys.sh [LOOM]      (default $LOOM_BUILDDIR/tools/loom)
set -u
src=${LOOM_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
loom=${1:-${LOOM_BUILDDIR:-.}/tools/loom}
[ -x "$loom" ] || { echo "man_keys: $loom is not built" >&2; exit 1; }
command -v python3 >/dev/null || { echo "man_keys: python3 not found" >&2; exit 1; }
exec python3 "$src/tests/tools/man_keys.py" "$loom" "$src"
