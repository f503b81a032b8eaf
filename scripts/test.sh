#!/bin/bash
# Run every loom test tier on this machine, installing what is missing first.
#
#   scripts/test.sh [--quick] [--slurm VERSION]
#
# With no --slurm: every tier on the default Slurm release (Debian's 22.05.8):
# build (-Werror), unit tests (Check, make check), unit tests under
# ASan/UBSan, plugin load + cluster scenarios on a real Slurm test cluster,
# fuzzers (bounded time), make distcheck, rpm and deb packages; and on every
# other supported release (scripts/slurm.sh supported) the tiers that depend
# on Slurm: the release itself (built from shared/vendor once, in the
# background while the default release's tiers run), loom's build against it
# with its plugin-load checks, the cluster scenarios, the differential tier
# (tests/differential: plain cons_tres against select/topo) and the consumers
# tier (tests/consumers: the files loom writes, read by that release's
# slurmctld and slurmd); the last three for every such release at once.
# With --slurm VERSION: every tier, on that release only.
# --quick skips the sanitizer build, distcheck and packages.
# Needs root: it installs packages and runs Slurm daemons. A tier that cannot
# run fails; none is skipped silently. Ends with "N passed, N failed".
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
if [ "$(id -u)" != 0 ]; then
	command -v sudo >/dev/null && exec sudo -E "$0" "$@"
	echo "test: run as root: the test cluster runs Slurm daemons as root" >&2
	exit 1
fi
quick=0
only=
while [ $# -gt 0 ]; do
	case $1 in
	--quick) quick=1; shift ;;
	--slurm) only=${2:?--slurm needs a version}; shift 2 ;;
	-h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "test: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
done

default=$("$top/scripts/slurm.sh" default)
mapfile -t supported < <("$top/scripts/slurm.sh" supported)
if [ -n "$only" ]; then
	"$top/scripts/slurm.sh" prefix "$only" >/dev/null || exit 2
	main=$only
	others=()
else
	main=$default
	others=("${supported[@]:1}")
fi
main_builddir=$("$top/scripts/slurm.sh" builddir "$main")
[ "$main" != "$default" ] || main_builddir=${LOOM_BUILDDIR:-$main_builddir}
builddir_of() {
	if [ "$1" = "$main" ]; then echo "$main_builddir"; else "$top/scripts/slurm.sh" builddir "$1"; fi
}
export LOOM_BUILDDIR=$main_builddir

# One compiler cache for every build tree (normal, sanitizers, distcheck,
# packages, each release): paths are made relative to the top of the tree.
if command -v ccache >/dev/null || { "$top/scripts/deps.sh" >/dev/null && command -v ccache >/dev/null; }; then
	export CCACHE_DIR=${CCACHE_DIR:-/var/cache/loom/ccache} CCACHE_BASEDIR=/ CCACHE_NOHASHDIR=1
	export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-4G}
	mkdir -p "$CCACHE_DIR"
	ccache -z >/dev/null 2>&1 || true
fi

passed=0
failed=0
results=()
logdir=${LOOM_TEST_LOGS:-/tmp/loom-test-logs}
rm -rf "$logdir"
mkdir -p "$logdir"

# tier NAME COMMAND...: run one tier, log to $logdir/NAME.log, print the verdict.
tier() {
	local name=$1 start secs rc
	shift
	echo "=== tier: $name"
	start=$(date +%s)
	"$@" >"$logdir/$name.log" 2>&1
	rc=$?
	secs=$(( $(date +%s) - start ))
	record "$name" "$rc" "$secs"
	return $rc
}
# record NAME RC SECS: count a tier's verdict and print it.
record() {
	local name=$1 rc=$2 secs=$3
	if [ "$rc" = 0 ]; then
		passed=$((passed + 1)); results+=("PASS  $name (${secs}s)")
		grep -E "^# (PASS|FAIL|ERROR):|passed, [0-9]+ failed|^differential: |^consumers: |^fuzz: .*: |^packages: |^check_symbols: |^slurm: " "$logdir/$name.log" | sed 's/^/    /' | tail -12
	else
		failed=$((failed + 1)); results+=("FAIL  $name (${secs}s, log: $logdir/$name.log)")
		tail -60 "$logdir/$name.log" | sed 's/^/    /'
	fi
	echo "--- $([ "$rc" = 0 ] && echo PASS || echo FAIL): $name (${secs}s)"
}

build() { LOOM_BUILDDIR=$(builddir_of "$1") "$top/scripts/build.sh" --slurm "$1"; }
unit() { cd "$LOOM_BUILDDIR" && make -j2 check; }
unit_sanitizers() {
	LOOM_BUILDDIR=$top/_build-asan "$top/scripts/build.sh" --slurm "$main" --enable-sanitizers &&
		cd "$top/_build-asan" && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 make -j2 check
}
# The plugin-load checks of a release: symbols the plugins need are in that
# Slurm's daemons, and they export exactly what its loaders look up.
plugins() {
	cd "$(builddir_of "$1")" &&
		SLURM_PREFIX=$("$top/scripts/slurm.sh" prefix "$1") "$top/tests/plugins/check_symbols.sh" .
}
cluster() { "$top/tests/cluster/run.sh" --slurm "$1" --builddir "$(builddir_of "$1")" --dir "/tmp/loom-cluster-$1"; }
# The same generated jobs on plain cons_tres and on select/topo: what Slurm promises holds on both.
differential() { "$top/tests/differential/run.sh" --slurm "$1" --builddir "$(builddir_of "$1")"; }
# Every file loom writes, given to the program that reads it (slurmctld, slurmd, hwloc).
consumers() { "$top/tests/consumers/run.sh" --slurm "$1" --builddir "$(builddir_of "$1")" --dir "/tmp/loom-consumers-$1"; }
fuzz() {
	ls "$top"/tests/fuzz/fuzz_*.cpp >/dev/null 2>&1 || { echo "fuzz: no fuzz targets"; return 1; }
	"$top/tests/fuzz/run.sh" "${LOOM_FUZZ_SECONDS:-10}"
}
distcheck() {
	local cc=()
	[ -z "${CCACHE_DIR:-}" ] || cc=(CC="ccache gcc" CXX="ccache g++")
	cd "$LOOM_BUILDDIR" && env "${cc[@]}" make -j2 distcheck
}
packages() { cd "$LOOM_BUILDDIR" && make rpm && make deb && "$top/packaging/check-packages.sh" "$LOOM_BUILDDIR"; }

# The other releases are built from source once (minutes each): in the
# background, at low priority, while the main release's tiers run.
installer=
if [ ${#others[@]} -gt 0 ]; then
	"$top/scripts/deps.sh" >/dev/null
	(
		for v in "${others[@]}"; do
			start=$(date +%s)
			nice -n 19 "$top/scripts/slurm.sh" install "$v" >"$logdir/slurm-$v.log" 2>&1
			echo "$? $(( $(date +%s) - start ))" >"$logdir/slurm-$v.rc"
		done
	) &
	installer=$!
fi

echo "=== Slurm $main: every tier"
if tier "build-$main" build "$main"; then
	tier "unit-$main" unit
	[ $quick = 1 ] || tier "unit-sanitizers-$main" unit_sanitizers
	tier "cluster-$main" cluster "$main"
	tier "differential-$main" differential "$main"
	tier "consumers-$main" consumers "$main"
	tier "fuzz" fuzz
	if [ $quick = 0 ]; then
		tier "distcheck-$main" distcheck
		tier "packages-$main" packages
	fi
fi

# The other releases: each one's build and plugin-load checks first, one
# release at a time (they compile); then their cluster, differential and
# consumers tiers, every release at once: those tiers wait on daemons far more
# than they compute, and each release's clusters have their own directories,
# ports and processes. Their verdicts are printed afterwards, release by
# release, as if they had run one after the other.
if [ -n "$installer" ]; then
	wait "$installer"
	ready=()
	for v in "${others[@]}"; do
		echo "=== Slurm $v: the release, loom's build and plugin load"
		echo "=== tier: slurm-$v"
		read -r rc secs <"$logdir/slurm-$v.rc" 2>/dev/null || { rc=1; secs=0; }
		record "slurm-$v" "$rc" "$secs"
		[ "$rc" = 0 ] || continue
		tier "build-$v" build "$v" || continue
		tier "plugins-$v" plugins "$v"
		ready+=("$v")
	done
	# quiet_tier NAME COMMAND...: tier's run and log, its verdict kept for later.
	quiet_tier() {
		local name=$1 start rc
		shift
		start=$(date +%s)
		"$@" >"$logdir/$name.log" 2>&1
		rc=$?
		echo "$name $rc $(( $(date +%s) - start ))" >>"$logdir/verdicts-$v"
	}
	pids=()
	for v in "${ready[@]}"; do
		rm -f "$logdir/verdicts-$v"
		(
			quiet_tier "cluster-$v" cluster "$v"
			quiet_tier "differential-$v" differential "$v"
			quiet_tier "consumers-$v" consumers "$v"
		) &
		pids+=($!)
	done
	[ ${#pids[@]} = 0 ] || { echo "=== Slurm ${ready[*]}: cluster, differential and consumers tiers, at once"; wait "${pids[@]}"; }
	for v in "${ready[@]}"; do
		echo "=== Slurm $v: cluster scenarios, differential, consumers"
		for t in cluster differential consumers; do
			echo "=== tier: $t-$v"
			read -r name rc secs < <(grep "^$t-$v " "$logdir/verdicts-$v" 2>/dev/null) ||
				{ name=$t-$v; rc=1; secs=0; echo "test: tier $name left no verdict" >>"$logdir/$name.log"; }
			record "$name" "$rc" "$secs"
		done
	done
fi

[ -z "${CCACHE_DIR:-}" ] || ccache -s 2>/dev/null | grep -E 'Hits|Misses|hit rate' | head -4 | sed 's/^/ccache: /'
echo
echo "=== summary (logs in $logdir)"
printf '  %s\n' "${results[@]}"
# Why each failed tier failed, from its log (the tail above may not reach it).
for r in "${results[@]}"; do
	case $r in FAIL*) ;; *) continue ;; esac
	name=$(echo "$r" | awk '{print $2}')
	echo "=== why $name failed (from $logdir/$name.log)"
	awk '/^ *(FAIL: |--- FAIL|# (FAIL|ERROR):)|error:/ { print; next }
		/^failed scenarios:/ { print; more = 1; next }
		more && /^  / { print; next } { more = 0 }' "$logdir/$name.log" 2>/dev/null | head -30 | sed 's/^/    /'
done
echo "$passed passed, $failed failed"
[ $failed = 0 ]
