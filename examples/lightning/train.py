"""A small Lightning training run checkpointed by loom (the lines marked
`# loom` are the whole change to a plain Lightning script).

Every rank trains on its own data (a regression of random inputs) with Adam,
DDP over gloo on CPU. loom decides when to save (a signal, spank_ckpt's
request before the time limit, or LOOM_CKPT_INTERVAL) and a restarted job
resumes from the newest loom checkpoint by itself.

    torchrun --nproc-per-node 2 examples/lightning/train.py

Environment: TRAIN_STEPS (default 200), TRAIN_STEP_SLEEP (seconds per step,
default 0), TRAIN_BATCHES_PER_EPOCH (default 16). Prints per rank, at the end:
"rank R final step=N sha256=H resumed_from=S"
(H: the final weights; S: the step it resumed from, 0 for none).
"""

import hashlib
import os
import time

import lightning as L
import torch
from torch import nn
from torch.utils.data import TensorDataset

from loom_ckpt.lightning import LoomCheckpoint, ResumableLoader  # loom

STEPS = int(os.environ.get("TRAIN_STEPS", "200"))
SLEEP = float(os.environ.get("TRAIN_STEP_SLEEP", "0"))
BATCHES = int(os.environ.get("TRAIN_BATCHES_PER_EPOCH", "16"))
BATCH_SIZE = 8


class Regression(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(16, 64), nn.Tanh(), nn.Linear(64, 1))

    def training_step(self, batch, batch_idx):
        x, y = batch
        if SLEEP:
            time.sleep(SLEEP)
        return nn.functional.mse_loss(self.net(x), y)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)

    def train_dataloader(self):
        # This rank's own data, the same order every epoch and every run.
        g = torch.Generator().manual_seed(1000 + self.global_rank)
        x = torch.randn(BATCHES * BATCH_SIZE, 16, generator=g)
        y = x.sum(dim=1, keepdim=True).sin()
        # A loader Lightning can resume mid-epoch (a plain DataLoader would
        # restart the interrupted epoch from its first batch).
        progress = self.trainer.fit_loop.epoch_loop.batch_progress
        return ResumableLoader(TensorDataset(x, y), batch_size=BATCH_SIZE,
                               position=lambda: progress.current.processed)


def weights_sha256(module):
    h = hashlib.sha256()
    for name, t in sorted(module.state_dict().items()):
        h.update(name.encode())
        h.update(t.detach().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()


def main():
    L.seed_everything(0, verbose=False)
    local = int(os.environ.get("LOCAL_WORLD_SIZE", "1"))
    nodes = int(os.environ.get("WORLD_SIZE", "1")) // local
    loom = LoomCheckpoint()  # loom
    trainer = L.Trainer(accelerator="cpu", devices=local, num_nodes=nodes, strategy="ddp",
                        max_steps=STEPS, max_epochs=-1, use_distributed_sampler=False,
                        logger=False, enable_checkpointing=False, enable_progress_bar=False,
                        enable_model_summary=False, deterministic=True,
                        callbacks=[loom])  # loom
    model = Regression()
    trainer.fit(model)
    rank = trainer.global_rank
    resumed = loom.resumed_step or 0
    # One write of the whole line: the ranks share one output file.
    print("rank %d final step=%d sha256=%s resumed_from=%d\n" % (
        rank, trainer.global_step, weights_sha256(model), resumed), end="", flush=True)


if __name__ == "__main__":
    main()
