#!/bin/bash
# job_test time inside the real slurmctld: select/topo placing (engine + cons_tres
# allocating inside the chosen set) against select/topo passing every job to
# cons_tres (placement=cons_tres), on the 16-node test cluster, same job stream.
# Times come from select/topo's own per-job log line (steady clock around
# select_p_job_test's RUN_NOW path). Prints mean and p50 per mode and the ratio.
#   bench/slurmctld_job_test.sh [--slurm VERSION] [ROUNDS]     (default 3 rounds of 14 jobs per mode)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
if [ "${1:-}" = --slurm ]; then export LOOM_SLURM=$2; shift 2; fi
export LOOM_SLURM=${LOOM_SLURM:-$("$top/scripts/slurm.sh" default)}
export LOOM_BUILDDIR=${LOOM_BUILDDIR:-$("$top/scripts/slurm.sh" builddir "$LOOM_SLURM")}
PATH="$("$top/scripts/slurm.sh" prefix "$LOOM_SLURM")/bin:$PATH"
echo "job_test bench: Slurm $LOOM_SLURM, build tree $LOOM_BUILDDIR"
rounds=${1:-3}
dir=${LOOM_BENCH_CLUSTER:-/tmp/loom-bench-cluster}

stream() {
	local j i
	for i in 2 2 4 1 3 4 8 8; do
		j=$(sbatch --parsable -N1 --gres=gpu:$i -o /dev/null --wrap 'sleep 300')
	done
	sbatch --parsable -N4 --gres=gpu:8 -o /dev/null --wrap 'sleep 300' >/dev/null
	sbatch --parsable -N2 --gres=gpu:8 -o /dev/null --wrap 'sleep 300' >/dev/null
	for i in 1 2 3 4; do sbatch --parsable -N1 --gres=gpu:1 -o /dev/null --wrap 'sleep 300' >/dev/null; done
	: "$j"
	# wait until nothing is pending or 20 s
	for i in $(seq 1 40); do
		[ -z "$(squeue -h -t PD -o %i)" ] && break
		sleep 0.5
	done
	scancel --user="$(id -un)" >/dev/null 2>&1 || true
	sleep 1
}

run_mode() { # mode -> prints job_test times (us), one per line
	local mode=$1
	for _ in $(seq 1 "$rounds"); do
		"$top/tests/cluster/cluster.sh" up --dir "$dir" --nodes 16 --gpus-per-node 8 --placement "$mode" >/dev/null 2>&1
		SLURM_CONF=$dir/etc/slurm.conf stream
		sed -n 's/.*select\/topo: JobId=[0-9]* placed .*job_test \([0-9]*\) us.*/\1/p' "$dir/log/slurmctld.log"
		"$top/tests/cluster/cluster.sh" down --dir "$dir" >/dev/null 2>&1
	done
}

stats() { sort -n | awk '{a[NR]=$1; s+=$1} END {if (NR==0) {print "n=0"; exit 1} printf "n=%d mean=%.0f p50=%d max=%d", NR, s/NR, a[int((NR+1)/2)], a[NR]}'; }

topo=$(run_mode topo)
cons=$(run_mode cons_tres)
ts=$(echo "$topo" | stats)
cs=$(echo "$cons" | stats)
echo "job_test, select/topo placing:       $ts us"
echo "job_test, cons_tres (pass-through):  $cs us"
tm=$(echo "$ts" | sed 's/.*mean=\([0-9]*\).*/\1/'); cm=$(echo "$cs" | sed 's/.*mean=\([0-9]*\).*/\1/')
awk -v t="$tm" -v c="$cm" 'BEGIN {printf "ratio select/topo / cons_tres (mean): %.2f\n", t / c}'
tp=$(echo "$ts" | sed 's/.*p50=\([0-9]*\).*/\1/'); cp=$(echo "$cs" | sed 's/.*p50=\([0-9]*\).*/\1/')
awk -v t="$tp" -v c="$cp" 'BEGIN {printf "ratio select/topo / cons_tres (p50): %.2f\n", t / c}'
