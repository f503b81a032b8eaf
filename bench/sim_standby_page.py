"""bench/results/standby-sim.md from the runs of bench/sim_standby.sh.

    sim_standby_page.py WORK PAGE SEEDS CLUSTER MIX
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sim_bands import BANDS, band_stats, large_ettr, load_runs, mean, spread  # noqa: E402


def rows(runs):
    out = []
    for (_, name), rs in sorted(runs.items()):
        per = [band_stats(j) for _, _, j in rs]
        ettr, wall = large_ettr(per)
        r = {"name": name, "ettr": ettr, "seeds": spread([large_ettr([p])[0] for p in per])}
        r["bands"] = {l: (sum(p[l][0] for p in per), mean([p[l][1] for p in per])) for _, _, l in BANDS}
        standby = sum(float(s["standby_gpu_h"]) for _, s, _ in rs)
        r["standby_per_1000"] = 1000 * standby / wall if wall else float("nan")
        for k in ("in_alloc_restarts", "requeues", "replacements", "utilization", "wait_mean_h", "job_failures"):
            r[k] = mean([float(s[k]) for _, s, _ in rs])
        out.append(r)
    return out


def write(page, rs, seeds, cluster, mix):
    base = rs[0]
    with open(page, "w") as out:
        p = lambda *a: print(*a, file=out)
        p("# Recovery inside the allocation at scale (loom sim)")
        p()
        p("Made by `scripts/bench.sh standby-sim` (bench/sim_standby.sh) on 2 cores. The cluster: `%s` (512 NVL72 "
          "racks of 18 four-GPU nodes); the jobs: `%s` for each seed (%s), every job of 8 GPUs or more with "
          "`--ckpt` (automatic interval, checkpoint cost 60 s, restart 300 s). Failures: Llama 3's rates and "
          "causes. Every configuration runs the same jobs and failures of a seed; large-job figures are over every "
          "large job of every seed." % (cluster, mix, ", ".join(seeds)))
        p()
        p("- **standby**: every `--ckpt` job of 1,024 GPUs or more holds standby nodes in its allocation "
          "(`--ckpt-standby`; auto: `ckpt::standby_count`, enough to cover its node failures over its time limit "
          "with probability p at the failure model's node MTBF). When one of its nodes fails with a standby left, "
          "the step starts again on the others plus a standby 15 s after detection, then the 300 s restore; the "
          "time limit runs on. Without one: the spares, then the requeue.")
        p("- **spares**, **migration**, **requeue**: as in bench/results/spares-sim.md.")
        p()
        p("ETTR: productive time over time from first start to end, GPU-weighted. Standby GPU-h: the standby nodes' "
          "GPU-hours held idle, per 1,000 GPU-h of the large jobs' run time.")
        p()
        hdr = ("| | ETTR | seeds' range | " + " | ".join("ETTR %s (jobs)" % l for _, _, l in BANDS) +
               " | ratio to requeue | restarts in place | requeues | standby GPU-h per 1,000 | utilization | mean wait (h) |")
        p(hdr)
        p("|" + "---|" * (hdr.count("|") - 1))
        for r in rs:
            b = " | ".join("%.3f (%d)" % (r["bands"][l][1], r["bands"][l][0]) if r["bands"][l][0] else "-"
                           for _, _, l in BANDS)
            p("| %s | %.4f | %.3f-%.3f | %s | %.2f | %.0f | %.0f | %.1f | %.4f | %.2f |" % (
                r["name"], r["ettr"], r["seeds"][0], r["seeds"][1], b, r["ettr"] / base["ettr"],
                r["in_alloc_restarts"], r["requeues"], r["standby_per_1000"], r["utilization"], r["wait_mean_h"]))
        p()
        p("Restarts in place and requeues are means per seed, over all jobs.")


def main():
    work, page, seeds, cluster, mix = sys.argv[1], sys.argv[2], sys.argv[3].split(), sys.argv[4], sys.argv[5]
    runs = load_runs(work)
    if not runs:
        sys.exit("sim_standby_page: no runs under %s" % work)
    write(page, rows(runs), seeds, cluster, mix)


if __name__ == "__main__":
    main()
