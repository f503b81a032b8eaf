#!/bin/bash
# Rank order and link-aware placement at scale, in loom sim: the step factor
# and completion time of communication-heavy jobs on a fabric with a few
# degraded leaf uplinks, with and without loom's rank order (spank_place's
# LOOM_HOSTFILE) and with and without the link marks select/topo weighs.
# Writes bench/results/comm-sim.md (scripts/bench.sh comm-sim).
#
#   sim_comm.sh [--out FILE] [--work DIR] [--seeds "1 2 3 4 5 6"]
#
# One 10,240-GPU fat tree (1,280 eight-GPU nodes, 80 leaves of 16, 5 pods,
# pods 2:1 to the spine), with non-blocking leaves or leaves 2:1 to their pod
# (as Ethernet fabrics often are), its node names either following the
# leaves (block) or going round them (across); 4 leaves (5%) have uplinks at
# a quarter of their capacity. The ring model of loom sim's
# cost model (loom-sim(1)): a ring all-reduce in the job's rank order. Every
# configuration of a seed runs the same jobs; no failures, so that only the
# placement and the order differ.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
name=sim_comm
page=$top/bench/results/comm-sim.md
work=/tmp/loom-sim-comm
seeds="1 2 3 4 5 6"
. "$top/bench/sim_args.sh" "$@"
cluster="gpus=10240 fabric=fat"
# Fabrics: a name for the page, then the generator's extra words.
fabrics=("non-blocking leaves|" "leaves 2:1|leaf_oversub=2")
degraded="4:0.25"
loads="0.6 0.8"
# The configurations: name, then loom sim's options.
configs=(
	"intact fabric, Slurm's order|"
	"Slurm's order|--degraded-uplinks $degraded"
	"loom's rank order|--degraded-uplinks $degraded --rank-order yes"
	"Slurm's order + link marks|--degraded-uplinks $degraded --link-marks 0.25"
	"rank order + link marks|--degraded-uplinks $degraded --rank-order yes --link-marks 0.25"
)
fail=0
f=0
for fab in "${fabrics[@]}"; do
for cab in block across; do
	for load in $loads; do
		i=0
		for cfg in "${configs[@]}"; do
			name=${cfg%%|*}
			opts=${cfg#*|}
			for seed in $seeds; do
				dir=$work/f$f-$cab-l$load-c$i-s$seed
				# shellcheck disable=SC2086
				if ! "$loom" sim --generate "$cluster ${fab#*|} cabling=$cab" --generate-jobs "days=7 load=$load seed=$seed" \
					--seed "$seed" --days 7 --placer loom --failures none --comm-model ring --out "$dir" \
					--progress no --quiet $opts >"$dir.txt" 2>&1; then
					echo "sim_comm: FAIL ${fab%%|*}, $cab load $load $name seed $seed: $(head -3 "$dir.txt")" >&2
					fail=1
					continue
				fi
				printf '%s\n' "$name" >"$dir/config"
			done
			i=$((i + 1))
		done
		echo "sim_comm: ${fab%%|*}, $cab cabling, load $load: done" >&2
	done
done
printf '%s\n' "${fab%%|*}" >"$work/fabric$f"
f=$((f + 1))
done
[ $fail = 0 ] || { echo "sim_comm: some runs failed; the page is not written" >&2; exit 1; }
python3 - "$work" "$page" "$seeds" "$cluster" "$degraded" "$loads" <<'PY'
import csv, glob, os, sys
work, page, seeds, cluster, degraded, loads = sys.argv[1], sys.argv[2], sys.argv[3].split(), sys.argv[4], sys.argv[5], sys.argv[6].split()

def mean(v):
    return sum(v) / len(v) if v else float("nan")

runs = {}
fabrics = []
while os.path.exists("%s/fabric%d" % (work, len(fabrics))):
    fabrics.append(open("%s/fabric%d" % (work, len(fabrics))).read().strip())
for d in sorted(glob.glob(work + "/f*-*-l*-c*-s*")):
    if not os.path.isdir(d):
        continue
    fab, cab, load, idx, seed = os.path.basename(d).split("-")
    name = open(d + "/config").read().strip()
    s = dict(zip(*list(csv.reader(open(d + "/summary.csv")))))
    jobs = list(csv.DictReader(open(d + "/loom/jobs.csv")))
    runs.setdefault((int(fab[1:]), cab, load[1:], int(idx[1:]), name), []).append((s, jobs))

def stats(rs):
    """Over every seed: heavy multi-node jobs' step factor, their share on a
    degraded leaf and its step factor there, their completion time; all
    multi-node jobs' step factor; the mean wait and utilization."""
    hv = [j for _, jobs in rs for j in jobs if j["comm"] == "heavy" and int(j["nodes"]) > 1 and int(j["first_start_s"]) >= 0]
    multi = [j for _, jobs in rs for j in jobs if int(j["nodes"]) > 1 and int(j["first_start_s"]) >= 0]
    on_bad = [j for j in hv if int(j["degraded_leaves"]) > 0]
    done = [j for j in hv if j["state"] == "COMPLETED"]
    run_h = [(int(j["end_s"]) - int(j["first_start_s"])) / 3600 for j in done]
    return {
        "heavy": len(hv),
        "sf_heavy": mean([float(j["step_factor"]) for j in hv]),
        "sf_multi": mean([float(j["step_factor"]) for j in multi]),
        "bad_share": len(on_bad) / len(hv) if hv else float("nan"),
        "sf_bad": mean([float(j["step_factor"]) for j in on_bad]),
        "edges": mean([int(j["ring_leaf_edges"]) / int(j["nodes"]) for j in hv]),
        "run_h": mean(run_h),
        "jct_h": mean([(int(j["end_s"]) - int(j["submit_s"])) / 3600 for j in done]),
        "wait_h": mean([float(s["wait_mean_h"]) for s, _ in rs]),
        "util": mean([float(s["utilization"]) for s, _ in rs]),
    }

with open(page, "w") as out:
    p = lambda *a: print(*a, file=out)
    p("# Rank order and link-aware placement at scale (loom sim)")
    p()
    p("Made by `scripts/bench.sh comm-sim` (bench/sim_comm.sh) on 2 cores. The cluster: `%s` (1,280 eight-GPU nodes, 80 leaves of 16 under 5 pods, pods 2:1 to the spine), with non-blocking leaves or leaves 2:1 to their pod (`leaf_oversub=2`), and with `--degraded-uplinks %s`: 4 leaves spread over the cluster have uplinks at a quarter of their capacity. Jobs: `days=7 load=L` per seed (%s); jobs of 32 GPUs or more are comm=heavy, other multi-node jobs normal. No failures. Every configuration of a seed runs the same jobs; figures are over every job of every seed." % (cluster, degraded, ", ".join(seeds)))
    p()
    p("The cost model is loom sim's ring model (`--comm-model ring`, loom-sim(1)): a ring all-reduce over the job's nodes in its rank order, one ring per rail; the ring edges that leave a leaf share the job's part of that leaf's uplink. A heavy job's step is 40% communication at the reference, so a step factor of 1.4 is a step 40% longer than on one leaf.")
    p()
    p("- **Slurm's order**: the job's ranks follow Slurm's node order (the names' order). **loom's rank order**: the order spank_place gives the job (LOOM_NODE_RANK, LOOM_HOSTFILE; `loom topo ranks`).")
    p("- **link marks**: a quarter of each degraded leaf's nodes carries a link check's loom:suspect mark (what jobcomp/health's ib_* and link_flaps checks raise), which select/topo weighs (`link_heavy=400`, `link_normal=40`, `link_light=0`): heavy gangs stay off such a leaf while healthy leaves can hold them. Without marks placement does not see the degradation.")
    p("- **block** cabling: node names follow the leaves (n00001-n00016 on leaf1), as on most sites; **across**: names go round a pod's leaves, so Slurm's order changes leaf at every step.")
    p()
    cols = ["heavy gangs", "step factor, heavy", "ratio", "on a degraded leaf", "step factor there", "leaf-crossing ring edges per node",
            "run time, heavy (h)", "ratio", "completion, heavy (h)", "step factor, all multi-node", "mean wait (h)", "utilization"]
    for fi, fab in enumerate(fabrics):
      for cab in ("block", "across"):
        for load in loads:
            keys = sorted(k for k in runs if k[0] == fi and k[1] == cab and k[2] == load)
            if not keys:
                continue
            st = {k[4]: stats(runs[k]) for k in keys}
            names = [k[4] for k in keys]
            base = st[names[1]] if len(names) > 1 else st[names[0]]
            p("## %s, %s cabling, load %s" % (fab.capitalize(), cab, load))
            p()
            p("| | " + " | ".join(cols) + " |")
            p("|---|" + "---|" * len(cols))
            for n in names:
                r = st[n]
                p("| %s | %d | %.4f | %.3f | %.1f%% | %.3f | %.2f | %.2f | %.3f | %.2f | %.4f | %.2f | %.4f |" % (
                    n, r["heavy"], r["sf_heavy"], r["sf_heavy"] / base["sf_heavy"], 100 * r["bad_share"], r["sf_bad"],
                    r["edges"], r["run_h"], r["run_h"] / base["run_h"], r["jct_h"], r["sf_multi"], r["wait_h"], r["util"]))
            p()
    p("## Reading these")
    p()
    def row(fi, cab, load, idx):
        k = [k for k in runs if k[0] == fi and k[1] == cab and k[2] == load and k[3] == idx]
        return stats(runs[k[0]]) if k else None
    for fi, fab in enumerate(fabrics):
        for load in loads:
            b0, bo, bm, bb = (row(fi, "block", load, i) for i in (1, 2, 3, 4))
            a0, ao, am, ab = (row(fi, "across", load, i) for i in (1, 2, 3, 4))
            if not all((b0, bo, bm, bb, a0, ao, am, ab)):
                continue
            p("- %s, load %s. Block cabling: loom's rank order gives a heavy step factor of %.4f against %.4f in Slurm's order (%.3fx): the names already follow the leaves. Across: %.4f against %.4f (%.3fx), heavy run time %.3fx. Link marks: heavy gangs on a degraded leaf %.1f%% against %.1f%% (block), step factor %.3fx; with rank order as well, across: %.3fx." % (
                fab.capitalize(), load, bo["sf_heavy"], b0["sf_heavy"], bo["sf_heavy"] / b0["sf_heavy"],
                ao["sf_heavy"], a0["sf_heavy"], ao["sf_heavy"] / a0["sf_heavy"], ao["run_h"] / a0["run_h"],
                100 * bm["bad_share"], 100 * b0["bad_share"], bm["sf_heavy"] / b0["sf_heavy"], ab["sf_heavy"] / a0["sf_heavy"]))
    p("- Rank order only matters where a ring edge leaving its leaf costs something: on a fabric whose names follow the leaves Slurm's order is already the rank order, and on non-blocking leaves only the degraded uplinks make the order count. On leaves cabled across the names, loom's order gives the same figures as block cabling: the order undoes the cabling.")
    p("- Link marks keep most heavy gangs off the degraded leaves; those that still use one do so because the cluster had no other room (the clean leaves of the domain could not hold the gang), more often at load 0.8. The marks do not lower those jobs' step factor: they choose which leaves a gang uses, not how many nodes of a degraded leaf it takes (in the ring model a gang with more nodes there has a larger part of its uplink).")
    p("- The completion time and the mean wait follow the queue: a configuration whose jobs run faster frees GPUs sooner, so every later start moves; compare run times for the placement's effect and completion times for the whole.")
    p()
    p("Heavy gangs: the multi-node comm=heavy jobs that started within the 7 days (a configuration whose jobs run slower starts fewer of them).")
    p("Ratios are against \"Slurm's order\" on the degraded fabric, same cabling and load. The run time of a heavy job is its first start to its end (step time x steps, with checkpoints); its completion time adds the queue wait, which the order of starts makes noisy: one job that runs faster changes when every later job starts.")
PY
echo "sim_comm: wrote $page"
