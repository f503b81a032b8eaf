"""Progress reports: each rank's last completed step and a heartbeat, for
spank_ckpt's keeper to tell a hung or slow rank from a busy one
(lib/exchange/progress_report.hpp is the format; both sides run
tests/ckpt/progress-cases.json).

<checkpoint dir>/.loom-progress/rank.<R>, one line rewritten whole:

    loom-progress 1 rank=3 world=8 node=n2 step=1200 time=1765098000.250 step_s=0.980 beat=1765098003.100

A report is written at most once a second from the training loop
(Checkpointer.should_checkpoint) and every BEAT_S seconds from a daemon
thread: a stopped or dead process stops beating, one blocked in a
collective does not."""

import math
import os
import socket
import threading
import time

from .protocol import CheckpointError

DIR_NAME = ".loom-progress"
ENV = "LOOM_CKPT_PROGRESS"
BEAT_S = 5.0
EVERY_S = 1.0
FIELDS = ("rank", "world", "node", "step", "time", "step_s", "beat")


def format_progress(r):
    return "loom-progress 1 rank=%d world=%d node=%s step=%d time=%.3f step_s=%.3f beat=%.3f\n" % (
        r["rank"], r["world"], r["node"], r["step"], r["time"], r["step_s"], r["beat"])


def _number(where, key, v):
    try:
        d = float(v)
    except ValueError:
        d = float("nan")
    if not v or not math.isfinite(d) or d < 0 or v.lower() in ("inf", "nan"):
        raise CheckpointError("%s: %s='%s': not a non-negative number" % (where, key, v))
    return d


def _integer(where, key, v, lo):
    try:
        n = int(v, 10)
    except ValueError:
        raise CheckpointError("%s: %s='%s': not an integer" % (where, key, v))
    if n < lo:
        raise CheckpointError("%s: %s='%s': below %d" % (where, key, v, lo))
    return n


def parse_progress(text, where):
    """The report in 'text'; CheckpointError naming 'where' and the field."""
    if len(text) > 4096:
        raise CheckpointError("%s: longer than a progress report" % where)
    line = text.strip()
    if "\n" in line:
        raise CheckpointError("%s: more than one line" % where)
    words = line.split()
    if len(words) < 2 or words[0] != "loom-progress" or words[1] != "1":
        raise CheckpointError("%s: not a loom-progress 1 report" % where)
    kv = {}
    for w in words[2:]:
        k, eq, v = w.partition("=")
        if not eq or not k:
            raise CheckpointError("%s: '%s': not key=value" % (where, w))
        if k in kv:
            raise CheckpointError("%s: %s given twice" % (where, k))
        kv[k] = v
    for k in FIELDS:
        if k not in kv:
            raise CheckpointError("%s: no %s=" % (where, k))
    if len(kv) != len(FIELDS):
        raise CheckpointError("%s: unknown fields" % where)
    rank, world = _integer(where, "rank", kv["rank"], 0), _integer(where, "world", kv["world"], 1)
    if rank >= world:
        raise CheckpointError("%s: rank=%d is not a rank of world=%d" % (where, rank, world))
    if not kv["node"]:
        raise CheckpointError("%s: node= is empty" % where)
    return {"rank": rank, "world": world, "node": kv["node"],
            "step": _integer(where, "step", kv["step"], -1), "time": _number(where, "time", kv["time"]),
            "step_s": _number(where, "step_s", kv["step_s"]), "beat": _number(where, "beat", kv["beat"])}


class Reporter:
    """Writes this rank's report; started by the Checkpointer when the job
    asks for reports (LOOM_CKPT_PROGRESS=1, set by spank_ckpt for a job with
    standby nodes)."""

    def __init__(self, directory, rank, world, node=None):
        self.dir = os.path.join(directory, DIR_NAME)
        self.path = os.path.join(self.dir, "rank.%d" % rank)
        self.state = {"rank": rank, "world": world, "node": node or os.environ.get("SLURMD_NODENAME") or socket.gethostname(),
                      "step": -1, "time": 0.0, "step_s": 0.0, "beat": 0.0}
        self._lock = threading.Lock()
        self._written = 0.0
        self._stop = threading.Event()
        os.makedirs(self.dir, exist_ok=True)
        self._write()
        self._thread = threading.Thread(target=self._beat, name="loom-progress", daemon=True)
        self._thread.start()

    def step(self, step, step_s):
        now = time.time()
        with self._lock:
            self.state.update(step=int(step), time=now, step_s=max(0.0, float(step_s)))
            due = now - self._written >= EVERY_S
        if due:
            self._write()

    def _write(self):
        with self._lock:
            self.state["beat"] = time.time()
            text = format_progress(self.state)
            self._written = self.state["beat"]
        tmp = "%s.%d.tmp" % (self.path, os.getpid())
        try:
            with open(tmp, "w") as f:
                f.write(text)
            os.replace(tmp, self.path)
        except OSError:
            pass  # a report lost is a late one: the keeper's threshold covers it

    def _beat(self):
        while not self._stop.wait(BEAT_S):
            self._write()

    def close(self):
        self._stop.set()
