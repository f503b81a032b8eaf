"""PyTorch state through the checkpoint protocol: DCP (PyTorch >= 2.3), or a
CPU snapshot written with torch.save (older PyTorch), for one process or for
every rank of a job."""

import os
import pickle
import re
import sys
import threading
import time

from .catalog import FULL, LOAD, verify
from .dcp_io import Digests, hashing_writer, verifying_reader
from .hashio import HashingWriter, read_verified
from .protocol import (FORMAT, PARTS, FILE_MISSING, FILE_REFUSED, HASH_MISMATCH, IO_ERROR, SIZE_MISMATCH,
                       CheckpointError, manifest_files)
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
    digests = Digests()
    writer = hashing_writer(st.path, digests)
    if writer is not None:
        kw["storage_writer"] = writer
    future = _dcp.async_save(state_dict, checkpoint_id=st.path, **kw)
    ck._last_save = time.monotonic()
    ck.last_stall = ck._last_save - t0

    def run():
        try:
            future.result()
            names = _dcp_part(st.path, ck.rank) if ck.world_size > 1 else _all_files(st.path)
            for n in sorted(names):
                _add_hashed(st, n, digests.get(os.path.join(st.path, n)))
            ck._commit(st, t0, writer="loom-sdk-python-torch-dcp")
            ck.last_write = time.monotonic() - t0
        except BaseException as e:
            if ck.world_size == 1:
                st.abort()
            ck._error = e
    ck._thread = threading.Thread(target=run, name="loom-ckpt-dcp", daemon=False)
    ck._thread.start()


def _add_hashed(st, name, hashed):
    """A file DCP wrote: its digest taken while it was written, or (a file our
    writer did not see, or a PyTorch whose writer has no `fs`) read again."""
    if hashed is None:
        return st.add_existing(name)
    return st.add_existing(name, digest=hashed[1], size=hashed[0])


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
            with HashingWriter(path) as f:  # hashed as torch.save writes: not read again
                _torch.save(snapshot, f)
                f.sync()
            st.add_existing(rel, digest=f.sha256, size=f.size)
            ck._commit(st, w0, writer="loom-sdk-python-torch-save")
            ck.last_write = time.monotonic() - w0
        except BaseException as e:  # reported by wait()
            if ck.world_size == 1:
                st.abort()
            ck._error = e
    ck._thread = threading.Thread(target=run, name="loom-ckpt-torch", daemon=False)
    ck._thread.start()


# What the one read of a file finds wrong with a checkpoint: refused, and the one before tried.
# Any other failure (no template=, a state of another shape) is the program's and is raised.
_REFUSALS = (HASH_MISMATCH, SIZE_MISMATCH, FILE_MISSING, FILE_REFUSED, IO_ERROR)


def _verification_error(e):
    """The CheckpointError refusing the checkpoint behind 'e' (ours, or one DCP
    gathered from a rank into a CheckpointException), or None."""
    candidates = [e] + [v[0] if isinstance(v, tuple) else v for v in (getattr(e, "failures", None) or {}).values()]
    for inner in candidates:
        if isinstance(inner, CheckpointError) and inner.reason in _REFUSALS:
            return inner
    return None


def _agree_loaded(ck, ok):
    """Whether every rank loaded its share (one process: its own verdict)."""
    if ck.world_size == 1 or ck.agreement is None or not hasattr(ck.agreement, "minimum"):
        return ok
    return ck.agreement.minimum(1 if ok else 0) == 1


def load_torch(ck, template=None, checkpoint=None, map_location="cpu"):
    """The state of the newest checkpoint whose bytes verify, read once each:
    the catalog checks manifests, sizes and ranks (level "load"), then every
    file is hashed during its one read and compared with the manifest before
    torch.load or DCP uses it. A mismatch is said on stderr and the checkpoint
    before it is tried (every rank together). With 'checkpoint' given, a
    mismatch raises CheckpointError instead. Ranks that agree through stamps
    only (no process group) cannot fall back together: they verify fully
    first (level "full") and a mismatch during the load raises."""
    if _torch is None:
        raise CheckpointError("load_torch: PyTorch is not installed")
    if checkpoint is not None:
        return _load_checked(ck, checkpoint, template, map_location)
    can_fall_back = ck.world_size == 1 or hasattr(ck.agreement, "minimum")
    below = None
    while True:
        c = ck.restore(level=LOAD if can_fall_back else FULL, below=below)
        if c is None:
            return None
        err, state = None, None
        try:
            state = _load_checked(ck, c, template, map_location)
        except Exception as e:
            err = _verification_error(e)
            if err is None or not can_fall_back:
                raise
        if _agree_loaded(ck, err is None):
            return state
        why = err if err is not None else "another rank's share did not verify"
        sys.stderr.write("loom_ckpt: rank %d: not restoring %s: %s; trying the checkpoint before it\n" %
                         (ck.rank, os.path.basename(c.path), why))
        below = c.step


def _is_dcp(m):
    return m.get("layout") == "dcp" or m.get("writer", "").endswith("-dcp")


def _load_checked(ck, c, template, map_location):
    m = c.manifest or {}
    if _is_dcp(m):
        return _load_dcp(ck, c, template)
    if TORCH_STATE_FILE not in c.names():
        raise CheckpointError("%s: no %s for rank %d (written by %s, not by save_torch_async)" % (
            c.path, TORCH_STATE_FILE, c.rank, m.get("writer") or "an unknown writer"))
    entries = m["files"] if m["format"] == FORMAT else manifest_files(m)
    rel = c._prefix() + TORCH_STATE_FILE
    entry = [f for f in entries if f["path"] == rel][0]
    with read_verified(c.path, entry) as f:  # read once, hashed while read, refused on a mismatch
        return _load_file(c, f, c.file_path(TORCH_STATE_FILE), map_location)


def _load_dcp(ck, c, template):
    """DCP loads into 'template'. A rank reads the files that hold its share
    (DCP reshards) once each, whole, into memory, and checks them all (and,
    with a process group, learns that every rank's share is good) before DCP
    parses any: 'template' is untouched when the checkpoint is refused. The
    memory: this rank's share of the checkpoint, until DCP has loaded it."""
    if _dcp is None or template is None:
        raise CheckpointError("%s: a torch.distributed.checkpoint checkpoint: load_torch needs "
                              "torch.distributed.checkpoint and template=" % c.path)
    if callable(template):  # made only now that there is a DCP checkpoint to load
        template = template()
    kw = {"process_group": ck.dcp_group} if ck.dcp_group is not None else {}
    agree = (lambda ok: _agree_loaded(ck, ok)) if ck.world_size > 1 and hasattr(ck.agreement, "minimum") else None
    reader = verifying_reader(c.path, {f["path"]: f for f in manifest_files(c.manifest)}, agree)
    if reader is None:  # this PyTorch's reader takes no file system of ours: verify it all first
        verify(c, FULL)
    else:
        kw["storage_reader"] = reader
    try:
        _dcp.load(template, checkpoint_id=c.path, **kw)
    except BaseException as e:  # DCP's CheckpointException is a BaseException
        err = _verification_error(e)
        if err is None or err is e:
            raise
        raise CheckpointError(str(err), err.reason) from None  # a rank's refusal, DCP's wrapping taken off
    return template


def _load_file(c, f, path, map_location):
    """torch.load of the verified bytes 'f' with weights_only=True where PyTorch
    has it (tensors and plain containers, no arbitrary objects); a full
    unpickle only of files nobody else can write."""
    try:
        return _torch.load(f, map_location=map_location, weights_only=True)
    except TypeError:  # a PyTorch without weights_only
        pass
    except pickle.UnpicklingError:
        pass  # an older restricted unpickler refuses plain floats (optimizer hyperparameters)
    for q in (c.path, path):
        st = os.lstat(q)
        if st.st_uid != os.getuid() or st.st_mode & 0o022:
            raise CheckpointError("%s: not loading with a full unpickle: owned by uid %d, mode %o (must be "
                                  "this user's and not group/other-writable)" % (q, st.st_uid, st.st_mode & 0o7777))
    f.seek(0)
    try:
        return _torch.load(f, map_location=map_location, weights_only=False)
    except TypeError:
        f.seek(0)
        return _torch.load(f, map_location=map_location)


def _state_dict_api():
    """torch.distributed.checkpoint.state_dict's (get, set) (PyTorch >= 2.2), or None."""
    try:
        from torch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict
        return get_state_dict, set_state_dict
    except Exception:
        return None


def torch_state(model, optimizer, **extra):
    """What save_torch_async() should save for a model and its optimizer:
    {"model": ..., "optim": ..., **extra}. With PyTorch >= 2.2 the state dicts
    of torch.distributed.checkpoint.state_dict.get_state_dict (parameter
    names as keys; DTensors under FSDP2), else the modules' own state_dict().
    Put tensors, not Python numbers, in 'extra' (e.g. step=torch.tensor(s)):
    DCP loads a value in place only into a tensor of the template."""
    api = _state_dict_api()
    if api is not None:
        msd, osd = api[0](model, optimizer)
    else:
        msd, osd = model.state_dict(), optimizer.state_dict()
    out = {"model": msd, "optim": osd}
    out.update(extra)
    return out


def load_torch_state(ck, model, optimizer, checkpoint=None, **extra):
    """Restore what torch_state() saved into 'model' and 'optimizer', exactly:
    Adam's moments and step counts included, also into a fresh optimizer that
    has no state yet. 'extra' gives the template of the other values saved
    (step=torch.tensor(0)). Returns the loaded dict ("model", "optim" and the
    extra values), or None when there is no checkpoint (model and optimizer
    untouched)."""
    api = _state_dict_api()

    def template():  # built only when a DCP checkpoint is there: get_state_dict gives a fresh optimizer state
        return torch_state(model, optimizer, **extra)
    got = load_torch(ck, template, checkpoint)
    if got is None:
        return None
    osd = got["optim"]
    by_name = api is not None and all(isinstance(k, str) for k in osd.get("state", {}))
    if by_name and api is not None:
        api[1](model, optimizer, model_state_dict=got["model"], optim_state_dict=osd)
    else:  # written by torch.save with the modules' own state dicts (PyTorch < 2.2)
        model.load_state_dict(got["model"])
        optimizer.load_state_dict(osd)
    return got
