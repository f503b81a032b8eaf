#!/usr/bin/env python3
"""Compare `scontrol show topology` with what the fabric file says.

  check_topology.py EXPECT.json SHOW.txt

EXPECT is gen_fabric.py's: the node sets of the switches at each level. The
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


def main():
    expect = json.load(open(sys.argv[1]))
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
    bad = 0

    def check(ok, what):
        nonlocal bad
        print(("ok: " if ok else "FAIL: ") + what)
        bad += not ok

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
