#!/bin/bash
# What each shared object loom installs loads with it (its NEEDED entries).
# The SDK is linked into users' training programs, and slurmstepd, sbatch and
# srun load the SPANK plugins: none of them may pull in hwloc, libyaml or
# libibverbs (only the topology module, lib/topo, uses those). Each must
# still load what it does use, so a broken readelf reading fails too.
#   link_weight.sh [BUILDDIR]
set -uo pipefail
b=${1:-${LOOM_BUILDDIR:-.}}
command -v readelf >/dev/null || { echo "link_weight: readelf not found (binutils)"; exit 1; }
fail=0
needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }
# object | libraries it must need | libraries it must not need
check() {
	local so=$b/$1 must=$2 mustnot=$3 list lib
	if [ ! -e "$so" ]; then
		echo "FAIL: $1 not built"
		fail=1
		return
	fi
	list=$(needed "$so")
	for lib in $must; do
		if ! grep -q "^$lib" <<<"$list"; then
			echo "FAIL: $1 does not load $lib (NEEDED: $(echo $list))"
			fail=1
		fi
	done
	for lib in $mustnot; do
		if grep -q "^$lib" <<<"$list"; then
			echo "FAIL: $1 loads $lib (NEEDED: $(echo $list))"
			fail=1
		fi
	done
	echo "$1: $(echo $list)"
}
heavy="libhwloc libyaml libibverbs"
check sdk/.libs/libloom_ckpt.so "libc.so libcrypto libjson-c" "$heavy"
check plugins/spank_ckpt/.libs/spank_ckpt.so "libc.so libcrypto libjson-c" "$heavy"
check plugins/spank_place/.libs/spank_place.so "libc.so" "$heavy libcrypto libjson-c"
# What spank_place opens in slurmstepd only (its rank order): the fabric
# readers, so hwloc and json-c; never libslurm's clients' weight.
check plugins/spank_place/.libs/loom_fabric.so "libc.so libhwloc libjson-c" "libcrypto"
# The daemons' plugins that need the fabric model do load hwloc (lib/topo);
# jobcomp/health does not.
# jobcomp/health is built wherever configure had a Slurm source tree: there
# it must be checked too (check() fails when it is missing).
src=${SLURM_SRC_DIR:-$(sed -n 's/^SLURM_SRC_DIR = //p' "$b/Makefile" 2>/dev/null)}
if [ -n "$src" ]; then
	check plugins/jobcomp_health/.libs/jobcomp_health.so "libc.so libjson-c libcrypto" "$heavy"
fi
exit $fail
