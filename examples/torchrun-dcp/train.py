#!/usr/bin/env python3
"""A model sharded over every rank with FSDP2 (fully_shard), checkpointed by
loom through PyTorch's distributed checkpoint (DCP): each rank saves its own
shards of the parameters and of Adam's moments, asynchronously, into one
checkpoint that rank 0 commits once every rank's part is written; a job of
another size restores it too (DCP reshards). gloo on CPU here; NCCL on GPUs
is the same code with device_mesh "cuda".

    torchrun --nproc-per-node 2 examples/torchrun-dcp/train.py

The lines marked "# loom" are all the checkpointing there is: the
Checkpointer finds the process group and the directory spank_ckpt set up,
load_torch_state() restores model and optimizer exactly (Adam's moments and
step counts, into a fresh optimizer), should_checkpoint() gives every rank
the same answer, save_torch_async() saves through DCP in the background.

Environment: TRAIN_STEPS (300), TRAIN_STEP_SLEEP (seconds per step, 0).
Prints per rank, at the end: "rank R final step=N sha256=H resumed_from=S"
(H: this rank's own shards; S: the step it resumed from, 0 for none).
"""
import hashlib
import os
import time

import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard

import loom_ckpt  # loom

STEPS = int(os.environ.get("TRAIN_STEPS", "300"))
SLEEP = float(os.environ.get("TRAIN_STEP_SLEEP", "0"))


def sharded_model(world):
    torch.manual_seed(0)  # the same model everywhere; fully_shard gives each rank its shard
    model = torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.Tanh(), torch.nn.Linear(64, 1))
    mesh = init_device_mesh("cpu", (world,))
    for layer in model:
        if isinstance(layer, torch.nn.Linear):
            fully_shard(layer, mesh=mesh)
    return fully_shard(model, mesh=mesh)


def own_shards_sha256(model):
    h = hashlib.sha256()
    for name, t in model.state_dict().items():
        h.update(name.encode())
        h.update(t.to_local().detach().contiguous().numpy().tobytes())
    return h.hexdigest()


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.set_num_threads(1)
    model = sharded_model(world)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    ck = loom_ckpt.Checkpointer()  # loom
    got = loom_ckpt.load_torch_state(ck, model, opt, step=torch.tensor(0))  # loom
    start = int(got["step"]) if got is not None else 0  # loom
    for step in range(start, STEPS):
        g = torch.Generator().manual_seed(100003 * rank + step)  # this rank's own batch
        x = torch.randn(32, 16, generator=g)
        loss = torch.nn.functional.mse_loss(model(x), x.sum(dim=1, keepdim=True).sin())
        opt.zero_grad()
        loss.backward()
        opt.step()
        if SLEEP:
            time.sleep(SLEEP)
        if ck.should_checkpoint(step + 1):  # loom
            ck.save_torch_async(step + 1, loom_ckpt.torch_state(model, opt, step=torch.tensor(step + 1)))  # loom
    ck.close()  # loom: waits for the last save
    # One write of the whole line: the ranks share one output file.
    print("rank %d final step=%d sha256=%s resumed_from=%d\n" % (rank, STEPS, own_shards_sha256(model), start),
          end="", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
