#!/usr/bin/env python3
"""bench/ckpt_ranks.py: what a checkpoint of several ranks costs, against one
rank and against plain writes, on this machine's disk, in one run.

    python3 bench/ckpt_ranks.py [--ranks 4] [--mib 256] [--reps 5] [--dir /var/tmp]

Every rank is a process of its own with its own buffer of --mib MiB (the
same bytes per rank in every configuration). Per repetition, after a barrier:
  stall    how long save_async() holds each rank (the snapshot copy)
  commit   from the barrier (the decision) to rank 0's committed checkpoint
           (every rank's part written, hashed, fsynced; the manifest; the rename)
  plain    the same bytes written by as many processes, write() + fsync each,
           nothing else: from the barrier to the last one done
  plain+sha256  the same, each process hashing its bytes beside the write
           (what the format asks of every writer: the cost of the digests)
  cached   the N-rank save with LOOM_CKPT_DIRECT_IO=0: every byte through
           the page cache (the SDK writes whole blocks with O_DIRECT)
Every configuration runs once per round, in an order rotated each round, in
fresh processes; a rank's first save (fresh snapshot memory) is made before
the barrier and not measured, as a training job's first save is. Reported:
medians with min-max over the rounds, the N-rank figures against 1 rank, and
the writers' combined throughput against plain writes (floor 90%) and
against plain writes that hash."""

import argparse
import hashlib
import multiprocessing as mp
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "sdk", "python"))
import loom_ckpt  # noqa: E402


def rank_main(rank, world, directory, nbytes, barrier, out):
    os.environ["LOOM_CKPT_RUN_ID"] = "bench"
    ck = loom_ckpt.Checkpointer(directory, signal_name="", interval=0, keep=0, world_size=world, rank=rank)
    buf = bytearray(os.urandom(1 << 20)) * (nbytes >> 20)
    ck.save_async(1, {"w.bin": buf})  # the first save (fresh snapshot memory) is not measured
    ck.wait()
    buf[0] ^= 1
    barrier.wait()
    t0 = time.monotonic()
    ck.save_async(2, {"w.bin": buf})
    stall = time.monotonic() - t0
    ck.wait()
    out.put((rank, stall, time.monotonic() - t0))


def rank_cached_main(rank, world, directory, nbytes, barrier, out):
    os.environ["LOOM_CKPT_DIRECT_IO"] = "0"  # every byte through the page cache
    rank_main(rank, world, directory, nbytes, barrier, out)


def plain_main(rank, world, directory, nbytes, barrier, out, hashed=False):
    buf = bytearray(os.urandom(1 << 20)) * (nbytes >> 20)
    path = os.path.join(directory, "plain.%d" % rank)
    barrier.wait()
    t0 = time.monotonic()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    view = memoryview(buf)
    hasher = threading.Thread(target=hashlib.sha256, args=(view,)) if hashed else None
    if hasher:
        hasher.start()
    while view:
        view = view[os.write(fd, view[:8 << 20]):]
    os.fsync(fd)
    os.close(fd)
    if hasher:
        hasher.join()
    out.put((rank, 0.0, time.monotonic() - t0))


def plain_hashed_main(rank, world, directory, nbytes, barrier, out):
    plain_main(rank, world, directory, nbytes, barrier, out, hashed=True)


def run_once(target, world, nbytes, directory):
    """One measurement: 'world' processes after a barrier; (slowest stall, slowest end)."""
    shutil.rmtree(directory, ignore_errors=True)
    os.makedirs(directory)
    barrier, out = mp.Barrier(world), mp.Queue()
    procs = [mp.Process(target=target, args=(r, world, directory, nbytes, barrier, out)) for r in range(world)]
    for p in procs:
        p.start()
    rows = [out.get() for _ in range(world)]
    for p in procs:
        p.join()
        if p.exitcode != 0:
            sys.exit("bench: a process exited %d" % p.exitcode)
    shutil.rmtree(directory, ignore_errors=True)
    return max(r[1] for r in rows), max(r[2] for r in rows)


def fmt(xs, unit=1000.0, suffix=" ms"):
    return "%.1f%s (%.1f-%.1f)" % (statistics.median(xs) * unit, suffix, min(xs) * unit, max(xs) * unit)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--mib", type=int, default=256)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--dir", default="/var/tmp")
    args = ap.parse_args()
    n, nbytes = args.ranks, args.mib << 20
    configs = [("1 rank", rank_main, 1), ("%d ranks" % n, rank_main, n),
               ("%d ranks cached" % n, rank_cached_main, n), ("plain x%d" % n, plain_main, n),
               ("plain+sha256 x%d" % n, plain_hashed_main, n)]
    res = {c[0]: ([], []) for c in configs}
    work = tempfile.mkdtemp(prefix="loom-bench-ranks-", dir=args.dir)
    try:
        for rep in range(args.reps):  # side by side: every configuration once per round, rotated
            for k in range(len(configs)):
                name, target, world = configs[(rep + k) % len(configs)]
                stall, done = run_once(target, world, nbytes, os.path.join(work, "run"))
                res[name][0].append(stall)
                res[name][1].append(done)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    one, many, cached = res["1 rank"], res["%d ranks" % n], res["%d ranks cached" % n]
    plain, hashed = res["plain x%d" % n], res["plain+sha256 x%d" % n]
    med = statistics.median
    print("bench ckpt_ranks: %d MiB per rank, %d rounds (configurations rotated in each), %s, %d CPUs"
          % (args.mib, args.reps, args.dir, os.cpu_count()))
    for name, (st, dn) in ((c[0], res[c[0]]) for c in configs):
        what = "stall (slowest rank) %-24s decision to commit" % fmt(st) if "rank" in name else \
            "%45s all written and fsynced" % ""
        print("  %-19s %s %s" % (name, what, fmt(dn)))
    print("  %d ranks against 1 (the same bytes per rank): stall x%.2f, decision to commit x%.2f"
          % (n, med(many[0]) / med(one[0]), med(many[1]) / med(one[1])))
    ratio, ratio_h = med(plain[1]) / med(many[1]), med(hashed[1]) / med(many[1])
    tput = lambda xs: "%.0f MiB/s" % (n * args.mib / med(xs))  # noqa: E731
    print("  combined throughput: %d ranks %s, plain %s, plain+sha256 %s: %.0f%% of plain (floor 90%%), "
          "%.0f%% of plain+sha256" % (n, tput(many[1]), tput(plain[1]), tput(hashed[1]), 100 * ratio, 100 * ratio_h))
    print("  %d ranks with O_DIRECT against the page cache (LOOM_CKPT_DIRECT_IO=0): decision to commit x%.2f; "
          "through the page cache the save keeps %.0f%% of plain"
          % (n, med(many[1]) / med(cached[1]), 100 * med(plain[1]) / med(cached[1])))
    return 0 if ratio >= 0.9 else 1


if __name__ == "__main__":
    sys.exit(main())
