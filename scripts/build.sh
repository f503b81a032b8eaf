#!/bin/bash
# Install what is missing, fetch and configure the matching Slurm source, and
# build loom in _build/ (or $LOOM_BUILDDIR). Extra arguments go to configure.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
builddir=${LOOM_BUILDDIR:-$top/_build}
jobs=${LOOM_JOBS:-$(nproc)}

"$top/scripts/deps.sh"
slurm_src=$("$top/scripts/slurm-src.sh")
echo "build: Slurm source tree $slurm_src"
if [ ! -x "$top/configure" ] || [ "$top/configure.ac" -nt "$top/configure" ]; then
	(cd "$top" && ./autogen.sh >/dev/null 2>&1) || (cd "$top" && ./autogen.sh)
fi
mkdir -p "$builddir"
cd "$builddir"
want="--with-slurm-src=$slurm_src --enable-werror $*"
if [ ! -f Makefile ] || [ "$(cat .loom-configure-args 2>/dev/null)" != "$want" ]; then
	echo "build: configure $want"
	# shellcheck disable=SC2086
	"$top/configure" $want >configure.out 2>&1 || { tail -40 configure.out >&2; exit 1; }
	echo "$want" >.loom-configure-args
	sed -n '/^  loom /,$p' configure.out
fi
echo "build: make -j$jobs in $builddir"
make -j"$jobs" >make.out 2>&1 || { grep -E -B2 -A6 "error|Error" make.out | tail -60 >&2; echo "build: make failed (log: $builddir/make.out)" >&2; exit 1; }
echo "build: ok"
