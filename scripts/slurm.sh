#!/bin/bash
# The Slurm releases loom is built and tested against, each in a place of its own.
#
#   scripts/slurm.sh install VERSION   make VERSION ready (idempotent); prints its prefix
#   scripts/slurm.sh list              the releases ready on this machine
#   scripts/slurm.sh prefix VERSION    where VERSION's daemons and clients are (bin/, sbin/)
#   scripts/slurm.sh src VERSION       the configured source tree (for --with-slurm-src)
#   scripts/slurm.sh plugindir VERSION where VERSION's own plugins are
#   scripts/slurm.sh supported         the releases this loom supports, default first
#   scripts/slurm.sh default           the default release
#   scripts/slurm.sh builddir VERSION  loom's build tree for VERSION (_build for the
#                                      default release, _build-VERSION for the others)
#
# 22.05.8 is Debian 12's packages (prefix /usr, source from `apt-get source`,
# scripts/slurm-src.sh). Every other release is built from SchedMD's tarball in
# shared/vendor/ (its sha256 checked against PROVENANCE.tsv) into
# /opt/slurm-VERSION (or $LOOM_SLURM_PREFIX_ROOT/slurm-VERSION), once: a
# release that is installed and whose stamp matches the tarball is reused.
# The configured build tree stays under PREFIX/build for --with-slurm-src.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
root=${LOOM_SLURM_PREFIX_ROOT:-/opt}
vendor=${LOOM_VENDOR_DIR:-$top/../shared/vendor}
jobs=${LOOM_JOBS:-$(nproc)}

# How a release is built from source: a change here rebuilds every release
# that was built another way (the stamp records it).
RECIPE="O1 g0 multiple-slurmd munge http-parser no-slurmrestd"

# The supported releases; the first is the default everywhere (cluster, tests, demo).
SUPPORTED=(22.05.8 24.11.5 25.11.7 26.05.3)
DEBIAN_RELEASE=22.05.8

die() { echo "slurm: error: $*" >&2; exit 1; }
log() { echo "slurm: $*" >&2; }

usage() { sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }

check_version() {
	local v=$1 s
	for s in "${SUPPORTED[@]}"; do [ "$v" = "$s" ] && return 0; done
	die "Slurm '$v' is not a supported release (supported: ${SUPPORTED[*]})"
}

prefix_of() {
	if [ "$1" = "$DEBIAN_RELEASE" ]; then echo /usr; else echo "$root/slurm-$1"; fi
}

# The Debian release's source tree (configured by slurm-src.sh, which fetches it).
debian_src() { "$top/scripts/slurm-src.sh"; }

stamp_of() { echo "$(prefix_of "$1")/.loom-slurm-ready"; }

installed_version() {
	# The version the installed binaries report (empty if none).
	local sbin
	sbin="$(prefix_of "$1")/sbin/slurmctld"
	[ -x "$sbin" ] || return 0
	"$sbin" -V 2>/dev/null | awk '{print $2}'
}

is_ready() {
	local v=$1
	if [ "$v" = "$DEBIAN_RELEASE" ]; then
		[ "$(installed_version "$v")" = "$v" ] &&
			[ -f "/var/cache/loom/slurm-src/build/config.h" ] && [ -n "$(ls /var/cache/loom/slurm-src/.configured-* 2>/dev/null)" ]
		return
	fi
	[ -f "$(stamp_of "$v")" ] && [ "$(installed_version "$v")" = "$v" ] && [ -f "$(prefix_of "$v")/build/config.h" ]
}

tarball_sha() {
	# sha256 of slurm-VERSION.tar.gz as recorded in shared/vendor/PROVENANCE.tsv
	awk -F'\t' -v f="slurm-$1.tar.gz" '$1 == f {print $5}' "$vendor/PROVENANCE.tsv" 2>/dev/null
}

install_debian() {
	"$top/scripts/deps.sh" >&2
	local have
	have=$(installed_version "$DEBIAN_RELEASE")
	[ "$have" = "$DEBIAN_RELEASE" ] ||
		die "Debian's slurmctld reports '${have:-nothing}', expected $DEBIAN_RELEASE (Debian 12's slurm-wlm)"
	debian_src >/dev/null
}

install_source() {
	local v=$1 prefix tarball want got bld src
	prefix=$(prefix_of "$v")
	tarball="$vendor/slurm-$v.tar.gz"
	[ -f "$tarball" ] || die "$tarball not found (shared/vendor holds the releases Debian does not package; set LOOM_VENDOR_DIR)"
	want=$(tarball_sha "$v")
	[ -n "$want" ] || die "no sha256 for slurm-$v.tar.gz in $vendor/PROVENANCE.tsv"
	got=$(sha256sum "$tarball" | cut -d' ' -f1)
	[ "$got" = "$want" ] || die "$tarball: sha256 $got, PROVENANCE.tsv says $want: refusing to build it"
	if is_ready "$v" && [ "$(cat "$(stamp_of "$v")")" = "$want $RECIPE" ]; then
		return 0
	fi
	"$top/scripts/deps.sh" >&2
	log "building Slurm $v from $tarball into $prefix (once; about 10 minutes on 2 cores)"
	local start=$SECONDS
	rm -rf "$prefix"
	mkdir -p "$prefix"
	src="$prefix/source"
	bld="$prefix/build"
	mkdir -p "$src" "$bld"
	tar -xzf "$tarball" -C "$src" --strip-components=1
	[ -x "$src/configure" ] || die "$tarball has no configure script"
	# A test and development build: what the test cluster runs (munge, the
	# cons_tres/topology plugins, hwloc, json, yaml, http-parser, which the
	# daemons of 25.05+ look for at start) and nothing that needs a library
	# Debian 12 lacks. -O1 without debug info halves the compile time.
	(cd "$bld" && "$src/configure" --prefix="$prefix" --sysconfdir="$prefix/etc" \
		--enable-multiple-slurmd --with-munge --disable-debug \
		--disable-slurmrestd --without-pmix --without-ucx --without-hdf5 --without-rrdtool \
		--without-lua --disable-x11 --without-nvml --without-rsmi --without-oneapi \
		CFLAGS="-O1 -g0 -pipe" >"$prefix/configure.log" 2>&1) ||
		{ tail -30 "$prefix/configure.log" >&2; die "configure of Slurm $v failed (log: $prefix/configure.log)"; }
	grep -q SLURM_VERSION_NUMBER "$bld/config.h" || die "configured tree of $v has no SLURM_VERSION_NUMBER"
	(cd "$bld" && nice make -j"$jobs" >"$prefix/make.log" 2>&1) ||
		{ grep -E -B2 -A4 'error' "$prefix/make.log" | tail -40 >&2; die "make of Slurm $v failed (log: $prefix/make.log)"; }
	(cd "$bld" && make install >"$prefix/install.log" 2>&1) ||
		{ tail -30 "$prefix/install.log" >&2; die "make install of Slurm $v failed (log: $prefix/install.log)"; }
	local have
	have=$(installed_version "$v")
	[ "$have" = "$v" ] || die "the built slurmctld reports '${have:-nothing}', expected $v"
	echo "$want $RECIPE" >"$(stamp_of "$v")"
	log "Slurm $v ready in $prefix ($((SECONDS - start)) s)"
}

cmd=${1:-}
[ -n "$cmd" ] || usage
case $cmd in
install)
	v=${2:-}; [ -n "$v" ] || usage; check_version "$v"
	if [ "$v" = "$DEBIAN_RELEASE" ]; then install_debian; else install_source "$v"; fi
	prefix_of "$v"
	;;
list)
	for v in "${SUPPORTED[@]}"; do
		if is_ready "$v"; then
			printf '%-9s %s (source tree %s)\n' "$v" "$(prefix_of "$v")" \
				"$([ "$v" = "$DEBIAN_RELEASE" ] && echo /var/cache/loom/slurm-src/build || echo "$(prefix_of "$v")/build")"
		fi
	done
	;;
prefix) v=${2:-}; [ -n "$v" ] || usage; check_version "$v"; prefix_of "$v" ;;
src)
	v=${2:-}; [ -n "$v" ] || usage; check_version "$v"
	if [ "$v" = "$DEBIAN_RELEASE" ]; then debian_src; else
		is_ready "$v" || die "Slurm $v is not installed (scripts/slurm.sh install $v)"
		echo "$(prefix_of "$v")/build"
	fi
	;;
plugindir)
	v=${2:-}; [ -n "$v" ] || usage; check_version "$v"
	if [ "$v" = "$DEBIAN_RELEASE" ]; then
		echo "/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)/slurm-wlm"
	else echo "$(prefix_of "$v")/lib/slurm"; fi
	;;
supported) printf '%s\n' "${SUPPORTED[@]}" ;;
default) echo "${SUPPORTED[0]}" ;;
builddir)
	v=${2:-}; [ -n "$v" ] || usage; check_version "$v"
	if [ "$v" = "${SUPPORTED[0]}" ]; then echo "$top/_build"; else echo "$top/_build-$v"; fi
	;;
-h|--help|help) usage ;;
*) die "unknown command '$cmd' (install, list, prefix, src, plugindir, supported, default, builddir)" ;;
esac
