#!/bin/bash
# select/topo inside the real slurmctld at scale: one test cluster of N real
# slurmd (8 GPUs each; 1,250 nodes are 10,000 GPUs), brought up once per node
# count, and the same job stream placed by select/topo's engine and by
# cons_tres over the whole partition (placement=cons_tres), each mode after a
# reconfigure. Then a deep queue (pending gangs behind running ones) so that
# backfill runs, and its cycle time (sdiag) under each mode.
#
#   bench/slurmctld_scale.sh [--slurm VERSION] [--nodes N[,N...]] [--no-backfill]
#
# Default: 1250 nodes. Reports, per node count and mode: job_test p50/p99/max,
# the engine's and the node-table read's share ("snapshot"), slurmctld's RSS,
# and the ratios select/topo / cons_tres; backfill's mean and max cycle. Times
# come from select/topo's placed lines (job_test's RUN_NOW path, by the
# steady clock and by the thread's CPU time) and from sdiag. The floors are
# judged on CPU time, what a job_test costs slurmctld: on a small machine
# running a thousand slurmd the wall clock also holds the waits for a core.
# Exit 1 when a run fails or a floor is not met: select/topo job_test p99
# under 300 us at 10,000 GPUs or more, never above cons_tres's p99.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
counts=1250
backfill=1
while [ $# -gt 0 ]; do
	case $1 in
	--slurm) export LOOM_SLURM=$2; shift 2 ;;
	--nodes) counts=${2//,/ }; shift 2 ;;
	--no-backfill) backfill=0; shift ;;
	-h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "scale bench: unknown option '$1'" >&2; exit 2 ;;
	esac
done
export LOOM_SLURM=${LOOM_SLURM:-$("$top/scripts/slurm.sh" default)}
export LOOM_BUILDDIR=${LOOM_BUILDDIR:-$("$top/scripts/slurm.sh" builddir "$LOOM_SLURM")}
PATH="$("$top/scripts/slurm.sh" prefix "$LOOM_SLURM")/bin:$PATH"
dir=${LOOM_BENCH_CLUSTER:-/tmp/loom-bench-scale}
export SLURM_CONF=$dir/etc/slurm.conf
echo "scale bench: Slurm $LOOM_SLURM, build tree $LOOM_BUILDDIR, nodes: $counts"
fail=0

ctl_pid() { cat "$dir/run/slurmctld.pid"; }
rss_mib() { awk -v k="$2:" '$1 == k {printf "%.0f", $2 / 1024}' "/proc/$1/status"; }
# Proportional set size (KiB): shared library pages counted once over all processes.
pss_kib() { awk '$1 == "Pss:" {print $2}' "/proc/$1/smaps_rollup" 2>/dev/null || echo 0; }
# sbatch, again after a transient failure (munge or slurmctld busy under a
# burst, or still starting again after a reconfigure: from 24.11 on that
# re-executes slurmctld), for up to a minute.
submit() {
	local i
	for i in $(seq 1 30); do
		sbatch -Q "$@" >/dev/null 2>"$dir/sbatch.err" && return 0
		sleep 2
	done
	echo "scale bench: sbatch $* failed 30 times in a minute: $(tail -1 "$dir/sbatch.err")" >&2
	return 1
}

# Wait until nothing is pending (or $1 seconds).
settle() {
	local i
	for i in $(seq 1 $(( $1 * 2 ))); do
		[ -z "$(squeue -h -t PD -o %i)" ] && return 0
		sleep 0.5
	done
}

# Cancel everything and wait until every node is idle again.
drain_jobs() {
	local i n=$1
	scancel --user="$(id -un)" >/dev/null 2>&1 || true
	for i in $(seq 1 240); do
		[ -z "$(squeue -h -o %i)" ] && [ "$(sinfo -h -t idle -o %D | awk '{s+=$1} END {print s+0}')" = "$n" ] && return 0
		sleep 0.5
	done
	echo "scale bench: nodes not idle 120 s after cancelling" >&2
	return 1
}

# placement= of loom-topo.conf, then a reconfigure, and wait for slurmctld to answer.
set_mode() {
	sed -i "s/^placement=.*/placement=$1/" "$dir/etc/loom-topo.conf"
	scontrol reconfigure
	local i
	for i in $(seq 1 60); do scontrol ping >/dev/null 2>&1 && return 0; sleep 0.5; done
	echo "scale bench: slurmctld does not answer after reconfigure" >&2
	return 1
}

# The stream: 30 single-node jobs (1 to 8 GPUs) and gangs of 4, 8, ... nodes
# x 8 GPUs, up to 128 nodes or a quarter of the cluster.
stream() {
	local n=$1 i g
	for i in $(seq 0 29); do
		submit -N1 --gres=gpu:$(( i % 8 + 1 )) -t 60 -o /dev/null --wrap 'sleep 3000'
	done
	for g in 4 8 16 32 64 128; do
		[ "$g" -le $(( n / 4 )) ] || break
		submit -N"$g" --gres=gpu:8 --exclusive -t 60 -o /dev/null --wrap 'sleep 3000'
	done
	settle 60
}

# p50 p99 max of numbers on stdin ("- - -" when none).
pct() { sort -n | awk '{a[NR]=$1} END {if (NR==0) {print "- - -"; exit} i=int(NR*0.99+0.999); if (i<1) i=1; printf "%d %d %d", a[int((NR+1)/2)], a[i], a[NR]}'; }

# From the placed lines after byte $1 of slurmctld.log: job_test (wall
# clock), engine and node-table-read times, job_test's CPU time, and the part
# of it in cons_tres's own job_test (allocating inside the chosen nodes) (us);
# a line per job: "JT ENGINE READ CPU CONS".
placed_times() {
	tail -c +"$(( $1 + 1 ))" "$dir/log/slurmctld.log" | awk '
		/select\/topo: JobId=[0-9]+ placed / {
			jt = ""; en = 0; rd = 0; cpu = ""; cons = 0
			if (match($0, /job_test [0-9]+ us/)) jt = substr($0, RSTART + 9, RLENGTH - 12)
			if (match($0, /engine [0-9]+ us/)) en = substr($0, RSTART + 7, RLENGTH - 10)
			if (match($0, /nodes read [0-9]+ us/)) rd = substr($0, RSTART + 11, RLENGTH - 14)
			if (match($0, /cpu [0-9]+ us/)) cpu = substr($0, RSTART + 4, RLENGTH - 7)
			if (match($0, /cons_tres cpu [0-9]+ us/)) cons = substr($0, RSTART + 14, RLENGTH - 17)
			if (jt != "" && cpu != "") print jt, en, rd, cpu, cons
		}'
}

# Backfill: fill the cluster with long jobs, queue gangs behind them, and let
# backfill plan them for a while; sdiag's cycle figures (us).
backfill_run() {
	local n=$1 i
	for i in $(seq 1 $(( n / 8 ))); do
		submit -N8 --gres=gpu:8 --exclusive -t 60 -o /dev/null --wrap 'sleep 3000'
	done
	settle 30
	for i in $(seq 1 100); do
		submit -N$(( (i % 5 + 1) * 4 )) --gres=gpu:8 --exclusive -t $(( i % 7 + 5 )) -o /dev/null --wrap 'sleep 300'
	done
	sdiag --reset >/dev/null
	sleep 30
	sdiag | awk '/^Backfilling stats/ {b=1} b && /Total cycles:/ {c=$NF} b && /Max cycle:/ {m=$NF} b && /Mean cycle:/ {a=$NF} b && /Last depth cycle:/ {d=$NF; exit}
		END {printf "%s %s %s %s", (c==""?0:c), (a==""?"-":a), (m==""?"-":m), (d==""?"-":d)}'
}

for n in $counts; do
	echo "== $n nodes, $(( n * 8 )) GPUs"
	t0=$(date +%s)
	"$top/tests/cluster/cluster.sh" up --dir "$dir" --nodes "$n" --gpus-per-node 8 --snapshot-check no >/dev/null || { echo "scale bench: $n nodes did not come up" >&2; fail=1; continue; }
	echo "   up in $(( $(date +%s) - t0 )) s; slurmd PSS $(for f in "$dir"/run/slurmd-*.pid; do pss_kib "$(cat "$f")"; done | awk '{s+=$1} END {printf "%.0f MiB in all, %.1f MiB each", s/1024, s/1024/NR}')"
	declare -A p99=()
	for mode in topo cons_tres; do
		set_mode "$mode"
		sleep 2
		off=$(stat -c %s "$dir/log/slurmctld.log")
		stream "$n"
		t=$(placed_times "$off")
		jobs=$(echo "$t" | grep -c . || true)
		read -r j50 j99 jmax <<<"$(echo "$t" | awk 'NF {print $1}' | pct)"
		read -r c50 c99 cmax <<<"$(echo "$t" | awk 'NF {print $4}' | pct)"
		p99[$mode]=$c99
		line="   $mode: $jobs jobs placed; job_test CPU p50 $c50 us, p99 $c99 us, max $cmax us; wall p50 $j50 us, p99 $j99 us, max $jmax us"
		if [ "$mode" = topo ]; then
			read -r e50 e99 emax <<<"$(echo "$t" | awk 'NF {print $2}' | pct)"
			read -r r50 _ rmax <<<"$(echo "$t" | awk 'NF && $3 > 0 {print $3}' | pct)"
			reads=$(echo "$t" | awk 'NF && $3 > 0' | grep -c . || true)
			read -r o50 o99 omax <<<"$(echo "$t" | awk 'NF {print $4 - $5}' | pct)"
			line="$line; select/topo's own CPU (job_test less cons_tres inside the chosen nodes) p50 $o50 us, p99 $o99 us, max $omax us"
			line="$line; engine p50 $e50 us, p99 $e99 us, max $emax us; node table read on $reads of $jobs jobs, p50 $r50 us, max $rmax us"
		fi
		echo "$line; slurmctld RSS $(rss_mib "$(ctl_pid)" VmRSS) MiB (peak $(rss_mib "$(ctl_pid)" VmHWM) MiB)"
		[ "$jobs" -gt 0 ] || { echo "   $mode: no job placed"; fail=1; }
		drain_jobs "$n" || { fail=1; break; }
	done
	if [ -n "${p99[topo]:-}" ] && [ -n "${p99[cons_tres]:-}" ] && [ "${p99[topo]}" != - ] && [ "${p99[cons_tres]}" != - ]; then
		awk -v t="${p99[topo]}" -v c="${p99[cons_tres]}" 'BEGIN {printf "   ratio select/topo / cons_tres, job_test CPU p99: %.2f\n", t / c}'
		if [ "${p99[topo]}" -gt "${p99[cons_tres]}" ]; then
			echo "   FLOOR NOT MET: select/topo job_test CPU p99 above cons_tres's"; fail=1
		fi
		if [ "$n" -ge 1250 ] && [ "${p99[topo]}" -ge 300 ]; then
			echo "   FLOOR NOT MET: select/topo job_test CPU p99 ${p99[topo]} us, not under 300 us at $(( n * 8 )) GPUs"; fail=1
		fi
	else
		echo "   no job_test times for both modes"; fail=1
	fi
	if [ "$backfill" = 1 ]; then
		for mode in topo cons_tres; do
			set_mode "$mode"
			read -r cycles mean max depth <<<"$(backfill_run "$n")"
			echo "   backfill, $mode: $cycles cycles in 30 s, mean $mean us, max $max us, last depth $depth"
			drain_jobs "$n" || { fail=1; break; }
		done
	fi
	"$top/tests/cluster/cluster.sh" down --dir "$dir" >/dev/null 2>&1 || true
	unset p99
done
exit $fail
