#!/bin/bash
# Mutation checks: each oracle that matters is shown failing on a known-bad
# change. A mutation is tests/mutations/NAME.patch: header lines, then a
# unified diff against the top of the tree:
#
#   # mutation: what the change breaks, in one line
#   # tier: the command that must now fail, run from the top of the mutated tree
#   # build: yes (the diff changes code compiled into loom) or no
#
#   tests/mutations/run.sh [--slurm VERSION] [--keep] [NAME...]
#
# Each mutation gets a copy of the tree (tracked and untracked files, not the
# build trees) under $LOOM_MUTATION_DIR (default /tmp/loom-mutations/NAME),
# the diff applied there. With "build: yes" loom is built in the copy
# (ccache makes that minutes); otherwise the tier runs on the unmutated build
# tree. $LOOM_BUILDDIR names the build tree the tier is given. A mutation
# "passes" when its tier exits non-zero: the oracle saw the break. Not part of
# CI (a rebuild per mutation); run it after changing an oracle. The last line
# reads "N passed, N failed" (passed: turned red as it must).
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
here=$top/tests/mutations
slurm=${LOOM_SLURM:-}
keep=0
names=()
while [ $# -gt 0 ]; do
	case $1 in
	--slurm) slurm=${2:?--slurm needs a version}; shift 2 ;;
	--keep) keep=1; shift ;;
	-h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "mutations: unknown option '$1' (see --help)" >&2; exit 2 ;;
	*) names+=("${1%.patch}"); shift ;;
	esac
done
[ -n "$slurm" ] || slurm=$("$top/scripts/slurm.sh" default)
base_build=${LOOM_BUILDDIR:-$("$top/scripts/slurm.sh" builddir "$slurm")}
root=${LOOM_MUTATION_DIR:-/tmp/loom-mutations}
if [ ${#names[@]} = 0 ]; then
	for f in "$here"/*.patch; do [ -f "$f" ] && names+=("$(basename "$f" .patch)"); done
fi
[ ${#names[@]} -gt 0 ] || { echo "mutations: none found in $here"; echo "0 passed, 1 failed"; exit 1; }

# header FILE KEY: the value of '# KEY: ...' in the patch's header.
header() { sed -n "s/^# $2: //p" "$1" | head -1; }

# mutate NAME: 0 when the tier went red, 1 when it stayed green or could not run.
mutate() {
	local name=$1 patch=$here/$1.patch dir=$root/$1 what tier build builddir rc
	[ -f "$patch" ] || { echo "mutation $name: no such file $patch"; return 1; }
	what=$(header "$patch" mutation) tier=$(header "$patch" tier) build=$(header "$patch" build)
	build=${build%% *}
	[ -n "$what" ] && [ -n "$tier" ] && [[ $build =~ ^(yes|no)$ ]] ||
		{ echo "mutation $name: the header needs '# mutation:', '# tier:' and '# build: yes|no'"; return 1; }
	rm -rf "$dir"
	mkdir -p "$dir/tree"
	(cd "$top" && git ls-files -co --exclude-standard -z | cpio -0 -pdm --quiet "$dir/tree") ||
		{ echo "mutation $name: could not copy the tree"; return 1; }
	(cd "$dir/tree" && patch -p1 --quiet --no-backup-if-mismatch <"$patch") >"$dir/patch.log" 2>&1 ||
		{ echo "mutation $name: the diff does not apply: $(head -3 "$dir/patch.log" | tr '\n' ' ')"; return 1; }
	builddir=$base_build
	if [ "$build" = yes ]; then
		builddir=$dir/tree/_build
		LOOM_BUILDDIR=$builddir "$dir/tree/scripts/build.sh" --slurm "$slurm" >"$dir/build.log" 2>&1 ||
			{ echo "mutation $name: the mutated tree does not build (log: $dir/build.log)"; return 1; }
	fi
	[ -x "$builddir/tools/loom" ] || { echo "mutation $name: $builddir is not built"; return 1; }
	echo "mutation $name: $what"
	echo "  tier: $tier"
	(cd "$dir/tree" && LOOM_BUILDDIR=$builddir LOOM_SLURM=$slurm bash -c "$tier") >"$dir/tier.log" 2>&1
	rc=$?
	if [ $rc = 0 ]; then
		echo "  STILL GREEN: the tier passed on the broken tree (log: $dir/tier.log)"
		tail -5 "$dir/tier.log" | sed 's/^/    /'
		return 1
	fi
	echo "  red, as it must be (exit $rc): $( { grep -m1 -E 'FAIL:' "$dir/tier.log" || grep -m1 -iE 'error|fail' "$dir/tier.log"; } | head -c 300)"
	[ $keep = 1 ] || rm -rf "$dir/tree"
	return 0
}

passed=0
failed=0
for n in "${names[@]}"; do
	if mutate "$n"; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
done
echo "$passed passed, $failed failed"
[ $failed = 0 ]
