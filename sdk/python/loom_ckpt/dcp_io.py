"""torch.distributed.checkpoint through loom's digests: a FileSystemWriter
whose files are hashed as DCP writes them, and a FileSystemReader whose
files are read once each, checked against the manifest, and served to DCP
from memory.

Both replace the `fs` (a torch.distributed.checkpoint.filesystem.FileSystem)
of DCP's own FileSystemWriter/FileSystemReader, through which those open
every file (PyTorch 2.2 to 2.13 at least). Where that is not so, the writer
is None (the SDK then hashes the files after DCP wrote them, as before) and
the reader is None (the SDK verifies the files fully before DCP reads
them)."""

import os
import threading
from contextlib import contextmanager

from .hashio import HashingWriter, MemoryFile, read_verified
from .protocol import CheckpointError, FILE_MISSING, HASH_MISMATCH

try:  # pragma: no cover - depends on the environment
    from torch.distributed.checkpoint.filesystem import FileSystem as _FileSystem
    from torch.distributed.checkpoint import FileSystemReader as _Reader, FileSystemWriter as _Writer
except Exception:
    _FileSystem = _Reader = _Writer = None


class Digests:
    """What the writer hashed: absolute path -> (size, sha256), thread-safe
    (DCP writes from several threads with thread_count > 1)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._files = {}

    def put(self, path, size, digest):
        with self._lock:
            self._files[os.path.abspath(str(path))] = (size, digest)

    def move(self, old, new):
        with self._lock:
            got = self._files.pop(os.path.abspath(str(old)), None)
            if got is not None:
                self._files[os.path.abspath(str(new))] = got

    def drop(self, path):
        with self._lock:
            self._files.pop(os.path.abspath(str(path)), None)

    def get(self, path):
        with self._lock:
            return self._files.get(os.path.abspath(str(path)))


if _FileSystem is not None:
    class _HashingFileSystem(_FileSystem):
        """DCP's FileSystem, with every file opened "wb" written through a HashingWriter."""

        def __init__(self, digests):
            super().__init__()
            self.digests = digests

        @contextmanager
        def create_stream(self, path, mode):
            if mode != "wb":
                with super().create_stream(path, mode) as s:
                    yield s
                return
            w = HashingWriter(str(path), exclusive=False)
            try:
                yield w
                self.digests.put(path, w.size, w.sha256)
            finally:
                w.close()

        def rename(self, path, new_path):
            super().rename(path, new_path)
            self.digests.move(path, new_path)

        def rm_file(self, path):
            super().rm_file(path)
            self.digests.drop(path)

    class _VerifyingFileSystem(_FileSystem):
        """DCP's FileSystem, with every file opened "rb" read once and checked
        against the manifest (read_verified), then served from memory; the
        files preloaded by the reader are served from there."""

        def __init__(self, root, entries):
            super().__init__()
            self.root, self.entries = os.path.abspath(root), entries
            self.loaded = {}

        def _rel(self, path):
            return os.path.relpath(os.path.abspath(str(path)), self.root)

        def verified(self, rel):
            entry = self.entries.get(rel)
            if entry is None:
                raise CheckpointError("%s: DCP reads a file that is not in the manifest" %
                                      os.path.join(self.root, rel), FILE_MISSING)
            return read_verified(self.root, entry)

        def preload(self, rels):
            for rel in rels:
                if rel not in self.loaded:
                    self.loaded[rel] = self.verified(rel)

        def release(self):
            for f in self.loaded.values():
                f.close()
            self.loaded = {}

        @contextmanager
        def create_stream(self, path, mode):
            if mode != "rb":
                raise CheckpointError("%s: a checkpoint being loaded is not opened with mode %r" % (path, mode))
            rel = self._rel(path)
            held = self.loaded.get(rel)
            if held is not None:
                view = held.view
                f = MemoryFile(view, len(view))
            else:  # a file the reader did not preload (the metadata): read and checked now
                f = self.verified(rel)
            try:
                yield f
            finally:
                f.close()

    class _VerifyingReader(_Reader):
        """Reads and checks every file of this rank's share before DCP parses
        any of it (then 'agree', when given, tells whether every rank's share
        verified): 'template' is not touched unless the whole share is good."""

        agree = None

        def read_data(self, plan, planner):
            ok = False
            try:
                self.fs.preload(sorted({self.storage_data[i.storage_index].relative_path for i in plan.items}))
                ok = True
            finally:  # every rank takes part in the agreement, also one whose own share failed
                if not ok:
                    self.fs.release()
                everyone = self.agree(ok) if self.agree is not None else ok
            try:
                if not everyone:
                    raise CheckpointError("%s: another rank's share did not verify" % self.fs.root, HASH_MISMATCH)
                return super().read_data(plan, planner)
            finally:
                self.fs.release()


def hashing_writer(path, digests):
    """A DCP FileSystemWriter for 'path' that records digests as it writes,
    or None where this PyTorch's writer cannot take one."""
    if _Writer is None:
        return None
    try:
        w = _Writer(path)
    except Exception:
        return None
    if not isinstance(getattr(w, "fs", None), _FileSystem):
        return None
    w.fs = _HashingFileSystem(digests)
    return w


def verifying_reader(checkpoint_path, entries, agree=None):
    """A DCP FileSystemReader for a checkpoint that checks each file it reads
    against 'entries' (relative path -> manifest file object) during the one
    read of it, all of this rank's share before DCP parses any; 'agree' (a
    function of this rank's verdict giving every rank's) keeps the ranks
    together. None where this PyTorch's reader cannot take one."""
    if _Reader is None:
        return None
    try:
        r = _VerifyingReader(checkpoint_path)
    except Exception:
        return None
    if not isinstance(getattr(r, "fs", None), _FileSystem) or not hasattr(r, "storage_data"):
        return None
    r.fs = _VerifyingFileSystem(checkpoint_path, entries)
    r.agree = agree
    return r
