#!/usr/bin/env python3
"""Tests of the Python checkpoint SDK (sdk/python/loom_ckpt/): commit,
snapshot memory reuse and reserve(), restore with fallback past a corrupt
newest checkpoint, strict manifests, retention, signals, and
interoperability with the C++ side of the protocol."""

import array
import contextlib
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

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


class RanksTest(unittest.TestCase):
    """The pieces of a checkpoint of several ranks: the launcher's variables,
    the run id, spank_ckpt's request file, rank 0's stamped step, and two
    ranks saving and restoring one checkpoint."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="loom-pysdk-ranks-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def test_launcher_ranks(self):
        lr = loom_ckpt.launch_ranks
        self.assertEqual(lr({}), (0, 1, None))
        # torchrun inside srun: torchrun's variables.
        self.assertEqual(lr({"RANK": "3", "WORLD_SIZE": "8", "SLURM_PROCID": "0", "SLURM_NTASKS": "2",
                             "SLURM_STEP_ID": "0"}), (3, 8, "torchrun"))
        self.assertEqual(lr({"SLURM_PROCID": "1", "SLURM_STEP_NUM_TASKS": "2", "SLURM_NTASKS": "9",
                             "SLURM_STEP_ID": "4"}), (1, 2, "srun"))
        # A batch script has SLURM_PROCID=0 and the job's tasks, but no step: one process.
        self.assertEqual(lr({"SLURM_PROCID": "0", "SLURM_NTASKS": "4", "SLURM_JOB_ID": "7"}), (0, 1, None))
        self.assertEqual(lr({"OMPI_COMM_WORLD_RANK": "5", "OMPI_COMM_WORLD_SIZE": "6"}), (5, 6, "Open MPI"))
        self.assertEqual(lr({"PMIX_RANK": "2", "PMI_SIZE": "4"}), (2, 4, "PMI"))
        for bad in ({"RANK": "x", "WORLD_SIZE": "2"}, {"RANK": "2", "WORLD_SIZE": "2"}):
            with self.assertRaises(loom_ckpt.CheckpointError) as e:
                lr(bad)
            self.assertIn("RANK=", str(e.exception))

    def test_run_id(self):
        rid = loom_ckpt.launch_run_id
        self.assertEqual(rid({"SLURM_JOB_ID": "77", "SLURM_RESTART_COUNT": "1", "SLURM_STEP_ID": "0",
                              "TORCHELASTIC_RESTART_COUNT": "2"}), "j77_r1_s0_e2")
        self.assertEqual(rid({"SLURM_JOB_ID": "77", "LOOM_RESTART_COUNT": "3"}), "j77_r3_sbatch")
        self.assertEqual(rid({"PMIX_NAMESPACE": "slurm.pmix.12.0"}), "slurm_pmix_12_0")
        self.assertEqual(rid({}), "")

    def test_task_env_cases(self):
        """tests/ckpt/task-env-cases.json, which lib/exchange/ckpt_task_env.cpp runs too."""
        with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "task-env-cases.json")) as f:
            cases = json.load(f)["cases"]
        self.assertGreaterEqual(len(cases), 20)
        for c in cases:
            with self.subTest(c["name"]):
                if "error" in c:
                    with self.assertRaises(loom_ckpt.CheckpointError) as e:
                        loom_ckpt.read_task_env(c["env"])
                    self.assertTrue(str(e.exception).startswith(c["error"] + "='"), str(e.exception))
                    continue
                got = loom_ckpt.read_task_env(c["env"])
                for k, v in c["expect"].items():
                    self.assertEqual(got[k], v, k)

    def test_progress_cases(self):
        """tests/ckpt/progress-cases.json, which lib/exchange/progress_report.cpp runs too."""
        from loom_ckpt import progress
        with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "progress-cases.json")) as f:
            cases = json.load(f)["cases"]
        self.assertGreaterEqual(len(cases), 10)
        for c in cases:
            with self.subTest(c["name"]):
                if "error" in c:
                    with self.assertRaises(loom_ckpt.CheckpointError) as e:
                        progress.parse_progress(c["text"], "rank.3")
                    self.assertIn(c["error"], str(e.exception))
                    self.assertIn("rank.3", str(e.exception))
                    continue
                got = progress.parse_progress(c["text"], "rank.3")
                for k, v in c["expect"].items():
                    self.assertAlmostEqual(got[k], v, places=6) if k != "node" else self.assertEqual(got[k], v)

    def test_progress_reports_each_rank(self):
        """LOOM_CKPT_PROGRESS=1: each rank's steps reach its report, which reads back."""
        from loom_ckpt import progress
        env = {"LOOM_CKPT_DIR": self.dir, "LOOM_CKPT_PROGRESS": "1", "SLURMD_NODENAME": "n7", "LOOM_CKPT_RUN_ID": "p1"}
        with mock.patch.dict(os.environ, env):
            cks = [loom_ckpt.Checkpointer(rank=r, world_size=2, interval=0) for r in (0, 1)]
            with mock.patch.object(progress, "EVERY_S", 0):
                for step in range(3):
                    for ck in cks:
                        ck.should_checkpoint(step + 1)
            cks[1].should_checkpoint(4)  # within a second of the last report: not written
            for ck in cks:
                ck.close()
        got = {r: progress.parse_progress(open(os.path.join(self.dir, ".loom-progress", "rank.%d" % r)).read(), "r")
               for r in (0, 1)}
        self.assertEqual([(got[r]["rank"], got[r]["world"]) for r in (0, 1)], [(0, 2), (1, 2)])
        self.assertEqual(got[0]["node"], "n7")
        self.assertEqual(got[0]["step"], 3)
        self.assertEqual(got[1]["step"], 3)
        self.assertGreater(got[1]["beat"], 0)
        with mock.patch.dict(os.environ, {"LOOM_CKPT_DIR": self.dir}):
            self.assertIsNone(loom_ckpt.Checkpointer(interval=0).progress)

    def test_checkpointer_refuses_a_bad_task_env(self):
        with mock.patch.dict(os.environ, {"LOOM_CKPT_DIR": self.dir, "LOOM_CKPT_KEEP": "0"}):
            with self.assertRaisesRegex(loom_ckpt.CheckpointError, "^LOOM_CKPT_KEEP='0'"):
                loom_ckpt.Checkpointer()

    def test_request_file_written_by_spank_ckpt_helper(self):
        if not build:
            self.fail("LOOM_BUILDDIR is not set (make check sets it): the request file cannot be cross-checked")
        helper = os.path.join(build, "plugins/spank_ckpt/loom-ckpt-helper")
        watch = loom_ckpt.launch.RequestWatch(self.dir, period=0)
        self.assertFalse(watch.pending())
        for want in (1, 2):
            out = subprocess.run([helper, "--uid=%d" % os.getuid(), "--gid=%d" % os.getgid(), "request", self.dir,
                                  "time_limit"], capture_output=True, text=True)
            self.assertEqual(out.returncode, 0, out.stderr)
            v = loom_ckpt.read_request(self.dir)
            self.assertEqual((v["seq"], v["reason"]), (want, "time_limit"))
        self.assertTrue(watch.pending())
        watch.served()
        self.assertFalse(watch.pending())
        # A request older than the program is not a request to it.
        self.assertFalse(loom_ckpt.launch.RequestWatch(self.dir, period=0).pending())
        # spank_ckpt writes the request, then signals: the save the signal
        # starts serves it before the watch has read the file, once and for all.
        slow = loom_ckpt.launch.RequestWatch(self.dir, period=3600)
        out = subprocess.run([helper, "--uid=%d" % os.getuid(), "--gid=%d" % os.getgid(), "request", self.dir,
                              "time_limit"], capture_output=True, text=True)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertFalse(slow.pending())  # not read yet
        slow.served()
        slow._next = 0  # the period has passed
        self.assertFalse(slow.pending(), "the request the signal's save served asks for a second save")
        for bad in (b'{"seq": 0, "reason": "x", "time": 1}', b'{"seq": 1, "reason": "x", "time": 1, "y": 2}',
                    b'{"seq": 1, "reason": 5, "time": 1}', b"[]", b"{"):
            with open(os.path.join(self.dir, loom_ckpt.REQUEST), "wb") as f:
                f.write(bad)
            with self.assertRaises(loom_ckpt.CheckpointError):
                loom_ckpt.read_request(self.dir)

    def test_stamped_step(self):
        a0 = loom_ckpt.agree.StampAgreement(self.dir, "r1", 0, lead_steps=2, lead_seconds=0)
        a1 = loom_ckpt.agree.StampAgreement(self.dir, "r1", 1, lead_steps=2, lead_seconds=0)
        self.assertFalse(a1.decide(True, 10, 0.1))  # only rank 0 stamps
        self.assertFalse(a0.decide(True, 10, 0.1))  # stamps step 12
        self.assertEqual([a.decide(False, 11, 0.1) for a in (a0, a1)], [False, False])
        self.assertEqual([a.decide(False, 12, 0.1) for a in (a0, a1)], [True, True])
        self.assertEqual([a.decide(False, 13, 0.1) for a in (a0, a1)], [False, False])
        # A rank already past the stamped step says so and does not save it.
        self.assertFalse(a0.decide(True, 20, 0.1))  # stamps 22
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            self.assertFalse(a1.decide(False, 23, 0.1))
        self.assertIn("past the stamped step 22", err.getvalue())

    def test_a_skipped_stamp_does_not_poison_later_saves(self):
        """A rank past rank 0's stamped step skips that save; the next stamped
        save must still commit: the ranks name it alike (7.4 step 1)."""
        os.environ.update({"LOOM_CKPT_RUN_ID": "t3", "LOOM_CKPT_STAMP_LEAD": "0"})
        try:
            cks = [loom_ckpt.Checkpointer(self.dir, signal_name="", interval=0, keep=0, world_size=2, rank=r,
                                          commit_timeout=0.3) for r in (0, 1)]
            cks[0].request()
            self.assertFalse(cks[0].should_checkpoint(10))  # stamps 12
            with contextlib.redirect_stderr(io.StringIO()):
                self.assertFalse(cks[1].should_checkpoint(15))  # already past 12
            self.assertTrue(cks[0].should_checkpoint(12))
            with self.assertRaises(loom_ckpt.CheckpointError):
                cks[0].save(12, {"w.bin": b"alone"})  # rank 1's part never comes
            cks[0].request()
            self.assertFalse(cks[0].should_checkpoint(20))  # stamps 22
            self.assertFalse(cks[1].should_checkpoint(21))
            self.assertTrue(cks[1].should_checkpoint(22))
            self.assertIsNone(cks[1].save(22, {"w.bin": b"one"}))
            self.assertTrue(cks[0].should_checkpoint(22))
            path = cks[0].save(22, {"w.bin": b"zero"})
            self.assertTrue(path.endswith("step-000000000022"), path)
        finally:
            for k in ("LOOM_CKPT_RUN_ID", "LOOM_CKPT_STAMP_LEAD"):
                os.environ.pop(k, None)

    def test_two_ranks_one_checkpoint(self):
        env = {"LOOM_CKPT_RUN_ID": "t2"}
        os.environ.update(env)
        try:
            cks = [loom_ckpt.Checkpointer(self.dir, signal_name="", interval=0, keep=0, world_size=2, rank=r,
                                          commit_timeout=5) for r in (0, 1)]
            self.assertIsNone(cks[1].save(5, {"w.bin": b"rank one"}))  # its part only
            path = cks[0].save(5, {"w.bin": b"rank zero", "extra.bin": b"x"})
            self.assertTrue(path.endswith("step-000000000005"))
            for r, want in ((0, {"w.bin": b"rank zero", "extra.bin": b"x"}), (1, {"w.bin": b"rank one"})):
                c = cks[r].restore()
                self.assertEqual((c.step, c.read_all()), (5, want))
            # A rank that never writes its part: nothing is committed, and the error names it.
            cks[0].commit_timeout = 0.2
            with self.assertRaises(loom_ckpt.CheckpointError) as e:
                cks[0].save(6, {"w.bin": b"alone"})
            self.assertIn("rank(s) 1 did not finish", str(e.exception))
            self.assertEqual([c.step for c in loom_ckpt.list_checkpoints(self.dir)], [5])
            # One process's restore refuses the 2-rank checkpoint.
            self.assertIsNone(loom_ckpt.find_latest(self.dir))
        finally:
            for k in env:
                os.environ.pop(k, None)


if __name__ == "__main__":
    unittest.main()
