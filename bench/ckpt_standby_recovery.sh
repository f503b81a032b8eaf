#!/bin/bash
# Fault to the first training step after the restore, on the real test
# cluster, for every recovery path, the same job and the same fault:
#
#   bench/ckpt_standby_recovery.sh [--runs N] [--busy SECONDS] [--slurm VERSION]
#                                  [--mode standby|spares|loom|slurm|expedite|all]
#
# The job: 3 nodes x 2 ranks (srun per rank, tests/ckpt/train_ranks.py, each
# rank with state of its own), a step every 0.1 s, a checkpoint every 20
# steps through the SDK, --requeue. At t0, once it has committed, rank 5 (on
# its third node) hits a GPU fault (NCCL's uncorrectable-ECC line naming the
# node, then exit 1); rank 0 prints when it completes the first step of each
# start (TRAIN_FIRST_STEP_LINE): that line, after the fault, is the figure.
#   standby   --ckpt --ckpt-standby=1 (4 nodes): the keeper replaces the node
#             by the standby inside the allocation; no requeue.
#   spares    --ckpt, loom-topo.conf spares=leaf:1: jobcomp/health drains the
#             node and restarts the job on its healthy nodes plus a spare.
#   loom      --ckpt without a pool: jobcomp/health drains and requeues.
#   slurm     no loom plugin, the SDK alone (LOOM_CKPT_DIR set by the script):
#             Slurm learns of a broken node only when it stops answering, so
#             the fault is the node's slurmd stopped (SIGSTOP); SlurmdTimeout=30.
#   expedite  as slurm, with --requeue=expedite and SlurmctldParameters=
#             enable_expedited_requeue (Slurm 25.11 and later).
# With --busy S every other node is given a 1-node job of S seconds once the
# job runs: a full cluster. One host, one clock; polling every 0.1 s. Prints
# every run, then the medians and the ratios to the standby path.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
runs=3 busy=0 mode=all slurm=
dir=${LOOM_BENCH_CLUSTER:-/tmp/loom-bench-standby}
while [ $# -gt 0 ]; do
	case $1 in
	--runs) runs=$2; shift 2 ;;
	--busy) busy=$2; shift 2 ;;
	--mode) mode=$2; shift 2 ;;
	--slurm) slurm=$2; shift 2 ;;
	*) echo "usage: $0 [--runs N] [--busy SECONDS] [--slurm VERSION] [--mode standby|spares|loom|slurm|expedite|all]" >&2; exit 2 ;;
	esac
done
case $runs in ''|*[!0-9]*|0) echo "$0: --runs '$runs': expected a positive number" >&2; exit 2 ;; esac
case $busy in ''|*[!0-9]*) echo "$0: --busy '$busy': expected seconds" >&2; exit 2 ;; esac
case $mode in standby|spares|loom|slurm|expedite|all) ;; *) echo "$0: --mode '$mode': unknown" >&2; exit 2 ;; esac
[ -n "$slurm" ] || slurm=$("$top/scripts/slurm.sh" default)
prefix=$("$top/scripts/slurm.sh" prefix "$slurm") || exit 2
export PATH="$prefix/bin:$PATH"
build=${LOOM_BUILDDIR:-$("$top/scripts/slurm.sh" builddir "$slurm")}
case $build in /*) ;; *) build=$top/$build ;; esac
nodes=8
cluster() { "$top/tests/cluster/cluster.sh" "$@" --dir "$dir"; }
trap 'cluster down >/dev/null 2>&1 || true' EXIT
now() { date +%s.%N; }
die() { echo "bench: error: $*" >&2; exit 1; }
since() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.2f", a - b}'; }

up() { # MODE
	local args=(up --nodes "$nodes" --gpus-per-node 2 --builddir "$build" --slurm "$slurm" --conf-line SlurmdTimeout=30)
	case $1 in
	standby|loom) args+=(--select topo) ;;
	spares) args+=(--select topo --topo-line spares=leaf:1) ;;
	slurm) args+=(--loom none) ;;
	expedite) args+=(--loom none --conf-line SlurmctldParameters=enable_expedited_requeue) ;;
	esac
	case $1 in standby|spares|loom)
		args+=(--plugstack-args "dir=$dir/scratch/ckpt/%j roots=$dir/scratch/ckpt interval_min=2s poll=1s \
standby_dir=$dir/run/loom-ckpt scontrol=$prefix/bin/scontrol loom=$build/tools/loom") ;;
	esac
	cluster "${args[@]}" >/dev/null || die "cluster up ($1) failed"
	eval "$(cluster env)"
	mkdir -p "$dir/scratch/ckpt"
	chmod 1777 "$dir/scratch" "$dir/scratch/ckpt"
}

submit() { # MODE OUT
	local m=$1 out=$2
	local args=(-N3 --ntasks-per-node=2 --requeue -o "$out/job.out" --open-mode=append --export=ALL)
	local env="TRAIN_BARRIER_DIR=$out/barrier.\$SLURM_JOB_ID"
	case $m in
	standby) args+=(--ckpt --ckpt-standby=1) ;;
	spares|loom) args+=(--ckpt) ;;
	slurm) env="$env LOOM_CKPT_DIR=$out/ckpt" ;;
	expedite) args=("${args[@]/--requeue/--requeue=expedite}"); env="$env LOOM_CKPT_DIR=$out/ckpt" ;;
	esac
	TRAIN_COMM=none TRAIN_STEPS=1000000 TRAIN_STEP_SLEEP=0.1 TRAIN_EVERY=20 TRAIN_FIRST_STEP_LINE=1 \
		TRAIN_FAULT_FILE=$out/fault TRAIN_FAULT_RANK=5 LOOM_CKPT_COMMIT_TIMEOUT=60 \
		sbatch --parsable "${args[@]}" --wrap "export $env; exec srun --kill-on-bad-exit=1 python3 $top/tests/ckpt/train_ranks.py"
}

committed() { # MODE OUT JOB: a checkpoint is committed
	case $1 in slurm|expedite) [ -e "$2/ckpt/latest" ] ;; *) [ -e "$dir/scratch/ckpt/$3/latest" ] ;; esac
}

fill() { # every idle node gets a job of its own (the spares' excepted)
	local n
	[ "$busy" -gt 0 ] || return 0
	for n in $(sinfo -h -N -t idle -o %N | sort -u); do
		[ "$1" = spares ] && case $n in n4|n8) continue ;; esac
		fillers+=("$(sbatch --parsable -N1 -w "$n" --exclusive -o /dev/null --wrap "sleep $busy")")
	done
}

one_run() { # MODE RUN -> seconds from the fault to the first step after the restore
	local m=$1 r=$2 out job third pid t0 line deadline fillers=()
	out=$dir/scratch/$m.$r
	mkdir -p "$out"
	chmod 1777 "$out"
	job=$(submit "$m" "$out") || die "sbatch refused the $m job"
	deadline=$(( $(date +%s) + 120 ))
	until committed "$m" "$out" "$job"; do
		[ "$(date +%s)" -lt "$deadline" ] || die "run $r ($m): job $job committed nothing: $(tail -3 "$out/job.out" 2>&1)"
		sleep 0.2
	done
	third=$(scontrol show hostnames "$(scontrol show job "$job" | sed -n 's/^ *NodeList=//p')" | sed -n 3p)
	fill "$m"
	sleep 1
	t0=$(now)
	case $m in
	slurm|expedite) pid=$(cat "$dir/run/slurmd-$third.pid"); kill -STOP "$pid" ;;
	*) touch "$out/fault" ;;
	esac
	deadline=$(( $(date +%s) + 400 + busy ))
	until line=$(grep -m1 -E '^first step [0-9]+ at .* (restart=[1-9]|generation=[1-9])' "$out/job.out" 2>/dev/null); do
		[ "$(date +%s)" -lt "$deadline" ] || die "run $r ($m): job $job never stepped again: $(tail -3 "$out/job.out")"
		sleep 0.1
	done
	[ -z "${pid:-}" ] || kill -CONT "$pid"
	scancel "$job" ${fillers[@]+"${fillers[@]}"}
	deadline=$(( $(date +%s) + 90 ))
	until [ -z "$(squeue -h -o %i)" ]; do
		[ "$(date +%s)" -lt "$deadline" ] || die "jobs left after run $r ($m): $(squeue -h -o '%i %T' | tr '\n' ' ')"
		sleep 0.3
	done
	scontrol update nodename="$third" state=resume 2>/dev/null || true
	until [ "$(sinfo -h -N -t idle -o %N | sort -u | wc -l)" = $nodes ]; do
		[ "$(date +%s)" -lt "$deadline" ] || die "cluster not idle again after run $r ($m): $(sinfo -h -N -o '%N %T' | tr '\n' ' ')"
		sleep 0.5
	done
	echo "    $m run $r: fault at $t0, job $job: $line" >&2
	since "$(echo "$line" | awk '{print $5}')" "$t0"
}

median() { sort -n | awk '{a[NR]=$1} END {if (NR % 2) printf "%.2f", a[(NR+1)/2]; else printf "%.2f", (a[NR/2]+a[NR/2+1])/2}'; }

modes=$mode
if [ "$mode" = all ]; then
	modes="standby spares loom slurm"
	case $slurm in 22.*|23.*|24.*|25.0*) ;; *) modes="$modes expedite" ;; esac
fi
echo "fault to first step after restore, Slurm $slurm, $runs run(s) per path, busy=${busy}s"
declare -A med
for m in $modes; do
	up "$m"
	times=()
	for r in $(seq 1 "$runs"); do
		t=$(one_run "$m" "$r")
		echo "  $m run $r: $t s"
		times+=("$t")
	done
	med[$m]=$(printf '%s\n' "${times[@]}" | median)
	echo "  $m: median ${med[$m]} s (min $(printf '%s\n' "${times[@]}" | sort -n | head -1), max $(printf '%s\n' "${times[@]}" | sort -n | tail -1))"
	cluster down >/dev/null 2>&1 || true
done
echo "| path | fault to first step (median) | ratio to standby |"
echo "|---|---|---|"
for m in $modes; do
	ratio=-
	[ -z "${med[standby]:-}" ] || ratio=$(awk -v a="${med[$m]}" -v b="${med[standby]}" 'BEGIN{printf "%.1f", a / b}')
	echo "| $m | ${med[$m]} s | $ratio |"
done
