#!/bin/bash
# The differential tier: the same generated jobs on a plain cons_tres cluster
# and on a select/topo cluster of the same shape (16 nodes x 8 GPUs, leaves of
# 4 nodes, pods of 8), side by side.
#
#   tests/differential/run.sh [--slurm VERSION] [--builddir DIR] [--sizes "1 3 6"] [--only REGEX]
#
# Each job is a point of a matrix over Slurm's placement options (node counts
# and ranges, --use-min-nodes, -w, -x, --exclusive, --ntasks-per-node,
# --gpus-per-task, --gpus, --mem-per-gpu, --cores-per-socket, --constraint,
# --switches, --contiguous, --spread-job, --distribution, partition LLN,
# node Weight, job arrays, heterogeneous jobs) at several sizes, in several
# cluster states (idle; fragmented by the same background jobs on both; node
# weights set). For every job, on both clusters, what Slurm promises is
# checked: node count (the minimum with --use-min-nodes), required and
# excluded nodes, tasks per node and in all, GPUs per node and in total,
# memory per GPU, cores per socket, the task distribution the job was given,
# whole nodes, features, switches, contiguity, spread, the partition, every
# array task and het component. An option the checker does not know fails the
# case (a broken test, never a silent pass). A job that runs on plain Slurm
# must run under select/topo too (not fail, hang or be refused). Where
# select/topo steps aside (--spread-job, --contiguous, LLN, a --nodelist that
# is the whole job) the nodes must be exactly plain Slurm's; with node
# weights, a job plain Slurm keeps on the light nodes stays there. Which nodes
# the engine picks may differ otherwise: that is the point of loom.
# A case passes only when it was compared (its job ran on both clusters and
# both allocations were checked, from records of its own job only), or when
# the matrix marks it "expect-pending: REASON" and it pended on both. Anything
# else (pending, refused, still running after the wait, no record, a record
# of another job, a cleanup that did not finish) fails, named. The wait for a
# job to leave both queues ends after LOOM_DIFF_WAIT seconds (default 60).
# At the end: how many cases were submitted, compared, expected-pending (with
# the reasons) and failed; the last line reads "N passed, N failed".
# The pieces, sourced here: matrix.sh (the cases, the states' background
# jobs), states.sh (setting a state on both clusters), case.sh (one case:
# submitted, waited for, judged, counted), records.sh (what the job records,
# read back), check_alloc.sh (what Slurm promises, on one allocation record).
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
# shellcheck source=tests/cluster/nap.sh
. "$top/tests/cluster/nap.sh"
# shellcheck source=tests/differential/matrix.sh
. "$here/matrix.sh"
# shellcheck source=tests/differential/states.sh
. "$here/states.sh"
# shellcheck source=tests/differential/records.sh
. "$here/records.sh"
# shellcheck source=tests/differential/check_alloc.sh
. "$here/check_alloc.sh"
# shellcheck source=tests/differential/case.sh
. "$here/case.sh"
slurm=${LOOM_SLURM:-}
builddir=${LOOM_BUILDDIR:-}
sizes=${LOOM_DIFF_SIZES:-"1 3 6"}
wait_s=${LOOM_DIFF_WAIT:-60}
only=
while [ $# -gt 0 ]; do
	case $1 in
	--slurm) slurm=$2; shift 2 ;;
	--builddir) builddir=$2; shift 2 ;;
	--sizes) sizes=$2; shift 2 ;;
	--only) only=$2; shift 2 ;;
	-h|--help) sed -n '2,37p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "differential: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
done
[ -n "$slurm" ] || slurm=$("$top/scripts/slurm.sh" default)
prefix=$("$top/scripts/slurm.sh" prefix "$slurm") || exit 2
[ -n "$builddir" ] || builddir=$("$top/scripts/slurm.sh" builddir "$slurm")
export PATH="$prefix/bin:$PATH" LOOM_SLURM=$slurm
base=/tmp/loom-diff-$slurm
plain_dir=$base-plain
topo_dir=$base-topo
out=$base-out
rm -rf "$out"
mkdir -p "$out"
chmod 1777 "$out"

up() { # DIR SELECT
	"$top/tests/cluster/cluster.sh" up --slurm "$slurm" --dir "$1" --builddir "$builddir" --nodes 16 \
		--gpus-per-node 8 --select "$2" --conf-line "PartitionName=lln Nodes=n[1-16] LLN=YES State=UP MaxTime=INFINITE" \
		>"$1.up.log" 2>&1
}
down() {
	"$top/tests/cluster/cluster.sh" down --dir "$plain_dir" >/dev/null 2>&1
	"$top/tests/cluster/cluster.sh" down --dir "$topo_dir" >/dev/null 2>&1
}
trap down EXIT
echo "differential: Slurm $slurm, cons_tres ($plain_dir) against select/topo ($topo_dir), sizes: $sizes"
up "$plain_dir" cons_tres & p1=$!
up "$topo_dir" topo & p2=$!
wait $p1 || { cat "$plain_dir.up.log"; echo "differential: the cons_tres cluster did not come up"; echo "0 passed, 1 failed"; exit 1; }
wait $p2 || { cat "$topo_dir.up.log"; echo "differential: the select/topo cluster did not come up"; echo "0 passed, 1 failed"; exit 1; }
declare -A dir_=([plain]=$plain_dir [topo]=$topo_dir)
on() { local d=$1; shift; SLURM_CONF=$d/etc/slurm.conf "$@"; }
both() { on "$plain_dir" "$@" && on "$topo_dir" "$@"; }
# The shape cluster.sh gives every node (check_alloc.sh leans on it).
node_cpus=16 cores_per_socket=8

# ------------------------------------------------------------------ run
passed=0
failed=0
submitted=0
compared=0
expected_pending=0
failures=()
expected=()
cur_state=
job_script | sed "s|__OUT__|$out|" >"$out/job.sh"
# (The loop reads the matrix on stdin: a case's commands read none of it.)
while IFS=$'\t' read -r st label args expect; do
	[ -z "$only" ] || [[ $label =~ $only ]] || continue
	run_case "$st" "$label" "$args" "$expect" </dev/null
done < <(matrix)
if [ $failed -gt 0 ]; then
	echo "failed jobs:"
	printf '  %s\n' "${failures[@]}"
	mkdir -p "$base-failed"
	cp -r "$plain_dir/log" "$base-failed/plain-log" 2>/dev/null
	cp -r "$topo_dir/log" "$base-failed/topo-log" 2>/dev/null
	echo "(daemon logs kept in $base-failed)"
fi
echo "differential: $submitted cases submitted, $compared compared (ran on both, allocations checked), $expected_pending expected-pending, $failed failed"
[ ${#expected[@]} -eq 0 ] || printf 'differential: expected pending: %s\n' "${expected[@]}"
if [ $((compared + expected_pending)) -lt "$submitted" ]; then
	echo "differential: $((submitted - compared - expected_pending)) of $submitted submitted cases neither compared nor expected-pending"
	[ $failed -gt 0 ] || failed=1
fi
if [ $compared = 0 ]; then
	echo "differential: no job ran on both clusters: nothing was compared"
	failed=$((failed + 1))
fi
echo "$passed passed, $failed failed"
[ $failed = 0 ]
