#!/bin/bash
# Fault to drain, and fault to job running again, on the real test cluster:
# loom (jobcomp/health) against Slurm's own path for the same fault.
#
#   bench/health_fault_to_running.sh [--runs N] [--slurmd-timeout S] [--mode loom|slurm|both]
#
# A 4-node x 8-GPU job with --requeue runs on a 5-node cluster (one spare).
# At t0 one of its nodes (the third) gets a GPU fault:
#   loom   the job's rank on that node hits an uncorrectable ECC error: the
#          CUDA/NCCL error line naming the node appears in the job's output
#          and the job exits (what a training job does when its GPU dies).
#          jobcomp/health classifies, drains the node, requeues the job.
#   slurm  plain Slurm (no loom plugin loaded: cons_tres, jobcomp/none) only
#          learns of a broken node when it stops answering: the node's slurmd
#          is stopped (SIGSTOP) at t0; slurmctld marks it DOWN after
#          SlurmdTimeout and requeues the job.
# Both clusters have the same slurm.conf otherwise (SlurmdTimeout, the
# scheduler intervals, AuthInfo cred_expire=5: Slurm holds a requeued batch
# job for cred_expire+1 s before it may start again, on both paths).
# Measured per run: t_drain (node DRAIN or DOWN in slurmctld), t_running (the
# requeued job's script has started again on healthy nodes: the first line it
# writes, with its timestamp). Clocks: one host. Polling every 0.1 s.
# Prints every run, then the medians and the ratio slurm / loom.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
export LOOM_BUILDDIR=${LOOM_BUILDDIR:-$top/_build}
runs=5
slurmd_timeout=30
mode=both
dir=${LOOM_BENCH_CLUSTER:-/tmp/loom-bench-fault}
while [ $# -gt 0 ]; do
	case $1 in
	--runs) runs=$2; shift 2 ;;
	--slurmd-timeout) slurmd_timeout=$2; shift 2 ;;
	--mode) mode=$2; shift 2 ;;
	*) echo "usage: $0 [--runs N] [--slurmd-timeout S] [--mode loom|slurm|both]" >&2; exit 2 ;;
	esac
done
case $runs in ''|*[!0-9]*|0) echo "$0: --runs '$runs': expected a positive number" >&2; exit 2 ;; esac
case $slurmd_timeout in ''|*[!0-9]*) echo "$0: --slurmd-timeout '$slurmd_timeout': expected seconds" >&2; exit 2 ;; esac
case $mode in loom|slurm|both) ;; *) echo "$0: --mode '$mode': expected loom, slurm or both" >&2; exit 2 ;; esac

cluster() { "$top/tests/cluster/cluster.sh" "$@" --dir "$dir"; }
trap 'cluster down >/dev/null 2>&1 || true' EXIT
now() { date +%s.%N; }
die() { echo "bench: error: $*" >&2; exit 1; }

job_field() { scontrol show job -o "$1" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$2=//p" | head -1; }
node_state() { scontrol show node -o "$1" 2>/dev/null | tr ' ' '\n' | sed -n 's/^State=//p'; }

wait_idle() { # all nodes idle, no job left
	local deadline=$(( $(date +%s) + 120 ))
	until [ "$(sinfo -h -N -t idle -o %N | sort -u | wc -l)" = 5 ] && [ -z "$(squeue -h -o %i)" ]; do
		[ "$(date +%s)" -lt "$deadline" ] || die "cluster not idle again: $(sinfo -h -N -o '%N %T' | tr '\n' ' ')"
		sleep 0.5
	done
}

# One run: prints "t_drain t_running" (seconds after the fault).
one_run() { # MODE RUN
	local m=$1 r=$2 out job nodes culprit pid t0 t_drain= t_running= st line deadline
	out=$dir/scratch/run$r
	mkdir -p "$out"
	chmod 1777 "$dir/scratch"
	cat >"$out/job.sh" <<'JOB'
#!/bin/bash
# Started (again): the line the benchmark times.
echo "start $(date +%s.%N) restart=${SLURM_RESTART_COUNT:-0} nodes=$SLURM_JOB_NODELIST"
third=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | sed -n 3p)
while :; do
	if [ -e "$FAULT_DIR/fault.$third" ]; then
		# The rank on the faulty node: what NCCL prints when CUDA fails under it.
		echo "$third:4242:4290 [2] NCCL WARN Cuda failure 'uncorrectable ECC error encountered'"
		exit 1
	fi
	sleep 0.1
done
JOB
	chmod +x "$out/job.sh"
	job=$(FAULT_DIR=$out sbatch --parsable -N4 --gres=gpu:8 --requeue --export=ALL -o "$out/job.out" \
		--open-mode=append "$out/job.sh") || die "sbatch refused the job"
	deadline=$(( $(date +%s) + 60 ))
	until grep -q '^start .* restart=0 ' "$out/job.out" 2>/dev/null; do
		[ "$(date +%s)" -lt "$deadline" ] || die "job $job did not start: $(job_field "$job" JobState)"
		sleep 0.2
	done
	nodes=$(job_field "$job" NodeList)
	culprit=$(scontrol show hostnames "$nodes" | sed -n 3p)
	sleep 1
	t0=$(now)
	if [ "$m" = loom ]; then
		touch "$out/fault.$culprit"
	else
		pid=$(cat "$dir/run/slurmd-$culprit.pid")
		kill -STOP "$pid"
	fi
	deadline=$(( $(date +%s) + 10 * slurmd_timeout + 120 ))
	while [ -z "$t_running" ]; do
		if [ -z "$t_drain" ]; then
			st=$(node_state "$culprit")
			case $st in *DRAIN*|*DOWN*) t_drain=$(awk -v a="$(now)" -v b="$t0" 'BEGIN{printf "%.2f", a - b}') ;; esac
		fi
		line=$(grep -m1 '^start .* restart=[1-9]' "$out/job.out" 2>/dev/null || true)
		if [ -n "$line" ]; then
			if scontrol show hostnames "${line##*nodes=}" | grep -x "$culprit" >/dev/null; then
				die "run $r: job $job restarted on the faulty node $culprit"
			fi
			t_running=$(awk -v a="$(echo "$line" | cut -d' ' -f2)" -v b="$t0" 'BEGIN{printf "%.2f", a - b}')
		fi
		[ "$(date +%s)" -lt "$deadline" ] || die "run $r ($m): job $job not running again (state $(job_field "$job" JobState), node $culprit $(node_state "$culprit"))"
		sleep 0.1
	done
	[ -n "$t_drain" ] || die "run $r ($m): job running again but $culprit was never seen drained or down"
	if [ "$m" = loom ]; then
		case $(sinfo -h -n "$culprit" -o %E) in "loom: "*) ;; *) die "run $r: $culprit reason '$(sinfo -h -n "$culprit" -o %E)'" ;; esac
	else
		kill -CONT "$pid"
	fi
	scancel "$job"
	deadline=$(( $(date +%s) + 60 ))
	until case $(job_field "$job" JobState) in CANCELLED|COMPLETED|FAILED|"") true ;; *) false ;; esac; do
		[ "$(date +%s)" -lt "$deadline" ] || die "job $job not ended after scancel"
		sleep 0.3
	done
	scontrol update nodename="$culprit" state=resume 2>/dev/null || true
	wait_idle
	echo "$t_drain $t_running"
}

median() { sort -n | awk '{a[NR]=$1} END {if (NR % 2) printf "%.2f", a[(NR+1)/2]; else printf "%.2f", (a[NR/2]+a[NR/2+1])/2}'; }

run_mode() { # MODE -> "median_drain median_running"
	local m=$1 r res drains= runnings=
	local args=(--nodes 5 --gpus-per-node 8 --conf-line "SlurmdTimeout=$slurmd_timeout"
		--conf-line "JobCompParams=max_drains=1000")
	[ "$m" = slurm ] && args+=(--loom none)
	cluster up "${args[@]}" >/dev/null 2>"$dir.up.log" || { cat "$dir.up.log" >&2; die "cluster up failed"; }
	export SLURM_CONF=$dir/etc/slurm.conf
	if [ "$m" = slurm ]; then
		grep -q '^JobCompType=jobcomp/none' "$SLURM_CONF" || die "the slurm cluster has a loom jobcomp"
		grep -q '^SelectType=select/cons_tres' "$SLURM_CONF" || die "the slurm cluster is not on cons_tres"
	else
		grep -q '^JobCompType=jobcomp/health' "$SLURM_CONF" || die "jobcomp/health is not loaded (build it first)"
	fi
	for r in $(seq 1 "$runs"); do
		res=$(one_run "$m" "$r")
		printf '  %-5s run %d: drain %6.2f s  running again %6.2f s\n' "$m" "$r" ${res% *} ${res#* } >&2
		drains+="${res% *}"$'\n'
		runnings+="${res#* }"$'\n'
	done
	cluster down >/dev/null 2>&1
	echo "$(printf '%s' "$drains" | median) $(printf '%s' "$runnings" | median)"
}

echo "fault to drain / to running again: 4x8-GPU job on 5 nodes, $runs runs per path, SlurmdTimeout=$slurmd_timeout" >&2
loom_res= slurm_res=
[ "$mode" = slurm ] || loom_res=$(run_mode loom)
[ "$mode" = loom ] || slurm_res=$(run_mode slurm)
[ -z "$loom_res" ] || printf 'loom  (jobcomp/health):         median drain %6.2f s, running again %6.2f s   (floors: 5 s, 30 s)\n' ${loom_res% *} ${loom_res#* }
[ -z "$slurm_res" ] || printf 'slurm (SlurmdTimeout=%-3s, down): median drain %6.2f s, running again %6.2f s\n' "$slurmd_timeout" ${slurm_res% *} ${slurm_res#* }
if [ -n "$loom_res" ] && [ -n "$slurm_res" ]; then
	awk -v ld="${loom_res% *}" -v lr="${loom_res#* }" -v sd="${slurm_res% *}" -v sr="${slurm_res#* }" \
		'BEGIN {printf "ratio slurm / loom: drain %.1fx, running again %.1fx\n", sd / ld, sr / lr}'
fi
if [ -n "$loom_res" ]; then
	awk -v d="${loom_res% *}" -v r="${loom_res#* }" 'BEGIN {exit !(d <= 5 && r <= 30)}' ||
		{ echo "FLOORS NOT MET"; exit 1; }
	echo "floors met"
fi
