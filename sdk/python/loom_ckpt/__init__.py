"""loom checkpoint SDK for Python (standard library only).

The application side of loom's checkpoint protocol (doc/loom-ckpt-protocol.md, the
same as the C++ SDK and `loom ckpt`):

    import loom_ckpt
    ck = loom_ckpt.Checkpointer()              # reads LOOM_CKPT_* from the job
    restored = ck.restore()                    # newest verified checkpoint or None
    if restored:
        step, files = restored.step, restored.read_all()
    for step in range(start, steps):
        train(step)
        if ck.should_checkpoint(step + 1):     # signal, request file or interval
            ck.save_async(step + 1, {"model.bin": weights_bytes})
    ck.wait()

In a job of several ranks (srun per rank, torchrun per node, MPI) every rank
runs the same code with its own state: should_checkpoint() gives every rank
the same answer (through the torch.distributed process group when there is
one, else through rank 0's stamped step, which is why it takes the step),
each rank writes its own files, rank 0 commits the checkpoint once every
rank's part is written, and restore() gives every rank the same step and its
own files.

save_async() copies the buffers into snapshot memory and returns; a
background thread writes, checksums (SHA-256) and commits the checkpoint with
an atomic rename, then moves the `latest` pointer and applies retention. Only
committed, verified checkpoints are restored; a corrupt newest one falls back
to the one before it.

The snapshot memory (anonymous memory from mmap) is kept and reused by the
next save of the same file, so later saves hold the caller for a memory copy
only. The first save would also wait for that memory to be faulted in;
reserve() has a background thread do it beforehand, e.g. right after
restore():

    ck.reserve({"model.bin": len(weights_bytes)})    # or the buffers themselves

LOOM_CKPT_HUGE_PAGES=1 asks for transparent huge pages for it (fewer faults on
bare metal; off by default because on a VM that returns free memory to its
host each huge page is new host memory, many times slower to fault in).

The background thread writes a file of 16 MiB or more from that memory with
O_DIRECT: the disk reads the snapshot itself, with no copy into the page
cache, so several ranks of a node leave their CPUs to the digests, and a
large checkpoint does not push the training data out of the cache. The tail
under a block, and file systems that refuse O_DIRECT, go through the page
cache; LOOM_CKPT_DIRECT_IO=0 sends everything through it.

PyTorch state dicts (model, optimizer, step) go through save_torch_async()
and come back with load_torch(). With torch.distributed.checkpoint.async_save
(PyTorch >= 2.3) that is DCP into the staging directory; with an older PyTorch
every tensor is copied to CPU memory (the stall) and a background thread
writes the copy with torch.save; both commit like any checkpoint. The module
says once on stderr which path it uses, or that PyTorch is missing. For a model
and its optimizer (Adam's moments included, into a fresh optimizer too):

    ck.save_torch_async(step, loom_ckpt.torch_state(model, opt, step=torch.tensor(step)))
    got = loom_ckpt.load_torch_state(ck, model, opt, step=torch.tensor(0))
    start = int(got["step"]) if got is not None else 0

load_torch() reads every byte of the checkpoint once, checks it against the
manifest's SHA-256 as it reads, and falls back to the checkpoint before on a
mismatch (said on stderr); the digests of a save are taken while writing.
"""

# The public names, in modules of one concern each: the format (protocol), the
# writers (store), the catalog and retention (catalog), the launcher and the
# agreement of ranks (launch, agree), snapshot memory and PyTorch (snapshot,
# torch_io), and the Checkpointer (its restore: restorer).
from ._version import __version__  # noqa: F401
from .protocol import *  # noqa: F401,F403
from .store import Staging, RankStaging, remove_tree, shared_staging_name  # noqa: F401
from .catalog import (Checkpoint, find_latest, judge, list_checkpoints, parse_staging_name,  # noqa: F401
                      prune, verify)
from .launch import launch_ranks, launch_run_id, parse_signal, read_request, read_task_env, REQUEST  # noqa: F401
from .snapshot import TORCH_ASYNC, TORCH_STATE_FILE  # noqa: F401
from .checkpointer import Checkpointer  # noqa: F401
from .torch_io import torch_state, load_torch_state  # noqa: F401
from .cli import main as _main  # noqa: F401
