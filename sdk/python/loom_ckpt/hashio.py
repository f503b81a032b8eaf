"""Digests taken while the bytes pass, so that nothing is read twice.

Saving: HashingWriter is the file object torch.save (or DCP's writer) writes
through; it hashes every byte in the order written, so the manifest's digest
needs no second read of the file.

Restoring: read_verified() reads a file of a checkpoint once, from disk into
memory, hashing each block as it is read, and compares size and digest with
the manifest before anything parses the bytes; MemoryFile then serves those
bytes to torch.load or DCP, which seek and read in their own order (a zip's
directory at its end first; DCP's items in plan order) without touching the
file again. The price: memory for the file while it is loaded, and one copy
from that memory into the tensors."""

import hashlib
import io
import os
import stat

from .catalog import _open_in_checkpoint
from .protocol import CheckpointError, FILE_REFUSED, HASH_MISMATCH, IO_ERROR, SIZE_MISMATCH
from .snapshot import _snapshot_memory

# Read and write in blocks of this size, each hashed right after it is read or
# before it is written, while it is in the CPU's caches. (A second thread that
# hashed block k while block k+1 was read made the read of 256 MiB twice as
# slow on the 2-CPU VM of bench/results/ckpt-restore-io.md; hashing in line
# costs about what the hash does.)
_BLOCK = 8 << 20


def _flat(b):
    view = memoryview(b)
    if not view.c_contiguous:
        view = memoryview(view.tobytes())
    return view.cast("B") if view.format != "B" or view.ndim != 1 else view


class HashingWriter(io.RawIOBase):
    """A new file (O_EXCL, no symlink, 0600) written strictly in sequence and
    hashed as it is written. It cannot seek: a writer that went back would make
    the digest wrong, so it fails instead."""

    def __init__(self, path, exclusive=True):
        super().__init__()
        flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC | (os.O_EXCL if exclusive else os.O_TRUNC)
        self.path = path
        self._fd = os.open(path, flags, 0o600)
        self._hash = hashlib.sha256()
        self.size = 0

    def writable(self):
        return True

    def write(self, b):
        view = _flat(b)
        n = len(view)
        for off in range(0, n, _BLOCK):
            block = view[off:off + _BLOCK]
            self._hash.update(block)
            done = 0
            while done < len(block):
                done += os.write(self._fd, block[done:])
        self.size += n
        return n

    def tell(self):
        return self.size

    def fileno(self):
        return self._fd

    def sync(self):
        os.fsync(self._fd)

    def close(self):
        if not self.closed:
            try:
                os.close(self._fd)
            finally:
                super().close()

    @property
    def sha256(self):
        return self._hash.hexdigest()


class MemoryFile(io.RawIOBase):
    """A read-only, seekable file object over bytes already in memory."""

    def __init__(self, mem, size):
        super().__init__()
        self._view = memoryview(mem)[:size]
        self._pos = 0

    @property
    def view(self):
        """The bytes, read-only."""
        return self._view.toreadonly()

    def readable(self):
        return True

    def seekable(self):
        return True

    def seek(self, offset, whence=io.SEEK_SET):
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: len(self._view)}[whence]
        if base + offset < 0:
            raise ValueError("negative seek position %d" % (base + offset))
        self._pos = base + offset
        return self._pos

    def tell(self):
        return self._pos

    def readinto(self, b):
        out = memoryview(b).cast("B")
        part = self._view[self._pos:self._pos + len(out)]
        out[:len(part)] = part
        self._pos += len(part)
        return len(part)

    def read(self, size=-1):
        end = len(self._view) if size is None or size < 0 else min(len(self._view), self._pos + size)
        data = self._view[self._pos:end].tobytes() if end > self._pos else b""
        self._pos = max(self._pos, end)
        return data

    def readall(self):
        return self.read(-1)

    def close(self):
        if not self.closed:
            self._view.release()
        super().close()


def _read_blocks(fd, view, hasher, path):
    """Fill 'view' from fd, hashing each block as it is read."""
    off = 0
    while off < len(view):
        n = os.readv(fd, [view[off:off + _BLOCK]])
        if n == 0:
            raise CheckpointError("%s: ended after %d bytes, the manifest says %d" % (path, off, len(view)),
                                  SIZE_MISMATCH)
        hasher.update(view[off:off + n])
        off += n
    if os.read(fd, 1):
        raise CheckpointError("%s: longer than the manifest's %d bytes" % (path, len(view)), SIZE_MISMATCH)


def read_verified(checkpoint_path, entry):
    """The bytes of the manifest's file 'entry' ({"path", "size", "sha256"}) in
    'checkpoint_path', read once and checked: a MemoryFile, or CheckpointError
    (FILE_MISSING, FILE_REFUSED, SIZE_MISMATCH, HASH_MISMATCH, IO_ERROR) naming
    the file and both digests. The file is opened without following symlinks."""
    path = os.path.join(checkpoint_path, entry["path"])
    fd = _open_in_checkpoint(checkpoint_path, entry["path"])
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise CheckpointError("%s: is not a regular file" % path, FILE_REFUSED)
        if st.st_size != entry["size"]:
            raise CheckpointError("%s: size %d differs from the manifest's %d" % (path, st.st_size, entry["size"]),
                                  SIZE_MISMATCH)
        mem = _snapshot_memory(entry["size"])
        hasher = hashlib.sha256()
        try:
            _read_blocks(fd, memoryview(mem)[:entry["size"]], hasher, path)
        except OSError as e:
            raise CheckpointError("%s: read error: %s" % (path, e.strerror), IO_ERROR)
        got = hasher.hexdigest()
    finally:
        os.close(fd)
    if got != entry["sha256"]:
        raise CheckpointError("%s: sha256 %s differs from the manifest's %s (corrupt): not loaded" %
                              (path, got, entry["sha256"]), HASH_MISMATCH)
    return MemoryFile(mem, entry["size"])
