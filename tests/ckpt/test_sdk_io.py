#!/usr/bin/env python3
"""Tests of the Python SDK's reads and writes of checkpoint bytes
(sdk/python/loom_ckpt/hashio.py, dcp_io.py, torch_io.py): a save hashes
while it writes and reads nothing back; load_torch() reads each byte once,
checks it against the manifest during that read, refuses a corrupt newest
checkpoint and falls back to the one before (said on stderr); an Adam
training resumed into a fresh model and optimizer with torch_state() /
load_torch_state() ends bitwise identical to an uninterrupted one.

    /usr/bin/python3 tests/ckpt/test_sdk_io.py -v

The PyTorch tests run with the interpreter's PyTorch (Debian's 1.13 in
/usr/bin/python3: the torch.save path; skipped by an interpreter without
PyTorch), and once more under PyTorch 2.13 (the DCP path, with a test of 2
ranks through torch.multiprocessing and gloo) when scripts/torch-venv.sh
has made its environment (/var/cache/loom/venv-torch-2.13.0)."""

import contextlib
import io
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

src = os.environ.get("LOOM_SRCDIR") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(src, "sdk", "python"))
import loom_ckpt  # noqa: E402
from loom_ckpt.hashio import read_verified  # noqa: E402

try:
    import torch
except Exception:
    torch = None
VENV_PYTHON = os.environ.get("LOOM_TORCH_PYTHON", "/var/cache/loom/venv-torch-2.13.0/bin/python")
# make check (tests/ckpt/sdk_io.sh) sets LOOM_SDK_IO_STRICT=1: a PyTorch that
# is not there fails the test instead of skipping what needs it.
if os.environ.get("LOOM_SDK_IO_STRICT") == "1" and not os.environ.get("LOOM_SDK_IO_INNER"):
    if torch is None:
        sys.exit("test_sdk_io: FAIL: PyTorch is not importable by %s" % sys.executable)
    if not os.path.exists(VENV_PYTHON):
        sys.exit("test_sdk_io: FAIL: no PyTorch 2.13 environment at %s (scripts/torch-venv.sh)" % VENV_PYTHON)
MIB = 1 << 20


def rchar():
    """Bytes this process has read through read() and the like (/proc/self/io)."""
    with open("/proc/self/io") as f:
        for line in f:
            if line.startswith("rchar:"):
                return int(line.split()[1])
    raise RuntimeError("no rchar in /proc/self/io")


def checkpoint_bytes(path):
    return sum(os.path.getsize(os.path.join(r, n)) for r, _d, ns in os.walk(path) for n in ns)


def flip_byte(path, offset):
    with open(path, "r+b") as f:
        f.seek(offset)
        b = f.read(1)
        f.seek(offset)
        f.write(bytes([b[0] ^ 0x01]))


def largest_file(path):
    files = [os.path.join(r, n) for r, _d, ns in os.walk(path) for n in ns if n != "MANIFEST.json"]
    return max(files, key=os.path.getsize)


class Base(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="loom-sdk-io-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def ck(self, **kw):
        kw.setdefault("signal_name", "")
        kw.setdefault("interval", 0)
        kw.setdefault("keep", 0)
        return loom_ckpt.Checkpointer(self.dir, **kw)


class ReadVerifiedTest(Base):
    """Without PyTorch: the one read that checks."""

    def test_add_existing_takes_a_digest_and_checks_the_size(self):
        st = loom_ckpt.Staging(self.dir, 1)
        with open(os.path.join(st.path, "x.bin"), "wb") as f:
            f.write(b"abc")
        import hashlib
        good = hashlib.sha256(b"abc").hexdigest()
        with self.assertRaises(loom_ckpt.CheckpointError):
            st.add_existing("x.bin", digest=good, size=4)
        self.assertEqual(st.add_existing("x.bin", digest=good, size=3)["sha256"], good)
        st.commit()
        loom_ckpt.verify(loom_ckpt.list_checkpoints(self.dir)[0], "full")

    def test_read_verified_refuses_a_flipped_byte_naming_both_digests(self):
        ck = self.ck()
        data = os.urandom(3 * MIB + 17)
        ck.save(1, {"w.bin": data})
        c = ck.restore(level="load")
        entry = c.manifest["files"][0]
        with read_verified(c.path, entry) as f:
            self.assertEqual(f.read(), data)
        flip_byte(os.path.join(c.path, "w.bin"), 2 * MIB + 5)
        before = rchar()
        with self.assertRaises(loom_ckpt.CheckpointError) as e:
            read_verified(c.path, entry)
        self.assertLessEqual(rchar() - before, len(data) * 1.1)
        self.assertEqual(e.exception.reason, loom_ckpt.HASH_MISMATCH)
        msg = str(e.exception)
        self.assertIn("w.bin", msg)
        self.assertIn(entry["sha256"], msg)
        self.assertEqual(len([w for w in msg.split() if len(w) == 64]), 2, msg)

    def test_load_level_checks_structure_not_bytes(self):
        ck = self.ck()
        ck.save(1, {"w.bin": b"x" * 100})
        ck.save(2, {"w.bin": b"y" * 100})
        os.truncate(os.path.join(self.dir, "step-000000000002", "w.bin"), 50)  # torn: sizes differ
        self.assertEqual(ck.restore(level="load").step, 1)
        flip_byte(os.path.join(self.dir, "step-000000000001", "w.bin"), 3)  # same size: only "full" sees it
        self.assertEqual(ck.restore(level="load").step, 1)
        self.assertIsNone(ck.restore(level="full"))
        with self.assertRaises(ValueError):
            ck.restore(level="bogus")


@unittest.skipIf(torch is None, "PyTorch is not importable")
class TorchIoTest(Base):
    def state(self, seed, mib=16):
        g = torch.Generator().manual_seed(seed)
        n = mib * MIB // 4 // 2
        return {"a": torch.rand(n, generator=g), "b": torch.rand(n, generator=g), "step": torch.tensor(seed)}

    def template(self):
        return {"a": torch.zeros(1), "b": torch.zeros(1), "step": torch.tensor(0)} if self.dcp else None

    @property
    def dcp(self):
        return loom_ckpt.TORCH_ASYNC

    def load(self, ck, **kw):
        if self.dcp:  # DCP loads into tensors of the right shape
            t = {k: torch.zeros_like(v) for k, v in self.state(0).items()}
            return ck.load_torch(template=t, **kw)
        return ck.load_torch(**kw)

    def save(self, ck, step, state):
        before = rchar()
        ck.save_torch_async(step, state)
        ck.wait()
        path = os.path.join(self.dir, "step-%012d" % step)
        return rchar() - before, checkpoint_bytes(path), path

    def assertSameState(self, got, want):
        for k in ("a", "b", "step"):
            self.assertTrue(torch.equal(got[k], want[k]), k)

    def test_save_reads_nothing_back_and_digests_verify(self):
        ck = self.ck()
        read, size, path = self.save(ck, 1, self.state(1))
        self.assertLessEqual(read, 0.05 * size, "the save read %d bytes of a %d-byte checkpoint" % (read, size))
        loom_ckpt.verify(loom_ckpt.list_checkpoints(self.dir)[0], "full")  # the digests taken while writing

    def test_restore_reads_each_byte_once(self):
        ck = self.ck()
        want = self.state(1)
        _r, size, _p = self.save(ck, 1, want)
        before = rchar()
        got = self.load(ck)
        read = rchar() - before
        self.assertSameState(got, want)
        self.assertGreaterEqual(read, size * 0.99)
        self.assertLessEqual(read, size * 1.1, "restore read %d bytes of a %d-byte checkpoint" % (read, size))

    def test_flipped_byte_falls_back_to_the_previous_checkpoint(self):
        ck = self.ck()
        first = self.state(1)
        _r, size1, _p = self.save(ck, 1, first)
        _r, size2, path2 = self.save(ck, 2, self.state(2))
        victim = largest_file(path2)
        flip_byte(victim, os.path.getsize(victim) // 2)  # tensor bytes: torch.load itself would not notice
        err = io.StringIO()
        before = rchar()
        with contextlib.redirect_stderr(err):
            got = self.load(ck)
        read = rchar() - before
        self.assertSameState(got, first)
        self.assertIn("step-000000000002", err.getvalue())
        self.assertIn(os.path.basename(victim), err.getvalue())
        self.assertIn("differs from the manifest", err.getvalue())
        # detected during the single read of step 2, then step 1 read once
        self.assertLessEqual(read, (size1 + size2) * 1.1)

    def test_flipped_byte_in_a_chosen_checkpoint_raises(self):
        ck = self.ck()
        _r, _s, path = self.save(ck, 1, self.state(1))
        victim = largest_file(path)
        flip_byte(victim, os.path.getsize(victim) - 100)
        c = ck.restore(level="load")
        with self.assertRaises(Exception) as e:
            self.load(ck, checkpoint=c)
        self.assertIn(os.path.basename(victim), str(e.exception))
        self.assertIn("differs from the manifest", str(e.exception))
        self.assertIsNone(self.load(ck))  # nothing else to fall back to: nothing restored


def _train(model, opt, steps, start=0):
    for step in range(start, steps):
        g = torch.Generator().manual_seed(1000 + step)
        x = torch.randn(16, 8, generator=g, dtype=torch.float64)
        opt.zero_grad()
        model(x).square().mean().backward()
        opt.step()


def _fresh():
    torch.manual_seed(3)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1)).double()
    return model, torch.optim.Adam(model.parameters(), lr=0.01)


def _weights(model):
    return [t.detach().clone() for t in model.state_dict().values()]


@unittest.skipIf(torch is None, "PyTorch is not importable")
class AdamResumeTest(Base):
    def test_resume_into_fresh_model_and_optimizer_is_bitwise_exact(self):
        ref, ref_opt = _fresh()
        _train(ref, ref_opt, 30)
        model, opt = _fresh()
        ck = self.ck()
        self.assertIsNone(loom_ckpt.load_torch_state(ck, model, opt, step=torch.tensor(0)))
        _train(model, opt, 12)
        ck.save_torch_async(12, loom_ckpt.torch_state(model, opt, step=torch.tensor(12)))
        ck.wait()
        model, opt = _fresh()  # a new process: nothing of the first survives
        got = loom_ckpt.load_torch_state(ck, model, opt, step=torch.tensor(0))
        self.assertEqual(int(got["step"]), 12)
        self.assertEqual(len(opt.state), 4)  # Adam's moments of every parameter came back
        _train(model, opt, 30, start=12)
        for a, b in zip(_weights(ref), _weights(model)):
            self.assertTrue(torch.equal(a, b))


def _spawned_rank(rank, world, directory, port, saves, out):
    import torch.distributed as dist
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), LOOM_CKPT_RUN_ID="t%d" % port)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.set_num_threads(1)
    ck = loom_ckpt.Checkpointer(directory, signal_name="", interval=0, keep=0, rank=rank, world_size=world)
    model, opt = _fresh()
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        got = loom_ckpt.load_torch_state(ck, model, opt, step=torch.tensor(0))
    start = int(got["step"]) if got is not None else 0
    for stop in saves:
        _train(model, opt, stop, start)
        ck.save_torch_async(stop, loom_ckpt.torch_state(model, opt, step=torch.tensor(stop)))
        ck.wait()
        start = stop
    if not saves:
        _train(model, opt, 30, start)
    ck.close()
    torch.save({"weights": _weights(model), "start": start if saves else int(got["step"]) if got else 0,
                "stderr": err.getvalue()}, os.path.join(out, "rank%d.pt" % rank))
    dist.destroy_process_group()


@unittest.skipIf(torch is None or not loom_ckpt.TORCH_ASYNC, "needs PyTorch with DCP async_save")
class AdamResumeTwoRanksTest(Base):
    def spawn(self, saves, out, port):
        import torch.multiprocessing as mp
        mp.spawn(_spawned_rank, args=(2, self.dir, port, saves, out), nprocs=2, join=True)

    def test_two_ranks_fall_back_together_and_resume_bitwise_exact(self):
        out = tempfile.mkdtemp(dir=self.dir)
        port = 29500 + os.getpid() % 1000
        self.spawn([6, 12], out, port)      # saves at 6 and 12, ends
        step12 = os.path.join(self.dir, "step-%012d" % 12)
        victims = sorted(n for n in os.listdir(step12) if n.startswith("__1_"))
        self.assertTrue(victims, os.listdir(step12))
        victim = os.path.join(step12, victims[0])
        flip_byte(victim, os.path.getsize(victim) // 2)  # rank 1's file only
        self.spawn([], out, port + 1)       # a new launch: both ranks refuse 12, restore 6, train to 30
        ref, ref_opt = _fresh()
        _train(ref, ref_opt, 30)
        for r in range(2):
            got = torch.load(os.path.join(out, "rank%d.pt" % r))
            self.assertEqual(got["start"], 6, "rank %d resumed from %d: %s" % (r, got["start"], got["stderr"]))
            self.assertIn("step-000000000012", got["stderr"])
            for a, b in zip(_weights(ref), got["weights"]):
                self.assertTrue(torch.equal(a, b), "rank %d" % r)


@unittest.skipIf(os.environ.get("LOOM_SDK_IO_INNER") or not os.path.exists(VENV_PYTHON) or
                 (torch is not None and loom_ckpt.TORCH_ASYNC), "already under PyTorch with DCP, or none there")
class UnderTorch2Test(unittest.TestCase):
    def test_the_torch_tests_under_pytorch_2(self):
        env = dict(os.environ, LOOM_SDK_IO_INNER="1", PYTHONWARNINGS="ignore")
        p = subprocess.run([VENV_PYTHON, os.path.abspath(__file__), "TorchIoTest", "AdamResumeTest",
                            "AdamResumeTwoRanksTest"], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           universal_newlines=True, timeout=600)
        sys.stderr.write(p.stdout[-3000:])
        self.assertEqual(p.returncode, 0, p.stdout[-3000:])


if __name__ == "__main__":
    unittest.main()
