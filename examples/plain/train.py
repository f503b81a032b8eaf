#!/usr/bin/env python3
"""A training loop of one's own on loom's SDK: one process per rank started
by srun, each rank holding a shard of its own (here: an array of floats),
the ranks meeting in an all-reduce every step as a data-parallel job's
do (torch.distributed, gloo). No framework.

The lines marked "# loom" are all a loop needs: the Checkpointer reads what
spank_ckpt set (LOOM_CKPT_DIR, the interval, the requests before the time
limit and before a predicted node failure) and agrees through the process
group; restore() returns the newest checkpoint every rank can restore,
should_checkpoint() gives every rank the same answer, save_async() copies
the state and writes it in the background.

Environment: MASTER_ADDR and MASTER_PORT (the rendezvous, set by job.sbatch),
STEPS (20000), STEP_SECONDS (sleep per step, 0).
Prints per rank: "rank R final step=N sha256=H resumed_from=S".
"""
import array
import hashlib
import os
import time

import torch
import torch.distributed as dist

import loom_ckpt  # loom: pip install loom-ckpt (the deb and rpm install it)

STEPS = int(os.environ.get("STEPS", "20000"))
STEP_SECONDS = float(os.environ.get("STEP_SECONDS", "0"))


def initial_shard(rank):
    return array.array("d", [((rank * 7919 + i) % 1000) / 1000.0 for i in range(1 << 14)])


def train_step(shard, rank, step, mean):
    k = ((rank + 1) * 1009 + step * 7919) % 997 / 997.0 + mean * 1e-3
    for i in range(0, len(shard), 32):
        shard[i] = shard[i] * 0.999 + k


def main():
    rank, world = int(os.environ["SLURM_PROCID"]), int(os.environ["SLURM_NTASKS"])
    dist.init_process_group("gloo", rank=rank, world_size=world)
    ck = loom_ckpt.Checkpointer()  # loom
    shard, start = initial_shard(rank), 0
    c = ck.restore()  # loom
    if c is not None:  # loom
        shard = array.array("d", c.read("shard.bin"))  # loom
        start = int(c.read("step.txt"))  # loom
    for step in range(start, STEPS):
        total = torch.tensor([shard[0]], dtype=torch.float64)
        dist.all_reduce(total)  # every rank's step depends on the others'
        train_step(shard, rank, step, total.item() / world)
        if STEP_SECONDS:
            time.sleep(STEP_SECONDS)
        if ck.should_checkpoint(step + 1):  # loom
            ck.save_async(step + 1, {"shard.bin": shard, "step.txt": b"%d" % (step + 1)})  # loom
    ck.close()  # loom: waits for the last save
    # One write of the whole line: the ranks share one output file.
    print("rank %d final step=%d sha256=%s resumed_from=%d\n" % (
        rank, STEPS, hashlib.sha256(shard.tobytes()).hexdigest(), start), end="", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
