#!/usr/bin/env python3
"""A training loop of one's own on Hugging Face Accelerate, checkpointed by
loom (the lines marked "# loom" are the whole change).

Accelerate wraps the model for DDP (gloo on CPU here); every rank trains on
batches of its own. loom decides when to save (a signal, spank_ckpt's request
before the time limit, or LOOM_CKPT_INTERVAL): accelerator.save_state()
writes models, optimizers and every process's RNG state into loom's staging
and loom commits it; accelerate_restore() loads the newest loom checkpoint
with accelerator.load_state().

    torchrun --nproc-per-node 2 examples/accelerate/train.py

Environment: TRAIN_STEPS (200), TRAIN_STEP_SLEEP (seconds per step, 0).
Prints per rank, at the end: "rank R final step=N sha256=H resumed_from=S"
(H: the final weights; S: the step it resumed from, 0 for none).
"""
import hashlib
import os
import time

import torch
from accelerate import Accelerator
from accelerate.utils import set_seed

import loom_ckpt  # loom
from loom_ckpt.hf import accelerate_restore, accelerate_save  # loom

STEPS = int(os.environ.get("TRAIN_STEPS", "200"))
SLEEP = float(os.environ.get("TRAIN_STEP_SLEEP", "0"))


def weights_sha256(model):
    h = hashlib.sha256()
    for name, t in sorted(model.state_dict().items()):
        h.update(name.encode())
        h.update(t.detach().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()


def main():
    accelerator = Accelerator(cpu=True)
    set_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.Tanh(), torch.nn.Linear(64, 1))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    model, opt = accelerator.prepare(model, opt)
    rank = accelerator.process_index
    ck = loom_ckpt.Checkpointer()  # loom
    start = accelerate_restore(accelerator, ck) or 0  # loom
    for step in range(start, STEPS):
        g = torch.Generator().manual_seed(100003 * rank + step)  # this rank's own batch
        x = torch.randn(32, 16, generator=g)
        loss = torch.nn.functional.mse_loss(model(x), x.sum(dim=1, keepdim=True).sin())
        accelerator.backward(loss)
        opt.step()
        opt.zero_grad()
        if SLEEP:
            time.sleep(SLEEP)
        if ck.should_checkpoint(step + 1):  # loom
            accelerate_save(accelerator, ck, step + 1)  # loom
    ck.close()  # loom
    # One write of the whole line: the ranks share one output file.
    print("rank %d final step=%d sha256=%s resumed_from=%d\n" % (
        rank, STEPS, weights_sha256(accelerator.unwrap_model(model)), start), end="", flush=True)


if __name__ == "__main__":
    main()
