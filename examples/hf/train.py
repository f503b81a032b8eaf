"""A small transformers Trainer run checkpointed by loom (the lines marked
`# loom` are the whole change to a plain Trainer script).

A tiny GPT-2 built from its config (no download) learns random token
sequences; every rank gets its own share of them (DDP over gloo on CPU).
loom decides when HF saves (a signal, spank_ckpt's request before the time
limit, or LOOM_CKPT_INTERVAL), adopts HF's checkpoint-N directory into a loom
commit, and on a restart puts the newest loom checkpoint where
get_last_checkpoint() finds it.

    torchrun --nproc-per-node 2 examples/hf/train.py

Environment: TRAIN_STEPS (default 200), TRAIN_STEP_SLEEP (seconds per step,
default 0), TRAIN_OUTPUT_DIR (HF's output_dir, default ./hf-output).
Prints per rank, at the end: "rank R final step=N sha256=H resumed_from=S"
(H: the final weights; S: the step it resumed from, 0 for none).
"""

import hashlib
import os
import time

import torch
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainerCallback, TrainingArguments
from transformers.trainer_utils import get_last_checkpoint

from loom_ckpt.hf import LoomCallback  # loom

STEPS = int(os.environ.get("TRAIN_STEPS", "200"))
SLEEP = float(os.environ.get("TRAIN_STEP_SLEEP", "0"))


def dataset(n=256, length=16, vocab=64):
    g = torch.Generator().manual_seed(1234)
    ids = torch.randint(0, vocab, (n, length), generator=g)
    return [{"input_ids": x, "labels": x} for x in ids]


class Pace(TrainerCallback):
    """Slows steps down (TRAIN_STEP_SLEEP) so that a test can interrupt a run."""

    def on_step_end(self, args, state, control, **kwargs):
        time.sleep(SLEEP)


def weights_sha256(model):
    h = hashlib.sha256()
    for name, t in sorted(model.state_dict().items()):
        h.update(name.encode())
        h.update(t.detach().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()


def main():
    torch.manual_seed(0)
    config = GPT2Config(vocab_size=64, n_positions=16, n_embd=32, n_layer=2, n_head=2,
                        resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
    model = GPT2LMHeadModel(config)
    args = TrainingArguments(output_dir=os.environ.get("TRAIN_OUTPUT_DIR", "hf-output"),
                             max_steps=STEPS, per_device_train_batch_size=4, learning_rate=1e-3,
                             save_strategy="no", logging_strategy="no", report_to=[],
                             use_cpu=True, ddp_backend="gloo", seed=0, disable_tqdm=True)
    loom = LoomCallback()  # loom
    pace = [Pace()] if SLEEP else []
    trainer = Trainer(model=model, args=args, train_dataset=dataset(), callbacks=[loom] + pace)  # loom
    trainer.train(resume_from_checkpoint=get_last_checkpoint(args.output_dir))
    rank = args.process_index
    resumed = loom.resumed_step or 0
    # One write of the whole line: the ranks share one output file.
    print("rank %d final step=%d sha256=%s resumed_from=%d\n" % (
        rank, trainer.state.global_step, weights_sha256(model), resumed), end="", flush=True)


if __name__ == "__main__":
    main()
