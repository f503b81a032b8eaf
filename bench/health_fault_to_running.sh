#!/bin/bash
# Fault to drain, and fault to job running again, on the real test cluster:
# loom with a spare pool, loom without one, and Slurm's own path, same fault.
#
#   bench/health_fault_to_running.sh [--runs N] [--slurmd-timeout S] [--busy SECONDS]
#                                    [--mode spares|loom|slurm|all] [--slurm VERSION]
#
# A 3-node x 8-GPU job with --requeue runs on an 8-node cluster (two leaves of
# four). At t0 its third node gets a GPU fault:
#   spares  loom-topo.conf spares=leaf:1 (n4 and n8 are kept for
#           replacements): the job's rank on that node hits an uncorrectable
#           ECC error (the NCCL line naming the node appears in the job's
#           output and the job exits); jobcomp/health drains the node and
#           restarts the job on its two healthy nodes plus the leaf's spare.
#   loom    the same, without a spare pool: jobcomp/health drains the node
#           and requeues the job, which Slurm starts wherever 3 nodes are free.
#   slurm   plain Slurm (no loom plugin: cons_tres, jobcomp/none) only learns
#           of a broken node when it stops answering: the node's slurmd is
#           stopped (SIGSTOP) at t0; slurmctld marks it DOWN after
#           SlurmdTimeout and requeues the job.
# With --busy S, every other node a long job may use is given a 1-node job
# of S seconds as soon as the gang runs (a full cluster, as on a production
# machine): without a spare the requeued gang then waits for one of them to end.
# All clusters have the same slurm.conf otherwise (SlurmdTimeout, the
# scheduler intervals, AuthInfo cred_expire=5: Slurm holds a requeued batch
# job for cred_expire+1 s before it may start again, on every path).
# Measured per run: t_drain (node DRAIN or DOWN in slurmctld), t_running (the
# requeued job's script has started again on healthy nodes: the first line it
# writes, with its timestamp). Clocks: one host. Polling every 0.1 s.
# Prints every run, then the medians and the ratios against the spares path.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
[ -z "${LOOM_BUILDDIR:-}" ] || LOOM_BUILDDIR_SET=1
runs=5
slurmd_timeout=30
busy=0
mode=all
slurm=
dir=${LOOM_BENCH_CLUSTER:-/tmp/loom-bench-fault}
while [ $# -gt 0 ]; do
	case $1 in
	--runs) runs=$2; shift 2 ;;
	--slurmd-timeout) slurmd_timeout=$2; shift 2 ;;
	--busy) busy=$2; shift 2 ;;
	--mode) mode=$2; shift 2 ;;
	--slurm) slurm=$2; shift 2 ;;
	*) echo "usage: $0 [--runs N] [--slurmd-timeout S] [--busy SECONDS] [--mode spares|loom|slurm|all] [--slurm VERSION]" >&2; exit 2 ;;
	esac
done
case $runs in ''|*[!0-9]*|0) echo "$0: --runs '$runs': expected a positive number" >&2; exit 2 ;; esac
case $slurmd_timeout in ''|*[!0-9]*) echo "$0: --slurmd-timeout '$slurmd_timeout': expected seconds" >&2; exit 2 ;; esac
case $busy in ''|*[!0-9]*) echo "$0: --busy '$busy': expected seconds" >&2; exit 2 ;; esac
case $mode in spares|loom|slurm|all) ;; *) echo "$0: --mode '$mode': expected spares, loom, slurm or all" >&2; exit 2 ;; esac
cluster_nodes=8
[ -n "$slurm" ] || slurm=$("$top/scripts/slurm.sh" default)
prefix=$("$top/scripts/slurm.sh" prefix "$slurm") || exit 2
export PATH="$prefix/bin:$PATH"
[ -n "${LOOM_BUILDDIR_SET:-}" ] || LOOM_BUILDDIR=$("$top/scripts/slurm.sh" builddir "$slurm")
case $LOOM_BUILDDIR in /*) ;; *) LOOM_BUILDDIR=$top/$LOOM_BUILDDIR ;; esac
export LOOM_BUILDDIR

cluster() { "$top/tests/cluster/cluster.sh" "$@" --dir "$dir"; }
trap 'cluster down >/dev/null 2>&1 || true' EXIT
now() { date +%s.%N; }
die() { echo "bench: error: $*" >&2; exit 1; }

job_field() { scontrol show job -o "$1" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$2=//p" | head -1; }
node_state() { scontrol show node -o "$1" 2>/dev/null | tr ' ' '\n' | sed -n 's/^State=//p'; }

wait_idle() { # all nodes idle, in no reservation (Slurm clears the flag within 5 s), no job left
	local deadline=$(( $(date +%s) + 120 ))
	until [ "$(sinfo -h -N -o '%N %T' | sort -u | awk '$2 == "idle"' | wc -l)" = $cluster_nodes ] && [ -z "$(squeue -h -o %i)" ]; do
		[ "$(date +%s)" -lt "$deadline" ] || die "cluster not idle again: $(sinfo -h -N -o '%N %T' | tr '\n' ' '); jobs: $(squeue -h -o '%i %T %R' | tr '\n' ' ')"
		sleep 0.5
	done
}

# One run: prints "t_drain t_running" (seconds after the fault).
# The job: prints its start, then fails as a rank on a GPU with an ECC
# error does once fault.<its third node> appears in DIR.
write_job() { # DIR
	cat >"$1/job.sh" <<'JOB'
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
	chmod +x "$1/job.sh"
}

# The busy mode: every idle node (the spare pool's excepted) gets a job of its
# own. Sets one_run's fillers.
fill_idle_nodes() { # MODE
	local m=$1 n deadline
	if [ "$busy" -gt 0 ]; then
		for n in $(sinfo -h -N -t idle -o %N | sort -u); do
			[ "$m" = spares ] && case $n in n4|n8) continue ;; esac
			fillers+=("$(sbatch --parsable -N1 -w "$n" --exclusive -o /dev/null --wrap "sleep $busy")")
		done
		deadline=$(( $(date +%s) + 30 ))
		until [ -z "$(squeue -h -t pending -o %i)" ]; do
			[ "$(date +%s)" -lt "$deadline" ] || die "the busy jobs did not start"
			sleep 0.2
		done
	fi
}

# Fault to the culprit drained (t_drain) and to the job started again
# elsewhere (t_running), in seconds: one_run's variables, from its t0.
wait_recovery() { # MODE RUN
	local m=$1 r=$2 st line deadline
	deadline=$(( $(date +%s) + 10 * slurmd_timeout + 120 + busy ))
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
}

# The culprit's state after the run: slurmd resumed, or loom's drain reason
# (and, with spares, the job in its spare reservation).
check_recovery() { # MODE RUN
	local m=$1 r=$2
	if [ "$m" = slurm ]; then
		kill -CONT "$pid"
	else
		case $(sinfo -h -n "$culprit" -o %E) in "loom: "*) ;; *) die "run $r: $culprit reason '$(sinfo -h -n "$culprit" -o %E)'" ;; esac
		if [ "$m" = spares ]; then
			[ "$(job_field "$job" Reservation)" = "loom_spare_${job}_1" ] || die "run $r: job $job not in its spare reservation"
		fi
	fi
}

# After a run: the job and the fillers gone, the culprit resumed, the cluster idle.
clean_up() {
	local deadline
	scancel "$job" ${fillers[@]+"${fillers[@]}"}
	deadline=$(( $(date +%s) + 60 ))
	until case $(job_field "$job" JobState) in CANCELLED|COMPLETED|FAILED|"") true ;; *) false ;; esac; do
		[ "$(date +%s)" -lt "$deadline" ] || die "job $job not ended after scancel"
		sleep 0.3
	done
	scontrol update nodename="$culprit" state=resume 2>/dev/null || true
	# The spare reservation ends a minute after its job (PURGE_COMP): not waited for.
	scontrol delete reservation="loom_spare_${job}_1" 2>/dev/null || true
	wait_idle
}

one_run() { # MODE RUN
	local m=$1 r=$2 out job nodes culprit pid t0 t_drain= t_running= deadline fillers=()
	out=$dir/scratch/run$r
	mkdir -p "$out"
	chmod 1777 "$dir/scratch"
	write_job "$out"
	job=$(FAULT_DIR=$out sbatch --parsable -N3 --gres=gpu:8 --requeue --export=ALL -o "$out/job.out" \
		--open-mode=append "$out/job.sh") || die "sbatch refused the job"
	deadline=$(( $(date +%s) + 60 ))
	until grep -q '^start .* restart=0 ' "$out/job.out" 2>/dev/null; do
		[ "$(date +%s)" -lt "$deadline" ] || die "job $job did not start: $(job_field "$job" JobState)"
		sleep 0.2
	done
	nodes=$(job_field "$job" NodeList)
	culprit=$(scontrol show hostnames "$nodes" | sed -n 3p)
	fill_idle_nodes "$m"
	sleep 1
	t0=$(now)
	if [ "$m" = slurm ]; then
		pid=$(cat "$dir/run/slurmd-$culprit.pid")
		kill -STOP "$pid"
	else
		touch "$out/fault.$culprit"
	fi
	wait_recovery "$m" "$r"
	check_recovery "$m" "$r"
	clean_up
	echo "$t_drain $t_running"
}

median() { sort -n | awk '{a[NR]=$1} END {if (NR % 2) printf "%.2f", a[(NR+1)/2]; else printf "%.2f", (a[NR/2]+a[NR/2+1])/2}'; }

run_mode() { # MODE -> "median_drain median_running"
	local m=$1 r res drains= runnings=
	local args=(--slurm "$slurm" --builddir "$LOOM_BUILDDIR" --nodes "$cluster_nodes" --gpus-per-node 8 --conf-line "SlurmdTimeout=$slurmd_timeout"
		--conf-line "JobCompParams=max_drains=1000")
	[ "$m" = slurm ] && args+=(--loom none)
	[ "$m" = spares ] && args+=(--topo-line spares=leaf:1)
	cluster up "${args[@]}" >/dev/null 2>"$dir.up.log" || { cat "$dir.up.log" >&2; die "cluster up failed"; }
	export SLURM_CONF=$dir/etc/slurm.conf
	if [ "$m" = slurm ]; then
		grep -q '^JobCompType=jobcomp/none' "$SLURM_CONF" || die "the slurm cluster has a loom jobcomp"
		grep -q '^SelectType=select/cons_tres' "$SLURM_CONF" || die "the slurm cluster is not on cons_tres"
	else
		grep -q '^JobCompType=jobcomp/health' "$SLURM_CONF" || die "jobcomp/health is not loaded (build it first)"
	fi
	for r in $(seq 1 "$runs"); do
		res=$(one_run "$m" "$r") || die "run $r ($m) failed"
		printf '  %-6s run %d: drain %6.2f s  running again %6.2f s\n' "$m" "$r" "${res% *}" "${res#* }" >&2
		drains+="${res% *}"$'\n'
		runnings+="${res#* }"$'\n'
	done
	cluster down >/dev/null 2>&1
	echo "$(printf '%s' "$drains" | median) $(printf '%s' "$runnings" | median)"
}

echo "fault to drain / to running again (Slurm $slurm): 3x8-GPU job on $cluster_nodes nodes, $runs runs per path, SlurmdTimeout=$slurmd_timeout, busy=${busy}s" >&2
declare -A res
for m in spares loom slurm; do
	[ "$mode" = all ] || [ "$mode" = "$m" ] || continue
	res[$m]=$(run_mode "$m") || exit 1
done
label() { case $1 in spares) echo "loom, spare pool (spares=leaf:1)" ;; loom) echo "loom, no spare pool" ;; slurm) echo "slurm (SlurmdTimeout=$slurmd_timeout, down)" ;; esac; }
for m in spares loom slurm; do
	[ -n "${res[$m]:-}" ] || continue
	printf '%-38s median drain %6.2f s, running again %6.2f s\n' "$(label "$m")" "${res[$m]% *}" "${res[$m]#* }"
done
if [ -n "${res[spares]:-}" ]; then
	for m in loom slurm; do
		[ -n "${res[$m]:-}" ] || continue
		awk -v a="${res[$m]}" -v b="${res[spares]}" -v m="$m" 'BEGIN {split(a, x, " "); split(b, y, " ");
			printf "ratio %s / spares: drain %.1fx, running again %.1fx\n", m, x[1] / y[1], x[2] / y[2]}'
	done
fi
fl=${res[spares]:-${res[loom]:-}}
if [ -n "$fl" ]; then
	awk -v d="${fl% *}" -v r="${fl#* }" 'BEGIN {exit !(d <= 5 && r <= 30)}' ||
		{ echo "FLOORS NOT MET (drain under 5 s, running again under 30 s)"; exit 1; }
	echo "floors met (drain under 5 s, running again under 30 s)"
fi
