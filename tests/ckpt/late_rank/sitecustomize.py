"""Test hook of tests/ckpt/frameworks.sh, on PYTHONPATH for one run: with
LOOM_TEST_LATE_RANK=R, the worker of rank R waits 2 s before each torch.save
of an rng_state_*.pth file, as a loaded node would between HF creating a
checkpoint directory and writing its file into it. Another rank's on_save
must not remove that directory meanwhile. Every other process (the torchrun
agent, other ranks) is left alone."""

import os

if os.environ.get("LOOM_TEST_LATE_RANK") is not None and \
        os.environ.get("RANK") == os.environ["LOOM_TEST_LATE_RANK"]:
    import time

    import torch

    _save = torch.save

    def _late_save(obj, f, *args, **kwargs):
        if isinstance(f, (str, os.PathLike)) and os.path.basename(os.fspath(f)).startswith("rng_state_"):
            time.sleep(2)
        return _save(obj, f, *args, **kwargs)

    torch.save = _late_save
