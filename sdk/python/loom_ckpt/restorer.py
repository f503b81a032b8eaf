"""Restoring: the newest verified checkpoint every rank of the job can
restore (Checkpointer.restore()), agreed on through the process group when
there is one."""

import os
import sys

from .agree import GroupAgreement
from .catalog import find_latest, judge, list_checkpoints
from .protocol import MAX_STEP


def _own_ranks(ck, c):
    m = c.manifest
    if m.get("layout") == "dcp":
        return {r for r in range(m["world_size"]) if r % ck.world_size == ck.rank}
    return {ck.rank} if m.get("layout") == "ranks" else None


def _agreed_restore(ck, level, below=None):
    """7.3: each rank hashes its own part, and the group agrees on the newest
    step every rank accepts."""
    cands = [c for c in list_checkpoints(ck.dir) if below is None or c.step < below]
    verdict = {}

    def newest(limit):
        for c in cands:
            if c.step > limit:
                continue
            if c.step not in verdict:
                own = _own_ranks(ck, c) if c.manifest else None
                verdict[c.step] = judge(c, level, ck.world_size, ck.rank, own)
            if verdict[c.step]:
                return c.step
        return -1
    agreed = MAX_STEP + 1
    while True:
        m = ck.agreement.minimum(newest(agreed))
        if m == agreed or m < 0:
            break
        agreed = m
    for c in cands:
        if c.step > agreed and c.step in verdict and c.reason and ck.rank == 0:
            sys.stderr.write("loom_ckpt: skipping %s: %s\n" % (os.path.basename(c.path), c.problem))
    found = [c for c in cands if c.step == agreed]
    return found[0] if found and agreed >= 0 else None


def restore(ck, level="full", below=None):
    """Checkpointer.restore() of 'ck' (its docstring says what it returns)."""
    if not ck.enabled or not os.path.isdir(ck.dir):
        if isinstance(ck.agreement, GroupAgreement):
            ck.agreement.minimum(-1)  # the others may have a directory: stay in step with them
        return None
    if isinstance(ck.agreement, GroupAgreement):
        return _agreed_restore(ck, level, below)
    skipped = []
    c = find_latest(ck.dir, level, skipped, ck.world_size, ck.rank, below)
    for s in skipped:
        if ck.rank == 0:
            sys.stderr.write("loom_ckpt: skipping %s: %s\n" % (os.path.basename(s.path), s.problem))
    return c
