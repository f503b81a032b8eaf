#!/bin/bash
# Every key of loom-health.conf, loom-topo.conf, the placement weights file
# and the plugins' arguments (spank_ckpt, spank_place, jobcomp/health) is
# listed in the man page that owns it, with its default (a stated default is
# the program's), and every key a page lists is known to the program that
# reads it (tests/tools/man_keys.py).
#   man_keys.sh [LOOM]      (default $LOOM_BUILDDIR/tools/loom)
set -u
src=${LOOM_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
loom=${1:-${LOOM_BUILDDIR:-.}/tools/loom}
[ -x "$loom" ] || { echo "man_keys: $loom is not built" >&2; exit 1; }
values=${LOOM_BUILDDIR:-.}/tests/tools/schema_values
[ -x "$values" ] || { echo "man_keys: $values is not built" >&2; exit 1; }
command -v python3 >/dev/null || { echo "man_keys: python3 not found" >&2; exit 1; }
exec python3 "$src/tests/tools/man_keys.py" "$loom" "$src" "$values"
