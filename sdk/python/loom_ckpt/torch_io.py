"""PyTorch state through the checkpoint protocol: DCP (PyTorch >= 2.3), or a
CPU snapshot written with torch.save (older PyTorch), for one process or for
every rank of a job."""

import os
import pickle
import re
import threading
import time

from .protocol import PARTS, CheckpointError
from .snapshot import TORCH_ASYNC, TORCH_STATE_FILE, _dcp, _torch, _torch_cpu_copy

_DCP_RANK_FILE = re.compile(r"__(\d+)_")


def _dcp_part(path, rank):
    """The files of a DCP save that are this rank's part (7.4 step 3): its
    __<rank>_* files, and for rank 0 every file DCP wrote that is no rank's."""
    out = []
    for root, dirs, names in os.walk(path):
        dirs[:] = [d for d in dirs if not (root == path and d == PARTS)]
        for n in sorted(names):
            rel = os.path.relpath(os.path.join(root, n), path)
            m = _DCP_RANK_FILE.match(n)
            if (m and int(m.group(1)) == rank) or (not m and rank == 0):
                out.append(rel)
    return sorted(out)


def save_torch_async(ck, step, state_dict):
    if _torch is None:
        raise CheckpointError("save_torch_async: PyTorch is not installed")
    if not TORCH_ASYNC:
        return _save_snapshot(ck, step, state_dict)
    ck.wait()
    ck._saving()
    t0 = time.monotonic()
    st = ck._stage(step, layout="dcp")
    kw = {"process_group": ck.dcp_group} if ck.dcp_group is not None else {}
    future = _dcp.async_save(state_dict, checkpoint_id=st.path, **kw)
    ck._last_save = time.monotonic()
    ck.last_stall = ck._last_save - t0

    def run():
        try:
            future.result()
            names = _dcp_part(st.path, ck.rank) if ck.world_size > 1 else _all_files(st.path)
            for n in sorted(names):
                st.add_existing(n)
            ck._commit(st, t0, writer="loom-sdk-python-torch-dcp")
            ck.last_write = time.monotonic() - t0
        except BaseException as e:
            if ck.world_size == 1:
                st.abort()
            ck._error = e
    ck._thread = threading.Thread(target=run, name="loom-ckpt-dcp", daemon=False)
    ck._thread.start()


def _all_files(path):
    return [os.path.relpath(os.path.join(r, n), path) for r, _d, ns in os.walk(path) for n in ns]


def _save_snapshot(ck, step, state_dict):
    t0 = time.monotonic()
    ck.wait()
    ck._saving()
    snapshot = _torch_cpu_copy(state_dict)
    ck._last_save = time.monotonic()
    ck.last_stall = ck._last_save - t0
    st = ck._stage(step)

    def run():
        w0 = time.monotonic()
        try:
            rel = getattr(st, "prefix", "") + TORCH_STATE_FILE
            path = os.path.join(st.path, rel)
            os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
            with os.fdopen(fd, "wb") as f:
                _torch.save(snapshot, f)
                f.flush()
                os.fsync(f.fileno())
            st.add_existing(rel)
            ck._commit(st, w0, writer="loom-sdk-python-torch-save")
            ck.last_write = time.monotonic() - w0
        except BaseException as e:  # reported by wait()
            if ck.world_size == 1:
                st.abort()
            ck._error = e
    ck._thread = threading.Thread(target=run, name="loom-ckpt-torch", daemon=False)
    ck._thread.start()


def load_torch(ck, template=None, checkpoint=None, map_location="cpu"):
    if _torch is None:
        raise CheckpointError("load_torch: PyTorch is not installed")
    c = checkpoint if checkpoint is not None else ck.restore()
    if c is None:
        return None
    m = c.manifest or {}
    writer = m.get("writer", "")
    if m.get("layout") == "dcp" or writer.endswith("-dcp"):
        if _dcp is None or template is None:
            raise CheckpointError("%s: a torch.distributed.checkpoint checkpoint: load_torch needs "
                                  "torch.distributed.checkpoint and template=" % c.path)
        kw = {"process_group": ck.dcp_group} if ck.dcp_group is not None else {}
        _dcp.load(template, checkpoint_id=c.path, **kw)
        return template
    if TORCH_STATE_FILE not in c.names():
        raise CheckpointError("%s: no %s for rank %d (written by %s, not by save_torch_async)" % (
            c.path, TORCH_STATE_FILE, c.rank, writer or "an unknown writer"))
    return _load_file(c, c.file_path(TORCH_STATE_FILE), map_location)


def _load_file(c, path, map_location):
    """torch.load with weights_only=True where PyTorch has it (tensors and plain
    containers, no arbitrary objects); a full unpickle only of files nobody
    else can write."""
    try:
        return _torch.load(path, map_location=map_location, weights_only=True)
    except TypeError:  # a PyTorch without weights_only
        pass
    except pickle.UnpicklingError:
        pass  # an older restricted unpickler refuses plain floats (optimizer hyperparameters)
    for q in (c.path, path):
        st = os.lstat(q)
        if st.st_uid != os.getuid() or st.st_mode & 0o022:
            raise CheckpointError("%s: not loading with a full unpickle: owned by uid %d, mode %o (must be "
                                  "this user's and not group/other-writable)" % (q, st.st_uid, st.st_mode & 0o7777))
    try:
        return _torch.load(path, map_location=map_location, weights_only=False)
    except TypeError:
        return _torch.load(path, map_location=map_location)
