"""Checkpoints on disk: writing and committing (one process, and a rank's
share of a checkpoint of several ranks), listing, verification, restore
selection and retention (doc/loom-ckpt-protocol.md sections 3 to 5 and 7)."""

import ctypes
import errno
import hashlib
import json
import os
import socket
import stat
import threading
import time

from .datafile import write_hashed
from .protocol import (FORMAT, FORMAT_RANKS, LATEST, MANIFEST, MANIFEST_MAX_BYTES, MANIFEST_MISSING,
                       MANIFEST_REFUSED, MAX_STEP, NOT_DIRECTORY, FILE_MISSING, FILE_REFUSED, SIZE_MISMATCH,
                       HASH_MISMATCH, IO_ERROR, PARTS, STAGING, TRASH, CheckpointError, check_job,
                       check_parts_complete, check_relative_name, checkpoint_name, manifest_files,
                       parse_checkpoint_name, parse_manifest, rank_dir)

_seq = 0
_seq_lock = threading.Lock()


def _host():
    return socket.gethostname().replace(".", "_").replace("/", "_")



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



def _existing(root, name, digest=None, size=None):
    """The file object of root/name, already written. With 'digest' and 'size'
    (taken while it was written, e.g. by hashio.HashingWriter) it is not read
    again: only its size on disk is checked against 'size'; without them it is
    read and hashed."""
    check_relative_name(name)
    path = os.path.join(root, name)
    if digest is None:
        size, digest = _sha256_file(path)
        return {"path": name, "size": size, "sha256": digest}
    if size is None or len(digest) != 64:
        raise CheckpointError("%s: a precomputed digest needs the size and 64 hex digits" % path)
    st = os.lstat(path)
    if not stat.S_ISREG(st.st_mode) or st.st_size != size:
        raise CheckpointError("%s: %d bytes on disk, %d were hashed while writing" % (path, st.st_size, size),
                              SIZE_MISMATCH)
    return {"path": name, "size": int(size), "sha256": digest.lower()}


def _install(directory, staging_path, step, manifest):
    """Section 3 steps 3 to 6: the manifest into the staging directory, then
    the directory renamed to step-N (swapping out an old one), then latest."""
    _write_atomic(os.path.join(staging_path, MANIFEST), json.dumps(manifest, indent=2).encode() + b"\n", 0o600)
    _fsync_dir(staging_path)
    name = checkpoint_name(step)
    target = os.path.join(directory, name)
    try:
        os.rename(staging_path, target)
    except OSError as e:
        if e.errno not in (errno.ENOTEMPTY, errno.EEXIST):
            raise
        if _rename_exchange(staging_path, target):
            remove_tree(staging_path)
        else:  # older kernels: the step is briefly absent, the ones before it remain
            os.makedirs(os.path.join(directory, TRASH), mode=0o700, exist_ok=True)
            old = os.path.join(directory, TRASH, "%s.%d" % (name, os.getpid()))
            os.rename(target, old)
            os.rename(staging_path, target)
            remove_tree(old)
    _fsync_dir(directory)
    _write_atomic(os.path.join(directory, LATEST), (name + "\n").encode())
    return target


def _manifest_head(fmt, step, world_size, write_seconds, job_id, restart_count, writer):
    m = {"format": fmt, "step": step, "world_size": int(world_size), "created": time.time(),
         "write_seconds": float(write_seconds), "restart_count": int(restart_count), "writer": writer}
    if job_id:
        m["job_id"] = str(job_id)
    return m


def _check_step(step):
    if not (isinstance(step, int) and 0 <= step <= MAX_STEP):
        raise CheckpointError("step %r is out of range (0 to %d)" % (step, MAX_STEP))


class Staging:
    """One checkpoint of one process being written; invisible until commit()."""

    def __init__(self, directory, step):
        _check_step(step)
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
        entry = write_hashed(self.path, name, data)
        self.files.append(entry)
        return entry

    def add_existing(self, name, digest=None, size=None):
        """Add a file written into the staging directory by other means; with
        'digest' and 'size' (hashed while writing) it is not read again."""
        entry = _existing(self.path, name, digest, size)
        self.files.append(entry)
        return entry

    def commit(self, write_seconds=0.0, world_size=1, job_id="", restart_count=0, writer="loom-sdk-python"):
        if self.done:
            raise CheckpointError("staging already committed or aborted")
        m = _manifest_head(FORMAT, self.step, world_size, write_seconds, job_id, restart_count, writer)
        m["files"] = self.files
        target = _install(self.dir, self.path, self.step, m)
        self.done = True
        return target

    def abort(self):
        if not self.done:
            self.done = True
            remove_tree(self.path)


def shared_staging_name(step, run, seq):
    """Section 7.4: the staging directory every rank of a save derives alike."""
    return "%s.run-%s.%d" % (checkpoint_name(step), run, seq)


class RankStaging:
    """A rank's share of a checkpoint of several ranks (section 7.4): its
    files in the shared staging directory, then its part; rank 0 commits."""

    def __init__(self, directory, step, rank, world_size, run, seq, layout="ranks"):
        _check_step(step)
        if not run:
            raise CheckpointError("no run id for the shared staging directory of %d ranks" % world_size)
        self.dir, self.step, self.rank, self.world_size, self.layout = directory, step, rank, world_size, layout
        staging = os.path.join(directory, STAGING)
        os.makedirs(staging, mode=0o700, exist_ok=True)
        self.path = os.path.join(staging, shared_staging_name(step, run, seq))
        try:
            os.mkdir(self.path, 0o700)
        except FileExistsError:  # another rank made it first
            pass
        self.prefix = rank_dir(rank) + "/" if layout == "ranks" else ""
        if self.prefix:
            remove_tree(os.path.join(self.path, rank_dir(rank)))  # this rank's own leftovers only
        self.files = []
        self.done = False

    def write_file(self, name, data):
        entry = write_hashed(self.path, self.prefix + name, data)
        self.files.append(entry)
        return entry

    def add_existing(self, relpath, digest=None, size=None):
        entry = _existing(self.path, relpath, digest, size)
        self.files.append(entry)
        return entry

    def _part_path(self, rank):
        return os.path.join(self.path, PARTS, rank_dir(rank) + ".json")

    def finish(self, write_seconds=0.0):
        """Write this rank's part (7.4 step 4): its share is done."""
        part = {"rank": self.rank, "step": self.step, "world_size": self.world_size, "host": socket.gethostname(),
                "write_seconds": float(write_seconds), "files": self.files}
        os.makedirs(os.path.join(self.path, PARTS), mode=0o700, exist_ok=True)
        # Atomic (renamed into place) but not fsynced: rank 0 removes it before
        # the commit, whose own fsyncs make the checkpoint durable, and this
        # rank's files were fsynced before. An fsync here would wait, on a
        # journaling file system, for the other ranks' data still being written.
        path = self._part_path(self.rank)
        tmp = "%s.tmp.%d" % (path, os.getpid())
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        try:
            _write_all(fd, json.dumps(part).encode() + b"\n")
        finally:
            os.close(fd)
        os.rename(tmp, path)

    def _wait_parts(self, timeout):
        deadline, nap = time.monotonic() + timeout, 0.001
        while True:
            absent = [r for r in range(self.world_size) if not os.path.exists(self._part_path(r))]
            if not absent:
                return
            if time.monotonic() >= deadline:
                shown = ", ".join(str(r) for r in absent[:16]) + (" ..." if len(absent) > 16 else "")
                raise CheckpointError("%s: step %d not committed: rank(s) %s did not finish in %gs" %
                                      (self.dir, self.step, shown, timeout))
            time.sleep(nap)
            nap = min(nap * 2, 0.05)

    def _read_part(self, rank):
        path = self._part_path(rank)
        with open(path, "rb") as f:
            p = json.loads(f.read().decode("utf-8"))
        if not isinstance(p, dict) or p.get("rank") != rank or p.get("step") != self.step or \
                p.get("world_size") != self.world_size:
            raise CheckpointError("%s: not rank %d's part of step %d of %d ranks" % (path, rank, self.step,
                                                                                    self.world_size))
        del p["world_size"]
        return p

    def commit(self, write_seconds=0.0, job_id="", restart_count=0, writer="loom-sdk-python", timeout=600.0):
        """Rank 0: wait for every part, then commit (7.4 step 5)."""
        if self.rank != 0:
            raise CheckpointError("rank %d: only rank 0 commits" % self.rank)
        self._wait_parts(timeout)
        m = _manifest_head(FORMAT_RANKS, self.step, self.world_size, write_seconds, job_id, restart_count, writer)
        m["layout"] = self.layout
        m["ranks"] = [self._read_part(r) for r in range(self.world_size)]
        parse_manifest(json.dumps(m), os.path.join(self.path, MANIFEST))  # what readers will accept
        remove_tree(os.path.join(self.path, PARTS))
        target = _install(self.dir, self.path, self.step, m)
        self.done = True
        return target


