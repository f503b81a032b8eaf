"""loom checkpoint SDK for Python (standard library only).

The application side of loom's checkpoint protocol (format "loom-ckpt/1", the
same as the C++ SDK and `loom ckpt`):

    import loom_ckpt
    ck = loom_ckpt.Checkpointer()              # reads LOOM_CKPT_* from the job
    restored = ck.restore()                    # newest verified checkpoint or None
    if restored:
        step, files = restored.step, restored.read_all()
    for step in range(start, steps):
        train(step)
        if ck.should_checkpoint():             # signal seen, or interval due
            ck.save_async(step + 1, {"model.bin": weights_bytes})
    ck.wait()

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

PyTorch state dicts (model, optimizer, step) go through save_torch_async()
and come back with load_torch(). With torch.distributed.checkpoint.async_save
(PyTorch >= 2.3) that is DCP into the staging directory; with an older PyTorch
every tensor is copied to CPU memory (the stall) and a background thread
writes the copy with torch.save; both commit like any checkpoint. The module
says once on stderr which path it uses, or that PyTorch is missing.
"""

import copy
import ctypes
import errno
import hashlib
import json
import mmap
import os
import pickle
import signal as _signal
import socket
import stat
import sys
import threading
import time

FORMAT = "loom-ckpt/1"
MANIFEST = "MANIFEST.json"
LATEST = "latest"
STAGING = ".staging"
TRASH = ".trash"
MAX_STEP = 999999999999
# Limits of the format (doc/loom-ckpt-protocol.md), the same as lib/ckpt/manifest.hpp.
MANIFEST_MAX_BYTES = 64 << 20
MAX_FILES = 1000000
MAX_FILE_SIZE = 1 << 62
MAX_WORLD_SIZE = 100000000
MAX_RESTART_COUNT = 1000000
MAX_NAME_BYTES = 4096

# Why a checkpoint is refused (Checkpoint.reason, CheckpointError.reason): the
# categories of the protocol, the same as lib/ckpt/catalog.hpp's Problem.
NOT_DIRECTORY = "not-directory"
MANIFEST_MISSING = "manifest-missing"
MANIFEST_REFUSED = "manifest-refused"
MANIFEST_INVALID = "manifest-invalid"
STEP_MISMATCH = "step-mismatch"
FILE_MISSING = "file-missing"
FILE_REFUSED = "file-refused"
SIZE_MISMATCH = "size-mismatch"
HASH_MISMATCH = "hash-mismatch"
IO_ERROR = "io-error"

try:  # pragma: no cover - depends on the environment
    import torch as _torch
except Exception:  # ImportError, or a broken installation
    _torch = None
try:  # pragma: no cover - depends on the environment
    import torch.distributed.checkpoint as _dcp
    TORCH_ASYNC = hasattr(_dcp, "async_save")
except Exception:
    _dcp = None
    TORCH_ASYNC = False
TORCH_STATE_FILE = "torch_state.pt"

_told_no_torch = False
_seq = 0
_seq_lock = threading.Lock()


class CheckpointError(Exception):
    """A checkpoint could not be written, read or verified; 'reason' is the
    refusal's category (MANIFEST_INVALID, HASH_MISMATCH, ...) where there is one."""

    def __init__(self, message, reason=None):
        super().__init__(message)
        self.reason = reason


def checkpoint_name(step):
    return "step-%012d" % step


def parse_checkpoint_name(name):
    if len(name) == 17 and name.startswith("step-") and name[5:].isdigit() and name[5:].isascii():
        return int(name[5:])
    return None


def _host():
    return socket.gethostname().replace(".", "_").replace("/", "_")


def check_relative_name(name):
    if not isinstance(name, str) or not name:
        raise CheckpointError("bad file name %r" % (name,))
    try:
        size = len(name.encode("utf-8"))  # strict: a lone surrogate is refused
    except UnicodeEncodeError:
        raise CheckpointError("file name %r is not valid UTF-8" % name)
    if size > MAX_NAME_BYTES:
        raise CheckpointError("file name longer than %d bytes" % MAX_NAME_BYTES)
    if name.startswith("/") or any(ord(c) < 0x20 or c == "\x7f" for c in name):
        raise CheckpointError("file name %r must be relative, without control characters" % name)
    if any(c in ("", ".", "..") for c in name.split("/")):
        raise CheckpointError("file name %r has an empty, '.' or '..' component" % name)
    if name == MANIFEST:
        raise CheckpointError("file name %r is reserved for the manifest" % name)


def _fsync_dir(path):
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_atomic(path, data, mode=0o644):
    tmp = "%s.tmp.%d" % (path, os.getpid())
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, mode)
    try:
        _write_all(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.rename(tmp, path)
    _fsync_dir(os.path.dirname(path) or ".")


def _write_all(fd, data):
    view = memoryview(data).cast("B")
    chunk = 8 << 20
    while len(view):
        n = os.write(fd, view[:chunk])
        view = view[n:]


def _sha256_file(path):
    h = hashlib.sha256()
    size = 0
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        while True:
            block = os.read(fd, 4 << 20)
            if not block:
                break
            h.update(block)
            size += len(block)
    finally:
        os.close(fd)
    return size, h.hexdigest()


_libc = None


def _rename_exchange(a, b):
    """Swap two paths in one step (renameat2 RENAME_EXCHANGE); False if unsupported."""
    global _libc
    try:
        if _libc is None:
            _libc = ctypes.CDLL(None, use_errno=True)
        fn = _libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    rc = fn(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange)
    if rc != 0:
        e = ctypes.get_errno()
        if e in (errno.ENOSYS, errno.EINVAL):
            return False
        raise OSError(e, os.strerror(e), b)
    return True


def remove_tree(path):
    """Remove a tree without following symlinks."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if not os.path.isdir(path) or os.path.islink(path):
        os.unlink(path)
        return
    del st
    for name in os.listdir(path):
        remove_tree(os.path.join(path, name))
    os.rmdir(path)


class Staging:
    """One checkpoint being written; invisible until commit()."""

    def __init__(self, directory, step):
        if not (0 <= step <= MAX_STEP):
            raise CheckpointError("step %d is out of range" % step)
        global _seq
        self.dir = directory
        self.step = step
        staging = os.path.join(directory, STAGING)
        os.makedirs(staging, mode=0o700, exist_ok=True)
        with _seq_lock:
            _seq += 1
            seq = _seq
        self.path = os.path.join(staging, "%s.%s.%d.%d" % (checkpoint_name(step), _host(), os.getpid(), seq))
        os.mkdir(self.path, 0o700)
        self.files = []
        self.done = False

    def write_file(self, name, data):
        check_relative_name(name)
        path = os.path.join(self.path, name)
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        view = memoryview(data).cast("B")
        digest = {}
        hasher = None
        if len(view) >= (4 << 20):  # hash beside the write: hashlib releases the GIL
            hasher = threading.Thread(target=lambda: digest.setdefault("h", hashlib.sha256(view).hexdigest()))
            hasher.start()
        else:
            digest["h"] = hashlib.sha256(view).hexdigest()
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        try:
            _write_all(fd, view)
            os.fsync(fd)
        finally:
            os.close(fd)
            if hasher:
                hasher.join()
        entry = {"path": name, "size": len(view), "sha256": digest["h"]}
        self.files.append(entry)
        return entry

    def add_existing(self, name):
        check_relative_name(name)
        size, digest = _sha256_file(os.path.join(self.path, name))
        entry = {"path": name, "size": size, "sha256": digest}
        self.files.append(entry)
        return entry

    def commit(self, write_seconds=0.0, world_size=1, job_id="", restart_count=0, writer="loom-sdk-python"):
        if self.done:
            raise CheckpointError("staging already committed or aborted")
        manifest = {
            "format": FORMAT, "step": self.step, "world_size": int(world_size), "created": time.time(),
            "write_seconds": float(write_seconds), "restart_count": int(restart_count), "writer": writer,
            "files": self.files,
        }
        if job_id:
            manifest["job_id"] = str(job_id)
        _write_atomic(os.path.join(self.path, MANIFEST), json.dumps(manifest, indent=2).encode() + b"\n", 0o600)
        _fsync_dir(self.path)
        name = checkpoint_name(self.step)
        target = os.path.join(self.dir, name)
        try:
            os.rename(self.path, target)
        except OSError as e:
            if e.errno not in (errno.ENOTEMPTY, errno.EEXIST):
                raise
            if _rename_exchange(self.path, target):
                remove_tree(self.path)
            else:  # older kernels: the step is briefly absent, the ones before it remain
                os.makedirs(os.path.join(self.dir, TRASH), mode=0o700, exist_ok=True)
                old = os.path.join(self.dir, TRASH, "%s.%d" % (name, os.getpid()))
                os.rename(target, old)
                os.rename(self.path, target)
                remove_tree(old)
        self.done = True
        _fsync_dir(self.dir)
        _write_atomic(os.path.join(self.dir, LATEST), (name + "\n").encode())
        return target

    def abort(self):
        if not self.done:
            self.done = True
            remove_tree(self.path)


class Checkpoint:
    """A committed checkpoint found in a directory."""

    def __init__(self, path, step, manifest=None, problem="", reason=None):
        self.path, self.step, self.manifest, self.problem = path, step, manifest, problem
        self.reason = reason  # None, or why it is refused (MANIFEST_INVALID, ...)

    def read(self, name):
        check_relative_name(name)
        fd = _open_in_checkpoint(self.path, name)
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise CheckpointError("%s: is not a regular file" % os.path.join(self.path, name), FILE_REFUSED)
        with os.fdopen(fd, "rb") as f:
            return f.read()

    def read_all(self):
        return {f["path"]: self.read(f["path"]) for f in self.manifest["files"]}

    def __repr__(self):
        return "Checkpoint(%r, step=%d)" % (self.path, self.step)


def _has_lone_surrogate(text):
    """A \\uD800-\\uDFFF escape that is not half of a surrogate pair (refused
    by every reader: json-c would turn it into U+FFFD)."""
    def escape_at(i):
        if text[i:i + 2] != "\\u" or len(text) < i + 6:
            return None
        digits = text[i + 2:i + 6]
        return int(digits, 16) if all(c in "0123456789abcdefABCDEF" for c in digits) else None
    i = 0
    while i < len(text):
        if text[i] != "\\":
            i += 1
            continue
        v = escape_at(i)
        if v is None:
            i += 2
            continue
        if 0xDC00 <= v <= 0xDFFF:
            return True
        if 0xD800 <= v <= 0xDBFF:
            w = escape_at(i + 6)
            if w is None or not 0xDC00 <= w <= 0xDFFF:
                return True
            i += 6
        i += 6
    return False


def parse_manifest(text, source="manifest"):
    """Parse and check a manifest strictly; raises CheckpointError (reason
    MANIFEST_INVALID) naming the field. 'text' is bytes (UTF-8) or str."""
    def bad(msg):
        return CheckpointError("%s: %s" % (source, msg), MANIFEST_INVALID)
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8")  # strict, and never UTF-16/32 as json.loads(bytes) would
        except UnicodeDecodeError:
            raise bad("not valid UTF-8")
    if any(c < " " and c not in "\t\n\r" for c in text):
        raise bad("a raw control character (JSON allows only tab, CR and LF between tokens)")
    if _has_lone_surrogate(text):
        raise bad("a \\u escape of half a surrogate pair")
    try:
        m = json.loads(text)
    except (ValueError, RecursionError) as e:
        raise bad("invalid JSON: %s" % e)
    if not isinstance(m, dict):
        raise bad("$: expected an object")

    def field(key, types, check, required=True):
        if key not in m:
            if required:
                raise bad("$: missing required field '%s'" % key)
            return None
        v = m[key]
        if isinstance(v, bool) or not isinstance(v, types) or not check(v):
            raise bad("$.%s: bad value %r" % (key, v))
        return v

    finite = (int, float)
    fmt = field("format", str, lambda v: True)
    if fmt != FORMAT:
        raise bad("$.format: unsupported format %r (expected %s)" % (fmt, FORMAT))
    field("step", int, lambda v: 0 <= v <= MAX_STEP)
    field("world_size", int, lambda v: 1 <= v <= MAX_WORLD_SIZE)
    field("created", finite, lambda v: 0 <= v < 1e11)
    field("write_seconds", finite, lambda v: 0 <= v < 1e7)
    field("job_id", str, lambda v: True, required=False)
    field("restart_count", int, lambda v: 0 <= v <= MAX_RESTART_COUNT, required=False)
    field("writer", str, lambda v: True, required=False)
    files = field("files", list, lambda v: len(v) <= MAX_FILES)
    seen = set()
    for i, f in enumerate(files):
        where = "$.files[%d]" % i
        if not isinstance(f, dict):
            raise bad("%s: expected an object" % where)
        for key in ("path", "size", "sha256"):
            if key not in f:
                raise bad("%s: missing required field '%s'" % (where, key))
        try:
            check_relative_name(f["path"])
        except CheckpointError as e:
            raise bad("%s.path: %s" % (where, e))
        size = f["size"]
        if isinstance(size, bool) or not isinstance(size, int) or not 0 <= size <= MAX_FILE_SIZE:
            raise bad("%s.size: bad value %r" % (where, size))
        h = f["sha256"]
        if not isinstance(h, str) or len(h) != 64 or any(c not in "0123456789abcdef" for c in h):
            raise bad("%s.sha256: expected 64 lower-case hex digits" % where)
        for key in f:
            if key not in ("path", "size", "sha256"):
                raise bad("%s.%s: unknown field" % (where, key))
        if f["path"] in seen:
            raise bad("%s: file %r listed twice" % (where, f["path"]))
        seen.add(f["path"])
    known = ("format", "step", "world_size", "created", "write_seconds", "job_id", "restart_count", "writer", "files")
    for k in m:
        if k not in known:
            raise bad("$.%s: unknown field" % k)
    return m


def _read_manifest(path):
    """The manifest's bytes: a regular file, never through a symlink, of at most
    MANIFEST_MAX_BYTES. CheckpointError with MANIFEST_MISSING or MANIFEST_REFUSED."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY)
    except FileNotFoundError:
        raise CheckpointError("%s: no manifest (an uncommitted or torn checkpoint)" % path, MANIFEST_MISSING)
    except OSError as e:
        why = "is a symlink: refused" if e.errno == errno.ELOOP else "cannot open: %s" % e.strerror
        raise CheckpointError("%s: %s" % (path, why), MANIFEST_REFUSED)
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_size > MANIFEST_MAX_BYTES:
        os.close(fd)
        why = "is not a regular file" if not stat.S_ISREG(st.st_mode) else "larger than %d bytes" % MANIFEST_MAX_BYTES
        raise CheckpointError("%s: %s: refused" % (path, why), MANIFEST_REFUSED)
    with os.fdopen(fd, "rb") as f:
        try:
            data = f.read(MANIFEST_MAX_BYTES + 1)
        except OSError as e:
            raise CheckpointError("%s: read error: %s" % (path, e.strerror), MANIFEST_REFUSED)
    if len(data) > MANIFEST_MAX_BYTES:
        raise CheckpointError("%s: larger than %d bytes: refused" % (path, MANIFEST_MAX_BYTES), MANIFEST_REFUSED)
    return data


def _open_in_checkpoint(checkpoint_path, name):
    """A read-only descriptor of 'name' inside the checkpoint, opened one
    component at a time without following a symlink. CheckpointError with
    FILE_MISSING, FILE_REFUSED or IO_ERROR."""
    path = os.path.join(checkpoint_path, name)
    try:
        fd = os.open(checkpoint_path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError as e:
        raise CheckpointError("%s: cannot open the checkpoint: %s" % (path, e.strerror), IO_ERROR)
    parts = name.split("/")
    for i, comp in enumerate(parts):
        last = i == len(parts) - 1
        flags = os.O_RDONLY | os.O_NOFOLLOW | ((os.O_NONBLOCK | os.O_NOCTTY) if last else os.O_DIRECTORY)
        try:
            nxt = os.open(comp, flags, dir_fd=fd)
        except FileNotFoundError:
            raise CheckpointError("%s: is missing" % path, FILE_MISSING)
        except OSError as e:
            if e.errno in (errno.ELOOP, errno.ENOTDIR):
                why = "is a symlink: refused" if last else "is reached through a symlink or a non-directory: refused"
                raise CheckpointError("%s: %s" % (path, why), FILE_REFUSED)
            raise CheckpointError("%s: cannot open: %s" % (path, e.strerror), IO_ERROR)
        finally:
            os.close(fd)
        fd = nxt
    return fd


def list_checkpoints(directory):
    """Committed checkpoints, newest first; manifests read, not verified."""
    out = []
    for name in os.listdir(directory):
        step = parse_checkpoint_name(name)
        if step is None:
            continue
        path = os.path.join(directory, name)
        if os.path.islink(path) or not os.path.isdir(path):
            out.append(Checkpoint(path, step, None, "not a directory (symlinks are not followed)", NOT_DIRECTORY))
            continue
        try:
            source = os.path.join(path, MANIFEST)
            m = parse_manifest(_read_manifest(source), source)
            if m["step"] != step:
                raise CheckpointError("manifest says step %d" % m["step"], STEP_MISMATCH)
            out.append(Checkpoint(path, step, m))
        except CheckpointError as e:
            out.append(Checkpoint(path, step, None, str(e), e.reason))
        except OSError as e:
            out.append(Checkpoint(path, step, None, str(e), IO_ERROR))
    out.sort(key=lambda c: c.step, reverse=True)
    return out


def verify(checkpoint, level="full"):
    """Raise CheckpointError (with its reason) unless every file matches the
    manifest ("quick": sizes only). Files are opened without following symlinks."""
    if checkpoint.manifest is None:
        raise CheckpointError("%s: %s" % (checkpoint.path, checkpoint.problem), checkpoint.reason)
    for f in checkpoint.manifest["files"]:
        path = os.path.join(checkpoint.path, f["path"])
        fd = _open_in_checkpoint(checkpoint.path, f["path"])
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            os.close(fd)
            raise CheckpointError("%s: is not a regular file" % path, FILE_REFUSED)
        with os.fdopen(fd, "rb") as fh:
            if st.st_size != f["size"]:
                raise CheckpointError("%s: size %d differs from the manifest's %d" % (path, st.st_size, f["size"]),
                                      SIZE_MISMATCH)
            if level != "full":
                continue
            h = hashlib.sha256()
            try:
                while True:
                    block = fh.read(4 << 20)
                    if not block:
                        break
                    h.update(block)
            except OSError as e:
                raise CheckpointError("%s: read error: %s" % (path, e.strerror), IO_ERROR)
            if h.hexdigest() != f["sha256"]:
                raise CheckpointError("%s: checksum differs from the manifest (corrupt)" % path, HASH_MISMATCH)


def find_latest(directory, level="full", skipped=None):
    """The newest checkpoint that verifies, or None. Failures go to 'skipped'."""
    for c in list_checkpoints(directory):
        try:
            verify(c, level)
            return c
        except CheckpointError as e:
            c.problem = str(e)
            c.reason = e.reason or IO_ERROR
            if skipped is not None:
                skipped.append(c)
    return None


def parse_staging_name(name):
    """(host, pid) of a staging name step-N.<host>.<pid>.<seq>, or None."""
    if len(name) < 18 or parse_checkpoint_name(name[:17]) is None or name[17] != ".":
        return None
    head, dot, _seq = name[18:].rpartition(".")
    if not dot:
        return None
    host, dot, pid = head.rpartition(".")
    if not dot or not host or not pid or len(pid) > 9 or not (pid.isdigit() and pid.isascii()):
        return None
    return host, int(pid)


def _pid_alive(pid):
    try:
        os.kill(pid, 0)
        return pid > 0
    except PermissionError:
        return pid > 0
    except OSError:
        return False


def prune(directory, keep, stale_seconds=86400, dry_run=False):
    """Keep the newest 'keep' (>= 1) complete checkpoints (quick verification);
    remove older complete ones and broken ones older than the oldest kept
    (broken newer ones stay for inspection). Staging and trash debris of
    writers that are gone goes too (this host: a dead pid; otherwise older
    than stale_seconds). Returns the removed checkpoints' paths."""
    if keep < 1:
        raise CheckpointError("%s: keep must be at least 1" % directory)
    kept, broken, removed = [], [], []
    for c in list_checkpoints(directory):
        try:
            verify(c, "quick")
        except CheckpointError:
            broken.append(c)
            continue
        (kept if len(kept) < keep else removed).append(c)
    if kept:
        removed += [c for c in broken if c.step < kept[-1].step]
    debris = []
    me, now = _host(), time.time()
    for sub in (STAGING, TRASH):
        sdir = os.path.join(directory, sub)
        try:
            names = os.listdir(sdir)
        except OSError:
            continue
        for n in names:
            p = os.path.join(sdir, n)
            try:
                st = os.lstat(p)
            except OSError:
                continue
            owner = parse_staging_name(n) if sub == STAGING else None
            if owner and owner[0] == me:
                gone = not _pid_alive(owner[1])
            else:
                gone = now - st.st_mtime > stale_seconds
            if gone:
                debris.append(p)
    if dry_run:
        return [c.path for c in removed]
    for c in removed:
        os.makedirs(os.path.join(directory, TRASH), mode=0o700, exist_ok=True)
        tmp = os.path.join(directory, TRASH, "%s.%d" % (os.path.basename(c.path), os.getpid()))
        os.rename(c.path, tmp)
        remove_tree(tmp)
    for p in debris:
        try:
            remove_tree(p)
        except OSError:
            pass
    return [c.path for c in removed]


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


class Checkpointer:
    """Decides when to checkpoint, saves (async or not), restores."""

    def __init__(self, directory=None, signal_name=None, interval=None, keep=None, world_size=None,
                 install_signal_handler=True):
        env = os.environ
        self.dir = directory if directory is not None else env.get("LOOM_CKPT_DIR", "")
        sig = signal_name if signal_name is not None else env.get("LOOM_CKPT_SIGNAL", "")
        self.interval = float(interval if interval is not None else (env.get("LOOM_CKPT_INTERVAL") or 0))
        self.keep = int(keep if keep is not None else (env.get("LOOM_CKPT_KEEP") or 3))
        self.world_size = int(world_size if world_size is not None else (env.get("SLURM_NTASKS") or 1))
        self.restart_count = int(env.get("LOOM_RESTART_COUNT") or 0)
        self.job_id = env.get("SLURM_JOB_ID", "")
        self._signalled = threading.Event()
        self._last_save = time.monotonic()
        self._thread = None
        self._error = None
        self._snapshot = {}  # name -> snapshot memory, reused by the next save
        self.huge_pages = env.get("LOOM_CKPT_HUGE_PAGES", "").lower() in ("1", "yes", "true", "on")
        self._reserver = None
        self._stop_reserve = threading.Event()
        self.last_stall = 0.0
        self.last_write = 0.0
        self.signal = None
        if sig and install_signal_handler:
            self.signal = _signal.Signals(int(sig)) if sig.isdigit() else _signal.Signals[
                sig if sig.startswith("SIG") else "SIG" + sig]
            previous = _signal.getsignal(self.signal)

            def handler(signum, frame):
                self._signalled.set()
                if callable(previous):
                    previous(signum, frame)
            _signal.signal(self.signal, handler)
        global _told_no_torch
        if self.enabled and not _told_no_torch:
            _told_no_torch = True
            if _torch is None:
                sys.stderr.write("loom_ckpt: PyTorch is not installed: save_async() writes byte buffers "
                                 "with the built-in writer; save_torch_async() is not available\n")
            elif not TORCH_ASYNC:
                sys.stderr.write("loom_ckpt: torch %s has no torch.distributed.checkpoint.async_save: "
                                 "save_torch_async() copies tensors to CPU memory and saving with torch.save "
                                 "happens in the background\n" % _torch.__version__)

    @property
    def torch_writer(self):
        """How save_torch_async() saves: "torch-dcp" (torch.distributed.checkpoint
        async_save), "torch-save" (CPU snapshot + torch.save in the background), or
        None without PyTorch."""
        return "torch-dcp" if TORCH_ASYNC else "torch-save" if _torch is not None else None

    @property
    def enabled(self):
        return bool(self.dir)

    def should_checkpoint(self):
        if not self.enabled:
            return False
        if self._signalled.is_set():
            return True
        return self.interval > 0 and time.monotonic() - self._last_save >= self.interval

    def _commit_files(self, step, files, started):
        st = Staging(self.dir, step)
        try:
            for name, data in files.items():
                st.write_file(name, data)
            path = st.commit(time.monotonic() - started, self.world_size, self.job_id, self.restart_count)
        except BaseException:
            st.abort()
            raise
        if self.keep > 0:
            prune(self.dir, self.keep)
        return path

    def save(self, step, files):
        """Write and commit on the calling thread; returns the checkpoint's path."""
        self.wait()
        self._signalled.clear()
        self._last_save = t0 = time.monotonic()
        path = self._commit_files(step, files, t0)
        self.last_stall = self.last_write = time.monotonic() - t0
        return path

    def reserve(self, files):
        """Prepare snapshot memory for 'files' (name -> bytes-like, or name -> size in
        bytes) in a background thread, and return at once. A save_async() that comes
        before it is done stops it (within 16 MiB) and faults the rest in with its
        copy. Memory already large enough is kept; a larger save later gets more."""
        if not self.enabled:
            return
        sizes = {name: (v if isinstance(v, int) else _byte_view(v).nbytes) for name, v in files.items()}
        for name, n in sizes.items():
            check_relative_name(name)
            if n < 0:
                raise ValueError("reserve: %r: negative size %d" % (name, n))
        before = self._reserver

        def run():
            if before is not None:
                before.join()
            fresh = {}
            for name, n in sizes.items():
                mem = self._snapshot.get(name)
                if mem is None or len(mem) < n:
                    mem = _snapshot_memory(n, self.huge_pages)
                    _prefault(mem, self._stop_reserve)
                    fresh[name] = mem
            # Only a save reads the table, and it joins this thread first.
            table = dict(self._snapshot)
            table.update(fresh)
            self._snapshot = table
        self._reserver = threading.Thread(target=run, name="loom-ckpt-reserve", daemon=True)
        self._reserver.start()

    def _wait_reserve(self, cut_short=False):
        if self._reserver is not None:
            if cut_short:
                self._stop_reserve.set()
            self._reserver.join()
            self._reserver = None
            self._stop_reserve.clear()

    def _take_snapshot(self, files):
        """Copy 'files' into the kept snapshot memory; name -> memoryview of the copy."""
        kept, snapshot = {}, {}
        for name, data in files.items():
            view = _byte_view(data)
            n = view.nbytes
            mem = self._snapshot.get(name)
            if mem is None or len(mem) < n:
                mem = None  # the smaller one goes before the larger one is mapped
                self._snapshot.pop(name, None)
                mem = _snapshot_memory(n, self.huge_pages)
            target = memoryview(mem)[:n]
            target[:] = view
            kept[name] = mem
            snapshot[name] = target
        self._snapshot = kept  # files no longer saved give their memory back
        return snapshot

    def save_async(self, step, files):
        """Snapshot 'files' (name -> bytes-like) and write them in the background."""
        t0 = time.monotonic()
        self._wait_reserve(cut_short=True)
        self.wait()
        self._signalled.clear()
        snapshot = self._take_snapshot(files)
        self._last_save = time.monotonic()
        self.last_stall = self._last_save - t0

        def run():
            w0 = time.monotonic()
            try:
                self._commit_files(step, snapshot, w0)
                self.last_write = time.monotonic() - w0
            except BaseException as e:  # reported by wait()
                self._error = e
        self._thread = threading.Thread(target=run, name="loom-ckpt-writer", daemon=False)
        self._thread.start()

    def save_torch_async(self, step, state_dict):
        """Save a PyTorch state dict (model, optimizer, step...) asynchronously and
        commit it like any checkpoint. With torch.distributed.checkpoint.async_save
        (PyTorch >= 2.3) that is DCP into the staging directory; with an older
        PyTorch, every tensor is copied to CPU memory here (the stall) and a
        background thread writes the copy with torch.save, so training may change
        the live tensors at once. load_torch() reads either form."""
        if _torch is None:
            raise CheckpointError("save_torch_async: PyTorch is not installed")
        if not TORCH_ASYNC:
            return self._save_torch_snapshot(step, state_dict)
        self.wait()
        self._signalled.clear()
        t0 = time.monotonic()
        st = Staging(self.dir, step)
        future = _dcp.async_save(state_dict, checkpoint_id=st.path)
        self._last_save = time.monotonic()
        self.last_stall = self._last_save - t0

        def run():
            try:
                future.result()
                for root, _dirs, names in os.walk(st.path):
                    for n in sorted(names):
                        st.add_existing(os.path.relpath(os.path.join(root, n), st.path))
                st.commit(time.monotonic() - t0, self.world_size, self.job_id, self.restart_count,
                          writer="loom-sdk-python-torch-dcp")
                if self.keep > 0:
                    prune(self.dir, self.keep)
                self.last_write = time.monotonic() - t0
            except BaseException as e:
                st.abort()
                self._error = e
        self._thread = threading.Thread(target=run, name="loom-ckpt-dcp", daemon=False)
        self._thread.start()

    def _save_torch_snapshot(self, step, state_dict):
        t0 = time.monotonic()
        self.wait()
        self._signalled.clear()
        snapshot = _torch_cpu_copy(state_dict)
        self._last_save = time.monotonic()
        self.last_stall = self._last_save - t0

        def run():
            w0 = time.monotonic()
            st = Staging(self.dir, step)
            try:
                path = os.path.join(st.path, TORCH_STATE_FILE)
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
                with os.fdopen(fd, "wb") as f:
                    _torch.save(snapshot, f)
                    f.flush()
                    os.fsync(f.fileno())
                st.add_existing(TORCH_STATE_FILE)
                st.commit(time.monotonic() - w0, self.world_size, self.job_id, self.restart_count,
                          writer="loom-sdk-python-torch-save")
                if self.keep > 0:
                    prune(self.dir, self.keep)
                self.last_write = time.monotonic() - w0
            except BaseException as e:  # reported by wait()
                st.abort()
                self._error = e
        self._thread = threading.Thread(target=run, name="loom-ckpt-torch", daemon=False)
        self._thread.start()

    def load_torch(self, template=None, checkpoint=None, map_location="cpu"):
        """The state dict of the newest verified checkpoint (or of 'checkpoint'), or
        None when there is none. A torch.save checkpoint is loaded with
        weights_only=True where PyTorch has it (tensors and plain containers, no
        arbitrary objects); a DCP checkpoint is loaded into 'template' (the state
        dict to fill, as torch.distributed.checkpoint.load requires) and returned."""
        if _torch is None:
            raise CheckpointError("load_torch: PyTorch is not installed")
        c = checkpoint if checkpoint is not None else self.restore()
        if c is None:
            return None
        writer = (c.manifest or {}).get("writer", "")
        if writer.endswith("-dcp"):
            if _dcp is None or template is None:
                raise CheckpointError("%s: a torch.distributed.checkpoint checkpoint: load_torch needs "
                                      "torch.distributed.checkpoint and template=" % c.path)
            _dcp.load(template, checkpoint_id=c.path)
            return template
        names = [f["path"] for f in c.manifest["files"]]
        if TORCH_STATE_FILE not in names:
            raise CheckpointError("%s: no %s (written by %s, not by save_torch_async)" % (
                c.path, TORCH_STATE_FILE, writer or "an unknown writer"))
        path = os.path.join(c.path, TORCH_STATE_FILE)
        try:
            return _torch.load(path, map_location=map_location, weights_only=True)
        except TypeError:  # a PyTorch without weights_only
            pass
        except pickle.UnpicklingError:
            pass  # an older restricted unpickler refuses plain floats (optimizer hyperparameters)
        # A full unpickle runs code from the file: only from files nobody else can write.
        for q in (c.path, path):
            st = os.lstat(q)
            if st.st_uid != os.getuid() or st.st_mode & 0o022:
                raise CheckpointError("%s: not loading with a full unpickle: owned by uid %d, mode %o (must be "
                                      "this user's and not group/other-writable)" % (q, st.st_uid, st.st_mode & 0o7777))
        try:
            return _torch.load(path, map_location=map_location, weights_only=False)
        except TypeError:
            return _torch.load(path, map_location=map_location)

    def wait(self):
        """Wait for the save (and reserve) in flight; raise the save's error if it failed."""
        self._wait_reserve()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if self._error is not None:
            e, self._error = self._error, None
            raise CheckpointError("background checkpoint failed: %s" % e)

    def restore(self, level="full"):
        """The newest verified checkpoint (a Checkpoint) or None."""
        if not self.enabled or not os.path.isdir(self.dir):
            return None
        skipped = []
        c = find_latest(self.dir, level, skipped)
        for s in skipped:
            sys.stderr.write("loom_ckpt: skipping %s: %s\n" % (os.path.basename(s.path), s.problem))
        return c


def _main(argv):
    if len(argv) != 3 or argv[1] not in ("ls", "verify", "latest"):
        sys.stderr.write("usage: python3 -m loom_ckpt ls|verify|latest DIR\n")
        return 2
    cmd, directory = argv[1], argv[2]
    if cmd == "latest":
        c = find_latest(directory)
        print(c.path if c else "")
        return 0
    bad = 0
    for c in list_checkpoints(directory):
        try:
            verify(c, "full" if cmd == "verify" else "quick")
            print("%s ok step=%d files=%d" % (os.path.basename(c.path), c.step, len(c.manifest["files"])))
        except CheckpointError as e:
            bad += 1
            print("%s BAD %s" % (os.path.basename(c.path), e))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv))
