#!/bin/bash
# Backfill's plans against what happens, on three 16-node test clusters side by
# side with the same job stream: plain cons_tres (the baseline), select/topo
# with will_run=cons_tres (backfill plans with cons_tres's nodes, the engine
# places at start), and select/topo with will_run=engine (plans with the
# engine's nodes). For every job backfill planned (squeue's StartTime and
# SchedNodes while it was pending), the last plan is compared with the start:
# "elsewhere" = it started on other nodes than planned, "slipped" = it started
# more than 5 s after the planned time. Jobs run close to their time limit
# (55-58 s of 1 min), so plans made from time limits are near the truth.
#   bench/backfill_plans.sh [--slurm VERSION] [JOBS]     (default 24 jobs; about 5 minutes)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
if [ "${1:-}" = --slurm ]; then export LOOM_SLURM=$2; shift 2; fi
export LOOM_SLURM=${LOOM_SLURM:-$("$top/scripts/slurm.sh" default)}
builddir=${LOOM_BUILDDIR:-$("$top/scripts/slurm.sh" builddir "$LOOM_SLURM")}
PATH="$("$top/scripts/slurm.sh" prefix "$LOOM_SLURM")/bin:$PATH"
jobs=${1:-24}
base=/tmp/loom-bench-bf
modes=(cons_tres topo_plan_cons_tres topo_plan_engine)
echo "backfill plans: Slurm $LOOM_SLURM, build tree $builddir, $jobs jobs per cluster"

up() { # MODE
	local args=(--nodes 16 --gpus-per-node 8 --slurm "$LOOM_SLURM" --builddir "$builddir" --dir "$base-$1")
	case $1 in
	cons_tres) args+=(--select cons_tres) ;;
	topo_plan_cons_tres) args+=(--select topo --will-run cons_tres) ;;
	topo_plan_engine) args+=(--select topo --will-run engine) ;;
	esac
	"$top/tests/cluster/cluster.sh" up "${args[@]}" >"$base-$1.up.log" 2>&1 || { cat "$base-$1.up.log"; return 1; }
}
down() { for m in "${modes[@]}"; do "$top/tests/cluster/cluster.sh" down --dir "$base-$m" >/dev/null 2>&1 || true; done; }
trap down EXIT
for m in "${modes[@]}"; do up "$m" & done
wait
conf() { echo "$base-$1/etc/slurm.conf"; }

# The stream: sizes and lengths from a fixed sequence (the same on every cluster).
sizes=("4 8" "1 4" "2 8" "8 8" "1 2" "3 8" "6 8" "1 8" "2 4" "5 8" "1 1" "4 8")
submit_all() { # MODE
	local i n g secs
	for i in $(seq 0 $((jobs - 1))); do
		read -r n g <<<"${sizes[$((i % ${#sizes[@]}))]}"
		secs=$((55 + i % 4))
		SLURM_CONF=$(conf "$1") sbatch --parsable -J "bf$i" -N "$n" --gres=gpu:"$g" --time=1 -o /dev/null \
			--wrap "sleep $secs" >/dev/null
	done
}
for m in "${modes[@]}"; do submit_all "$m"; done

# Sample every second until every queue is empty: the last plan of each
# pending job, and each job's start (time and nodes).
for m in "${modes[@]}"; do : >"$base-$m.plans"; : >"$base-$m.starts"; done
deadline=$(( $(date +%s) + 60 * (jobs + 2) ))
while :; do
	busy=0
	for m in "${modes[@]}"; do
		c=$(conf "$m")
		SLURM_CONF=$c squeue -h -t PD -o '%i|%S|%Y' 2>/dev/null | awk -F'|' '$3 != "" && $3 != "(null)" && $2 != "N/A"' >>"$base-$m.plans" || true
		SLURM_CONF=$c squeue -h -t R -o '%i|%S|%N' 2>/dev/null >>"$base-$m.starts" || true
		[ -z "$(SLURM_CONF=$c squeue -h -o %i 2>/dev/null)" ] || busy=1
	done
	[ $busy = 1 ] || break
	[ "$(date +%s)" -lt "$deadline" ] || { echo "backfill plans: queues not empty after $((60 * (jobs + 2))) s" >&2; exit 1; }
	sleep 1
done

# Per cluster: planned jobs, started elsewhere, slipped, makespan.
report() { # MODE -> "planned elsewhere slipped mean_slip_s makespan_s"
	awk -F'|' -v plans="$base-$1.plans" '
		function ts(s,   c) { gsub(/[-T:]/, " ", s); return mktime(s) }
		FILENAME == plans { plan_t[$1] = ts($2); plan_n[$1] = $3; next }
		!($1 in start_t) { start_t[$1] = ts($2); start_n[$1] = $3;
			if (first == "" || start_t[$1] < first) first = start_t[$1] }
		END {
			for (j in plan_t) if (j in start_t) {
				p++
				if (start_n[j] != plan_n[j]) e++
				d = start_t[j] - plan_t[j]
				if (d > 5) { s++; sum += d }
			}
			last = 0
			for (j in start_t) if (start_t[j] + 58 > last) last = start_t[j] + 58
			printf "%d %d %d %.1f %d\n", p, e, s, s ? sum / s : 0, last - first
		}' "$base-$1.plans" "$base-$1.starts"
}
printf '  %-22s %8s %10s %8s %12s %10s\n' cluster planned elsewhere slipped "mean slip s" "makespan s"
declare -A r
for m in "${modes[@]}"; do
	r[$m]=$(report "$m")
	read -r p e s ms mk <<<"${r[$m]}"
	printf '  %-22s %8s %10s %8s %12s %10s\n' "$m" "$p" "$e" "$s" "$ms" "$mk"
done
read -r bp be bs _ bmk <<<"${r[cons_tres]}"
for m in topo_plan_cons_tres topo_plan_engine; do
	read -r p e s _ mk <<<"${r[$m]}"
	awk -v m="$m" -v p="$p" -v e="$e" -v s="$s" -v mk="$mk" -v bp="$bp" -v be="$be" -v bs="$bs" -v bmk="$bmk" 'BEGIN {
		fe = p ? e / p : 0; fbe = bp ? be / bp : 0; fs = p ? s / p : 0; fbs = bp ? bs / bp : 0
		printf "  %s against cons_tres: elsewhere %.2f vs %.2f of planned jobs, slipped %.2f vs %.2f, makespan ratio %.2f\n",
			m, fe, fbe, fs, fbs, bmk ? mk / bmk : 0 }'
done
