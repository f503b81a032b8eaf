#!/usr/bin/env python3
"""Deterministic distributed training program for loom's checkpoint tests:
every rank holds different state (a shard of its own), and the ranks agree
through the SDK on when to checkpoint.

TRAIN_COMM=none   no communication library: each rank's shard is an array of
                  float64 updated from (seed, rank, step); the SDK agrees
                  through rank 0's stamped step. Launched with srun per rank
                  (or the SLURM_PROCID/SLURM_NTASKS a test sets).
TRAIN_COMM=gloo   PyTorch: each rank trains its own MLP shard with Adam on its
                  own minibatches and the ranks all-reduce the loss every step
                  (so they move in lock-step and depend on each other); the
                  SDK agrees through the process group; state through
                  save_torch_async() (DCP with PyTorch >= 2.3, torch.save
                  before). Launched with torchrun (per node) or srun per rank.
TRAIN_COMM=fsdp   PyTorch >= 2.4: FSDP2 shards one model over the ranks
                  (train_fsdp.py); TRAIN_SAVE_LAST=1 also saves the last step.

Prints, per rank: "rank R final step=N sha256=<hex> resumed_from=S writer=W"
and exits 0. TRAIN_STEPS (600), TRAIN_SEED (7), TRAIN_EVERY (checkpoint every
this many steps, through should_checkpoint's interval: the rank-0 wish),
TRAIN_CRASH_AT (every rank exits abruptly, code 3, at this step of the first
attempt: the job killed, saves in flight; a restart goes on), TRAIN_STEP_SLEEP (seconds per step, for
cluster scenarios that interrupt the job from outside), TRAIN_FAULT_FILE and TRAIN_FAULT_RANK (a GPU
fault on demand: when the file appears, that rank takes it, prints what NCCL prints when the GPU under
a rank dies, naming its node, and exits 1).
"""

import array
import hashlib
import os
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.environ.get("LOOM_PYTHON_SDK", os.path.join(here, "..", "..", "sdk", "python")))
import loom_ckpt  # noqa: E402

STEPS = int(os.environ.get("TRAIN_STEPS", "600"))
SEED = int(os.environ.get("TRAIN_SEED", "7"))
EVERY = int(os.environ.get("TRAIN_EVERY", "100"))
# Only the first attempt crashes: a restart by torchrun or a requeue by Slurm goes on.
FIRST = all(os.environ.get(v, "0") in ("", "0") for v in
            ("TORCHELASTIC_RESTART_COUNT", "LOOM_RESTART_COUNT", "SLURM_RESTART_COUNT"))
CRASH_AT = int(os.environ.get("TRAIN_CRASH_AT", "0")) if FIRST else 0
STEP_SLEEP = float(os.environ.get("TRAIN_STEP_SLEEP", "0"))
FAULT_FILE = os.environ.get("TRAIN_FAULT_FILE", "")
FAULT_RANK = int(os.environ.get("TRAIN_FAULT_RANK", "-1"))
COMM = os.environ.get("TRAIN_COMM", "none")
DCP = COMM in ("gloo", "fsdp") and loom_ckpt.TORCH_ASYNC


class Every:
    """Rank 0 wishes a checkpoint every EVERY steps (the others never do: the
    agreement must carry rank 0's wish to them)."""

    def __init__(self, rank):
        self.rank = rank

    def __call__(self, step):
        return self.rank == 0 and EVERY > 0 and step % EVERY == 0


def plain(ck, rank):
    n = 1 << 15
    w = array.array("d", [((SEED * 31 + rank * 17 + i) % 1000) / 1000.0 for i in range(n)])
    start = 0
    c = ck.restore()
    if c is not None:
        w = array.array("d")
        w.frombytes(c.read("w.bin"))
        start = int(c.read("step.txt"))
    return w, start


def fault(rank):
    """The GPU fault a test asks for (TRAIN_FAULT_FILE): once, on one rank."""
    if rank != FAULT_RANK or not FAULT_FILE or not os.path.exists(FAULT_FILE):
        return
    try:
        os.rename(FAULT_FILE, FAULT_FILE + ".fired")
    except OSError:
        return
    host = os.environ.get("SLURMD_NODENAME") or os.uname().nodename
    print("%s:%d:%d [0] NCCL WARN Cuda failure 'uncorrectable ECC error encountered'" % (host, os.getpid(), os.getpid()),
          flush=True)
    os._exit(1)


def barrier(step, rank, world, first):
    """With TRAIN_BARRIER_DIR, the plain ranks meet at their first step and
    every 10 steps (files in that directory): the lock-step a real job's
    collectives give it, without which ranks that start seconds apart on a
    loaded machine are past the step rank 0 stamps before it stamps it."""
    d = os.environ.get("TRAIN_BARRIER_DIR")
    if not d or (step % 10 and not first):
        return
    os.makedirs(d, exist_ok=True)
    run = "%s.%s" % (os.environ.get("LOOM_RESTART_COUNT", "0"), os.environ.get("LOOM_CKPT_GENERATION", "0"))
    name = lambda r: os.path.join(d, "%s.%d.%d" % (run, step, r))  # noqa: E731
    open(name(rank), "w").close()
    deadline = time.monotonic() + 300
    while not all(os.path.exists(name(r)) for r in range(world)):
        if time.monotonic() > deadline:
            sys.exit("train_ranks: rank %d: the other ranks never reached step %d" % (rank, step))
        time.sleep(0.005)


def first_step(rank, start, step):
    """TRAIN_FIRST_STEP_LINE=1: rank 0 says when it completed the first step
    of this start (bench/ckpt_standby_recovery.sh times recoveries by it)."""
    if rank == 0 and step == start and os.environ.get("TRAIN_FIRST_STEP_LINE") == "1":
        print("first step %d at %.3f restart=%s generation=%s" % (
            start, time.time(), os.environ.get("SLURM_RESTART_COUNT", "0"),
            os.environ.get("LOOM_CKPT_GENERATION", "0")), flush=True)


def run_plain(ck, rank):
    w, start = plain(ck, rank)
    wish = Every(rank)
    for step in range(start, STEPS):
        barrier(step, rank, ck.world_size, step == start)
        fault(rank)
        if CRASH_AT and step == CRASH_AT:
            os._exit(3)
        k = (SEED + rank * 1009 + step * 7919) % 997 / 997.0
        for i in range(0, len(w), 64):
            w[i] = w[i] * 0.999 + k
        if STEP_SLEEP:
            time.sleep(STEP_SLEEP)
        first_step(rank, start, step)
        if wish(step + 1):
            ck.request()  # rank 0's own reason to checkpoint
        if ck.should_checkpoint(step + 1):
            guarded(ck.save_async, step + 1, {"w.bin": w, "step.txt": str(step + 1).encode()})
    guarded(ck.wait)
    return hashlib.sha256(w.tobytes()).hexdigest(), start, "plain"


def guarded(fn, *args):
    """A checkpoint that fails (rank 0's commit past its deadline: another
    rank skipped a stamped step it was already past) costs that checkpoint,
    not the training: said on stderr, and training goes on."""
    try:
        fn(*args)
    except loom_ckpt.CheckpointError as e:
        sys.stderr.write("train_ranks: a checkpoint failed, training goes on: %s\n" % e)


def torch_state(model, opt, step, rank):
    """What is saved: with DCP the state dicts of torch.distributed.checkpoint.state_dict
    (parameter names as keys, optimizer state created) under a key of this
    rank's, else the modules' own. DCP takes a plain tensor saved under one
    name by every rank for a replicated one and keeps a single copy: state
    that differs per rank is a DTensor (FSDP2, tensor parallel) or is keyed
    by rank, as here."""
    import torch
    if DCP:
        from torch.distributed.checkpoint.state_dict import get_state_dict
        msd, osd = get_state_dict(model, opt)
        return {"rank%05d" % rank: {"model": msd, "opt": osd}, "step": torch.tensor(step)}
    return {"model": model.state_dict(), "opt": opt.state_dict(), "step": torch.tensor(step)}


def torch_restore(ck, model, opt, rank):
    """The step restored (0 for none); every rank restores the same one."""
    if DCP:
        from torch.distributed.checkpoint.state_dict import set_state_dict
        got = ck.load_torch(template=torch_state(model, opt, 0, rank))
        if got is not None:
            mine = got["rank%05d" % rank]
            set_state_dict(model, opt, model_state_dict=mine["model"], optim_state_dict=mine["opt"])
    else:
        got = ck.load_torch()
        if got is not None:
            model.load_state_dict(got["model"])
            opt.load_state_dict(got["opt"])
    return int(got["step"]) if got is not None else 0


def run_gloo(ck, rank, world):
    import torch
    import torch.distributed as dist
    torch.manual_seed(SEED * 1000 + rank)  # every rank a different shard
    torch.set_num_threads(1)
    torch.set_default_dtype(torch.float64)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    start = torch_restore(ck, model, opt, rank)
    wish = Every(rank)
    for step in range(start, STEPS):
        fault(rank)
        if CRASH_AT and step == CRASH_AT:
            os._exit(3)
        g = torch.Generator().manual_seed(SEED * 100003 + rank * 7919 + step)
        x = torch.randn(32, 8, generator=g)
        y = (x[:, :1] * x[:, 1:2] > 0).to(torch.float64)
        loss = torch.nn.functional.mse_loss(torch.sigmoid(model(x)), y)
        total = loss.detach().clone()
        dist.all_reduce(total)  # lock-step, and every rank's step depends on the others
        opt.zero_grad()
        (loss * (1.0 + total / world)).backward()
        opt.step()
        if STEP_SLEEP:
            time.sleep(STEP_SLEEP)
        if wish(step + 1):
            ck.request()
        if ck.should_checkpoint(step + 1):
            ck.save_torch_async(step + 1, torch_state(model, opt, step + 1, rank))
    ck.close()
    dist.destroy_process_group()
    h = hashlib.sha256()
    for t in model.state_dict().values():
        h.update(repr(t.tolist()).encode())
    return h.hexdigest(), start, ck.torch_writer


def main():
    rank, world, launcher = loom_ckpt.launch_ranks()
    if COMM in ("gloo", "fsdp"):
        import torch.distributed as dist
        os.environ.setdefault("RANK", str(rank))
        os.environ.setdefault("WORLD_SIZE", str(world))
        dist.init_process_group("gloo")
    ck = loom_ckpt.Checkpointer(interval=0, keep=int(os.environ.get("LOOM_CKPT_KEEP", "3")))
    sys.stderr.write("rank %d of %d (%s), checkpoint directory %s\n" % (rank, world, launcher, ck.dir))
    if COMM == "fsdp":
        from train_fsdp import run_fsdp
        cfg = {"STEPS": STEPS, "SEED": SEED, "CRASH_AT": CRASH_AT, "STEP_SLEEP": STEP_SLEEP, "wish": Every(rank),
               "SAVE_LAST": os.environ.get("TRAIN_SAVE_LAST") == "1"}
        digest, start, writer = run_fsdp(ck, rank, world, cfg)
    elif COMM == "gloo":
        digest, start, writer = run_gloo(ck, rank, world)
    else:
        digest, start, writer = run_plain(ck, rank)
    print("rank %d final step=%d sha256=%s resumed_from=%d writer=%s" % (rank, STEPS, digest, start, writer),
          flush=True)


if __name__ == "__main__":
    main()
