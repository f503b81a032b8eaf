#!/usr/bin/env python3
"""ranks_check.py DIR N: every committed checkpoint in DIR verifies, holds N
parts (ranks 0..N-1), and its parts hold N different states (for a layout
"ranks" checkpoint, the rank directories' files differ; for DCP, each rank
wrote its own __<rank>_* file). Exit 1 naming the first fault."""

import os
import sys

import loom_ckpt


def main(directory, n):
    found = loom_ckpt.list_checkpoints(directory)
    if not found:
        print("ranks_check: %s: no checkpoint" % directory)
        return 1
    for c in found:
        name = os.path.basename(c.path)
        try:
            loom_ckpt.verify(c, "full")
        except loom_ckpt.CheckpointError as e:
            print("ranks_check: %s: %s" % (name, e))
            return 1
        m = c.manifest
        ranks = sorted(p["rank"] for p in m.get("ranks", []))
        if m["format"] != loom_ckpt.FORMAT_RANKS or ranks != list(range(n)):
            print("ranks_check: %s: %s with ranks %s, expected %s with ranks 0-%d" % (
                name, m["format"], ranks, loom_ckpt.FORMAT_RANKS, n - 1))
            return 1
        digests = set()
        for p in m["ranks"]:
            own = [f for f in p["files"] if m["layout"] == "ranks" or f["path"].startswith("__%d_" % p["rank"])]
            if not own:
                print("ranks_check: %s: rank %d's part has no state of its own" % (name, p["rank"]))
                return 1
            digests.add(tuple(sorted(f["sha256"] for f in own)))
        if len(digests) != n:
            print("ranks_check: %s: %d ranks but %d different states" % (name, n, len(digests)))
            return 1
        print("ranks_check: %s ok: %d ranks, layout %s, %d files" % (
            name, n, m["layout"], sum(len(p["files"]) for p in m["ranks"])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], int(sys.argv[2])))
