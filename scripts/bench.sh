#!/bin/bash
# Run loom's benchmarks, each against its baseline in the same run, and print
# their reports. Needs root for the two that run the real Slurm test cluster.
#
#   scripts/bench.sh [NAME...]
#
# NAME: topo place ckpt health-check health-predictor job-test backfill fault standby sim spares-sim standby-sim rank-order comm-sim tiers-sim tiers-search load-search scale
# (default: all but scale, which brings up 1,250 real slurmd for half an hour).
#   topo              topology load time and memory at 1k/10k/100k GPUs
#   place             placement engine per decision vs Slurm tree's greedy choice
#   ckpt              async checkpoint stall vs a synchronous save; writer vs a plain write
#   health-check      every collector on a recorded 8xH100 node
#   health-predictor  predictor lead time and false alarms on replayed sequences
#   job-test          select/topo job_test time inside slurmctld vs cons_tres alone
#   backfill          backfill's plans vs starts: cons_tres vs select/topo planning with cons_tres or the engine
#   fault             fault to drain / to job running again: loom vs Slurm's SlurmdTimeout path
#   standby           fault to the first training step after the restore: standbys in the
#                     allocation vs spares, loom's requeue, Slurm's own and expedited requeue
#                     (bench/results/standby-recovery.md, bench/ckpt_standby_recovery.sh)
#   sim               loom sim at 10k-100k GPUs: loom's placer vs Slurm tree, first-fit and block on
#                     Philly, Alibaba and a large-model mix; ETTR by checkpoint interval; writes
#                     bench/results/sim.md and its plots (bench/sim_report.sh)
#   spares-sim        loom sim at 36,864 GPUs: ETTR and lost GPU-hours of 1k-16k GPU jobs with and
#                     without spares and migration (bench/results/spares-sim.md, bench/sim_spares.sh)
#   standby-sim       loom sim at 36,864 GPUs: ETTR of 1k-16k GPU jobs with standbys in the allocation,
#                     against the requeue and spares (bench/results/standby-sim.md, bench/sim_standby.sh)
#   rank-order        ring neighbours across leaves, Slurm's node order against loom's rank order
#                     (bench/results/rank-order.md, bench/rank_order.sh)
#   comm-sim          loom sim at 10,240 GPUs: step factor and run time of heavy jobs on a fabric
#                     with degraded uplinks, with and without rank order and link marks
#                     (bench/results/comm-sim.md, bench/sim_comm.sh)
#   tiers-sim         loom sim at 10,240 GPUs of three generations: cost per unit of work, wait and
#                     completion time by GPU tier, against a model by hand and any class
#                     (bench/results/tiers-sim.md, bench/sim_tiers.sh)
#   tiers-search      the tier weights (value_wait x balance_time) searched in loom sim on that
#                     cluster under two price sets (bench/results/tiers-search.md,
#                     bench/sim_tiers_search.sh)
#   load-search       the load weight (load_heavy) searched in loom sim under uplink contention
#                     (bench/results/load-search.md, bench/sim_load_search.sh)
#   scale             job_test, engine, node-table read and backfill cycles at 1,250 nodes
#                     (10k GPUs): select/topo vs cons_tres (bench/slurmctld_scale.sh --nodes for others)
# Reports are also kept in /tmp/loom-bench-logs/NAME.log. Exit status: 1 if
# any benchmark failed or reported a floor not met.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
export LOOM_BUILDDIR=${LOOM_BUILDDIR:-$top/_build}
export LOOM_SRCDIR=$top
b=$LOOM_BUILDDIR/bench
all="topo place ckpt health-check health-predictor job-test backfill fault standby sim spares-sim standby-sim rank-order comm-sim tiers-sim tiers-search load-search"
names=${*:-$all}
for n in $names; do
	case " $all scale " in *" $n "*) ;; *) echo "bench: unknown benchmark '$n' (one of: $all scale)" >&2; exit 2 ;; esac
done
# Benchmarks are not part of `make all`: build them (and loom, if needed).
if [ ! -f "$LOOM_BUILDDIR/Makefile" ]; then
	"$top/scripts/build.sh" || exit 1
fi
make -C "$LOOM_BUILDDIR" -j"$(nproc)" bench >/dev/null || { echo "bench: make bench failed" >&2; exit 1; }
logs=/tmp/loom-bench-logs
mkdir -p "$logs"
failed=()
for n in $names; do
	echo "== $n"
	case $n in
	topo) cmd=("$b/bench_topo" /var/tmp) ;;
	place) cmd=("$b/bench_place") ;;
	ckpt) cmd=("$b/bench_ckpt" --size 1G --reps 3) ;;
	health-check) cmd=("$b/bench_health_check") ;;
	health-predictor) cmd=("$b/bench_health_predictor") ;;
	job-test) cmd=("$top/bench/slurmctld_job_test.sh") ;;
	backfill) cmd=("$top/bench/backfill_plans.sh") ;;
	fault) cmd=("$top/bench/health_fault_to_running.sh") ;;
	standby) cmd=("$top/bench/ckpt_standby_recovery.sh") ;;
	scale) cmd=("$top/bench/slurmctld_scale.sh") ;;
	sim) cmd=("$top/bench/sim_report.sh") ;;
	spares-sim) cmd=("$top/bench/sim_spares.sh") ;;
	standby-sim) cmd=("$top/bench/sim_standby.sh") ;;
	rank-order) cmd=("$top/bench/rank_order.sh") ;;
	comm-sim) cmd=("$top/bench/sim_comm.sh") ;;
	tiers-sim) cmd=("$top/bench/sim_tiers.sh") ;;
	tiers-search) cmd=("$top/bench/sim_tiers_search.sh") ;;
	load-search) cmd=("$top/bench/sim_load_search.sh") ;;
	esac
	if "${cmd[@]}" 2>&1 | tee "$logs/$n.log"; then :; else failed+=("$n"); fi
done
if [ ${#failed[@]} -gt 0 ]; then
	echo "bench: failed or below a floor: ${failed[*]} (logs in $logs)"
	exit 1
fi
echo "bench: all done (logs in $logs)"
