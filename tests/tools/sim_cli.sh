#!/bin/bash
# loom sim end to end, as an admin runs it:
#  - a generated NVL72 cluster with failures, every placer: the summary names
#    each placer, and the files of loom-sim(1) are there;
#  - what the simulator decided, replayed: the state, request and decision it
#    dumped give the same nodes under `loom place --explain` (the engine) and
#    `loom place --baseline` (Slurm tree's greedy choice, bench_place's baseline),
#    over the cluster file it wrote (which loom topo show reads);
#  - the SVG plots render (rsvg-convert), the CSVs have one row per job;
#  - the same seed gives the same files, bad input a clear error.
#   sim_cli.sh [LOOM]      (default $LOOM_BUILDDIR/tools/loom)
set -uo pipefail
loom=${1:-${LOOM_BUILDDIR:-.}/tools/loom}
[ -x "$loom" ] || { echo "sim_cli: $loom: not an executable"; exit 1; }
for t in rsvg-convert python3; do
	command -v $t >/dev/null || { echo "sim_cli: FAIL $t is not installed (scripts/deps.sh installs it)"; exit 1; }
done
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail=0
bad() { echo "sim_cli: FAIL $*"; fail=1; }
gen="gpus=2304 fabric=nvl72 classes=h100:50,b200:50"
mix="days=2 load=1.2 large_gpus=64-512 seed=4"
cat >"$out/model" <<'M'
# failures often enough to see them in two days on 288 nodes
rate=40
M
"$loom" sim --generate "$gen" --generate-jobs "$mix" --failures "$out/model" --dump-at 30 --out "$out/a" \
	--progress no >"$out/a.txt" 2>"$out/a.err" || bad "loom sim exits $?: $(head -3 "$out/a.err")"
for p in loom tree firstfit block; do
	grep -E "^ +.*\b$p\b" "$out/a.txt" >/dev/null || bad "the summary names no placer $p"
	for f in jobs.csv timeline.csv dump-state.txt dump-request.txt dump-decision.txt; do
		[ -s "$out/a/$p/$f" ] || bad "no $p/$f"
	done
done
for f in summary.csv params.txt cluster.json utilization.svg idle_leaves.svg queue.svg wait_cdf.svg; do
	[ -s "$out/a/$f" ] || bad "no $f"
done
# One row per job in every jobs.csv, as many as params.txt says were generated.
want=$(sed -n 's/^ *\([0-9][0-9]*\) jobs, .*/\1/p' "$out/a/params.txt")
[ -n "$want" ] || bad "params.txt names no job count"
for p in loom tree; do
	got=$(($(wc -l <"$out/a/$p/jobs.csv") - 1))
	[ "$got" = "$want" ] || bad "$p/jobs.csv has $got rows, params.txt says $want jobs"
done
# Failures happened and were judged.
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
	$1 == "loom" { if ($c["job_failures"] < 1 || $c["drains"] < 1) exit 1 }' "$out/a/summary.csv" ||
	bad "summary.csv shows no job failure or drain for loom at rate=40"
# The cluster file is one loom reads.
"$loom" topo show "$out/a/cluster.json" >"$out/show.txt" 2>&1 || bad "loom topo show refuses the cluster file: $(head -3 "$out/show.txt")"
grep -q "288 nodes" "$out/show.txt" || bad "loom topo show does not count the 288 nodes of 2304 GPUs: $(head -2 "$out/show.txt")"
# Replay: the engine's decision and the tree baseline's.
nodes_of() { sed -n 's/.* nodes=\([^ ]*\).*/\1/p' "$1"; }
"$loom" place --explain --cluster "$out/a/cluster.json" --state "$out/a/loom/dump-state.txt" \
	--request "$(cat "$out/a/loom/dump-request.txt")" --json --candidates 1 >"$out/loom.json" 2>"$out/loom.err" ||
	bad "loom place on the dumped state exits $?: $(head -2 "$out/loom.err")"
got=$(python3 -c 'import json,sys; print(",".join(json.load(open(sys.argv[1]))["candidates"][0]["nodes"]))' "$out/loom.json")
[ "$got" = "$(nodes_of "$out/a/loom/dump-decision.txt")" ] ||
	bad "loom place chooses $got, the simulator chose $(nodes_of "$out/a/loom/dump-decision.txt")"
grep -q "health=" "$out/a/loom/dump-state.txt" || echo "sim_cli: note: the dumped state holds no health weight yet"
"$loom" place --explain --baseline --cluster "$out/a/cluster.json" --state "$out/a/tree/dump-state.txt" \
	--request "$(cat "$out/a/tree/dump-request.txt")" --json >"$out/tree.json" 2>"$out/tree.err" ||
	bad "loom place --baseline on the dumped state exits $?: $(head -2 "$out/tree.err")"
got=$(python3 -c 'import json,sys; print(",".join(json.load(open(sys.argv[1]))["baseline"]["candidates"][0]["nodes"]))' "$out/tree.json")
[ "$got" = "$(nodes_of "$out/a/tree/dump-decision.txt")" ] ||
	bad "Slurm tree's choice replayed is $got, the simulator's tree placer chose $(nodes_of "$out/a/tree/dump-decision.txt")"
# The plots render.
for f in "$out"/a/*.svg; do
	rsvg-convert -o "$out/plot.png" "$f" 2>"$out/rsvg.err" || bad "rsvg-convert refuses $(basename "$f"): $(head -2 "$out/rsvg.err")"
	[ -s "$out/plot.png" ] || bad "rsvg-convert made nothing of $(basename "$f")"
done
# Deterministic: the same seed, the same files.
"$loom" sim --generate "$gen" --generate-jobs "$mix" --failures "$out/model" --placer loom --out "$out/b" --quiet \
	--progress no >/dev/null 2>&1 || bad "second run exits $?"
cmp -s "$out/a/loom/jobs.csv" "$out/b/loom/jobs.csv" || bad "the same seed gives another loom/jobs.csv"
cmp -s "$out/a/loom/timeline.csv" "$out/b/loom/timeline.csv" || bad "the same seed gives another loom/timeline.csv"
# Bad input: exit 2 for usage, 1 for a bad file, and a message that names it.
"$loom" sim --generate "gpus=64 fabric=torus" --generate-jobs "$mix" --out "$out/c" >/dev/null 2>"$out/e"
rc=$?
[ $rc = 2 ] || bad "a bad --generate exits $rc, expected 2"
grep -q "fabric" "$out/e" || bad "a bad --generate says: $(head -1 "$out/e")"
printf 'timestamp,duration,num_gpus,gpu_time,cluster\n2017-10-09 07:01:55,66.0,one,66.0,a\n' >"$out/bad.csv"
"$loom" sim --generate "gpus=64" --trace "$out/bad.csv" --out "$out/d" >/dev/null 2>"$out/e"
rc=$?
[ $rc = 1 ] || bad "a bad trace exits $rc, expected 1"
grep -q "bad.csv:2" "$out/e" || bad "a bad trace's message does not name file and line: $(head -1 "$out/e")"
# The communication model: a ring in loom's rank order on leaves cabled
# across the names, two degraded uplinks, half of their nodes marked. The
# parameters say so, and jobs.csv names the degraded leaves a job used; the
# order is refused with the share model, a bad count with a clear error.
"$loom" sim --generate "gpus=1024 fabric=fat cabling=across" --generate-jobs "days=1 load=0.8 seed=2" --placer loom \
	--failures none --comm-model ring --rank-order yes --degraded-uplinks 2:0.5 --link-marks 0.5 --out "$out/r" \
	--progress no >"$out/r.txt" 2>"$out/r.err" || bad "loom sim --comm-model ring exits $?: $(head -3 "$out/r.err")"
grep -q "ring model, loom's rank order" "$out/r/params.txt" || bad "params.txt does not name the ring model and the order"
grep -q "2 leaf uplinks at 0.5 of capacity; link marks on 0.5" "$out/r/params.txt" || bad "params.txt does not name the degraded uplinks"
python3 - "$out/r/loom/jobs.csv" <<'PY' || bad "jobs.csv of the ring run"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert rows and {"comm", "ring_leaf_edges", "degraded_leaves", "hostlist"} <= set(rows[0]), "columns: %s" % list(rows[0])
assert all(r["comm"] in ("light", "normal", "heavy") for r in rows)
assert all(r["hostlist"].startswith("n") for r in rows if int(r["first_start_s"]) >= 0)
PY
"$loom" sim --generate "gpus=64" --generate-jobs "$mix" --rank-order yes --out "$out/f" >/dev/null 2>"$out/e"
rc=$?
[ $rc = 2 ] || bad "--rank-order yes with the share model exits $rc, expected 2"
grep -q "needs --comm-model ring" "$out/e" || bad "--rank-order yes with the share model says: $(head -1 "$out/e")"
"$loom" sim --generate "gpus=64" --generate-jobs "$mix" --degraded-uplinks 2:7 --out "$out/f" >/dev/null 2>"$out/e"
rc=$?
[ $rc = 2 ] || bad "--degraded-uplinks 2:7 exits $rc, expected 2"
grep -q "degraded-uplinks" "$out/e" || bad "--degraded-uplinks 2:7 says: $(head -1 "$out/e")"
# Standbys inside the allocation, as loom-sim(1) gives the options: the
# large jobs hold nodes beyond their own (the hostlist is longer than the
# node count), failures are recovered in place, the standby GPU-hours show.
"$loom" sim --generate "$gen" --generate-jobs "$mix" --failures "$out/model" --placer loom --standby auto \
	--standby-p 0.99 --standby-min-gpus 64 --in-alloc-time 20s --out "$out/s" --quiet --progress no \
	>"$out/s.txt" 2>"$out/s.err" || bad "loom sim --standby auto exits $?: $(head -3 "$out/s.err")"
python3 - "$out/s" <<'PY' || bad "the standby run's files"
import csv, re, sys
def hosts(hl):  # nodes in a Slurm hostlist: "n[00001-00004,00009],n00012" -> 6
    n = 0
    for m in re.finditer(r"([^,\[]+)(\[([^\]]*)\])?", hl):
        for part in (m.group(3).split(",") if m.group(3) else ["x"]):
            a, _, b = part.partition("-")
            n += int(b) - int(a) + 1 if b else 1
    return n
d = sys.argv[1]
s = dict(zip(*list(csv.reader(open(d + "/summary.csv")))))
assert int(s["in_alloc_restarts"]) > 0 and float(s["standby_gpu_h"]) > 0, {k: s[k] for k in ("in_alloc_restarts", "standby_gpu_h")}
big = [r for r in csv.DictReader(open(d + "/loom/jobs.csv")) if int(r["gpus"]) >= 64 and int(r["first_start_s"]) >= 0]
assert big, "no large job ran"
assert any(hosts(r["hostlist"]) > int(r["nodes"]) for r in big), "no large job holds a standby: %s" % big[0]
PY
"$loom" sim --generate "gpus=64" --generate-jobs "$mix" --standby lots --out "$out/f" >/dev/null 2>"$out/e"
rc=$?
[ $rc = 2 ] || bad "--standby lots exits $rc, expected 2"
grep -q "expected auto or a number of nodes" "$out/e" || bad "--standby lots says: $(head -1 "$out/e")"
[ $fail = 0 ] && echo "sim_cli: ok (4 placers, replays of the engine and the tree baseline, plots, determinism, bad input, the ring model, standbys)"
exit $fail
