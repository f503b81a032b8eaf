"""The TRAIN_COMM=fsdp mode of train_ranks.py (PyTorch >= 2.4): a model
sharded with FSDP2's fully_shard over every rank (gloo, CPU), so that each
rank holds a different shard of the parameters and of Adam's moments as
DTensors, saved and restored through the SDK's DCP path. DCP reshards: a job
of another world size restores the same full parameters.

Prints, besides train_ranks.py's line, "rank R full=<sha256 of the full
parameters>" (the same on every rank); the sha256= of the main line is of
this rank's own shards."""

import hashlib
import os
import time


def _model(torch, mesh, seed):
    from torch.distributed.fsdp import fully_shard
    torch.manual_seed(seed)  # the same model on every rank; fully_shard gives each its shard
    model = torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.Tanh(), torch.nn.Linear(32, 1))
    for layer in model:
        if isinstance(layer, torch.nn.Linear):
            fully_shard(layer, mesh=mesh)
    fully_shard(model, mesh=mesh)
    return model


def _state(torch, model, opt, step):
    from torch.distributed.checkpoint.state_dict import get_state_dict
    msd, osd = get_state_dict(model, opt)
    return {"model": msd, "opt": osd, "step": torch.tensor(step)}


def _digests(model):
    mine, full = hashlib.sha256(), hashlib.sha256()
    for t in model.state_dict().values():
        mine.update(repr(t.to_local().tolist()).encode())
        full.update(repr(t.full_tensor().tolist()).encode())  # collective: every rank
    return mine.hexdigest(), full.hexdigest()


def run_fsdp(ck, rank, world, cfg):
    """cfg: STEPS, SEED, CRASH_AT, STEP_SLEEP, wish (rank 0's reason), SAVE_LAST."""
    import torch
    import torch.distributed as dist
    from torch.distributed.checkpoint.state_dict import set_state_dict
    from torch.distributed.device_mesh import init_device_mesh
    torch.set_num_threads(1)
    torch.set_default_dtype(torch.float64)
    model = _model(torch, init_device_mesh("cpu", (world,)), cfg["SEED"])
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    got = ck.load_torch(template=_state(torch, model, opt, 0))
    start = 0
    if got is not None:
        set_state_dict(model, opt, model_state_dict=got["model"], optim_state_dict=got["opt"])
        start = int(got["step"])
    for step in range(start, cfg["STEPS"]):
        if cfg["CRASH_AT"] and step == cfg["CRASH_AT"]:
            os._exit(3)
        g = torch.Generator().manual_seed(cfg["SEED"] * 100003 + rank * 7919 + step)
        x = torch.randn(32, 8, generator=g)
        y = (x[:, :1] * x[:, 1:2] > 0).to(torch.float64)
        loss = torch.nn.functional.mse_loss(torch.sigmoid(model(x)), y)
        opt.zero_grad()
        loss.backward()  # FSDP reduce-scatters the gradients: every rank's step depends on the others
        opt.step()
        if cfg["STEP_SLEEP"]:
            time.sleep(cfg["STEP_SLEEP"])
        if cfg["wish"](step + 1):
            ck.request()
        if ck.should_checkpoint(step + 1):
            ck.save_torch_async(step + 1, _state(torch, model, opt, step + 1))
    if cfg["SAVE_LAST"] and start < cfg["STEPS"]:
        ck.save_torch_async(cfg["STEPS"], _state(torch, model, opt, cfg["STEPS"]))
    ck.close()
    mine, full = _digests(model)
    print("rank %d full=%s" % (rank, full), flush=True)
    dist.destroy_process_group()
    return mine, start, ck.torch_writer
