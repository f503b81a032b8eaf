#!/usr/bin/env python3
"""Compare `scontrol show topology` with what the fabric file says.

  check_topology.py EXPECT.json SHOW.txt [tree|block]

EXPECT is gen_fabric.py's: the node sets of the switches at each level
(tree), or of each block (block: every base block, and the aggregated
blocks the block plugin forms from consecutive ones). The
hostlists Slurm prints are expanded by Slurm itself (`scontrol show
hostnames`). Prints one line per check, "FAIL: ..." for each that fails, and
exits 1 if any did.
"""
import json
import re
import subprocess
import sys


def hostnames(hl):
    if not hl:
        return []
    out = subprocess.run(["scontrol", "show", "hostnames", hl], capture_output=True, text=True, timeout=30)
    if out.returncode != 0:
        raise SystemExit("FAIL: scontrol show hostnames %s: %s" % (hl, out.stderr.strip()))
    return out.stdout.split()


def check_blocks(expect, lines, check):
    base, aggregated = [], {}
    for line in lines:
        words = dict(w.split("=", 1) for w in line.split() if "=" in w)
        if "BlockName" in words:
            base.append(sorted(hostnames(words.get("Nodes", ""))))
        elif "AggregatedBlock" in words:
            aggregated.setdefault(int(words.get("BlockSize", "0")), []).append(sorted(hostnames(words.get("Nodes", ""))))
    want = [sorted(b) for b in expect["blocks"]]
    check(len(base) == len(want), "%d blocks, the file has %d NVLink domains" % (len(base), len(want)))
    check(base == want, "each block holds the nodes of one NVLink domain, in the fabric's order")
    size = len(want[0]) if want else 0
    for bsize, groups in sorted(aggregated.items()):
        k = bsize // size if size else 0
        expect_groups = [sorted(n for b in want[i:i + k] for n in b) for i in range(0, len(want) - k + 1, k)] if k else []
        check(sorted(groups) == sorted(expect_groups),
              "aggregated blocks of %d nodes: %d, each %d neighbouring NVLink domains" % (bsize, len(groups), k))
    check(bool(aggregated) or len(want) < 2, "the block plugin aggregates neighbouring blocks (%d sizes)" % len(aggregated))


def main():
    expect = json.load(open(sys.argv[1]))
    mode = sys.argv[3] if len(sys.argv) > 3 else "tree"
    bad = 0

    def check(ok, what):
        nonlocal bad
        print(("ok: " if ok else "FAIL: ") + what)
        bad += not ok

    if mode == "block":
        check_blocks(expect, open(sys.argv[2]).read().splitlines(), check)
        return 1 if bad else 0
    switches = {}
    for line in open(sys.argv[2]):
        words = dict(w.split("=", 1) for w in line.split() if "=" in w)
        if "SwitchName" not in words:
            continue
        switches[words["SwitchName"]] = {
            "level": int(words.get("Level", "-1")),
            "nodes": frozenset(hostnames(words.get("Nodes", ""))),
            "switches": hostnames(words.get("Switches", "")),
        }

    want_nodes = set(expect["nodes"])
    check(bool(switches), "slurmctld shows %d switches" % len(switches))
    for level, sets in enumerate(expect["levels"]):
        want = sorted(sorted(s) for s in sets)
        got = sorted(sorted(sw["nodes"]) for sw in switches.values() if sw["level"] == level)
        check(len(got) == len(want), "level %d: %d switches, the file has %d" % (level, len(got), len(want)))
        missing = [s for s in want if s not in got]
        check(not missing, "level %d: every switch holds the nodes the file puts under it%s" %
              (level, "" if not missing else " (not found: %s)" % ", ".join(",".join(s[:3]) + "..." for s in missing[:3])))
    in_level0 = [n for sw in switches.values() if sw["level"] == 0 for n in sw["nodes"]]
    check(sorted(in_level0) == sorted(want_nodes),
          "each of the %d nodes under exactly one lowest switch (%d placements)" % (len(want_nodes), len(in_level0)))
    extra = set(in_level0) - want_nodes
    check(not extra, "no node the file does not have%s" % ("" if not extra else ": " + ", ".join(sorted(extra)[:5])))
    # Every switch is reachable from a top switch through Switches=.
    top = max((sw["level"] for sw in switches.values()), default=0)
    seen, todo = set(), [n for n, sw in switches.items() if sw["level"] == top]
    while todo:
        n = todo.pop()
        if n in seen or n not in switches:
            continue
        seen.add(n)
        todo += switches[n]["switches"]
    check(seen == set(switches), "every switch reachable from the top (%d of %d)" % (len(seen), len(switches)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
