"""Snapshot memory for asynchronous saves, and PyTorch where it is installed."""

import copy
import mmap
import os

try:  # pragma: no cover - depends on the environment
    import torch as _torch
except Exception:  # ImportError, or a broken installation
    _torch = None
try:  # pragma: no cover - depends on the environment
    import torch.distributed as _dist
except Exception:
    _dist = None
try:  # pragma: no cover - depends on the environment
    import torch.distributed.checkpoint as _dcp
    TORCH_ASYNC = hasattr(_dcp, "async_save")
except Exception:
    _dcp = None
    TORCH_ASYNC = False
TORCH_STATE_FILE = "torch_state.pt"

_HUGE_PAGE = 2 << 20


def _snapshot_memory(size, huge_pages=False):
    """Writable memory of 'size' bytes for a snapshot, not yet faulted in: private
    anonymous memory, asked to be backed by transparent huge pages with
    'huge_pages' (a bytearray where mmap is not available)."""
    if size == 0:
        return bytearray()
    try:
        mem = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE)
    except (OSError, ValueError, AttributeError):
        return bytearray(size)
    if huge_pages and size >= _HUGE_PAGE and hasattr(mem, "madvise") and hasattr(mmap, "MADV_HUGEPAGE"):
        try:
            mem.madvise(mmap.MADV_HUGEPAGE)
        except OSError:  # a kernel without THP
            pass
    return mem


def _prefault(mem, stop=None):
    """Fault every page of 'mem' in, letting go of the GIL meanwhile: the kernel
    writes zeros into it from /dev/zero, 16 MiB at a time, until 'stop' (an
    Event) is set."""
    view = memoryview(mem)
    try:
        fd = os.open("/dev/zero", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        fd = -1
    try:
        off = 0
        while off < len(view) and not (stop is not None and stop.is_set()):
            part = view[off:off + (16 << 20)]
            if fd >= 0:
                n = os.readv(fd, [part])
                if n <= 0:
                    break
                off += n
            else:  # a write to every page; the GIL changes hands between slices
                part[::4096] = bytes(len(range(0, len(part), 4096)))
                off += len(part)
    finally:
        if fd >= 0:
            os.close(fd)


def _byte_view(data):
    """A flat byte view of a bytes-like object (copied when not contiguous)."""
    view = memoryview(data)
    if not view.c_contiguous:
        view = memoryview(view.tobytes())
    return view.cast("B") if view.format != "B" or view.ndim != 1 else view


def _torch_cpu_copy(obj):
    """A deep copy of a state dict in which every tensor is a CPU copy that
    shares nothing with the live one (containers keep their types)."""
    if _torch is not None and isinstance(obj, _torch.Tensor):
        return obj.detach().to("cpu", copy=True)
    if isinstance(obj, dict):
        out = type(obj)() if type(obj) is not dict else {}
        for k, v in obj.items():
            out[k] = _torch_cpu_copy(v)
        return out
    if isinstance(obj, (list, tuple)):
        items = [_torch_cpu_copy(v) for v in obj]
        return type(obj)(items) if not hasattr(obj, "_fields") else type(obj)(*items)
    return copy.deepcopy(obj)


