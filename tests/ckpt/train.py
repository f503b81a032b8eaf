#!/usr/bin/env python3
"""Deterministic training program for loom's checkpoint tests.

A small MLP (8 inputs, 16 tanh hidden units, 1 sigmoid output) learns a
non-linear boundary from generated data with plain SGD, in pure Python. Every
minibatch is drawn from a generator seeded by (seed, step), so a run that is
interrupted and resumes from a checkpoint follows the same trajectory as one
that is not. It checkpoints through the loom SDK (sdk/python/loom_ckpt/)
and prints the SHA-256 of its final weights and its accuracy:

    final step=12000 sha256=<hex> accuracy=0.9xx restarts=N resumed_from=S

Environment: TRAIN_STEPS (12000), TRAIN_SEED (7), TRAIN_STEP_DELAY (seconds
to sleep per step, stretches the run without changing its result),
TRAIN_PROGRESS (a file the program writes its step into every 50 steps).
"""

import hashlib
import math
import os
import random
import struct
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.environ.get("LOOM_PYTHON_SDK", os.path.join(here, "..", "..", "sdk", "python")))
import loom_ckpt  # noqa: E402

D, H = 8, 16
STEPS = int(os.environ.get("TRAIN_STEPS", "12000"))
SEED = int(os.environ.get("TRAIN_SEED", "7"))
DELAY = float(os.environ.get("TRAIN_STEP_DELAY", "0"))
PROGRESS = os.environ.get("TRAIN_PROGRESS", "")
BATCH, LR, N = 32, 0.1, 2000


def make_data():
    rng = random.Random(SEED)
    xs, ys = [], []
    for _ in range(N):
        x = [rng.uniform(-1, 1) for _ in range(D)]
        # A curved boundary: a linear model cannot learn it perfectly.
        y = 1.0 if x[0] * x[1] + 0.5 * math.sin(3 * x[2]) + 0.3 * x[3] > 0 else 0.0
        xs.append(x)
        ys.append(y)
    return xs, ys


def init_weights():
    rng = random.Random(SEED + 1)
    w1 = [rng.gauss(0, 0.5) for _ in range(H * D)]
    b1 = [0.0] * H
    w2 = [rng.gauss(0, 0.5) for _ in range(H)]
    return w1 + b1 + w2 + [0.0]


def forward(p, x):
    hid = []
    for j in range(H):
        s = p[H * D + j]
        row = j * D
        for i in range(D):
            s += p[row + i] * x[i]
        hid.append(math.tanh(s))
    o = p[H * D + H + H]
    for j in range(H):
        o += p[H * D + H + j] * hid[j]
    return hid, 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, o))))


def sgd_step(p, xs, ys, step):
    rng = random.Random(SEED * 1000003 + step)
    grad = [0.0] * len(p)
    w2 = H * D + H
    for _ in range(BATCH):
        k = rng.randrange(N)
        x, y = xs[k], ys[k]
        hid, out = forward(p, x)
        d = out - y
        grad[w2 + H] += d
        for j in range(H):
            grad[w2 + j] += d * hid[j]
            dh = d * p[w2 + j] * (1.0 - hid[j] * hid[j])
            grad[H * D + j] += dh
            row = j * D
            for i in range(D):
                grad[row + i] += dh * x[i]
    scale = LR / BATCH
    for i in range(len(p)):
        p[i] -= scale * grad[i]


def pack(p):
    return struct.pack("<%dd" % len(p), *p)


def main():
    xs, ys = make_data()
    ck = loom_ckpt.Checkpointer()
    p, start = init_weights(), 0
    restored = ck.restore()
    if restored is not None:
        files = restored.read_all()
        p = list(struct.unpack("<%dd" % len(p), files["weights.bin"]))
        start = int(files["step.txt"].decode())
        print("resumed from step %d (%s)" % (start, os.path.basename(restored.path)), flush=True)
    for step in range(start, STEPS):
        sgd_step(p, xs, ys, step)
        if DELAY:
            time.sleep(DELAY)
        if PROGRESS and (step + 1) % 50 == 0:
            with open(PROGRESS, "w") as f:
                f.write("%d\n" % (step + 1))
        if ck.should_checkpoint() and step + 1 < STEPS:
            ck.save_async(step + 1, {"weights.bin": pack(p), "step.txt": b"%d" % (step + 1)})
    if ck.enabled:
        ck.wait()
    correct = sum((forward(p, x)[1] > 0.5) == (y > 0.5) for x, y in zip(xs, ys))
    print("final step=%d sha256=%s accuracy=%.3f restarts=%s resumed_from=%d" % (
        STEPS, hashlib.sha256(pack(p)).hexdigest(), correct / N,
        os.environ.get("LOOM_RESTART_COUNT", "0"), start), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
