#!/usr/bin/env python3
"""Write the predictor's replay sequences (tests/health/seq-*.tsv).

Synthetic, deterministic (fixed seeds), one metric per file, one sample per
60 s as HealthCheckInterval=60 would give. The shapes follow the failure
modes in docs/field-notes: a fan or cold-plate failure (temperature ramp),
slow thermal creep, a correctable-ECC storm ahead of uncorrectable errors,
and a degrading InfiniBand link (symbol errors); the healthy ones are noise
around a steady value, a load step, a slow counter and a flat counter.

Header lines: "# metric: NAME", "# threshold: X", "# fails_at: T" (the first
sample at or above the threshold, "none" for healthy sequences). Rows: "t<TAB>value".
Run: python3 make_sequences.py   (rewrites the files in this directory)
"""
import random

def write(name, metric, threshold, rows, note):
    fails = next((t for t, v in rows if v >= threshold), None)
    with open(f"seq-{name}.tsv", "w") as f:
        f.write(f"# {note}\n# metric: {metric}\n# threshold: {threshold:g}\n")
        f.write(f"# fails_at: {fails if fails is not None else 'none'}\n")
        for t, v in rows:
            f.write(f"{t}\t{v:.6g}\n")

def series(n, fn, seed):
    r = random.Random(seed)
    return [(60 * i, fn(i, r)) for i in range(n)]

# Temperature ramp: 62 C +-1.5 for 30 min, then +0.8 C/min (fan failure).
write("fan-failure", "gpu3.temp", 84, series(70, lambda i, r: 62 + r.uniform(-1.5, 1.5) + (0.8 * (i - 30) if i > 30 else 0), 1),
      "GPU temperature: steady, then a fan failure ramps it 0.8 C/min")
# Slow creep: 70 C rising 0.25 C/min with +-0.5 C noise.
write("thermal-creep", "gpu1.temp", 84, series(70, lambda i, r: 70 + 0.25 * i + r.uniform(-0.5, 0.5), 2),
      "GPU temperature: slow creep 0.25 C/min")
# ECC storm: correctable DRAM errors from 2e6 growing 12% per minute.
write("ecc-storm", "gpu5.ecc_dram_corr", 20000000, series(40, lambda i, r: int(2e6 * 1.12 ** i), 3),
      "correctable DRAM ECC errors growing 12% per minute")
# Degrading link: symbol errors +25 per minute (+-5) from 100.
write("ib-degrading", "ib.mlx5_3/1.errors", 1000, series(60, lambda i, r: 100 + 25 * i + int(r.uniform(-5, 5)) if i else 100, 4),
      "InfiniBand error counters rising about 25 per minute")
# Healthy: noise around 75 C (+-3 C).
write("healthy-noise", "gpu2.temp", 84, series(240, lambda i, r: 75 + r.uniform(-3, 3), 5),
      "GPU temperature: busy and steady, 75 C +-3 C")
# Healthy: idle 40 C, a job starts at minute 20 and the GPU settles at 78 C.
write("healthy-load-step", "gpu0.temp", 84,
      series(120, lambda i, r: (40 if i < 20 else 78 - 30 * 0.5 ** (i - 20)) + r.uniform(-1, 1), 6),
      "GPU temperature: idle, then a job starts and it settles at 78 C")
# Healthy: correctable ECC growing 2 per minute from 100000.
write("healthy-ecc-slow", "gpu4.ecc_dram_corr", 20000000, series(240, lambda i, r: 100000 + 2 * i, 7),
      "correctable DRAM ECC errors growing 2 per minute, far from the limit")
# Healthy: IB error counters flat at 14 (the recorded H100's port_rcv_errors).
write("healthy-ib-flat", "ib.mlx5_0/1.errors", 1000, series(240, lambda i, r: 14, 8),
      "InfiniBand error counters flat")
