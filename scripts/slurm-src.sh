#!/bin/bash
# Fetch the Debian source package of the installed Slurm and configure it with
# Debian's flags, so that select/topo and jobcomp/health build against exactly
# the release slurmctld runs. Prints the build directory to pass as
# --with-slurm-src. Re-running is cheap: a matching tree is reused.
#
#   scripts/slurm-src.sh [DIR]        (default: $LOOM_SLURM_SRC_CACHE or /var/cache/loom/slurm-src)
set -euo pipefail

dir=${1:-${LOOM_SLURM_SRC_CACHE:-/var/cache/loom/slurm-src}}
log() { echo "slurm-src: $*" >&2; }
die() { echo "slurm-src: error: $*" >&2; exit 1; }

command -v dpkg-query >/dev/null || die "dpkg-query not found: this helper is for Debian and its derivatives"
pkgver=$(dpkg-query -W -f='${Version}' libslurm-dev 2>/dev/null || true)
[ -n "$pkgver" ] || die "libslurm-dev is not installed (apt-get install libslurm-dev)"
srcpkg=$(dpkg-query -W -f='${source:Package}' libslurm-dev)
upstream=${pkgver%%-*}
upstream=${upstream#*:}
stamp="$dir/.configured-$srcpkg-$pkgver"
build="$dir/build"

if [ -f "$stamp" ] && [ -f "$build/config.h" ]; then
    echo "$build"
    exit 0
fi

SUDO=
[ "$(id -u)" = 0 ] || SUDO=sudo

have_src_entries() {
    apt-get indextargets --format '$(CREATED_BY)' 2>/dev/null | grep '^Sources$' >/dev/null
}
if ! have_src_entries; then
    log "no deb-src entries: deriving them from the binary entries"
    if [ -f /etc/apt/sources.list.d/debian.sources ]; then
        sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources |
            $SUDO tee /etc/apt/sources.list.d/loom-debian-src.sources >/dev/null
    elif [ -f /etc/apt/sources.list ]; then
        grep -E '^deb ' /etc/apt/sources.list | sed 's/^deb /deb-src /' |
            $SUDO tee /etc/apt/sources.list.d/loom-debian-src.list >/dev/null
    else
        die "cannot find apt sources to derive deb-src entries from"
    fi
    $SUDO apt-get update -q >/dev/null
fi
command -v dpkg-source >/dev/null || die "dpkg-dev is not installed (apt-get install dpkg-dev)"

rm -rf "$dir"
mkdir -p "$dir"
log "fetching the source of $srcpkg $pkgver"
(cd "$dir" && apt-get source -q --only-source "$srcpkg=$pkgver" >"$dir/fetch.log" 2>&1) ||
    { cat "$dir/fetch.log" >&2; die "apt-get source $srcpkg=$pkgver failed"; }
src=$(find "$dir" -maxdepth 1 -type d -name "$srcpkg-$upstream*" | head -1)
[ -n "$src" ] || die "unpacked source not found under $dir"

log "configuring $src with Debian's flags (normal build, not front-end)"
mkdir -p "$build"
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
(cd "$build" && "$src/configure" --prefix=/usr --libdir="/usr/lib/$multiarch" --sysconfdir=/etc/slurm \
    --with-munge --enable-pam --without-rpath --disable-debug --enable-multiple-slurmd \
    >"$dir/configure.log" 2>&1) ||
    { tail -30 "$dir/configure.log" >&2; die "configure failed (log: $dir/configure.log)"; }
grep -q SLURM_VERSION_NUMBER "$build/config.h" || die "configured tree has no SLURM_VERSION_NUMBER"
touch "$stamp"
echo "$build"
