#!/bin/bash
# The tier weights searched in loom sim: value_wait (the share of its time
# limit a value job may wait for its cheapest class or off-peak hours) x
# balance_time (the weight of time in the balanced tier's key), on the
# cluster and jobs of bench/sim_tiers.sh under two price sets, at loads
# 0.8, 1.2 and 2.0. For each
# pair: cost per unit of work, mean wait and completion of value and
# balanced jobs, and of every job, as ratios to value_wait=0 balance_time=1
# (no waiting, time and cost weighed alike). Writes
# bench/results/tiers-search.md (scripts/bench.sh tiers-search).
#
#   sim_tiers_search.sh [--out FILE] [--work DIR] [--seeds "1 2 3 4"]
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
name=sim_tiers_search
page=$top/bench/results/tiers-search.md
work=/tmp/loom-sim-tiers-search
seeds="1 2 3 4"
. "$top/bench/sim_args.sh" "$@"
cluster="gpus=10240 fabric=fat classes=a100:34,h100:33,b200:33"
mix="days=7 large_gpus=256-2048 tiers=value:40,balanced:30,fast:30"
loads="0.8 1.2 2.0"
waits="0 0.1 0.25 0.5 1"
times="0.5 1 2"
# Two price sets. newest-cheapest: tiers-sim.md's, where b200 is both the
# fastest and the cheapest per unit of work (balanced has nothing to weigh:
# balance_time is searched on the other set only). newest-dearest: b200 at
# 3.30 (1.10 per work), dearer per work than h100 (0.80): balanced weighs
# h100's price against b200's speed.
for set in newest-cheapest newest-dearest; do
	b200=2.10
	[ $set = newest-dearest ] && b200=3.30
	cat >"$work/$set.conf" <<EOF
gpu_classes=a100,h100,b200
gpu_class.a100=throughput:1,mem:80G,price:1.00,offpeak_price:0.60
gpu_class.h100=throughput:2,mem:80G,price:1.60
gpu_class.b200=throughput:3,mem:192G,price:$b200
offpeak=22:00-06:00
EOF
done
fail=0
for set in newest-cheapest newest-dearest; do
	bts=$times
	[ $set = newest-cheapest ] && bts=1
	for load in $loads; do
		for vw in $waits; do
			for bt in $bts; do
				wf=$work/w-$vw-$bt.conf
				printf 'value_wait=%s\nbalance_time=%s\n' "$vw" "$bt" >"$wf"
				for seed in $seeds; do
					dir=$work/$set-l$load-w$vw-b$bt-s$seed
					if ! "$loom" sim --generate "$cluster" --generate-jobs "$mix load=$load seed=$seed" --seed "$seed" \
						--days 7 --failures none --topo-conf "$work/$set.conf" --weights "$wf" --out "$dir" \
						--progress no --quiet --tier-mode engine --placer loom >"$dir.txt" 2>&1; then
						echo "sim_tiers_search: FAIL $set load $load value_wait $vw balance_time $bt seed $seed: $(head -3 "$dir.txt")" >&2
						fail=1
					fi
				done
			done
			echo "sim_tiers_search: $set, load $load, value_wait $vw: done" >&2
		done
	done
done
[ $fail = 0 ] || { echo "sim_tiers_search: some runs failed; the page is not written" >&2; exit 1; }
python3 - "$work" "$page" "$seeds" "$cluster" "$mix" "$loads" "$waits" "$times" <<'PY'
import csv, glob, os, sys
work, page, seeds, cluster, mix = sys.argv[1:6]
seeds, loads, waits, times = sys.argv[3].split(), sys.argv[6].split(), sys.argv[7].split(), sys.argv[8].split()

def mean(v):
    return sum(v) / len(v) if v else float("nan")

def figures(pset, load, vw, bt):
    jobs = []
    for seed in seeds:
        d = "%s/%s-l%s-w%s-b%s-s%s" % (work, pset, load, vw, bt, seed)
        jobs += list(csv.DictReader(open(d + "/loom/jobs.csv")))
    out = {}
    for tier in ("value", "balanced", "fast", None):
        js = [j for j in jobs if tier is None or j["tier"] == tier]
        done = [j for j in js if j["state"] == "COMPLETED"]
        started = [j for j in js if int(j["first_start_s"]) >= 0]
        work_h = sum(float(j["work_h"]) * int(j["gpus"]) for j in done)
        out[tier] = {
            "done": len(done), "jobs": len(js),
            "cpw": sum(float(j["cost"]) for j in done) / work_h if work_h else float("nan"),
            "wait": mean([(int(j["first_start_s"]) - int(j["submit_s"])) / 3600 for j in started]),
            "jct": mean([(int(j["end_s"]) - int(j["submit_s"])) / 3600 for j in done]),
        }
    return out

def ratio(a, b):
    return a / b if b else float("nan")

with open(page, "w") as out:
    p = lambda *a: print(*a, file=out)
    p("# Tier weights searched (loom sim)")
    p()
    p("Made by `scripts/bench.sh tiers-search` (bench/sim_tiers_search.sh) on 2 cores: the cluster and jobs of tiers-sim.md (`%s`; a100 1x 1.00 per GPU-hour and 0.60 off-peak 22:00-06:00, h100 2x 1.60, b200 3x at the price of each set below; `%s`, seeds %s), every job asking for its tier and placed by the engine, under each pair of:" % (cluster, mix, ", ".join(seeds)))
    p()
    p("- **value_wait**: the share of its time limit a value job may wait for the cheapest class per unit of work that could hold it, or for off-peak hours when they make its run cheaper (0: never waits, takes the cheapest class free now);")
    p("- **balance_time**: the weight of time in the balanced tier's key, (price per work / cheapest) x (time per work / fastest)^balance_time.")
    p()
    p("Cost per unit of work: what the completed jobs paid (each run at the class prices of the hours it ran) over their work (GPU-hours at 1x). Ratios are to value_wait=0, balance_time=1 in the same table (same jobs).")
    p()
    sets = [("newest-cheapest", "b200 2.10 per GPU-hour: 0.70 per unit of work, the cheapest per work and the fastest (tiers-sim.md's prices); balanced has nothing to weigh, so balance_time is 1", ["1"]),
            ("newest-dearest", "b200 3.30 per GPU-hour: 1.10 per unit of work, dearer per work than h100 (0.80): balanced weighs h100's price against b200's speed", times)]
    for pset, what, bts in sets:
      for load in loads:
        base = figures(pset, load, "0", "1")
        rows = [(vw, bt, figures(pset, load, vw, bt)) for vw in waits for bt in bts]
        p("## %s, load %s" % (pset, load))
        p()
        p(what + ".")
        p()
        p("| value_wait | balance_time | value: completed | cost/work | ratio | wait (h) | completion (h) | ratio | balanced: cost/work | ratio | completion (h) | ratio | fast: completion (h) | ratio | all: completed | wait (h) | completion (h) | ratio |")
        p("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        for vw, bt, f in rows:
            v, b, fa, a = f["value"], f["balanced"], f["fast"], f[None]
            bv, bb, bf, ba = base["value"], base["balanced"], base["fast"], base[None]
            p("| %s | %s | %d | %.3f | %.3f | %.2f | %.2f | %.2f | %.3f | %.3f | %.2f | %.2f | %.2f | %.2f | %d | %.2f | %.2f | %.2f |" % (
                vw, bt, v["done"], v["cpw"], ratio(v["cpw"], bv["cpw"]), v["wait"], v["jct"], ratio(v["jct"], bv["jct"]),
                b["cpw"], ratio(b["cpw"], bb["cpw"]), b["jct"], ratio(b["jct"], bb["jct"]),
                fa["jct"], ratio(fa["jct"], bf["jct"]), a["done"], a["wait"], a["jct"], ratio(a["jct"], ba["jct"])))
        p()
    p("## What it found")
    p()
    for pset, what, bts in sets:
        for load in loads:
            base = figures(pset, load, "0", "1")
            d = figures(pset, load, "0.25", "1")
            cheapest = min(((vw, figures(pset, load, vw, "1")) for vw in waits), key=lambda x: x[1]["value"]["cpw"])
            p("- %s, load %s: the defaults (value_wait=0.25, balance_time=1) against no waiting: value jobs' cost per work %.3fx, their completion %.2fx, every job's completion %.2fx; the cheapest value jobs at value_wait=%s (%.3fx, completion %.2fx)." % (
                pset, load, ratio(d["value"]["cpw"], base["value"]["cpw"]), ratio(d["value"]["jct"], base["value"]["jct"]),
                ratio(d[None]["jct"], base[None]["jct"]), cheapest[0], ratio(cheapest[1]["value"]["cpw"], base["value"]["cpw"]),
                ratio(cheapest[1]["value"]["jct"], base["value"]["jct"])))
    for load in loads:
        h = figures("newest-dearest", load, "0", "0.5")
        b = figures("newest-dearest", load, "0", "1")
        p("- newest-dearest, load %s: balance_time=0.5 against 1: balanced jobs' cost per work %.3fx, completion %.2fx (2 chooses as 1 here: b200's 1.375x cost against h100's 1.5x time)." % (
            load, ratio(h["balanced"]["cpw"], b["balanced"]["cpw"]), ratio(h["balanced"]["jct"], b["balanced"]["jct"])))
    p("- Waiting pays when the class cheapest per work is contended and is not the fastest (newest-dearest: value jobs queue for h100 while fast jobs take b200), and it costs when the cheapest class is also the fastest (newest-cheapest: the fast and balanced tiers want the same b200 nodes, a value job that waits for them loses its place, and at loads 1.2 and 2.0 value jobs paid 3-5% more per work at value_wait 0.1-0.25 than not waiting at all). A rule that waits only when the saving outweighs the chance of losing the place is not built. On a cluster with room (load 0.8) waiting saves little and lengthens value jobs' completion by up to 1.4x at value_wait=1.")
    p("- Load 2.0 is a queue that grows all week: which jobs complete changes with every choice, and its completion figures move by up to 2x between neighbouring settings (more than any setting's effect at the lower loads). The defaults are chosen on loads 0.8 and 1.2 and checked against 2.0, not tuned on it.")
    p("- Defaults: value_wait=0.25: at loads 0.8 and 1.2 value jobs' completion stays within 2% of not waiting, and where waiting pays (newest-dearest) it saves 2-6% per unit of work; 0.5 and 1 save 1-5% more at 4-40% longer completion, a choice for a site whose value users say so. balance_time=1: cost and time weighed alike (price per work x time per work); 0.5 turns balanced into a second value tier (8-15% cheaper, 1.30-1.47x longer completion at loads 0.8 and 1.2), 2 a second fast one.")
PY
echo "sim_tiers_search: wrote $page"
