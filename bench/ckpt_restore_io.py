#!/usr/bin/env python3
"""bench/ckpt_restore_io.py: how many bytes the Python SDK reads to verify a
PyTorch checkpoint at save and at restore, against the checkpoint's size,
for this tree and for an earlier revision of sdk/python (git show REV:...).

    python3 bench/ckpt_restore_io.py [--mib 256] [--reps 5] [--dir /var/tmp]
        [--rev HEAD] [--python /usr/bin/python3 --python /var/cache/.../python]

Per repetition, in a fresh process per revision and interpreter: a state of
--mib MiB (two float32 tensors of random values) is saved with
save_torch_async() + wait() and loaded with load_torch() (a template of
zeros for DCP). The bytes read are /proc/self/io's rchar (every thread of
the process; page cache hits count: it is the reading done, not the disk's)
over each operation, divided by the bytes of the committed checkpoint.
With --cold the checkpoint's files are dropped from the page cache
(posix_fadvise DONTNEED) between the save and the restore, so that the
restore reads the disk. Reported: medians with min-max over the
repetitions, and the floor: restore reads at most 1.1x the checkpoint's
bytes."""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

here = os.path.dirname(os.path.abspath(__file__))
FLOOR = 1.1


def rchar():
    with open("/proc/self/io") as f:
        for line in f:
            if line.startswith("rchar:"):
                return int(line.split()[1])
    raise RuntimeError("no rchar in /proc/self/io")


def worker(sdk, directory, mib, cold):
    """One save and one restore; a JSON line of bytes read and seconds."""
    sys.path.insert(0, sdk)
    import warnings
    warnings.simplefilter("ignore")
    import loom_ckpt
    import torch
    n = (mib << 20) // 4 // 2
    g = torch.Generator().manual_seed(1)
    state = {"a": torch.rand(n, generator=g), "b": torch.rand(n, generator=g)}
    ck = loom_ckpt.Checkpointer(directory, signal_name="", interval=0, keep=0)
    r0, t0 = rchar(), time.monotonic()
    ck.save_torch_async(1, state)
    ck.wait()
    save_read, save_s = rchar() - r0, time.monotonic() - t0
    path = os.path.join(directory, "step-%012d" % 1)
    size = sum(os.path.getsize(os.path.join(r, f)) for r, _d, fs in os.walk(path) for f in fs)
    if cold:  # out of the page cache: the restore reads from the disk (the files are clean after fsync)
        for r, _d, fs in os.walk(path):
            for f in fs:
                fd = os.open(os.path.join(r, f), os.O_RDONLY)
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                os.close(fd)
    template = {k: torch.zeros_like(v) for k, v in state.items()} if loom_ckpt.TORCH_ASYNC else None
    r0, t0 = rchar(), time.monotonic()
    got = ck.load_torch(template=template)
    restore_read, restore_s = rchar() - r0, time.monotonic() - t0
    assert all(torch.equal(got[k], state[k]) for k in state), "the restored state differs"
    print(json.dumps({"size": size, "save_read": save_read, "save_s": save_s, "restore_read": restore_read,
                      "restore_s": restore_s, "torch": torch.__version__, "writer": ck.torch_writer}))


def old_sdk(rev, into):
    """sdk/python/loom_ckpt of git revision 'rev', written under 'into'."""
    root = os.path.join(here, "..")
    names = subprocess.check_output(["git", "-C", root, "ls-tree", "--name-only", rev, "sdk/python/loom_ckpt/"],
                                    universal_newlines=True).split()
    os.makedirs(os.path.join(into, "loom_ckpt"))
    for n in names:
        data = subprocess.check_output(["git", "-C", root, "show", "%s:%s" % (rev, n)])
        with open(os.path.join(into, "loom_ckpt", os.path.basename(n)), "wb") as f:
            f.write(data)
    return into


def run_once(py, sdk, base, mib, cold):
    d = tempfile.mkdtemp(prefix="loom-bench-io-", dir=base)
    try:
        out = subprocess.check_output([py, os.path.abspath(__file__), "--worker", sdk, "--dir", d,
                                       "--mib", str(mib)] + (["--cold"] if cold else []),
                                      stderr=subprocess.DEVNULL, universal_newlines=True)
        return json.loads(out.strip().splitlines()[-1])
    finally:
        shutil.rmtree(d, ignore_errors=True)


def fmt(xs, unit="x", scale=1.0):
    xs = [x * scale for x in xs]
    return "%.3f%s (%.3f-%.3f)" % (statistics.median(xs), unit, min(xs), max(xs))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mib", type=int, default=256)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--dir", default="/var/tmp")
    ap.add_argument("--rev", default="HEAD")
    ap.add_argument("--python", action="append")
    ap.add_argument("--cold", action="store_true", help="drop the checkpoint from the page cache before restoring")
    ap.add_argument("--worker")
    a = ap.parse_args()
    if a.worker:
        return worker(a.worker, a.dir, a.mib, a.cold)
    pythons = a.python or [p for p in ("/usr/bin/python3", "/var/cache/loom/venv-torch-2.13.0/bin/python")
                           if os.path.exists(p)]
    tmp = tempfile.mkdtemp(prefix="loom-bench-sdk-")
    try:
        sdks = [("%s (before)" % a.rev, old_sdk(a.rev, os.path.join(tmp, "old"))),
                ("this tree", os.path.join(here, "..", "sdk", "python"))]
        rows, ok = {}, True
        for _rep in range(a.reps):  # revisions alternate within a repetition
            for py in pythons:
                for label, sdk in sdks:
                    rows.setdefault((py, label), []).append(run_once(py, sdk, a.dir, a.mib, a.cold))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("bench ckpt_restore_io: %d MiB state, %d repetitions, %s, %d CPUs, page cache %s; bytes read / "
          "checkpoint bytes, median (min-max)" % (a.mib, a.reps, a.dir, os.cpu_count(),
                                                 "dropped before restore" if a.cold else "warm"))
    for (py, label), rs in rows.items():
        restore = [r["restore_read"] / r["size"] for r in rs]
        print("  torch %-12s %-8s %-15s save-verify read %s  restore read %s  save %s  restore %s" % (
            rs[0]["torch"], rs[0]["writer"], label, fmt([r["save_read"] / r["size"] for r in rs]),
            fmt(restore), fmt([r["save_s"] for r in rs], " s"), fmt([r["restore_s"] for r in rs], " s")))
        if label == "this tree" and max(restore) > FLOOR:
            ok = False
    print("  floor: restore reads <= %.1fx the checkpoint's bytes: %s" % (FLOOR, "met" if ok else "NOT met"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
