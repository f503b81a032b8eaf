#!/usr/bin/env python3
"""A training loop on loom's SDK alone, no framework: one process per rank
(srun), each rank holding a shard of its own (here: an array of floats).

The lines marked "# loom" are all a loop needs: the Checkpointer reads what
spank_ckpt set (LOOM_CKPT_DIR, the interval, the requests before the time
limit and before a predicted node failure), restore() returns the newest
checkpoint every rank can restore, should_checkpoint() gives every rank the
same answer, save_async() copies the state and writes it in the background.

Environment: STEPS (20000), STEP_SECONDS (sleep per step, 0).
Prints per rank: "rank R final step=N sha256=H resumed_from=S".
"""
import array
import hashlib
import os
import time

import loom_ckpt  # loom: pip install loom-ckpt (the deb and rpm install it)

STEPS = int(os.environ.get("STEPS", "20000"))
STEP_SECONDS = float(os.environ.get("STEP_SECONDS", "0"))


def initial_shard(rank):
    return array.array("d", [((rank * 7919 + i) % 1000) / 1000.0 for i in range(1 << 14)])


def train_step(shard, rank, step):
    k = ((rank + 1) * 1009 + step * 7919) % 997 / 997.0
    for i in range(0, len(shard), 32):
        shard[i] = shard[i] * 0.999 + k


def main():
    rank, world, _launcher = loom_ckpt.launch_ranks()
    ck = loom_ckpt.Checkpointer()  # loom
    shard, start = initial_shard(rank), 0
    c = ck.restore()  # loom
    if c is not None:  # loom
        shard = array.array("d", c.read("shard.bin"))  # loom
        start = int(c.read("step.txt"))  # loom
        print("rank %d of %d resumed from step %d" % (rank, world, start), flush=True)
    for step in range(start, STEPS):
        train_step(shard, rank, step)
        if STEP_SECONDS:
            time.sleep(STEP_SECONDS)
        if ck.should_checkpoint(step + 1):  # loom
            ck.save_async(step + 1, {"shard.bin": shard, "step.txt": b"%d" % (step + 1)})  # loom
    ck.close()  # loom: waits for the last save
    print("rank %d final step=%d sha256=%s resumed_from=%d" % (
        rank, STEPS, hashlib.sha256(shard.tobytes()).hexdigest(), start), flush=True)


if __name__ == "__main__":
    main()
