#!/bin/bash
# Run every loom test tier on this machine, installing what is missing first.
#
#   scripts/test.sh [--quick]
#
# Tiers: build (-Werror), unit tests (Check, make check), unit tests under
# ASan/UBSan, plugin load + cluster scenarios on a real Slurm test cluster,
# fuzzers (bounded time), make distcheck, rpm and deb packages.
# --quick skips the sanitizer build, distcheck and packages.
# Needs root: it installs packages and runs Slurm daemons. A tier that cannot
# run fails; none is skipped silently. Ends with "N passed, N failed".
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
export LOOM_BUILDDIR=${LOOM_BUILDDIR:-$top/_build}
quick=0
[ "${1:-}" = --quick ] && quick=1
if [ "$(id -u)" != 0 ]; then
	command -v sudo >/dev/null && exec sudo -E "$0" "$@"
	echo "test: run as root: the test cluster runs Slurm daemons as root" >&2
	exit 1
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
	if [ $rc = 0 ]; then
		passed=$((passed + 1)); results+=("PASS  $name (${secs}s)")
		grep -E "^# (PASS|FAIL|ERROR):|passed, [0-9]+ failed|^fuzz: .*: |^packages: " "$logdir/$name.log" | sed 's/^/    /' | tail -12
	else
		failed=$((failed + 1)); results+=("FAIL  $name (${secs}s, log: $logdir/$name.log)")
		tail -60 "$logdir/$name.log" | sed 's/^/    /'
	fi
	echo "--- $([ $rc = 0 ] && echo PASS || echo FAIL): $name (${secs}s)"
	return $rc
}

unit() { cd "$LOOM_BUILDDIR" && make -j2 check; }
unit_sanitizers() {
	LOOM_BUILDDIR=$top/_build-asan "$top/scripts/build.sh" --enable-sanitizers &&
		cd "$top/_build-asan" && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 make -j2 check
}
cluster() { "$top/tests/cluster/run.sh" --builddir "$LOOM_BUILDDIR"; }
fuzz() {
	ls "$top"/tests/fuzz/fuzz_*.cpp >/dev/null 2>&1 || { echo "fuzz: no fuzz targets"; return 1; }
	"$top/tests/fuzz/run.sh" "${LOOM_FUZZ_SECONDS:-10}"
}
distcheck() { cd "$LOOM_BUILDDIR" && make -j2 distcheck; }
packages() { cd "$LOOM_BUILDDIR" && make rpm && make deb && "$top/packaging/check-packages.sh" "$LOOM_BUILDDIR"; }

if tier build "$top/scripts/build.sh"; then
	tier unit unit
	[ $quick = 1 ] || tier unit-sanitizers unit_sanitizers
	tier cluster cluster
	tier fuzz fuzz
	if [ $quick = 0 ]; then
		tier distcheck distcheck
		tier packages packages
	fi
fi

echo
echo "=== summary (logs in $logdir)"
printf '  %s\n' "${results[@]}"
echo "$passed passed, $failed failed"
[ $failed = 0 ]
