#!/usr/bin/env python3
"""The Python SDK's data file writer (loom_ckpt.datafile): every byte and its
digest right, whole blocks of page-aligned memory written with O_DIRECT, the
tail and everything else through the page cache, a refusal taken in stride.
Run by tests/ckpt/sdk_python.sh, in a directory of the source tree's file
system (tmpfs may refuse O_DIRECT)."""

import errno
import fcntl
import hashlib
import mmap
import os
import shutil
import sys
import tempfile
import unittest
from unittest import mock

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "sdk", "python"))
from loom_ckpt import datafile  # noqa: E402

MiB = 1 << 20
real_write = os.write


def aligned(n):
    """n random bytes in page-aligned memory (as the snapshot of save_async)."""
    m = mmap.mmap(-1, max(n, 1))
    m.write(os.urandom(n))
    return m, memoryview(m)[:n]


class Writes:
    """os.write, recording whether each write went with O_DIRECT."""

    def __init__(self, refuse_direct=0):
        self.direct, self.cached, self.refuse = [], [], refuse_direct

    def __call__(self, fd, data):
        if fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_DIRECT:
            if self.refuse:
                self.refuse -= 1
                raise OSError(errno.EINVAL, "refused")
            self.direct.append(len(data))
        else:
            self.cached.append(len(data))
        return real_write(fd, data)


class DataFileTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="loom-datafile.", dir=os.environ.get("LOOM_TEST_DIR", "/var/tmp"))
        self.addCleanup(shutil.rmtree, self.dir)
        probe = os.path.join(self.dir, "probe")
        try:
            fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_DIRECT, 0o600)
            os.close(fd)
        except OSError as e:
            self.fail("%s refuses O_DIRECT (%s): set LOOM_TEST_DIR to a disk's file system" % (self.dir, e))

    def write(self, name, data, **kw):
        writes = Writes(kw.pop("refuse", 0))
        with mock.patch("os.write", writes):
            entry = datafile.write_hashed(self.dir, name, data, **kw)
        with open(os.path.join(self.dir, name), "rb") as f:
            got = f.read()
        self.assertEqual(got, bytes(data), name)
        self.assertEqual(entry, {"path": name, "size": len(got), "sha256": hashlib.sha256(got).hexdigest()})
        return writes

    def test_every_size_and_buffer_kind_is_written_whole(self):
        for n in (0, 1, 4095, 4096, 4 * MiB, datafile.DIRECT_MIN, datafile.DIRECT_MIN + 4097):
            m, view = aligned(n)
            self.write("r0/mmap-%d" % n, view)
            self.write("r0/bytes-%d" % n, bytes(view))
            self.write("r0/odd-%d" % n, memoryview(bytearray(b"x") + bytearray(view))[1:])

    def test_whole_blocks_of_aligned_memory_bypass_the_page_cache(self):
        n = 3 * datafile.CHUNK + 4097
        m, view = aligned(n)
        w = self.write("big", view)
        self.assertEqual(sum(w.direct), n - n % 4096, "every whole block with O_DIRECT")
        self.assertEqual(sum(w.cached), n % 4096, "only the tail through the page cache")

    def test_read_only_small_or_switched_off_go_through_the_page_cache(self):
        m, view = aligned(datafile.DIRECT_MIN + 8192)
        for name, data, kw in (("bytes", bytes(view), {}), ("small", view[:datafile.DIRECT_MIN - 4096], {}),
                               ("off", view, {"direct_io": False})):
            w = self.write(name, data, **kw)
            self.assertEqual(w.direct, [], name)
            self.assertEqual(sum(w.cached), len(data), name)
        with mock.patch.dict(os.environ, {"LOOM_CKPT_DIRECT_IO": "0"}):
            self.assertEqual(self.write("env-off", view).direct, [])

    def test_a_refused_direct_write_goes_on_through_the_page_cache(self):
        m, view = aligned(2 * datafile.CHUNK)
        w = self.write("refused", view, refuse=1)
        self.assertEqual(w.direct, [])
        self.assertEqual(sum(w.cached), len(view))


if __name__ == "__main__":
    unittest.main()
