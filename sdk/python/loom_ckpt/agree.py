"""One decision for every rank (doc/loom-ckpt-protocol.md 7.3 and 7.5): the
step to save, and the step to restore."""

import json
import math
import os
import sys

from .launch import STAMP_PREFIX, _int_field, _read_small_json
from .protocol import CheckpointError
from .store import _write_atomic


class GroupAgreement:
    """Through a torch.distributed process group: an all-reduce (maximum) of
    [wish, step seconds] on calls every rank counts alike, about once per
    'period' seconds of the slowest rank's steps."""

    def __init__(self, torch, dist, group, period=1.0):
        self.torch, self.dist, self.group, self.period = torch, dist, group, period
        self.calls = 0
        self.next_call = 1

    def decide(self, wish, step, step_seconds):
        self.calls += 1
        if self.calls < self.next_call:
            return False
        t = self.torch.tensor([1.0 if wish else 0.0, float(step_seconds)], dtype=self.torch.float64)
        self.dist.all_reduce(t, op=self.dist.ReduceOp.MAX, group=self.group)
        agreed, slowest = t[0].item() > 0, t[1].item()
        self.next_call = self.calls + max(1, int(self.period / slowest) if slowest > 0 else 1)
        return agreed

    def minimum(self, value):
        t = self.torch.tensor([-float(value)], dtype=self.torch.float64)
        self.dist.all_reduce(t, op=self.dist.ReduceOp.MAX, group=self.group)
        return int(-t[0].item())


class StampAgreement:
    """Without a process group: rank 0 stamps the step every rank saves at,
    a few steps ahead, in <dir>/.loom-save-at.<run>; every rank reads it on
    each call (a stat, and a read when it changed)."""

    def __init__(self, directory, run, rank, lead_steps=2, lead_seconds=2.0):
        self.path = os.path.join(directory, STAMP_PREFIX + run)
        self.rank, self.lead_steps, self.lead_seconds = rank, lead_steps, lead_seconds
        self._sig = None
        self.stamp = self._read() or {"step": -1, "seq": 0}
        self.done = self.stamp["seq"]  # stamps of this launch before this process started do not count
        self.pending = self.stamp["step"] if self.stamp["seq"] > self.done else None

    def _read(self):
        v = _read_small_json(self.path, 4096)
        if v is None:
            return None
        return {"step": _int_field(v, "step", self.path, 0), "seq": _int_field(v, "seq", self.path, 1)}

    def _changed(self):
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return False
        sig = (st.st_ino, st.st_mtime_ns, st.st_size)
        if sig == self._sig:
            return False
        self._sig = sig
        return True

    def decide(self, wish, step, step_seconds):
        if step is None:
            raise CheckpointError("should_checkpoint(step): without a process group the ranks agree on a step "
                                  "number: pass the step you would save")
        if self.rank == 0 and wish and self.stamp["seq"] <= self.done:
            lead = max(self.lead_steps, math.ceil(self.lead_seconds / step_seconds) if step_seconds > 0 else 0)
            self.stamp = {"step": step + lead, "seq": self.done + 1}
            os.makedirs(os.path.dirname(self.path), mode=0o700, exist_ok=True)
            _write_atomic(self.path, json.dumps(self.stamp).encode() + b"\n", 0o644)
        elif self._changed():
            self.stamp = self._read() or self.stamp
        if self.stamp["seq"] <= self.done:
            return False
        if step < self.stamp["step"]:
            return False
        self.done = self.stamp["seq"]
        if step > self.stamp["step"]:
            sys.stderr.write("loom_ckpt: rank %d is at step %d, past the stamped step %d: it does not save it, "
                             "and that checkpoint will not commit\n" % (self.rank, step, self.stamp["step"]))
            return False
        return True
