#!/bin/bash
# The load weights searched in loom sim: load_heavy (select/topo's penalty on
# the occupancy of a heavy gang's common domain: no hot leaves or pods) on a
# fabric whose uplinks are shared, under the contention model (loom sim
# --contention yes: an uplink is shared by the jobs running across it at a
# job's start). For each weight: heavy gangs' step factor, how many span
# several leaves, their run and completion time, and every job's wait and the
# utilization, as ratios to load_heavy=0 (the default) with the same jobs.
# Writes bench/results/load-search.md (scripts/bench.sh load-search).
#
#   sim_load_search.sh [--out FILE] [--work DIR] [--seeds "1 2 3 4"]
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
name=sim_load_search
page=$top/bench/results/load-search.md
work=/tmp/loom-sim-load-search
seeds="1 2 3 4"
. "$top/bench/sim_args.sh" "$@"
# 10,240 GPUs: 80 leaves of 16 eight-GPU nodes, leaves 2:1 to their pod (as
# Ethernet fabrics often are), pods 2:1 to the spine.
cluster="gpus=10240 fabric=fat leaf_oversub=2"
loads="0.6 0.8 1.0"
weights="0 5 20 50 200"
models="share ring"
fail=0
for model in $models; do
	extra=
	[ "$model" = ring ] && extra="--rank-order yes"
	for load in $loads; do
		for w in $weights; do
			wf=$work/w-$w.conf
			printf 'load_heavy=%s\n' "$w" >"$wf"
			for seed in $seeds; do
				dir=$work/$model-l$load-w$w-s$seed
				# shellcheck disable=SC2086
				if ! "$loom" sim --generate "$cluster" --generate-jobs "days=7 load=$load seed=$seed" \
					--seed "$seed" --days 7 --placer loom --failures none --comm-model "$model" $extra \
					--contention yes --weights "$wf" --out "$dir" --progress no --quiet >"$dir.txt" 2>&1; then
					echo "sim_load_search: FAIL $model load $load load_heavy=$w seed $seed: $(head -3 "$dir.txt")" >&2
					fail=1
				fi
			done
		done
		echo "sim_load_search: $model model, load $load: done" >&2
	done
done
[ $fail = 0 ] || { echo "sim_load_search: some runs failed; the page is not written" >&2; exit 1; }
python3 - "$work" "$page" "$seeds" "$cluster" "$loads" "$weights" "$models" <<'PY'
import csv, glob, os, sys
work, page, seeds, cluster = sys.argv[1], sys.argv[2], sys.argv[3].split(), sys.argv[4]
loads, weights, models = sys.argv[5].split(), sys.argv[6].split(), sys.argv[7].split()

def mean(v):
    return sum(v) / len(v) if v else float("nan")

def figures(model, load, w):
    rs = []
    for seed in seeds:
        d = "%s/%s-l%s-w%s-s%s" % (work, model, load, w, seed)
        s = dict(zip(*list(csv.reader(open(d + "/summary.csv")))))
        rs.append((s, list(csv.DictReader(open(d + "/loom/jobs.csv")))))
    started = lambda j: int(j["first_start_s"]) >= 0
    hv = [j for _, js in rs for j in js if j["comm"] == "heavy" and int(j["nodes"]) > 1 and started(j)]
    across = [j for j in hv if int(j["leaves"]) > 1]
    done = [j for j in hv if j["state"] == "COMPLETED"]
    every = [j for _, js in rs for j in js if j["state"] == "COMPLETED"]
    return {
        "heavy": len(hv),
        "across": len(across) / len(hv) if hv else float("nan"),
        "sf": mean([float(j["step_factor"]) for j in hv]),
        "sf_across": mean([float(j["step_factor"]) for j in across]),
        "leaves": mean([int(j["leaves"]) for j in across]),
        "run_h": mean([(int(j["end_s"]) - int(j["first_start_s"])) / 3600 for j in done]),
        "jct_h": mean([(int(j["end_s"]) - int(j["submit_s"])) / 3600 for j in done]),
        "all_jct_h": mean([(int(j["end_s"]) - int(j["submit_s"])) / 3600 for j in every]),
        "done": len(every),
        "wait_h": mean([float(s["wait_mean_h"]) for s, _ in rs]),
        "util": mean([float(s["utilization"]) for s, _ in rs]),
    }

def ratio(a, b):
    return a / b if b else float("nan")

F = {(m, l, w): figures(m, l, w) for m in models for l in loads for w in weights}
with open(page, "w") as out:
    p = lambda *a: print(*a, file=out)
    p("# Load weights searched (loom sim, uplink contention)")
    p()
    p("Made by `scripts/bench.sh load-search` (bench/sim_load_search.sh) on 2 cores. The cluster: `%s`: 1,280 eight-GPU nodes, 80 leaves of 16 under 5 pods, every leaf 2:1 to its pod and every pod 2:1 to the spine. Jobs: `days=7 load=L` per seed (%s); jobs of 32 GPUs or more are comm=heavy (a step 40%% communication at the reference), other multi-node jobs normal. No failures. Every weight of a seed runs the same jobs; figures are over every job of every seed." % (cluster, ", ".join(seeds)))
    p()
    p("The weight: **load_heavy** x the occupancy (0..1) of the common domain of a heavy gang that spans leaves, added to its candidate's penalty (a leaf spanned beyond the first costs 20, a level 1000): above 0, a heavy gang leaves a busy pod for a quieter one, or spans more leaves of a quiet part of its pod. At 0 (the default) occupancy only breaks ties between equally tight candidates.")
    p()
    p("The cost model: `--contention yes` (loom-sim(1)): a leaf's or pod's uplink is shared by the GPUs that send across it at the job's start (its own and those of the jobs already running across it), rather than by every GPU under it. **share**: every GPU of the job sends across every domain it spans (all-to-all, trees); **ring**: a ring all-reduce in loom's rank order (`--comm-model ring --rank-order yes`), where only the edges leaving a leaf load its uplink.")
    p()
    cols = ["load_heavy", "heavy gangs", "across leaves", "leaves (across)", "step factor, heavy", "ratio", "step factor, across",
            "run, heavy (h)", "ratio", "completion, heavy (h)", "ratio", "all: completed", "mean wait (h)", "completion (h)", "ratio", "utilization"]
    for m in models:
        for l in loads:
            b = F[(m, l, "0")]
            p("## %s model, load %s" % (m, l))
            p()
            p("| " + " | ".join(cols) + " |")
            p("|" + "---|" * len(cols))
            for w in weights:
                r = F[(m, l, w)]
                p("| %s | %d | %.1f%% | %.2f | %.4f | %.3f | %.4f | %.2f | %.3f | %.2f | %.3f | %d | %.2f | %.2f | %.3f | %.4f |" % (
                    w, r["heavy"], 100 * r["across"], r["leaves"], r["sf"], ratio(r["sf"], b["sf"]), r["sf_across"],
                    r["run_h"], ratio(r["run_h"], b["run_h"]), r["jct_h"], ratio(r["jct_h"], b["jct_h"]),
                    r["done"], r["wait_h"], r["all_jct_h"], ratio(r["all_jct_h"], b["all_jct_h"]), r["util"]))
            p()
    p("## What it found")
    p()
    for m in models:
        for l in loads:
            b = F[(m, l, "0")]
            best = min(weights, key=lambda w: F[(m, l, w)]["sf"])
            r = F[(m, l, best)]
            p("- %s model, load %s: the lowest heavy step factor at load_heavy=%s: %.4f against %.4f at 0 (%.3fx); heavy run time %.3fx, heavy completion %.3fx, every job's completion %.3fx; heavy gangs across leaves %.1f%% against %.1f%%." % (
                m, l, best, r["sf"], b["sf"], ratio(r["sf"], b["sf"]), ratio(r["run_h"], b["run_h"]),
                ratio(r["jct_h"], b["jct_h"]), ratio(r["all_jct_h"], b["all_jct_h"]), 100 * r["across"], 100 * b["across"]))
    pos = [(m, l, w) for m in models for l in loads for w in weights if w != "0"]
    sf = [ratio(F[k]["sf"], F[(k[0], k[1], "0")]["sf"]) for k in pos]
    run = [ratio(F[k]["run_h"], F[(k[0], k[1], "0")]["run_h"]) for k in pos]
    jct = [ratio(F[k]["all_jct_h"], F[(k[0], k[1], "0")]["all_jct_h"]) for k in pos]
    p("- Over every model, load and weight above 0: heavy step factor %.3fx to %.3fx of load_heavy=0, heavy run time %.3fx to %.3fx, every job's completion %.3fx to %.3fx. The step factor, the placement's own effect, moves by a few percent either way and no weight is better at every load; the completion time follows the queue (one job that starts earlier moves every later start) more than the weight." % (
        min(sf), max(sf), min(run), max(run), min(jct), max(jct)))
    p("- Why the weight cannot do more: occupancy is the share of a domain's nodes that are busy, not the traffic on its uplinks. A busy pod full of jobs inside single leaves sends nothing across its uplinks, and a quiet part of the fabric often means a gang spread over more leaves. On this fabric the largest gangs fill whole leaves (a full leaf's uplink is shared by its own GPUs whatever runs elsewhere), so what placement can still choose is where the partial leaves of a gang go.")
    p("- The default stays load_heavy=0 (occupancy breaks ties between equally tight candidates only): no weight lowered heavy step factors beyond the seeds' noise, and the larger ones spread gangs over more leaves at some loads. A signal that would do better is the traffic across each uplink (the running gangs that cross it), which select/topo does not keep yet.")
    p()
    p("Ratios are to load_heavy=0 under the same model and load. Heavy gangs: the multi-node comm=heavy jobs that started within the 7 days. A job keeps the bandwidth it had at its start (the model does not slow a running job when another starts across the same uplink), so the step factors are a lower bound on what contention costs; the completion time adds the queue wait, which moves with every earlier start.")
PY
echo "sim_load_search: wrote $page"
