#!/bin/bash
# What each shared object loom installs loads with it (its NEEDED entries),
# and which of loom's modules it carries (the namespaces its symbols name).
# The SDK is linked into users' training programs, and slurmstepd, sbatch and
# srun load the SPANK plugins: none of them may pull in hwloc, libyaml or
# libibverbs (only the topology module, lib/topo, uses those). A module is
# linked whole into each plugin that links its convenience library, so a
# reader of another process's file links lib/exchange (the format), never
# the writer's module: spank_ckpt and select/topo carry no lib/health.
# Each must still load and carry what it does use, so a broken readelf or nm
# reading fails too.
#   link_weight.sh [BUILDDIR]
set -uo pipefail
b=${1:-${LOOM_BUILDDIR:-.}}
command -v readelf >/dev/null || { echo "link_weight: readelf not found (binutils)"; exit 1; }
command -v nm >/dev/null || { echo "link_weight: nm not found (binutils)"; exit 1; }
fail=0
needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }
# object | libraries it must need | libraries it must not need
# expect OBJ LIST HOW VERB VERBS MUST MUSTNOT: every name of MUST found in
# LIST, none of MUSTNOT (HOW: -x, the whole line; ^, a line's start).
expect() {
	local obj=$1 list=$2 how=$3 verb=$4 verbs=$5 must=$6 mustnot=$7 x
	found() { if [ "$how" = -x ]; then grep -qx "$1" <<<"$list"; else grep -q "^$1" <<<"$list"; fi; }
	for x in $must; do
		found "$x" || { echo "FAIL: $obj does not $verb $x ($verbs: ${list//$'\n'/ })"; fail=1; }
	done
	for x in $mustnot; do
		! found "$x" || { echo "FAIL: $obj $verbs $x ($verbs: ${list//$'\n'/ })"; fail=1; }
	done
}
# object | libraries it must need | libraries it must not need
check() {
	local list
	if [ ! -e "$b/$1" ]; then
		echo "FAIL: $1 not built"
		fail=1
		return
	fi
	list=$(needed "$b/$1")
	expect "$1" "$list" ^ load loads "$2" "$3"
	echo "$1: ${list//$'\n'/ }"
}
# The modules an object carries: every loom::<module>:: that a symbol names,
# as its own namespace, a parameter's or a template argument's. The objects
# are not stripped, so nm lists their local symbols (the hidden ones) too.
modules="health place topo sim ckpt exchange"
carried() {
	local syms
	syms=$(nm -C "$1") || return 1
	{ grep -o "loom::\($(sed 's/ /\\|/g' <<<"$modules")\)::" <<<"$syms" || true; } |
		sed 's/^loom::\(.*\)::$/\1/' | sort -u
}
# object | modules it must carry | modules it must not carry
carry() {
	local list
	[ -e "$b/$1" ] || return # check() has said so
	if ! list=$(carried "$b/$1"); then
		echo "FAIL: nm -C $1 failed"
		fail=1
		return
	fi
	expect "$1" "$list" -x carry carries "$2" "$3"
	echo "$1: modules ${list//$'\n'/ }"
}
heavy="libhwloc libyaml libibverbs"
check sdk/.libs/libloom_ckpt.so "libc.so libcrypto libjson-c" "$heavy"
# The SDK reads its tasks' LOOM_CKPT_* environment through lib/exchange.
carry sdk/.libs/libloom_ckpt.so "ckpt exchange" "health place topo sim"
# spank_ckpt reads jobcomp/health's failure statistics through lib/exchange.
check plugins/spank_ckpt/.libs/spank_ckpt.so "libc.so libcrypto libjson-c" "$heavy"
carry plugins/spank_ckpt/.libs/spank_ckpt.so "ckpt exchange" "health place topo sim"
# spank_place compiles in the few lib/place sources it needs (no library).
check plugins/spank_place/.libs/spank_place.so "libc.so" "$heavy libcrypto libjson-c"
carry plugins/spank_place/.libs/spank_place.so "place" "health topo sim ckpt exchange"
# What spank_place opens in slurmstepd only (its rank order): the fabric
# readers, so hwloc and json-c; never libslurm's clients' weight.
check plugins/spank_place/.libs/loom_fabric.so "libc.so libhwloc libjson-c" "libcrypto"
carry plugins/spank_place/.libs/loom_fabric.so "place topo" "health sim ckpt"
# The daemons' plugins that need the fabric model do load hwloc (lib/topo);
# jobcomp/health does not.
# select/topo and jobcomp/health are built wherever configure had a Slurm
# source tree: there they must be checked too (check() fails when one is
# missing). select/topo reads the failure statistics, the suspect marks and
# writes the spare file through lib/exchange: no lib/health. jobcomp/health
# reads what a --ckpt job carries (LOOM_CKPT*) through lib/exchange: no lib/ckpt.
src=${SLURM_SRC_DIR:-$(sed -n 's/^SLURM_SRC_DIR = //p' "$b/Makefile" 2>/dev/null)}
if [ -n "$src" ]; then
	check plugins/select_topo/.libs/select_topo.so "libc.so libhwloc libjson-c" "libcrypto"
	carry plugins/select_topo/.libs/select_topo.so "place topo exchange" "health sim ckpt"
	check plugins/jobcomp_health/.libs/jobcomp_health.so "libc.so libjson-c" "$heavy libcrypto"
	carry plugins/jobcomp_health/.libs/jobcomp_health.so "health exchange" "place topo sim ckpt"
	# job_submit/loom: --ckpt-standby's plan (lib/ckpt) and the failure
	# statistics it reads for auto (lib/exchange), in slurmctld.
	check plugins/job_submit_loom/.libs/job_submit_loom.so "libc.so libjson-c" "$heavy"
	carry plugins/job_submit_loom/.libs/job_submit_loom.so "ckpt exchange" "health place topo sim"
fi
exit $fail
