"""python3 -m loom_ckpt ls|verify|latest DIR (also the loom-ckpt command of the package)"""

import os
import sys

from .catalog import list_checkpoints, verify
from .protocol import FORMAT, CheckpointError


def _describe(c):
    m = c.manifest
    if m["format"] == FORMAT:
        return "step=%d files=%d" % (c.step, len(m["files"]))
    return "step=%d ranks=%d layout=%s files=%d" % (c.step, m["world_size"], m["layout"],
                                                    sum(len(p["files"]) for p in m["ranks"]))


USAGE = """usage: python3 -m loom_ckpt ls|verify|latest DIR   (or: loom-ckpt ls|verify|latest DIR)
  ls DIR      the checkpoints of DIR, each given a quick check
  verify DIR  the checkpoints of DIR, each checked in full (SHA-256)
  latest DIR  the newest complete checkpoint (empty when there is none)
"""


def main(argv=None):
    if argv is None:  # the loom-ckpt console script calls main()
        argv = sys.argv
    if len(argv) == 2 and argv[1] in ("-h", "--help"):
        sys.stdout.write(USAGE)
        return 0
    if len(argv) != 3 or argv[1] not in ("ls", "verify", "latest"):
        sys.stderr.write(USAGE)
        return 2
    cmd, directory = argv[1], argv[2]
    if not os.path.isdir(directory):
        sys.stderr.write("loom_ckpt: %s: not a directory\n" % directory)
        return 2
    if cmd == "latest":  # the newest complete one, whatever job would restore it
        for c in list_checkpoints(directory):
            try:
                verify(c, "full")
                print(c.path)
                return 0
            except CheckpointError:
                continue
        print("")
        return 0
    bad = 0
    for c in list_checkpoints(directory):
        try:
            verify(c, "full" if cmd == "verify" else "quick")
            print("%s ok %s" % (os.path.basename(c.path), _describe(c)))
        except CheckpointError as e:
            bad += 1
            print("%s BAD %s" % (os.path.basename(c.path), e))
    return 1 if bad else 0
