"""Large-job figures of loom sim runs, by size band: the GPU-weighted ETTR
and the lost GPU-hours of the jobs of each band (loom sim's jobs.csv), and
the mean and range of a figure over seeds. Used by the seeded loom sim
benchmarks (bench/sim_spares.sh, bench/sim_standby.sh)."""
import csv
import glob
import os

BANDS = [(1024, 2047, "1k"), (2048, 4095, "2k"), (4096, 8191, "4k"), (8192, 16383, "8k"), (16384, 1 << 30, "16k")]


def band_stats(jobs):
    """{band: (jobs, ETTR, lost GPU-h, GPU-h of run time)} of a run's jobs.csv rows."""
    out = {}
    for lo, hi, label in BANDS:
        wall = prod = lost = 0.0
        n = 0
        for j in jobs:
            g = int(j["gpus"])
            if g < lo or g > hi or int(j["first_start_s"]) < 0:
                continue
            w = int(j["end_s"]) - int(j["first_start_s"])
            if w <= 0:
                continue
            n += 1
            wall += w * g
            prod += float(j["ettr"]) * w * g
            lost += float(j["lost_gpu_h"])
        out[label] = (n, prod / wall if wall else float("nan"), lost, wall / 3600)
    return out


def large_ettr(per):
    """ETTR over every large job of the runs 'per' (band_stats of each)."""
    wall = sum(p[l][3] for p in per for _, _, l in BANDS)
    prod = sum(p[l][1] * p[l][3] for p in per for _, _, l in BANDS if p[l][1] == p[l][1])
    return prod / wall if wall else float("nan"), wall


def mean(v):
    v = [x for x in v if x == x]
    return sum(v) / len(v) if v else float("nan")


def spread(v):
    v = [x for x in v if x == x]
    return (min(v), max(v)) if v else (float("nan"), float("nan"))


def load_runs(work):
    """{(config index, name): [(seed, summary dict, jobs rows)]} of the runs
    under work/c<index>-s<seed>, each holding a 'config' file with its name."""
    runs = {}
    for d in sorted(glob.glob(work + "/c*-s*")):
        if not os.path.isdir(d):
            continue
        name = open(d + "/config").read().strip()
        idx, seed = os.path.basename(d).split("-")[:2]
        s = dict(zip(*list(csv.reader(open(d + "/summary.csv")))))
        jobs = list(csv.DictReader(open(d + "/loom/jobs.csv")))
        runs.setdefault((int(idx[1:]), name), []).append((seed[1:], s, jobs))
    return runs
