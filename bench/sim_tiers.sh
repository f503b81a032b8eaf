#!/bin/bash
# GPU tiers at scale, in loom sim: jobs that ask for a tier (value, balanced,
# fast) placed by the engine, against the same jobs naming a model by hand
# and against first fit on any class; cost per unit of work, queue wait and
# completion time by tier. Writes bench/results/tiers-sim.md
# (scripts/bench.sh tiers-sim).
#
#   sim_tiers.sh [--out FILE] [--work DIR] [--seeds "1 2 3 4"]
#
# One 10,240-GPU fat tree with three generations by pod (a100 1x, h100 2x,
# b200 3x throughput), priced 1.00, 1.60 and 2.10 per GPU-hour (prices rise
# less than throughput: per unit of work 1.00, 0.80, 0.70), a100 at 0.60
# off-peak (22:00-06:00). Jobs: 7 days at an offered load of 0.8, 256-2,048
# GPU large jobs (a gang never spans classes, and a class holds ~3,400
# GPUs), 40% asking for value, 30% balanced, 30% fast. No failures.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
name=sim_tiers
page=$top/bench/results/tiers-sim.md
work=/tmp/loom-sim-tiers
seeds="1 2 3 4"
. "$top/bench/sim_args.sh" "$@"
cluster="gpus=10240 fabric=fat classes=a100:34,h100:33,b200:33"
mix="days=7 large_gpus=256-2048 tiers=value:40,balanced:30,fast:30"
# Offered load in GPU-hours at 1x: the classes average 2x, so 0.8 leaves the
# cluster half idle and 2.0 fills it.
loads="0.8 2.0"
cat >"$work/loom-topo.conf" <<'EOF'
gpu_classes=a100,h100,b200
gpu_class.a100=throughput:1,mem:80G,price:1.00,offpeak_price:0.60
gpu_class.h100=throughput:2,mem:80G,price:1.60
gpu_class.b200=throughput:3,mem:192G,price:2.10
offpeak=22:00-06:00
EOF
configs=(
	"tiers (engine)|--tier-mode engine --placer loom"
	"model by hand|--tier-mode by-hand --placer loom"
	"any class (loom)|--tier-mode any --placer loom"
	"any class, first fit|--tier-mode any --placer firstfit"
)
fail=0
for load in $loads; do
i=0
for cfg in "${configs[@]}"; do
	name=${cfg%%|*}
	opts=${cfg#*|}
	for seed in $seeds; do
		dir=$work/l$load-c$i-s$seed
		# shellcheck disable=SC2086
		if ! "$loom" sim --generate "$cluster" --generate-jobs "$mix load=$load seed=$seed" --seed "$seed" --days 7 \
			--failures none --topo-conf "$work/loom-topo.conf" --out "$dir" --progress no --quiet $opts \
			>"$dir.txt" 2>&1; then
			echo "sim_tiers: FAIL $name seed $seed: $(head -3 "$dir.txt")" >&2
			fail=1
			continue
		fi
		printf '%s\n' "$name" >"$dir/config"
	done
	echo "sim_tiers: load $load, $name: done" >&2
	i=$((i + 1))
done
done
[ $fail = 0 ] || { echo "sim_tiers: some runs failed; the page is not written" >&2; exit 1; }
python3 - "$work" "$page" "$seeds" "$cluster" "$mix" "$loads" <<'PY'
import csv, glob, os, sys
work, page, seeds, cluster, mix, loads = sys.argv[1], sys.argv[2], sys.argv[3].split(), sys.argv[4], sys.argv[5], sys.argv[6].split()

def mean(v):
    return sum(v) / len(v) if v else float("nan")

runs = {}
for d in sorted(glob.glob(work + "/l*-c*-s*")):
    if not os.path.isdir(d):
        continue
    load, idx = os.path.basename(d).split("-")[:2]
    load, idx = load[1:], int(idx[1:])
    name = open(d + "/config").read().strip()
    placer = [p for p in os.listdir(d) if os.path.isdir(os.path.join(d, p))][0]
    s = dict(zip(*list(csv.reader(open(d + "/summary.csv")))))
    jobs = list(csv.DictReader(open(os.path.join(d, placer, "jobs.csv"))))
    runs.setdefault((load, idx, name), []).append((s, jobs))

tiers = ["value", "balanced", "fast"]

def by_tier(rs, tier):
    done = [j for _, jobs in rs for j in jobs if j["tier"] == tier and j["state"] == "COMPLETED"]
    started = [j for _, jobs in rs for j in jobs if j["tier"] == tier and int(j["first_start_s"]) >= 0]
    allj = [j for _, jobs in rs for j in jobs if j["tier"] == tier]
    work = sum(float(j["work_h"]) * int(j["gpus"]) for j in done)
    cost = sum(float(j["cost"]) for j in done)
    classes = {}
    for j in started:
        classes[j["class"]] = classes.get(j["class"], 0) + 1
    return {
        "jobs": len(allj), "done": len(done),
        "cpw": cost / work if work else float("nan"),
        "wait": mean([(int(j["first_start_s"]) - int(j["submit_s"])) / 3600 for j in started]),
        "jct": mean([(int(j["end_s"]) - int(j["submit_s"])) / 3600 for j in done]),
        "run": mean([(int(j["end_s"]) - int(j["first_start_s"])) / 3600 for j in done]),
        "classes": classes,
    }

with open(page, "w") as out:
    p = lambda *a: print(*a, file=out)
    p("# GPU tiers at scale (loom sim)")
    p()
    p("Made by `scripts/bench.sh tiers-sim` (bench/sim_tiers.sh) on 2 cores. The cluster: `%s` (1,280 eight-GPU nodes; a100 1x, h100 2x, b200 3x throughput), priced 1.00, 1.60 and 2.10 per GPU-hour: per unit of work 1.00, 0.80 and 0.70, prices rising less than throughput; a100 at 0.60 off-peak (22:00-06:00, so 0.60 per work). Jobs: `%s` per seed (%s) at offered loads %s (GPU-hours at 1x per GPU-hour: the classes average 2x, so 0.8 leaves the cluster about half idle and 2.0 keeps it full); no failures. Every configuration runs the same jobs; figures are over every job of every seed." % (cluster, mix, ", ".join(seeds), " and ".join(loads)))
    p()
    p("- **tiers (engine)**: each job asks for its tier (`sbatch --gpu-tier`); select/topo's engine tries the tier's classes in its objective's order and takes the first that holds the gang now (lib/place/tiers); a value job may wait up to a quarter of its time limit for its cheapest class or off-peak hours (value_wait=0.25, the default; tiers-search.md).")
    p("- **model by hand**: the same job names the class a person would pick (`--constraint`): value the cheapest per hour (a100), fast the fastest (b200), balanced the middle (h100).")
    p("- **any class**: no class at all, placed by the loom engine or by first fit in node order (Slurm without a topology plugin).")
    p("- Cost per unit of work: what the completed jobs paid (each run's GPUs at their class prices over the hours it ran, off-peak hours at theirs) over their work (GPU-hours at 1x).")
    p()
    for load in loads:
      keys = sorted(k for k in runs if k[0] == load)
      base = {t: by_tier(runs[keys[1]], t) for t in tiers}  # by hand
      for t in tiers:
        p("## Load %s: %s" % (load, t))
        p()
        p("| | jobs | completed | cost per unit of work | ratio to by hand | mean wait (h) | ratio | mean completion (h) | ratio | mean run (h) | classes (jobs started) |")
        p("|---|---|---|---|---|---|---|---|---|---|---|")
        for k in keys:
            r = by_tier(runs[k], t)
            b = base[t]
            cl = ", ".join("%s %d" % (c or "-", n) for c, n in sorted(r["classes"].items()))
            p("| %s | %d | %d | %.3f | %.3f | %.2f | %.2f | %.2f | %.2f | %.2f | %s |" % (
                k[2], r["jobs"], r["done"], r["cpw"], r["cpw"] / b["cpw"], r["wait"], r["wait"] / b["wait"] if b["wait"] else float("nan"),
                r["jct"], r["jct"] / b["jct"], r["run"], cl))
        p()
      p("## Load %s: all jobs" % load)
      p()
      p("| | utilization | mean wait (h) | mean completion (h) |")
      p("|---|---|---|---|")
      for k in keys:
          rs = runs[k]
          p("| %s | %.4f | %.2f | %.2f |" % (k[2], mean([float(s["utilization"]) for s, _ in rs]),
                                           mean([float(s["wait_mean_h"]) for s, _ in rs]), mean([float(s["jct_mean_h"]) for s, _ in rs])))
      p()
    p("## Reading these")
    p()
    for load in loads:
        keys = sorted(k for k in runs if k[0] == load)
        eng, hand = keys[0], keys[1]
        parts = []
        for t in tiers:
            e, h = by_tier(runs[eng], t), by_tier(runs[hand], t)
            parts.append("%s: cost per work %.3f against %.3f by hand (%.2fx), completion %.2f h against %.2f (%.2fx)" % (
                t, e["cpw"], h["cpw"], e["cpw"] / h["cpw"], e["jct"], h["jct"], e["jct"] / h["jct"]))
        p("- Load %s, tiers against a model by hand. %s." % (load, "; ".join(parts)))
    p("- Where tiers win: value and balanced jobs. By hand a person takes the class that is cheapest per hour for value and the middle one for balanced; per unit of work the newest class is the cheapest here (prices rise less than throughput), and the engine also takes the old class when it is cheaper at night (0.60 per work off-peak) or the new one is full. Value jobs also finish sooner at both loads (the cheapest per work is the fastest here); balanced jobs do when the cluster has room, not when it is full, where they share b200 with the value and fast jobs.")
    p("- Where they do not: fast jobs. By hand every fast job names b200 and has it to itself; with tiers, value and balanced jobs want b200 too (it is the cheapest per work and the fastest), so when the cluster is full fast jobs wait behind them or take h100. A site that wants fast jobs served first prices its newest class so that it is not also the cheapest per work; holding a share of it for fast jobs is not built. Tiers never reorder the queue (fairness stays Slurm's).")
    p("- Without any class (any class), gangs span generations and run at the slowest one's pace while paying for the faster GPUs: the dearest per unit of work and the longest waits, with the engine and with first fit.")
    p("- Utilization is GPU-hours held over GPU-hours: jobs that run on faster classes hold GPUs for less time, so the same work shows as a lower utilization.")
PY
echo "sim_tiers: wrote $page"
