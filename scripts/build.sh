#!/bin/bash
# Install what is missing, make the Slurm release ready (scripts/slurm.sh),
# and build loom against it in _build/ (or $LOOM_BUILDDIR). Extra arguments
# go to configure.
#
#   scripts/build.sh [--slurm VERSION] [--configure-only] [CONFIGURE-ARGS...]
#
# VERSION defaults to $LOOM_SLURM or the first supported release (22.05.8,
# Debian's). Builds against another release go to _build-VERSION unless
# LOOM_BUILDDIR says otherwise. Compiles through ccache when it is installed
# (CCACHE_DIR defaults to /var/cache/loom/ccache, shared by every build tree).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
default=$("$top/scripts/slurm.sh" default)
slurm=${LOOM_SLURM:-$default}
if [ "${1:-}" = --slurm ]; then
	slurm=${2:?--slurm needs a version}
	shift 2
fi
# --configure-only: a tree that only makes the tarball (make dist, distcheck,
# the packages) needs configure and no build.
configure_only=0
if [ "${1:-}" = --configure-only ]; then
	configure_only=1
	shift
fi
builddir=${LOOM_BUILDDIR:-$("$top/scripts/slurm.sh" builddir "$slurm")} || exit 2
jobs=${LOOM_JOBS:-$(nproc)}

"$top/scripts/deps.sh"
prefix=$("$top/scripts/slurm.sh" install "$slurm")
slurm_src=$("$top/scripts/slurm.sh" src "$slurm")
echo "build: Slurm $slurm in $prefix, source tree $slurm_src"
if [ ! -x "$top/configure" ] || [ "$top/configure.ac" -nt "$top/configure" ] ||
	[ -n "$(find "$top/m4" "$top/Makefile.am" "$top"/*/local.mk "$top"/*/*/local.mk -newer "$top/configure" 2>/dev/null | head -1)" ]; then
	(cd "$top" && ./autogen.sh >/dev/null 2>&1) || (cd "$top" && ./autogen.sh)
fi
mkdir -p "$builddir"
cd "$builddir"
want="--with-slurm=$prefix --with-slurm-src=$slurm_src --enable-werror $*"
cc_env=()
if command -v ccache >/dev/null; then
	# One cache for every build tree: paths are hashed relative to the tree.
	export CCACHE_DIR=${CCACHE_DIR:-/var/cache/loom/ccache} CCACHE_BASEDIR=${CCACHE_BASEDIR:-/} CCACHE_NOHASHDIR=1
	mkdir -p "$CCACHE_DIR"
	cc_env=(CC="ccache gcc" CXX="ccache g++")
fi
# configure reads CXXFLAGS from the environment: a change to it reconfigures too.
stamp="$want ${cc_env[*]}${CXXFLAGS:+ CXXFLAGS=$CXXFLAGS}"
if [ ! -f Makefile ] || [ "$(cat .loom-configure-args 2>/dev/null)" != "$stamp" ]; then
	echo "build: configure $want${CXXFLAGS:+ (CXXFLAGS=$CXXFLAGS)}"
	# shellcheck disable=SC2086
	"$top/configure" $want "${cc_env[@]}" >configure.out 2>&1 || { tail -40 configure.out >&2; exit 1; }
	echo "$stamp" >.loom-configure-args
	sed -n '/^  loom /,$p' configure.out
fi
[ $configure_only = 0 ] || { echo "build: configured $builddir (no build)"; exit 0; }
echo "build: make -j$jobs in $builddir"
make -j"$jobs" >make.out 2>&1 || { grep -E -B2 -A6 "error|Error" make.out | tail -60 >&2; echo "build: make failed (log: $builddir/make.out)" >&2; exit 1; }
echo "build: ok (Slurm $slurm)"
