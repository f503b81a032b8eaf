#!/usr/bin/env python3
"""Tests of the Python checkpoint SDK (sdk/python/loom_ckpt.py): commit,
snapshot memory reuse and reserve(), restore with fallback past a corrupt
newest checkpoint, strict manifests, retention, signals, and
interoperability with the C++ side of the protocol."""

import array
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import unittest

src = os.environ.get("LOOM_SRCDIR") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
build = os.environ.get("LOOM_BUILDDIR", "")
sys.path.insert(0, os.path.join(src, "sdk", "python"))
import loom_ckpt  # noqa: E402


class SdkTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="loom-pysdk-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def ck(self, **kw):
        kw.setdefault("signal_name", "")
        kw.setdefault("interval", 0)
        kw.setdefault("keep", 0)
        return loom_ckpt.Checkpointer(self.dir, **kw)

    def test_async_save_snapshots_and_commits(self):
        ck = self.ck()
        buf = bytearray(b"a" * (5 << 20))
        ck.save_async(10, {"w.bin": buf, "meta/step.txt": b"10"})
        buf[:] = b"b" * len(buf)  # training goes on: the snapshot must not change
        ck.wait()
        c = ck.restore()
        self.assertEqual(c.step, 10)
        self.assertEqual(c.read("w.bin"), b"a" * (5 << 20))
        self.assertEqual(c.read("meta/step.txt"), b"10")
        with open(os.path.join(self.dir, "latest")) as f:
            self.assertEqual(f.read().strip(), "step-000000000010")
        self.assertEqual(os.listdir(os.path.join(self.dir, ".staging")), [])

    def test_snapshot_memory_is_reused(self):
        ck = self.ck()
        buf = bytearray(os.urandom(3 << 20))
        first = bytes(buf)
        ck.save_async(1, {"w.bin": buf, "s.txt": b"1"})
        mem = ck._snapshot["w.bin"]
        buf[:10] = b"x" * 10
        ck.save_async(2, {"w.bin": buf, "s.txt": b"2"})
        self.assertIs(ck._snapshot["w.bin"], mem)  # same memory, copied into again
        ck.wait()
        cps = {c.step: c for c in loom_ckpt.list_checkpoints(self.dir)}
        self.assertEqual(cps[1].read("w.bin"), first)
        self.assertEqual(cps[2].read("w.bin"), bytes(buf))
        self.assertEqual(cps[2].read("s.txt"), b"2")
        # Smaller: the memory is kept; larger: new memory; dropped files give theirs back.
        ck.save_async(3, {"w.bin": b"small"})
        self.assertIs(ck._snapshot["w.bin"], mem)
        ck.save_async(4, {"w.bin": bytes(4 << 20)})
        self.assertIsNot(ck._snapshot["w.bin"], mem)
        self.assertEqual(set(ck._snapshot), {"w.bin"})
        ck.wait()
        self.assertEqual(ck.restore().read("w.bin"), bytes(4 << 20))
        cps = {c.step: c for c in loom_ckpt.list_checkpoints(self.dir)}
        self.assertEqual(cps[3].read("w.bin"), b"small")

    def test_typed_and_strided_buffers(self):
        ck = self.ck()
        doubles = array.array("d", [1.5, -2.25, 3.0] * 1000)
        strided = memoryview(bytes(range(256)) * 4)[::3]
        ck.save_async(1, {"d.bin": doubles, "s.bin": strided, "empty.bin": b""})
        ck.wait()
        c = ck.restore()
        self.assertEqual(c.read("d.bin"), doubles.tobytes())
        self.assertEqual(c.read("s.bin"), strided.tobytes())
        self.assertEqual(c.read("empty.bin"), b"")

    def test_reserve_then_save(self):
        ck = self.ck()
        w = bytearray(os.urandom((3 << 20) + 5))
        ck.reserve({"w.bin": w, "s.txt": 16})
        ck.wait()  # the reserve is done; nothing was saved
        self.assertEqual(loom_ckpt.list_checkpoints(self.dir), [])
        mem = ck._snapshot["w.bin"]
        self.assertGreaterEqual(len(mem), len(w))
        ck.save_async(7, {"w.bin": w, "s.txt": b"7"})
        self.assertIs(ck._snapshot["w.bin"], mem)  # the reserved memory was used
        ck.wait()
        c = ck.restore()
        self.assertEqual(c.step, 7)
        self.assertEqual(c.read("w.bin"), bytes(w))
        self.assertEqual(c.read("s.txt"), b"7")

    def test_reserve_smaller_then_larger_save_and_save_while_reserving(self):
        ck = self.ck()
        ck.reserve({"w.bin": 10})
        ck.wait()
        w = os.urandom((5 << 20) + 1)
        ck.save_async(1, {"w.bin": w})
        ck.wait()
        self.assertEqual(ck.restore().read("w.bin"), w)
        # No wait: the save finds the reserve (most likely) still at work and waits for the rest.
        big = os.urandom(48 << 20)
        ck.reserve({"w.bin": len(big), "x.bin": 3})
        ck.save_async(2, {"w.bin": big, "x.bin": b"xyz"})
        ck.wait()
        c = ck.restore()
        self.assertEqual(c.step, 2)
        self.assertEqual(c.read("w.bin"), big)
        self.assertEqual(c.read("x.bin"), b"xyz")
        ck.reserve({})  # nothing to do
        ck.wait()
        with self.assertRaises(loom_ckpt.CheckpointError):
            ck.reserve({"../x": 1})

    def test_huge_pages_snapshot(self):
        ck = self.ck()
        ck.huge_pages = True  # LOOM_CKPT_HUGE_PAGES=1
        w = os.urandom((4 << 20) + 1)
        ck.reserve({"w.bin": w})
        ck.save_async(1, {"w.bin": w})
        ck.save_async(2, {"w.bin": w[:-1]})
        ck.wait()
        self.assertEqual(ck.restore().read("w.bin"), w[:-1])
        self.assertEqual({c.step: c for c in loom_ckpt.list_checkpoints(self.dir)}[1].read("w.bin"), w)

    def test_corrupt_newest_falls_back(self):
        ck = self.ck()
        for s in (1, 2, 3):
            ck.save(s, {"w.bin": bytes([s]) * 1000})
        path = os.path.join(self.dir, "step-000000000003", "w.bin")
        with open(path, "r+b") as f:
            f.seek(500)
            f.write(b"\xff")
        c = ck.restore()
        self.assertEqual(c.step, 2)
        self.assertEqual(ck.restore(level="quick").step, 3)
        os.truncate(os.path.join(self.dir, "step-000000000002", "w.bin"), 3)
        self.assertEqual(ck.restore().step, 1)

    def test_uncommitted_staging_is_invisible(self):
        st = loom_ckpt.Staging(self.dir, 5)
        st.write_file("w.bin", b"half")
        self.assertIsNone(self.ck().restore())
        st.abort()

    def test_recommit_same_step(self):
        ck = self.ck()
        ck.save(4, {"w.bin": b"old"})
        ck.save(4, {"w.bin": b"new"})
        self.assertEqual(ck.restore().read("w.bin"), b"new")
        self.assertEqual(len(loom_ckpt.list_checkpoints(self.dir)), 1)

    def test_retention(self):
        ck = self.ck(keep=2)
        for s in range(1, 6):
            ck.save(s, {"w.bin": b"x" * s})
        self.assertEqual([c.step for c in loom_ckpt.list_checkpoints(self.dir)], [5, 4])

    def test_strict_manifest(self):
        good = ('{"format":"loom-ckpt/1","step":1,"world_size":1,"created":1,"write_seconds":0,'
                '"files":[{"path":"a","size":1,"sha256":"%s"}]}' % ("0" * 64))
        loom_ckpt.parse_manifest(good)
        for bad, needle in ((good.replace('"a"', '"../a"'), "$.files[0].path"),
                            (good.replace('"step":1', '"step":-1'), "$.step"),
                            (good.replace('"world_size":1', '"world_size":1,"x":2'), "$.x"),
                            (good.replace("loom-ckpt/1", "loom-ckpt/9"), "unsupported"),
                            (good[:-5], "manifest")):
            with self.assertRaises(loom_ckpt.CheckpointError) as cm:
                loom_ckpt.parse_manifest(bad)
            self.assertIn(needle, str(cm.exception))

    def test_signal_asks_for_checkpoint(self):
        ck = self.ck(signal_name="USR2")
        self.assertFalse(ck.should_checkpoint())
        os.kill(os.getpid(), signal.SIGUSR2)
        self.assertTrue(ck.should_checkpoint())
        ck.save(1, {"w.bin": b"1"})
        self.assertFalse(ck.should_checkpoint())
        signal.signal(signal.SIGUSR2, signal.SIG_DFL)

    def test_cpp_and_python_agree(self):
        # Never skipped: without the C++ programs the cross-check would pass silently.
        if not build:
            self.fail("LOOM_BUILDDIR is not set (make check sets it): the C++/Python cross-check cannot run")
        for prog in ("crash_writer", "crash_check"):
            if not os.access(os.path.join(build, "tests/ckpt", prog), os.X_OK):
                self.fail("%s not built in %s: the C++/Python cross-check cannot run" % (prog, build))
        # The C++ writer's checkpoints read and verify here ...
        p = subprocess.Popen([os.path.join(build, "tests/ckpt/crash_writer"), self.dir], stdout=subprocess.PIPE)
        line = p.stdout.readline()
        p.kill()
        p.wait()
        p.stdout.close()
        self.assertTrue(line.startswith(b"C "))
        c = loom_ckpt.find_latest(self.dir)
        self.assertIsNotNone(c)
        out = subprocess.run([os.path.join(build, "tests/ckpt/crash_check"), self.dir, "-1"],
                             capture_output=True, text=True, check=True)
        self.assertEqual(int(out.stdout), c.step)
        # ... and Python's checkpoints verify with the C++ checker's catalog.
        shutil.rmtree(self.dir)
        os.mkdir(self.dir)
        ck = self.ck()
        ck.save(9, {"shard%d.bin" % i: b"" for i in range(3)})
        r = subprocess.run([os.path.join(build, "tests/ckpt/crash_check"), self.dir, "9"],
                           capture_output=True, text=True)
        # The pattern check fails on purpose (empty shards), but only after the catalog
        # found and verified step 9: the message names that checkpoint.
        self.assertIn("step-000000000009", r.stderr)


if __name__ == "__main__":
    unittest.main()
