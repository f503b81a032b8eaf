#!/bin/bash
# Run every loom test tier on this machine, installing what is missing first.
#
#   scripts/test.sh [--quick] [--slurm VERSION]
#
# With no --slurm: every tier on the default Slurm release (Debian's 22.05.8):
# build (-Werror), the unit tests, each once (make check: those of the C++
# code under ASan/UBSan, the others on the build), plugin load + cluster scenarios on a real Slurm test cluster,
# fuzzers (bounded time), make distcheck, rpm and deb packages; and on every
# other supported release (scripts/slurm.sh supported) the tiers that depend
# on Slurm: the release itself (built from shared/vendor once, in the
# background from the start), loom's build against it with its plugin-load
# checks, the cluster scenarios, the differential tier (tests/differential:
# plain cons_tres against select/topo) and the consumers tier
# (tests/consumers: the files loom writes, read by that release's slurmctld
# and slurmd). After the first build the tiers run in lanes at once: one per
# release for those that run daemons, two at lower priority for those that
# compute; the verdicts are printed in a fixed order at the end.
# With --slurm VERSION: every tier, on that release only.
# --quick skips the sanitizer build, distcheck and packages.
# Needs root: it installs packages and runs Slurm daemons. A tier that cannot
# run fails; none is skipped silently, and one that could not run because a
# tier before it failed counts as failed. Each tier has a time limit (about
# three times its usual time, times $LOOM_TIER_LIMIT_SCALE, never past
# $LOOM_TEST_DEADLINE seconds from the start, 5100 by default): past it the
# tier is stopped and fails with the tail of its log. The summary lists the
# tiers by time, then ends with "N passed, N failed".
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
	-h|--help) sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
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

# Every tier runs under a watchdog: a limit of its own (tier_limit, about
# three times its usual time on a loaded 2-core machine, times
# $LOOM_TIER_LIMIT_SCALE), never past the run's deadline ($LOOM_TEST_DEADLINE
# seconds from the start, 5,100 by default: CI stops a run at 5,400, and the
# summary must be printed before that). A tier past its limit is stopped (TERM
# to it and every process under it, so their exit traps take their clusters
# down; KILL 30 s later) and fails with its name and the tail of its log.
run_start=$EPOCHSECONDS
run_deadline=$(( run_start + ${LOOM_TEST_DEADLINE:-5100} ))
tier_limit() { # NAME: seconds
	local s
	case $1 in
	build-*|plugins-*) s=1200 ;;
	slurm-*) s=2400 ;;
	# The sanitizer tier ran 1681 s beside four releases' clusters (its build
	# included); the unit tier, then compiling every test program too, 2318 s.
	unit-sanitizers-*|unit-*) s=3600 ;;
	distcheck-*|packages-*) s=1800 ;;
	cluster-*) s=2100 ;;
	differential-*) s=1200 ;;
	consumers-*) s=600 ;;
	fuzz) s=1500 ;;
	*) s=1800 ;;
	esac
	s=$(awk -v s="$s" -v f="${LOOM_TIER_LIMIT_SCALE:-1}" 'BEGIN { printf "%d", s * f }')
	local left=$(( run_deadline - EPOCHSECONDS ))
	[ "$left" -gt 60 ] || left=60
	[ "$s" -le "$left" ] || s=$left
	echo "$s"
}
# descendants PID: every process under PID, children before their parent.
descendants() {
	local k
	for k in $(ps -o pid= --ppid "$1" 2>/dev/null); do descendants "$k"; echo "$k"; done
}
# watchdog PID LIMIT NAME: stop PID's tree when it runs past LIMIT seconds.
watchdog() {
	local pid=$1 deadline=$(( EPOCHSECONDS + $2 )) name=$3 tree
	while kill -0 "$pid" 2>/dev/null; do
		if [ "$EPOCHSECONDS" -ge "$deadline" ]; then
			echo "$2" >"$logdir/$name.timeout"
			tree="$(descendants "$pid") $pid"
			# shellcheck disable=SC2086
			kill -TERM $tree 2>/dev/null
			read -rt 30 <> <(:) || true
			tree="$(descendants "$pid") $pid"
			# shellcheck disable=SC2086
			kill -KILL $tree 2>/dev/null
			return
		fi
		read -rt 5 <> <(:) || true
	done
}
# guarded NAME COMMAND...: COMMAND under the watchdog, its output in NAME's log.
guarded() {
	local name=$1 pid wd rc limit
	shift
	limit=$(tier_limit "$name")
	rm -f "$logdir/$name.timeout"
	"$@" >"$logdir/$name.log" 2>&1 &
	pid=$!
	watchdog "$pid" "$limit" "$name" &
	wd=$!
	wait "$pid"
	rc=$?
	kill "$wd" 2>/dev/null
	wait "$wd" 2>/dev/null
	if [ -e "$logdir/$name.timeout" ]; then
		echo "test: FAIL: tier $name ran past its limit of ${limit}s and was stopped" >>"$logdir/$name.log"
		rc=124
	fi
	return $rc
}
# tier NAME COMMAND...: run one tier, log to $logdir/NAME.log, print the verdict.
tier() {
	local name=$1 start secs rc
	shift
	echo "=== tier: $name"
	start=$EPOCHSECONDS
	guarded "$name" "$@"
	rc=$?
	secs=$(( EPOCHSECONDS - start ))
	echo "$name $rc $secs $EPOCHSECONDS" >>"$verdicts"
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

# The tiers themselves (build, unit, unit_sanitizers, plugins, cluster,
# differential, consumers, fuzz, distcheck, packages).
. "$top/scripts/test-tiers.sh"


# After the main release's build, the tiers run in lanes at once, each tier's
# log in $logdir and its verdict in $logdir/verdicts, printed in full at the
# end in a fixed order (a line says when each one ends):
#  - a daemon lane per release: cluster, differential, consumers. They wait on
#    Slurm's daemons far more than they compute, and each release's clusters
#    have their own directories, ports and processes;
#  - two CPU lanes: the unit tests, the packages, then distcheck; the
#    sanitizer build and its tests (one lane ran them all, 65 of a 70-minute
#    run, its single-core stretches leaving a core idle; with the packages
#    after the sanitizers, that lane ended a fresh machine's run 7 minutes
#    after every other). The fuzzers follow the main release's daemon tiers,
#    which end before the CPU lanes;
#  - a lane per other release, all from the start: the release built from
#    source once (minutes, at nice 5), then loom's build against it and its
#    plugin-load checks, then its daemon lane. (Built one after another, the
#    last release's daemon tiers could not start before +42 min of a fresh
#    machine's run.)
# Whatever compiles runs niced, so that the daemons are never starved by a
# compiler: the CPU lanes at 10, the releases at 5, since they gate their
# daemon lanes, and the sanitizer lane at 5, the run's critical path. (The releases ran at 19: on a fresh machine their builds,
# one after another, were the run's critical path, 39 of its 53 minutes,
# while the daemon lanes left cores idle.)
verdicts=$logdir/verdicts
: >"$verdicts"
# lane_tier NAME COMMAND...: one tier in a lane.
lane_tier() {
	local name=$1 start rc secs
	shift
	start=$EPOCHSECONDS
	guarded "$name" "$@"
	rc=$?
	secs=$(( EPOCHSECONDS - start ))
	echo "$name $rc $secs $EPOCHSECONDS" >>"$verdicts"
	echo "... $([ "$rc" = 0 ] && echo PASS || echo FAIL): $name (${secs}s, at $(date +%H:%M:%S))"
	return $rc
}
daemon_lane() {
	lane_tier "cluster-$1" cluster "$1"
	lane_tier "differential-$1" differential "$1"
	lane_tier "consumers-$1" consumers "$1"
}
# niced COMMAND...: COMMAND (a function too) at nice 5, in a subshell.
niced() { (renice -n 5 -p "$BASHPID" >/dev/null && "$@"); }
# Two CPU lanes, of about equal time: each has stretches on one core
# (configure, rpmbuild and dpkg-buildpackage's steps, the slowest tests) that
# the other fills. They share no build tree: the unit tier's is the build's,
# the sanitizers' _build-asan, the fuzzers' /tmp/loom-fuzz, distcheck's
# $distcheck_builddir and the packages' $dist_builddir.
cpu_lane_a() {
	renice -n 10 -p "$BASHPID" >/dev/null
	lane_tier "unit-$main" unit
	[ $quick = 1 ] && return
	lane_tier "packages-$main" packages
	lane_tier "distcheck-$main" distcheck
}
# The sanitizer tier alone: its compile and its tests are the longest tier,
# so it runs at nice 5, as the releases' builds do.
cpu_lane_b() {
	renice -n 5 -p "$BASHPID" >/dev/null
	[ $quick = 1 ] && return
	lane_tier "unit-sanitizers-$main" unit_sanitizers
}
# release_lane VERSION: one release, from its Slurm build to its daemon tiers.
release_lane() {
	lane_tier "slurm-$1" niced "$top/scripts/slurm.sh" install "$1" || return
	# loom's builds share the source tree's configure: after the main one.
	while [ ! -e "$logdir/main-build-done" ]; do sleep 5; done
	lane_tier "build-$1" niced build "$1" || return
	lane_tier "plugins-$1" plugins "$1"
	daemon_lane "$1"
}
# The releases at once, each in its lane: their Slurm builds (about 4 minutes
# each on an idle 2-core machine, one configure on one core) overlap, so the
# last release's daemon tiers no longer start after the other two builds.
releases_lane() {
	local v pids=()
	for v in "${others[@]}"; do
		release_lane "$v" &
		pids+=($!)
	done
	[ ${#pids[@]} = 0 ] || wait "${pids[@]}"
}
# verdict NAME: print the verdict a lane left for NAME (a failure if none).
verdict() {
	local name=$1 rc secs
	echo "=== tier: $name"
	read -r _ rc secs _ < <(grep "^$name " "$verdicts") ||
		{ rc=1; secs=0; echo "test: tier $name left no verdict" >>"$logdir/$name.log"; }
	record "$name" "$rc" "$secs"
	return "$rc"
}

lanes=()
if [ ${#others[@]} -gt 0 ]; then
	"$top/scripts/deps.sh" >/dev/null
	releases_lane &
	lanes+=($!)
fi
echo "=== Slurm $main: build, then every tier in lanes at once"
# The sanitizer lane is the run's longest (its ASan compile and its tests,
# 37 of a fresh machine's minutes when it started after the main build): it
# starts once the source tree is configured (the main release made ready,
# configure generated, which two builds must not do at once), beside the
# main build.
if LOOM_BUILDDIR=$main_builddir "$top/scripts/build.sh" --slurm "$main" --configure-only >"$logdir/configure-$main.log" 2>&1; then
	cpu_lane_b &
	lanes+=($!)
fi
tier "build-$main" build "$main"
main_rc=$?
touch "$logdir/main-build-done"
if [ $main_rc = 0 ]; then
	# The fuzzers (CPU, at nice 10) after the main release's daemon tiers:
	# those end first, while the CPU lanes still run.
	{ daemon_lane "$main"; (renice -n 10 -p "$BASHPID" >/dev/null && lane_tier fuzz fuzz); } &
	lanes+=($!)
	cpu_lane_a &
	lanes+=($!)
fi
[ ${#lanes[@]} = 0 ] || wait "${lanes[@]}"

# not_run NAME WHY: a tier that could not run because one before it failed
# counts as failed: it never vanishes from the count.
not_run() {
	echo "=== tier: $1"
	echo "test: FAIL: tier $1 did not run: $2" >"$logdir/$1.log"
	record "$1" 1 0
}
main_tiers=("unit-$main")
[ $quick = 1 ] || main_tiers+=("unit-sanitizers-$main")
main_tiers+=("cluster-$main" "differential-$main" "consumers-$main" fuzz)
[ $quick = 1 ] || main_tiers+=("distcheck-$main" "packages-$main")
echo "=== Slurm $main: every tier"
for t in "${main_tiers[@]}"; do
	if [ $main_rc = 0 ]; then verdict "$t"; else not_run "$t" "build-$main failed"; fi
done
for v in "${others[@]}"; do
	echo "=== Slurm $v: the release, loom's build, plugin load, cluster scenarios, differential, consumers"
	why=
	for t in slurm build plugins cluster differential consumers; do
		if [ -n "$why" ]; then not_run "$t-$v" "$why"; continue; fi
		verdict "$t-$v" || case $t in slurm|build) why="$t-$v failed" ;; esac
	done
done

[ -z "${CCACHE_DIR:-}" ] || ccache -s 2>/dev/null | grep -E 'Hits|Misses|hit rate' | head -4 | sed 's/^/ccache: /'
echo
echo "=== summary (logs in $logdir)"
printf '  %s\n' "${results[@]}"
# The tiers by time: where the run's minutes went, and when each ended.
echo "=== tier times (the run took $(( (EPOCHSECONDS - run_start) / 60 )) min $(( (EPOCHSECONDS - run_start) % 60 )) s)"
printf '  %-28s %6s %9s %s\n' tier seconds "ended at" verdict
sort -k3,3nr "$verdicts" | while read -r name rc secs end; do
	printf '  %-28s %6s %9s %s\n' "$name" "$secs" "+$(( (end - run_start) / 60 ))m$(( (end - run_start) % 60 ))s" \
		"$([ "$rc" = 0 ] && echo PASS || { [ "$rc" = 124 ] && echo "FAIL (past its limit)"; } || echo FAIL)"
done
# Why each failed tier failed, from its log (the tail above may not reach it).
for r in "${results[@]}"; do
	case $r in FAIL*) ;; *) continue ;; esac
	name=$(echo "$r" | awk '{print $2}')
	echo "=== why $name failed (from $logdir/$name.log)"
	awk '/^ *(FAIL: |--- FAIL|# (FAIL|ERROR):)|^test: FAIL: |error:/ { print; next }
		/^failed scenarios:/ { print; more = 1; next }
		more && /^  / { print; next } { more = 0 }' "$logdir/$name.log" 2>/dev/null | head -30 | sed 's/^/    /'
done
echo "$passed passed, $failed failed"
[ $failed = 0 ]
