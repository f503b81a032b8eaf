#!/usr/bin/env python3
"""Deterministic PyTorch training program for loom's checkpoint tests.

A small MLP (8 -> 32 tanh -> 1) learns the same curved boundary as train.py
with Adam (so the optimizer's state, not only the weights, must survive a
restart), in float64 on one CPU thread with deterministic algorithms. Every
minibatch is drawn from a generator seeded by (seed, step). It checkpoints
with the loom SDK's save_torch_async() (model and optimizer state dicts) and
restores with load_torch(), then prints the SHA-256 of its final parameters:

    final step=N sha256=<hex> accuracy=0.9xx restarts=N resumed_from=S writer=W

Environment: TRAIN_STEPS (1500), TRAIN_SEED (7), TRAIN_CKPT_EVERY (also
checkpoint every this many steps, besides should_checkpoint()),
TRAIN_CRASH_AFTER (exit abruptly, without waiting for the writer, once this
many checkpoints were asked for in this run: a failure in mid-training).
"""

import hashlib
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.environ.get("LOOM_PYTHON_SDK", os.path.join(here, "..", "..", "sdk", "python")))
import loom_ckpt  # noqa: E402
import torch  # noqa: E402

STEPS = int(os.environ.get("TRAIN_STEPS", "1500"))
SEED = int(os.environ.get("TRAIN_SEED", "7"))
CRASH_AFTER = int(os.environ.get("TRAIN_CRASH_AFTER", "0"))
EVERY = int(os.environ.get("TRAIN_CKPT_EVERY", "0"))
D, H, N, BATCH = 8, 32, 2000, 64

torch.set_num_threads(1)
torch.use_deterministic_algorithms(True)
torch.set_default_dtype(torch.float64)


def make_data():
    g = torch.Generator().manual_seed(SEED)
    x = torch.rand(N, D, generator=g) * 2 - 1
    y = ((x[:, 0] * x[:, 1] + 0.5 * torch.sin(3 * x[:, 2]) + 0.3 * x[:, 3]) > 0).to(torch.float64)
    return x, y


def make_model():
    torch.manual_seed(SEED + 1)
    return torch.nn.Sequential(torch.nn.Linear(D, H), torch.nn.Tanh(), torch.nn.Linear(H, 1))


def digest(model):
    h = hashlib.sha256()
    for name, t in sorted(model.state_dict().items()):
        h.update(name.encode())
        h.update(t.detach().contiguous().numpy().tobytes())
    return h.hexdigest()


def main():
    x, y = make_data()
    model = make_model()
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    loss_fn = torch.nn.BCEWithLogitsLoss()
    ck = loom_ckpt.Checkpointer()
    start = 0
    state = ck.load_torch()
    if state is not None:
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["optim"])
        start = int(state["step"])
        print("resumed from step %d" % start, flush=True)
    asked = 0
    for step in range(start, STEPS):
        g = torch.Generator().manual_seed(SEED * 1000003 + step)
        idx = torch.randint(0, N, (BATCH,), generator=g)
        opt.zero_grad()
        loss = loss_fn(model(x[idx]).squeeze(1), y[idx])
        loss.backward()
        opt.step()
        due = ck.should_checkpoint() or (EVERY and (step + 1) % EVERY == 0)
        if ck.enabled and due and step + 1 < STEPS:
            ck.save_torch_async(step + 1, {"model": model.state_dict(), "optim": opt.state_dict(), "step": step + 1})
            asked += 1
            if CRASH_AFTER and asked >= CRASH_AFTER:
                # The node dies: no wait for the writer, no cleanup.
                print("crashing after %d checkpoint(s) at step %d" % (asked, step + 1), flush=True)
                os._exit(3)
    if ck.enabled:
        ck.wait()
    with torch.no_grad():
        acc = ((model(x).squeeze(1) > 0).to(torch.float64) == y).to(torch.float64).mean().item()
    print("final step=%d sha256=%s accuracy=%.3f restarts=%s resumed_from=%d writer=%s" % (
        STEPS, digest(model), acc, os.environ.get("LOOM_RESTART_COUNT", "0"), start, ck.torch_writer), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
