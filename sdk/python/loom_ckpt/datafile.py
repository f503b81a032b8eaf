"""A checkpoint's data file: written once, hashed beside the write, fsynced.

A large file whose memory is page-aligned (the snapshot memory of
save_async, always) is written with O_DIRECT: the disk reads the snapshot
itself, with no copy into the page cache. Writers of several ranks on one
node then leave their CPUs to hashing, and a checkpoint of hundreds of GB
does not push the training data out of the cache. The unaligned tail, a
file system that refuses O_DIRECT (tmpfs) or a write it refuses (a larger
alignment) go through the page cache. LOOM_CKPT_DIRECT_IO=0 turns it off.
"""

import ctypes
import errno
import fcntl
import hashlib
import os
import threading

from .protocol import check_relative_name

DIRECT_MIN = 16 << 20  # smaller files go through the page cache
ALIGN = 4096           # every block size Linux file systems use divides it
CHUNK = 8 << 20        # bytes per write()
HASH_BESIDE = 4 << 20  # from this size the digest is taken in a thread of its own


def direct_io_wanted(env=None):
    env = os.environ if env is None else env
    return env.get("LOOM_CKPT_DIRECT_IO", "").strip().lower() not in ("0", "no", "false", "off")


def _address(view):
    """The address of a writable buffer, None for a read-only one (bytes)."""
    try:
        return ctypes.addressof(ctypes.c_char.from_buffer(view))
    except (TypeError, ValueError, BufferError):
        return None


def _set_direct(fd, on):
    """Turn O_DIRECT on or off on fd; False where the file system refuses it."""
    flags = fcntl.fcntl(fd, fcntl.F_GETFL)
    try:
        fcntl.fcntl(fd, fcntl.F_SETFL, (flags | os.O_DIRECT) if on else (flags & ~os.O_DIRECT))
    except OSError as e:
        if e.errno == errno.EINVAL:
            return False
        raise
    return True


def _write_from(fd, view, direct):
    """Write all of view from the file's start: with O_DIRECT (when 'direct')
    the whole blocks, then the rest through the page cache."""
    n, off = len(view), 0
    body = n - n % ALIGN if direct else 0
    while off < body:
        try:
            off += os.write(fd, view[off:min(off + CHUNK, body)])
        except OSError as e:
            if e.errno != errno.EINVAL:
                raise
            body = off  # refused (a larger alignment): the rest through the page cache
    if direct:
        _set_direct(fd, False)
    while off < n:
        off += os.write(fd, view[off:off + CHUNK])


def write_hashed(root, name, data, direct_io=None):
    """Write 'data' to root/name (created, never overwritten), hashing it
    beside the write; fsync it. Returns its manifest entry."""
    check_relative_name(name)
    path = os.path.join(root, name)
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    view = memoryview(data).cast("B")
    digest = {}
    hasher = None
    if len(view) >= HASH_BESIDE:  # hashlib releases the GIL
        hasher = threading.Thread(target=lambda: digest.setdefault("h", hashlib.sha256(view).hexdigest()))
        hasher.start()
    else:
        digest["h"] = hashlib.sha256(view).hexdigest()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        if direct_io is None:
            direct_io = direct_io_wanted()
        addr = _address(view) if direct_io and len(view) >= DIRECT_MIN else None
        direct = addr is not None and addr % ALIGN == 0 and _set_direct(fd, True)
        _write_from(fd, view, direct)
        os.fsync(fd)
    finally:
        os.close(fd)
        if hasher:
            hasher.join()
    return {"path": name, "size": len(view), "sha256": digest["h"]}
