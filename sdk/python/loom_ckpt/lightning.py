"""PyTorch Lightning 2.x adapter: loom decides when to checkpoint, Lightning
writes its full checkpoint into loom's staging, loom commits it, and fit()
resumes from the newest loom checkpoint by itself.

    from loom_ckpt.lightning import LoomCheckpoint                  # loom
    trainer = L.Trainer(..., callbacks=[LoomCheckpoint()])          # loom

Saving: at every train batch end should_checkpoint(global_step) is asked on
every rank (the same answer everywhere: a signal, spank_ckpt's request file
or LOOM_CKPT_INTERVAL); on yes, trainer.save_checkpoint() writes Lightning's
checkpoint (weights, optimizers with their moments, LR schedulers, loop
counters, callbacks' and the datamodule's state, resumable loaders'
positions) into the staging directory as rank-00000/lightning.ckpt (only
global rank 0 writes it, as Lightning does), each rank adds its own RNG
states (torch, numpy, random: Lightning's Trainer checkpoint has none) as
rng.pt, and rank 0 commits.

Restoring: in on_fit_start (every rank, torch.distributed up) the ranks agree
on the newest verified loom checkpoint and, unless fit() was given a
ckpt_path, Lightning's checkpoint connector loads it there with
_restore_modules_and_callbacks() (weights, datamodule, callbacks); fit then
restores the loops and optimizers from it itself (restore_training_state),
exactly as for strategies that restore after setup (FSDP, DeepSpeed) and
for fit(ckpt_path=...). fit's own ckpt_path is chosen before the process
group exists and before any callback hook runs, so a callback cannot set it.

Mid-epoch restarts are exact only with a loader that Lightning can resume
(state_dict/load_state_dict, Lightning's own warning says so):
ResumableLoader is such a DataLoader; see examples/lightning/train.py.

For the standalone pytorch_lightning package: LoomCheckpoint is its Callback
when `lightning` is not installed; with both, use LoomCheckpointPL.
"""

import os
import random
import sys

import importlib

import torch
from torch.utils.data import DataLoader

from . import frameworks

CKPT_NAME = "lightning.ckpt"
RNG_NAME = "rng.pt"
WRITER = "loom-lightning"


def _rng_states():
    states = {"torch": torch.get_rng_state(), "python": random.getstate()}
    try:
        import numpy
        states["numpy"] = numpy.random.get_state()
    except ImportError:
        pass
    return states


def _set_rng_states(states):
    torch.set_rng_state(states["torch"])
    random.setstate(states["python"])
    if "numpy" in states:
        import numpy
        numpy.random.set_state(states["numpy"])


class _LoomCheckpoint:
    """Checkpoint and resume a Trainer's fit with loom (module docstring).
    'checkpointer': a Checkpointer of your own (default: one made from the
    job's environment at setup, on every rank). 'restore': False skips the
    automatic resume. After fit, .resumed_step is the step resumed from
    (None: started fresh) and .last_commit the path of the last commit."""

    def __init__(self, checkpointer=None, restore=True):
        self.ck = checkpointer
        self.restore = restore
        self.resumed_step = None
        self.last_commit = None

    def setup(self, trainer, pl_module, stage):
        if stage == "fit" and self.ck is None:
            self.ck = frameworks.checkpointer()  # torch.distributed is up here (collective)
        if stage == "fit" and self.ck.enabled and trainer.is_global_zero:
            frameworks.warn_foreign_checkpoints(self.ck.dir)

    def on_fit_start(self, trainer, pl_module):
        if not (self.restore and self.ck.enabled):
            return
        c = self.ck.restore()  # collective: every rank the same step
        if c is None:
            return
        if trainer.ckpt_path:
            if trainer.is_global_zero:
                sys.stderr.write("loom_ckpt: fit(ckpt_path=%r) given: not resuming from loom's %s\n"
                                 % (trainer.ckpt_path, c.path))
            return
        self._load(trainer, c)

    def _load(self, trainer, c):
        path = frameworks.rank_file(c, 0, CKPT_NAME)
        connector = getattr(trainer, "_checkpoint_connector", None)
        if connector is None or not hasattr(connector, "_restore_modules_and_callbacks"):
            raise RuntimeError("loom_ckpt.lightning: this Lightning (%s) has no "
                               "Trainer._checkpoint_connector._restore_modules_and_callbacks to resume %s with; "
                               "pass fit(ckpt_path=%r) instead" % (type(trainer).__module__, c.path, path))
        connector._restore_modules_and_callbacks(path)
        if RNG_NAME in c.names():
            _set_rng_states(torch.load(c.file_path(RNG_NAME), weights_only=False))
        self.resumed_step = c.step
        if trainer.is_global_zero:
            sys.stderr.write("loom_ckpt: resuming from %s (step %d)\n" % (c.path, c.step))

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        step = trainer.global_step
        if self.ck.enabled and self.ck.should_checkpoint(step):
            self.save(trainer, step)

    def save(self, trainer, step):
        """Save and commit step 'step' now (every rank calls it together)."""
        save = frameworks.FrameworkSave(self.ck, step, WRITER)
        # Every rank names its own directory; Lightning writes on global rank 0 only, then a barrier.
        trainer.save_checkpoint(os.path.join(save.dir, CKPT_NAME))
        torch.save(_rng_states(), os.path.join(save.dir, RNG_NAME))
        self.last_commit = save.commit() or self.last_commit

    def on_fit_end(self, trainer, pl_module):
        if self.ck is not None:
            self.ck.wait()

    def teardown(self, trainer, pl_module, stage):
        if stage == "fit" and self.ck is not None:
            self.ck.close()


def _callback_class(package):
    pl = importlib.import_module(package)
    return type("LoomCheckpoint", (_LoomCheckpoint, pl.Callback), {"__doc__": _LoomCheckpoint.__doc__})


try:  # the `lightning` package; else the standalone pytorch_lightning
    LoomCheckpoint = _callback_class("lightning.pytorch")
except ImportError:
    LoomCheckpoint = _callback_class("pytorch_lightning")


def __getattr__(name):
    """LoomCheckpointPL: the same callback for a pytorch_lightning Trainer
    where the `lightning` package is installed too (Trainers accept only
    their own package's Callback)."""
    if name == "LoomCheckpointPL":
        cls = _callback_class("pytorch_lightning")
        globals()[name] = cls
        return cls
    raise AttributeError("module %r has no attribute %r" % (__name__, name))


class ResumableLoader(DataLoader):
    """A DataLoader that Lightning resumes mid-epoch: Lightning saves
    state_dict() in its checkpoint and, after a restore, calls
    load_state_dict() before iterating; the first iteration then skips the
    batches that the interrupted epoch had already trained on (drawn and
    dropped: the order stays the same, the sampler must be deterministic).
    Lightning's restored loop counter says how many: its batch progress."""

    def __init__(self, *args, position=None, **kwargs):
        """'position': a callable giving how many batches of the current epoch
        are done (e.g. lambda: trainer.fit_loop.epoch_loop.batch_progress.current.processed)."""
        super().__init__(*args, **kwargs)
        self._position = position
        self._resuming = False

    def state_dict(self):
        return {"loom_resumable": 1}

    def load_state_dict(self, state):
        if self._position is None:
            raise RuntimeError("ResumableLoader: no position callable to resume from")
        self._resuming = True

    def __iter__(self):
        it = super().__iter__()
        if not self._resuming:
            return it
        self._resuming = False
        # Asked when the resumed epoch starts, not at the restore: a save at
        # an epoch's last batch resumes with the next epoch, whose count
        # Lightning has reset by then (a whole epoch is never skipped).
        skip = int(self._position())
        if skip >= len(self):
            skip = 0
        for _ in range(skip):
            next(it)
        return it
