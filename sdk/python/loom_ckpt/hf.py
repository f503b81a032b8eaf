"""Hugging Face adapters: a transformers TrainerCallback, and save/restore
helpers for accelerate's save_state/load_state.

Trainer (the lines marked # loom are the whole change):

    from loom_ckpt.hf import LoomCallback                                   # loom
    trainer = Trainer(..., callbacks=[LoomCallback()])                      # loom
    trainer.train(resume_from_checkpoint=get_last_checkpoint(args.output_dir))

The resume line is HF's own idiom (run_clm.py and friends); `True` works too
once a checkpoint exists. At on_init_end (every rank, the process group up)
the ranks agree on the newest verified loom checkpoint and it is placed
where get_last_checkpoint finds it: <output_dir>/checkpoint-<step>/ (hard
links, no copy of the bytes). Other checkpoint-N directories in output_dir
that no loom commit covers (a save cut short, or another job's left in a
shared output_dir) are moved aside to <output_dir>/.loom-unadopted/ so that
HF does not pick a torn or foreign one; with no loom checkpoint to resume,
all of them are, and the run starts from step 0.

Saving: at every step end should_checkpoint(global_step) (the same answer on
every rank) sets control.should_save; HF writes checkpoint-<step>/ in
output_dir (weights, optimizer, scheduler, trainer state, each process's RNG
state) and in on_save every rank moves its own files of it into loom's
staging (rank 0 all but the other processes' rng_state_<i>.pth; rank i its
rng_state_<i>.pth); once every rank has (a barrier: HF's ranks reach
on_save each in its own time) rank 0 removes the emptied directory and
commits. A move, not a copy, which is why
output_dir and LOOM_CKPT_DIR should be on one file system (else the files are
copied). Saves of HF's own schedule (save_strategy) are adopted alike; set
save_strategy="no" to let loom alone decide.
"""

import os
import re
import sys

from transformers import TrainerCallback
from transformers.trainer_utils import PREFIX_CHECKPOINT_DIR

from . import frameworks
from .store import remove_tree

WRITER = "loom-hf"
PLACED = ".loom-placed"  # in a checkpoint-N directory placed from a loom commit
UNADOPTED = ".loom-unadopted"  # where HF checkpoints no loom commit covers are moved
_RNG = re.compile(r"^rng_state_(\d+)\.pth$")
_CKPT_DIR = re.compile(r"^" + PREFIX_CHECKPOINT_DIR + r"-(\d+)$")


def _barrier():
    try:
        import torch.distributed as dist
    except ImportError:
        return
    if dist.is_available() and dist.is_initialized():
        dist.barrier()


def _owned_by(rank):
    """Which files of HF's checkpoint directory are rank 'rank''s to adopt."""
    def keep(rel):
        m = _RNG.match(os.path.basename(rel))
        if m:
            return int(m.group(1)) == rank
        return rank == 0
    return keep


class LoomCallback(TrainerCallback):
    """Checkpoint and resume a transformers Trainer with loom (module
    docstring). 'checkpointer': a Checkpointer of your own (default: one made
    from the job's environment at on_init_end). .resumed_step: the step
    placed for resuming (None: none); .last_commit: the last commit's path."""

    def __init__(self, checkpointer=None, restore=True):
        self.ck = checkpointer
        self.restore = restore
        self.resumed_step = None
        self.last_commit = None

    def on_init_end(self, args, state, control, **kwargs):
        if self.ck is None:
            self.ck = frameworks.checkpointer()
        if not self.ck.enabled:
            return
        if self.ck.rank == 0:
            frameworks.warn_foreign_checkpoints(self.ck.dir)
        if self.restore:
            c = self.ck.restore()  # collective: every rank the same step
            if c is not None:
                self.resumed_step = c.step
                place_for_resume(c, args.output_dir, set_aside=self.ck.rank == 0)
                if self.ck.rank == 0:
                    sys.stderr.write("loom_ckpt: %s placed at %s for resume_from_checkpoint\n" %
                                     (c.path, resume_dir(args.output_dir, c.step)))
            elif self.ck.rank == 0:
                moved = set_aside_unadopted(args.output_dir)
                if moved:
                    sys.stderr.write("loom_ckpt: no loom checkpoint to resume from; %s held %s, not committed by "
                                     "this job's loom checkpoints: moved to %s, the run starts from step 0\n" %
                                     (args.output_dir, ", ".join(moved), os.path.join(args.output_dir, UNADOPTED)))
            _barrier()  # every rank placed (and rank 0 set aside) before any looks

    def on_step_end(self, args, state, control, **kwargs):
        if self.ck.enabled and self.ck.should_checkpoint(state.global_step):
            control.should_save = True

    def on_save(self, args, state, control, **kwargs):
        if not self.ck.enabled:
            return
        src = resume_dir(args.output_dir, state.global_step)
        if not os.path.isdir(src):
            raise RuntimeError("loom_ckpt.hf: on_save at step %d, and no %s to adopt" % (state.global_step, src))
        save = frameworks.FrameworkSave(self.ck, state.global_step, WRITER)
        save.adopt_tree(src, _owned_by(self.ck.rank))
        # HF's ranks reach on_save without waiting for each other: a rank
        # that has not yet written its rng_state_<i>.pth (its directory made,
        # the file not yet opened) would lose it if the directory went now.
        _barrier()
        if self.ck.rank == 0:
            frameworks.remove_empty_dirs(src)
        self.last_commit = save.commit() or self.last_commit

    def on_train_end(self, args, state, control, **kwargs):
        if self.ck is not None:
            self.ck.wait()


def resume_dir(output_dir, step):
    """Where HF's Trainer keeps (and get_last_checkpoint finds) step 'step'."""
    return os.path.join(output_dir, "%s-%d" % (PREFIX_CHECKPOINT_DIR, step))


def place_for_resume(c, output_dir, set_aside=True):
    """Place a restored loom checkpoint's files (every rank's) as HF's
    checkpoint directory of its step in output_dir, hard-linked; with
    'set_aside', first set_aside_unadopted(output_dir, keep=that directory).
    Returns the directory."""
    target = resume_dir(output_dir, c.step)
    if set_aside:
        set_aside_unadopted(output_dir, keep=target)
    for _rank, name, path in frameworks.part_files(c):
        frameworks.link_or_copy(path, os.path.join(target, name))
    with open(os.path.join(target, PLACED), "w") as f:
        f.write("%s\n" % c.path)
    return target


def set_aside_unadopted(output_dir, keep=None):
    """Clear output_dir's checkpoint-N directories (but 'keep') from HF's
    view: one placed from a loom commit that still exists (marked PLACED) is
    removed (its files are links to the commit), any other moved to
    output_dir/.loom-unadopted/. Nothing is lost. Returns the names moved."""
    moved = []
    if not os.path.isdir(output_dir):
        return moved
    aside = os.path.join(output_dir, UNADOPTED)
    for n in sorted(os.listdir(output_dir)):
        path = os.path.join(output_dir, n)
        if not _CKPT_DIR.match(n) or path == keep or not os.path.isdir(path):
            continue
        if _placed_from_existing_commit(path):
            remove_tree(path)
            continue
        os.makedirs(aside, exist_ok=True)
        os.rename(path, os.path.join(aside, "%s.%d" % (n, os.getpid())))
        moved.append(n)
    return moved


def _placed_from_existing_commit(path):
    try:
        with open(os.path.join(path, PLACED)) as f:
            return os.path.isdir(f.read().strip())
    except OSError:
        return False


def accelerate_save(accelerator, ck, step):
    """Save accelerate's state (accelerator.save_state: models, optimizers,
    schedulers, each process's RNG states) as loom checkpoint 'step' and
    commit it. Every process calls it together; returns the checkpoint's
    path on rank 0, else None."""
    save = frameworks.FrameworkSave(ck, step, WRITER)
    accelerator.save_state(output_dir=save.dir)
    return save.commit()


def accelerate_restore(accelerator, ck):
    """Load the newest verified loom checkpoint with accelerator.load_state
    and return its step, or None when there is none (every process calls
    it). accelerate reads the main process's files and its own RNG state
    from one directory: each process gets a directory of links to both,
    below LOOM_CKPT_DIR/.staging (removed after)."""
    c = ck.restore()
    if c is None:
        return None
    view = os.path.join(ck.dir, ".staging", "accelerate-view.%d.%d" % (os.getpid(), ck.rank))
    try:
        for rank, name, path in frameworks.part_files(c):
            if rank == 0 or rank == ck.rank:
                dst = os.path.join(view, name)
                if not os.path.exists(dst):
                    os.makedirs(os.path.dirname(dst), exist_ok=True)
                    os.symlink(path, dst)
        accelerator.load_state(view)
    finally:
        remove_tree(view)
    return c.step
