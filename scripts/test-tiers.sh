# scripts/test.sh's tiers, one function each, sourced by test.sh (which sets
# top, main, quick, main_builddir and builddir_of); each runs in its lane
# under test.sh's watchdog.
# shellcheck shell=bash
build() { LOOM_BUILDDIR=$(builddir_of "$1") "$top/scripts/build.sh" --slurm "$1"; }
# tests_of BUILDDIR: the build's TESTS (make print-tests), one per line.
tests_of() { make -s --no-print-directory -C "$1" print-tests | tr ' ' '\n' | grep .; }
# The sanitizers watch instrumented C++ only: the tests that run none (the
# Python SDK's, the man pages, bash completion, the ELF checks of the
# plugins, the fetch of Slurm archives) are the unit tier's alone.
SAN_SKIP='/(sdk_python|sdk_torch|sdk_io|sdk_wheel|frameworks|ranks_python|ranks_mpi|conformance_py|man_pages|man_keys|completion|check_symbols|link_weight|slurm_fetch|module_graph|shellcheck|clang_format)\.sh$'
# -O1 and line tables only (-g1): reports keep their file:line frames, and the
# compile takes about two thirds of -O2 -g's time.
# Each test runs once: the unit tier runs those that execute no instrumented
# C++ (SAN_SKIP), in the build tree; the sanitizer tier every other one, its
# C++ built with ASan/UBSan. (The unit tier compiled every test program
# again without sanitizers, 26 of its 39 minutes in a run of 51.) With
# --quick, which has no sanitizer tier, the unit tier runs them all.
unit() {
	local list logs
	cd "$LOOM_BUILDDIR" || return 1
	[ "$quick" = 0 ] || { make -j2 check; return; }
	list=$(tests_of . | grep -E "$SAN_SKIP") && [ -n "$list" ] || { echo "test: FAIL: no tests for the unit tier"; return 1; }
	echo "test: unit: $(echo "$list" | wc -l) of $(tests_of . | wc -l) tests (the others run under the sanitizers)"
	# test-suite.log, not check-TESTS: that one builds every test program
	# first. These tests run two of them: sdk_python.sh's C++/Python
	# cross-check (it fails, naming them, when they are missing).
	make -j2 tests/ckpt/crash_writer tests/ckpt/crash_check || return 1
	logs=$(echo "$list" | sed 's/\.sh$/.log/')
	# shellcheck disable=SC2086
	rm -f test-suite.log $logs ${logs//.log/.trs}
	make -j2 test-suite.log TESTS="${list//$'\n'/ }"
}
unit_sanitizers() {
	local b=$top/_build-asan list
	CXXFLAGS="-g1 -O1" LOOM_BUILDDIR=$b "$top/scripts/build.sh" --slurm "$main" --enable-sanitizers || return 1
	list=$(tests_of "$b" | grep -vE "$SAN_SKIP") && [ -n "$list" ] || { echo "test: FAIL: no tests to run under the sanitizers"; return 1; }
	echo "test: under ASan/UBSan: $(echo "$list" | wc -l) of $(tests_of "$b" | wc -l) tests (left to the unit tier: the ones running no instrumented code)"
	cd "$b" && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 make -j2 check TESTS="${list//$'\n'/ }"
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
# distcheck asks whether the tarball is whole: it builds, installs and
# uninstalls from it out of tree, and runs the tests that read what the
# tarball must carry (recorded files, fuzz corpora, the conformance corpus,
# man pages, the plugins against Slurm's loaders); the whole suite has run
# twice already (unit, sanitizers). It builds the test programs those tests
# run, not the others (module_graph.sh, run on the unpacked tarball, checks
# that it carries every header they include). Optimisation and debug
# information add nothing to that answer (the build tier has both), so -O1
# -g0 (-Werror still).
DIST_TESTS='/(replay_[a-z_]+\.sh|test_topo_formats|test_health_joblogs|test_health_collectors|conformance_cpp|conformance_py\.sh|sdk_wheel\.sh|man_pages\.sh|man_keys\.sh|schema_values|cli_walk\.sh|module_graph\.sh|check_symbols\.sh|no_check\.sh)$'
# distcheck and the packages each make the tarball in a tree of their own,
# configured and never built (dist_tree DIR), so that they run beside each
# other and beside the unit tier in the build tree.
distcheck_builddir=$main_builddir-distcheck
dist_builddir=$main_builddir-dist
dist_tree() { LOOM_BUILDDIR=$1 "$top/scripts/build.sh" --slurm "$main" --configure-only; }
distcheck() {
	local cc=() list progs
	[ -z "${CCACHE_DIR:-}" ] || cc=(CC="ccache gcc" CXX="ccache g++")
	dist_tree "$distcheck_builddir" || return 1
	list=$(tests_of "$distcheck_builddir" | grep -E "$DIST_TESTS") && [ "$(echo "$list" | wc -l)" -ge 10 ] ||
		{ echo "test: FAIL: distcheck's tests not found in the build's TESTS: '$list'"; return 1; }
	progs=$(make -s --no-print-directory -C "$distcheck_builddir" print-check-programs | tr ' ' '\n' |
		grep -E "${DIST_TESTS//\\.sh/}") || { echo "test: FAIL: distcheck's test programs not found"; return 1; }
	echo "test: distcheck runs $(echo "$list" | wc -l) of $(tests_of "$distcheck_builddir" | wc -l) tests: ${list//$'\n'/ }"
	echo "test: distcheck builds $(echo "$progs" | wc -l) test programs: ${progs//$'\n'/ }"
	cd "$distcheck_builddir" && env "${cc[@]}" make -j2 distcheck DISTCHECK_CONFIGURE_FLAGS="CXXFLAGS='-O1 -g0'" \
		TESTS="${list//$'\n'/ }" check_PROGRAMS="${progs//$'\n'/ }"
}
# The rpm and the deb compile the same tree with the same flags in the same
# directory (packaging/local.mk): through ccache the deb reuses the rpm's
# objects. LANG=C for both, as rpmbuild sets it: ccache keys on the locale.
packages() {
	local cc=(-u LC_ALL LANG=C)
	[ -z "${CCACHE_DIR:-}" ] || cc+=(CC="ccache gcc" CXX="ccache g++")
	dist_tree "$dist_builddir" || return 1
	cd "$dist_builddir" && env "${cc[@]}" make rpm && env "${cc[@]}" make deb &&
		"$top/packaging/check-packages.sh" "$dist_builddir"
}
