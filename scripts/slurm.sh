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
#   scripts/slurm.sh fetch VERSION     the release's archive, verified; prints its path
#
# 22.05.8 is Debian 12's packages (prefix /usr, source from `apt-get source`,
# scripts/slurm-src.sh). Every other release is built from SchedMD's archive of
# its release tag, pinned in scripts/slurm-releases.tsv (URL, sha256, tree):
# shared/vendor's copy when there is one ($LOOM_VENDOR_DIR), else one fetched
# before into /var/cache/loom/slurm-archives ($LOOM_SLURM_ARCHIVES), else
# downloaded from the pinned URL (or $LOOM_SLURM_URL_BASE/slurm-VERSION.tar.gz).
# An archive whose sha256 and contents are not the pinned ones is refused.
# Each is built into /opt/slurm-VERSION (or $LOOM_SLURM_PREFIX_ROOT/...), once:
# a release that is installed and whose stamp matches the pin is reused. The
# configured build tree stays under PREFIX/build for --with-slurm-src.
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

# usage [STATUS]: the comment block above, whole (2: on stderr, a usage error).
usage() {
	local out=1
	[ "${1:-2}" = 0 ] || out=2
	awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0" >&$out
	exit "${1:-2}"
}

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

releases=${LOOM_SLURM_RELEASES:-$top/scripts/slurm-releases.tsv}
archives=${LOOM_SLURM_ARCHIVES:-/var/cache/loom/slurm-archives}
# pin VERSION FIELD: tag, url, sha256 or tree of VERSION in slurm-releases.tsv.
pin() {
	local col
	case $2 in tag) col=2 ;; url) col=3 ;; sha256) col=4 ;; tree) col=5 ;; esac
	awk -F'\t' -v v="$1" -v c="$col" '!/^#/ && $1 == v {print $c}' "$releases" 2>/dev/null
}
# tree_of ARCHIVE: the git tree of the archive's contents (its top directory stripped).
tree_of() {
	local t rc=0
	t=$(mktemp -d)
	(cd "$t" && tar -xzf "$1" --strip-components=1 && git init -q && git add -A && git write-tree) || rc=1
	rm -rf "$t"
	return $rc
}
# verified VERSION ARCHIVE: ARCHIVE is the pinned release (by sha256, or by its
# tree when another gzip packed it). Says why not on stderr.
verified() {
	local v=$1 f=$2 want got tree
	want=$(pin "$v" sha256)
	got=$(sha256sum "$f" | cut -d' ' -f1)
	[ "$got" != "$want" ] || return 0
	tree=$(tree_of "$f" 2>/dev/null) || tree=
	if [ -n "$tree" ] && [ "$tree" = "$(pin "$v" tree)" ]; then
		log "$f: sha256 $got is not the pinned $want, but its contents are the pinned tree $tree"
		return 0
	fi
	log "$f: sha256 $got, pinned $want; its contents' tree ${tree:-(unreadable)}, pinned $(pin "$v" tree)"
	return 1
}
# fetch VERSION: the path of a verified archive of VERSION.
fetch() {
	local v=$1 f url tmp
	[ -n "$(pin "$v" sha256)" ] || die "Slurm $v has no pin in $releases"
	f="$vendor/slurm-$v.tar.gz"
	if [ -f "$f" ]; then
		verified "$v" "$f" || die "$f is not the pinned Slurm $v: refusing to build it"
		echo "$f"; return 0
	fi
	f="$archives/slurm-$v.tar.gz"
	if [ -f "$f" ] && verified "$v" "$f"; then echo "$f"; return 0; fi
	url=$(pin "$v" url)
	[ -z "${LOOM_SLURM_URL_BASE:-}" ] || url=${LOOM_SLURM_URL_BASE%/}/slurm-$v.tar.gz
	command -v curl >/dev/null || die "Slurm $v: no archive in $vendor or $archives, and no curl to download $url"
	mkdir -p "$archives"
	tmp=$(mktemp "$archives/.slurm-$v.XXXXXX")
	log "Slurm $v: no archive in $vendor or $archives; downloading $url"
	if ! curl -fsSL --retry 2 --connect-timeout 20 --max-time 900 -o "$tmp" "$url" 2>"$tmp.err"; then
		local why
		why=$(tr '\n' ' ' <"$tmp.err")
		rm -f "$tmp" "$tmp.err"
		die "Slurm $v: could not download $url (${why:-no reason given}); put the archive in $vendor or $archives"
	fi
	rm -f "$tmp.err"
	if ! verified "$v" "$tmp"; then
		rm -f "$tmp"
		die "Slurm $v: the archive downloaded from $url is not the pinned release: refused"
	fi
	mv "$tmp" "$f"
	echo "$f"
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
	want=$(pin "$v" sha256)
	[ -n "$want" ] || die "Slurm $v has no pin in $releases"
	# A release built from the pinned archive by this recipe is reused as it is.
	if is_ready "$v" && [ "$(cat "$(stamp_of "$v")")" = "$want $RECIPE" ]; then
		return 0
	fi
	tarball=$(fetch "$v") || exit 1
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
	(cd "$bld" && make -j"$jobs" >"$prefix/make.log" 2>&1) ||
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
fetch)
	v=${2:-}; [ -n "$v" ] || usage; check_version "$v"
	[ "$v" != "$DEBIAN_RELEASE" ] || die "Slurm $v is Debian's packages: nothing to fetch"
	fetch "$v"
	;;
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
-h|--help|help) usage 0 ;;
*) die "unknown command '$cmd' (install, fetch, list, prefix, src, plugindir, supported, default, builddir)" ;;
esac
