#!/bin/bash
# Recovery inside the allocation at scale, in loom sim: the ETTR of 1k-16k
# GPU jobs under Llama 3's failure rates when a failed node is replaced by a
# standby the job holds (--ckpt-standby), against the requeue and the spare
# pool, and what the standbys cost (GPU-hours held idle, utilization, wait).
# Writes bench/results/standby-sim.md (scripts/bench.sh standby-sim).
#
#   sim_standby.sh [--out FILE] [--work DIR] [--seeds "1 2 3"]
#
# The cluster and jobs of bench/sim_spares.sh (36,864 GPUs on NVL72 racks;
# 14 days at a load of 0.8, half of the GPU-hours in jobs of 1,024-16,384
# GPUs, every job of 8 GPUs or more --ckpt at the automatic interval,
# checkpoint cost 60 s, restart 300 s), the same failures for every
# configuration of a seed.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
name=sim_standby
page=$top/bench/results/standby-sim.md
work=/tmp/loom-sim-standby
seeds="1 2 3"
. "$top/bench/sim_args.sh" "$@"
cluster="gpus=36864 fabric=nvl72"
mix="days=14 load=0.8 large_gpus=1024-16384"
# The configurations: name, then loom sim's options.
configs=(
	"requeue (default)|"
	"pod:1% spares, not lent + migration|--spares pod:1% --spare-lend 0 --migrate yes"
	"standby auto|--standby auto"
	"standby auto, p=0.99|--standby auto --standby-p 0.99"
	"standby auto + pod:1% spares, not lent|--standby auto --spares pod:1% --spare-lend 0"
)
fail=0
i=0
for cfg in "${configs[@]}"; do
	label=${cfg%%|*}
	opts=${cfg#*|}
	for seed in $seeds; do
		dir=$work/c$i-s$seed
		# shellcheck disable=SC2086
		if ! "$loom" sim --generate "$cluster" --generate-jobs "$mix seed=$seed" --seed "$seed" --placer loom \
			--out "$dir" --progress no --quiet $opts >"$dir.txt" 2>&1; then
			echo "$name: FAIL $label seed $seed: $(head -3 "$dir.txt")" >&2
			fail=1
			continue
		fi
		printf '%s\n' "$label" >"$dir/config"
		echo "$name: $label, seed $seed: done" >&2
	done
	i=$((i + 1))
done
[ $fail = 0 ] || { echo "$name: some runs failed; the page is not written" >&2; exit 1; }
python3 "$top/bench/sim_standby_page.py" "$work" "$page" "$seeds" "$cluster" "$mix" || exit 1
echo "$name: wrote $page"
