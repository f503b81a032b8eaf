#!/bin/bash
# The loom sim results page: bench/results/sim.md and its plots, from one
# command (scripts/bench.sh sim). Every experiment runs loom's placer and the
# baselines in the same run, on the same jobs and the same failures:
#   1. Philly on a 10,240-GPU NVL72 cluster, 30 days at an offered load of 0.9,
#      with Llama 3's failures and without failures (speed floor: < 5 min);
#   2. Alibaba GPU v2023 pods on a 6,216-GPU fat tree (the trace's GPU count);
#   3. a generated large-model mix on 100,000 GPUs for 7 days (speed floor: < 15 min);
#   4. the ETTR of a 16,384-GPU job under Llama 3's failure rates: the automatic
#      interval against fixed ones, beside Daly's expectation;
#   5. the placement weights on the mix of 3: the defaults against each rule turned off;
#   6. three seeds of a 25,000-GPU mix, with and without warnings ahead of half
#      the hardware failures: the spread between seeds, and what warnings are worth.
#   sim_report.sh [--out FILE] [--work DIR] [--quick]
# --quick: 7 days instead of 30 and 25,000 GPUs instead of 100,000 (a check
# that the page builds, not its figures).
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
loom=${LOOM_BUILDDIR:-$top/_build}/tools/loom
traces=${LOOM_TRACES:-$top/../shared/data/traces}
page=$top/bench/results/sim.md
work=/tmp/loom-sim-report
quick=0
while [ $# -gt 0 ]; do
	case $1 in
	--out) page=$2; shift 2 ;;
	--work) work=$2; shift 2 ;;
	--quick) quick=1; shift ;;
	*) echo "sim_report: unknown option '$1'" >&2; exit 2 ;;
	esac
done
[ -x "$loom" ] || { echo "sim_report: $loom: build loom first (scripts/build.sh)" >&2; exit 1; }
for f in philly.csv alibaba-v2023-pods.csv; do
	[ -f "$traces/$f" ] || { echo "sim_report: no $traces/$f (set LOOM_TRACES)" >&2; exit 1; }
done
days=30 big=100000
[ $quick = 1 ] && days=7 big=25000
plots=$(dirname "$page")/sim
rm -rf "$work"
mkdir -p "$work" "$plots"
fail=0
# run NAME ARGS...: one loom sim run into $work/NAME, timed.
run() {
	local name=$1
	shift
	local t0 t1
	t0=$(date +%s%N)
	if ! "$loom" sim "$@" --out "$work/$name" --progress no >"$work/$name.txt" 2>"$work/$name.err"; then
		echo "sim_report: FAIL $name: $(head -3 "$work/$name.err")" >&2
		fail=1
		return 1
	fi
	t1=$(date +%s%N)
	local ms=$(((t1 - t0) / 1000000))
	printf '%d.%d' $((ms / 1000)) $((ms % 1000 / 100)) >"$work/$name.wall"
	echo "sim_report: $name done in $(cat "$work/$name.wall") s" >&2
}
# table NAME COLUMNS...: the summary of a run as a markdown table, a column per placer.
table() {
	local name=$1
	shift
	python3 - "$work/$name/summary.csv" "$@" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
cols = sys.argv[2:]
print("| | " + " | ".join(r["placer"] for r in rows) + " |")
print("|---|" + "---|" * len(rows))
for c in cols:
    print("| " + c + " | " + " | ".join(r[c] for r in rows) + " |")
PY
}
# ratio NAME COLUMN A B: A's value over B's.
ratio() {
	python3 - "$work/$1/summary.csv" "$2" "$3" "$4" <<'PY'
import csv, sys
rows = {r["placer"]: r for r in csv.DictReader(open(sys.argv[1]))}
a, b = float(rows[sys.argv[3]][sys.argv[2]]), float(rows[sys.argv[4]][sys.argv[2]])
print("%.2f" % (a / b) if b else "n/a")
PY
}
value() { # NAME PLACER COLUMN
	python3 -c 'import csv,sys; print({r["placer"]: r for r in csv.DictReader(open(sys.argv[1]))}[sys.argv[2]][sys.argv[3]])' \
		"$work/$1/summary.csv" "$2" "$3"
}
cols="started completed utilization wait_mean_h wait_p95_h jct_mean_h multi_node_leaves_mean multi_node_step_factor idle_leaves_mean job_failures drains requeues holds lost_gpu_h decisions_per_s engine_s wall_s engine_share"

nvl10k="gpus=10240 fabric=nvl72"
run philly "--generate" "$nvl10k" --trace "$traces/philly.csv" --load 0.9 --days $days
run philly-nofail "--generate" "$nvl10k" --trace "$traces/philly.csv" --load 0.9 --days $days --failures none
run alibaba --generate "gpus=6216 fabric=fat" --trace "$traces/alibaba-v2023-pods.csv" --load 0.9 --days $days
run mix --generate "gpus=$big fabric=nvl72 classes=h100:40,h200:30,b200:30" \
	--generate-jobs "days=7 load=0.9" --class-speed h100=1,h200=1.3,b200=2.2
# 4. ETTR of one 16,384-GPU job doing 20 days of work on 18,432 GPUs.
printf 'timestamp,duration,num_gpus,gpu_time,cluster\n2026-01-01 00:00:00,1728000,16384,0,one\n' >"$work/one-job.csv"
printf '# Llama 3 rates; the job may restart as often as it fails\nckpt_max_restarts=100000\n' >"$work/llama3.model"
printf '# the same, a held job released as fast as a requeue\nckpt_max_restarts=100000\nuser_resubmit=121s\n' >"$work/llama3-nohold.model"
intervals="auto 10m 20m 30m 1h 2h"
for i in $intervals; do
	run "ettr-$i" --generate "gpus=18432 fabric=nvl72" --trace "$work/one-job.csv" --days 40 --placer loom \
		--failures "$work/llama3.model" --ckpt-interval "$i" --large-gpus 16384
	run "ettr-nohold-$i" --generate "gpus=18432 fabric=nvl72" --trace "$work/one-job.csv" --days 40 --placer loom \
		--failures "$work/llama3-nohold.model" --ckpt-interval "$i" --large-gpus 16384
done
# 5. Weights: each rule of the engine off in turn, on the mix.
printf 'idle_leaf=0 idle_node=0 stranded=0\n' >"$work/w-nofrag.conf"
printf 'health=0 suspect=0\n' >"$work/w-nohealth.conf"
printf 'leaf=0 nvlink=0\n' >"$work/w-nospan.conf"
printf 'idle_leaf=64 idle_node=32\n' >"$work/w-morefrag.conf"
for w in nofrag nohealth nospan morefrag; do
	run "w-$w" --generate "gpus=$big fabric=nvl72 classes=h100:40,h200:30,b200:30" \
		--generate-jobs "days=7 load=0.9" --class-speed h100=1,h200=1.3,b200=2.2 --placer loom --weights "$work/w-$w.conf"
done
# 6. Seeds, and warnings ahead of failures.
printf '# half the hardware failures announced an hour ahead\n' >"$work/warn.model"
for c in gpu hbm sram nic network; do
	printf 'cause.%s.warned=0.5 cause.%s.lead=1h\n' $c $c >>"$work/warn.model"
done
for seed in 1 2 3; do
	run "seed$seed" --generate "gpus=25000 fabric=nvl72" --generate-jobs "days=7 load=0.9" --seed $seed
	run "seed$seed-warn" --generate "gpus=25000 fabric=nvl72" --generate-jobs "days=7 load=0.9" --seed $seed \
		--failures "$work/warn.model"
done
[ $fail = 0 ] || { echo "sim_report: some runs failed; the page is not written" >&2; exit 1; }
cp "$work/philly/utilization.svg" "$plots/philly-utilization.svg"
cp "$work/philly/wait_cdf.svg" "$plots/philly-wait.svg"
cp "$work/philly/idle_leaves.svg" "$plots/philly-idle-leaves.svg"
cp "$work/mix/wait_cdf.svg" "$plots/mix-wait.svg"
cp "$work/mix/queue.svg" "$plots/mix-queue.svg"
# The ETTR table and its plot: measured against Daly's first-order expectation.
# shellcheck disable=SC2086 # intervals: a list of words
python3 - "$work" "$plots/ettr.svg" $intervals >"$work/ettr.md" <<'PY'
import csv, math, re, sys
work, svg, intervals = sys.argv[1], sys.argv[2], sys.argv[3:]
rate = 3.79 / 1000 / 86400          # per node-second, Llama 3
M = 1 / (2048 * rate)               # the job's MTBF
C, R, D = 60.0, 300.0, 121.0
def job(name):
    rows = list(csv.DictReader(open(f"{work}/{name}/loom/jobs.csv")))
    return rows[0]
def secs(i):
    m = re.match(r"(\d+)(m|h)$", i)
    return int(m.group(1)) * (60 if m.group(2) == "m" else 3600)
def expect(T):
    return T / (T + C) * (1 - ((T + C) / 2 + R + D) / M)
daly = math.sqrt(2 * C * M) * (1 + math.sqrt(C / (2 * M)) / 3 + C / (2 * M) / 9) - C
print(f"The job's MTBF M = {M / 3600:.2f} h (2,048 nodes at 3.79 failures per 1000 node-days); checkpoint C = {C:.0f} s, "
      f"restart R = {R:.0f} s, requeue delay D = {D:.0f} s; Daly's interval {daly / 60:.1f} min.\n")
print("| interval | ETTR | restarts | holds off: ETTR | expected (first order) | state |")
print("|---|---|---|---|---|---|")
pts = []
for i in intervals:
    j, n = job(f"ettr-{i}"), job(f"ettr-nohold-{i}")
    e = "%.3f" % expect(secs(i)) if i != "auto" else "%.3f (Daly's T)" % expect(daly)
    print(f"| {i} | {float(j['ettr']):.3f} | {j['restarts']} | {float(n['ettr']):.3f} | {e} | {j['state']} |")
    if i != "auto":
        pts.append((secs(i) / 60, float(j["ettr"]), float(n["ettr"]), expect(secs(i))))
# A plot: measured ETTR and the expectation against the interval.
W, H, L, B, T, Rm = 640, 360, 70, 50, 40, 170
xmax = max(p[0] for p in pts) * 1.05
ymin = min(min(p[1], p[3]) for p in pts) - 0.02
px = lambda x: L + x / xmax * (W - L - Rm)
py = lambda y: H - B - (y - ymin) / (1 - ymin) * (H - T - B)
o = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">',
     f'<rect width="{W}" height="{H}" fill="white"/>',
     f'<text x="{(W - Rm + L) / 2}" y="22" font-size="15" text-anchor="middle">ETTR of a 16,384-GPU job by checkpoint interval</text>']
for k in range(0, int(xmax) + 1, 20):
    o.append(f'<text x="{px(k):.0f}" y="{H - B + 16}" text-anchor="middle">{k}</text>')
for k in range(int(ymin * 100), 101, 2):
    y = k / 100
    o.append(f'<line x1="{L}" y1="{py(y):.1f}" x2="{W - Rm}" y2="{py(y):.1f}" stroke="#ddd"/>')
    o.append(f'<text x="{L - 6}" y="{py(y) + 4:.1f}" text-anchor="end">{y:.2f}</text>')
o.append(f'<text x="{(L + W - Rm) / 2}" y="{H - 12}" text-anchor="middle">interval (minutes)</text>')
for idx, (name, col) in enumerate([("simulated", "#1f77b4"), ("holds off", "#2ca02c"), ("expected", "#d62728")]):
    o.append('<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>' % (
        col, " ".join(f"{px(p[0]):.1f},{py(p[idx + 1]):.1f}" for p in pts)))
    o.append(f'<line x1="{W - Rm + 15}" y1="{T + 10 + idx * 20}" x2="{W - Rm + 40}" y2="{T + 10 + idx * 20}" stroke="{col}" stroke-width="3"/>')
    o.append(f'<text x="{W - Rm + 46}" y="{T + 14 + idx * 20}">{name}</text>')
o.append(f'<line x1="{px(daly / 60):.1f}" y1="{T}" x2="{px(daly / 60):.1f}" y2="{H - B}" stroke="#999" stroke-dasharray="4 3"/>')
o.append(f'<text x="{px(daly / 60) + 4:.1f}" y="{T + 12}" fill="#666">Daly</text>')
o.append(f'<rect x="{L}" y="{T}" width="{W - L - Rm}" height="{H - T - B}" fill="none" stroke="black"/></svg>')
open(svg, "w").write("\n".join(o) + "\n")
PY
python3 - "$work" >"$work/weights.md" <<'PY'
import csv, sys
work = sys.argv[1]
def get(name):
    return {r["placer"]: r for r in csv.DictReader(open(f"{work}/{name}/summary.csv"))}["loom"]
runs = [("defaults", "mix"), ("no fragmentation terms (idle_leaf=0 idle_node=0 stranded=0)", "w-nofrag"),
        ("no health terms (health=0 suspect=0)", "w-nohealth"), ("no span terms (leaf=0 nvlink=0)", "w-nospan"),
        ("fragmentation x4 (idle_leaf=64 idle_node=32)", "w-morefrag")]
cols = ["wait_mean_h", "wait_p95_h", "jct_mean_h", "multi_node_leaves_mean", "multi_node_step_factor", "idle_leaves_mean", "ettr_large", "job_failures", "lost_gpu_h"]
print("| weights | " + " | ".join(cols) + " |")
print("|---|" + "---|" * len(cols))
for label, name in runs:
    r = get(name)
    print(f"| {label} | " + " | ".join(r[c] for c in cols) + " |")
PY
python3 - "$work" >"$work/seeds.md" <<'PY'
import csv, sys
work = sys.argv[1]
def get(name):
    return {r["placer"]: r for r in csv.DictReader(open(f"{work}/{name}/summary.csv"))}
placers = list(get("seed1").keys())
cols = ["wait_mean_h", "jct_mean_h", "multi_node_step_factor", "ettr_large", "job_failures", "lost_gpu_h"]
print("Without warnings, each cell min / mean / max over seeds 1-3:\n")
print("| | " + " | ".join(placers) + " |")
print("|---|" + "---|" * len(placers))
for c in cols:
    cells = []
    for p in placers:
        v = [float(get(f"seed{s}")[p][c]) for s in (1, 2, 3)]
        cells.append("%.3g / %.3g / %.3g" % (min(v), sum(v) / 3, max(v)))
    print(f"| {c} | " + " | ".join(cells) + " |")
print("\nWith half the hardware failures announced an hour ahead, the mean over the same seeds (and the ratio to no warnings):\n")
print("| | " + " | ".join(placers) + " |")
print("|---|" + "---|" * len(placers))
for c in ["warnings", "job_failures", "lost_gpu_h", "ettr_large"]:
    cells = []
    for p in placers:
        w = sum(float(get(f"seed{s}-warn")[p][c]) for s in (1, 2, 3)) / 3
        n = sum(float(get(f"seed{s}")[p][c]) for s in (1, 2, 3)) / 3
        cells.append("%.4g (%s)" % (w, "%.2f" % (w / n) if n else "-"))
    print(f"| {c} | " + " | ".join(cells) + " |")
PY
philly_wall=$(value philly loom wall_s)
mix_wall=$(value mix loom wall_s)
{
	echo "# loom sim: results"
	echo
	echo "Generated by \`scripts/bench.sh sim\` (bench/sim_report.sh) on $(nproc) cores, $(date -u +%Y-%m-%d)$([ $quick = 1 ] && echo ", --quick: 7 days, $big GPUs"). Every table compares placers on the same jobs and the same failures in one run; loom-sim(1) defines each measure, the failure model and the cost model. Figures are from one seed (1)."
	echo
	echo "## Speed"
	echo
	echo "| run | loom placer's run | all placers, whole command | engine's share (loom) |"
	echo "|---|---|---|---|"
	echo "| Philly, $days days, 10,240 GPUs | ${philly_wall} s | $(cat "$work/philly.wall") s | $(value philly loom engine_share) |"
	echo "| generated mix, 7 days, $big GPUs | ${mix_wall} s | $(cat "$work/mix.wall") s | $(value mix loom engine_share) |"
	echo
	echo "Floors: 300 s for the first, 900 s for the second."
	echo
	echo "## 1. Philly on 10,240 GPUs (NVL72 racks, 2:1 above the pods)"
	echo
	sed -n 's/^jobs  *//p' "$work/philly/params.txt" | head -2 | sed 's/^/    /'
	echo
	echo "With Llama 3's failure rates:"
	echo
	# shellcheck disable=SC2086 # cols: a list of column names
	table philly $cols
	echo
	echo "Ratios, loom over tree: mean wait $(ratio philly wait_mean_h loom tree), p95 wait $(ratio philly wait_p95_h loom tree), mean JCT $(ratio philly jct_mean_h loom tree), lost GPU-hours $(ratio philly lost_gpu_h loom tree); over first-fit: mean wait $(ratio philly wait_mean_h loom firstfit), JCT $(ratio philly jct_mean_h loom firstfit)."
	echo
	echo "Without failures:"
	echo
	table philly-nofail started completed utilization wait_mean_h wait_p95_h jct_mean_h multi_node_leaves_mean multi_node_step_factor idle_leaves_mean
	echo
	echo "![busy GPUs](sim/philly-utilization.svg)"
	echo "![queue wait](sim/philly-wait.svg)"
	echo "![idle leaves](sim/philly-idle-leaves.svg)"
	echo
	echo "## 2. Alibaba GPU v2023 pods on 6,216 GPUs (fat tree)"
	echo
	echo "One-node pods only (the trace has no gangs), so placement decides packing, not span."
	echo
	# shellcheck disable=SC2086 # cols: a list of column names
	table alibaba $cols
	echo
	echo "## 3. Generated large-model mix on $big GPUs, 7 days"
	echo
	sed -n 's/^jobs  *//p' "$work/mix/params.txt" | head -2 | sed 's/^/    /'
	echo
	echo "Classes h100/h200/b200 at relative speeds 1/1.3/2.2. Large jobs: 1,024 GPUs or more."
	echo
	# shellcheck disable=SC2086 # cols: a list of column names
	table mix $cols large_jobs ettr_large
	echo
	echo "Ratios, loom over tree: mean wait $(ratio mix wait_mean_h loom tree), mean JCT $(ratio mix jct_mean_h loom tree), step factor $(ratio mix multi_node_step_factor loom tree); over block: mean wait $(ratio mix wait_mean_h loom block), JCT $(ratio mix jct_mean_h loom block)."
	echo
	echo "![queue wait](sim/mix-wait.svg)"
	echo "![pending GPUs](sim/mix-queue.svg)"
	echo
	echo "## 4. ETTR of a 16,384-GPU job under Llama 3's failure rates"
	echo
	echo "One job of 20 days' work on 18,432 GPUs (256 spare nodes), failures drawn from the default model (lemons included), the loom placer. \"holds off\": the same runs with a held job released as fast as a requeue. \"expected\": T/(T+C) x (1 - ((T+C)/2 + R + D)/M), Daly's first-order accounting."
	echo
	cat "$work/ettr.md"
	echo
	echo "![ETTR by interval](sim/ettr.svg)"
	echo
	echo "## 5. How the weights were tuned"
	echo
	echo "The generated mix of section 3, loom's placer only, each group of score terms turned off (or up) in turn:"
	echo
	cat "$work/weights.md"
	echo
	echo "## 6. Seeds, and warnings ahead of failures"
	echo
	echo "A 25,000-GPU NVL72 cluster, the generated mix for 7 days, seeds 1 to 3 (each seed draws other jobs and other failures; every placer in a seed sees the same)."
	echo
	cat "$work/seeds.md"
	echo
	echo "## Reading these"
	echo
	echo "- utilization counts GPU-seconds held: a placer whose gangs span more leaves runs them longer (step factor above 1) and holds more, so a higher utilization with fewer jobs completed is a loss, not a win."
	echo "- The Philly trace holds few gangs (93% of its jobs use one GPU): placement shows in the queue wait and in the tail, less in the mean."
	echo "- One seed's difference between placers can be smaller than the spread between seeds (section 6): read a ratio beside that spread. Where loom loses, the tables say so."
} >"$page"
echo "sim_report: wrote $page and $(ls "$plots" | wc -l) plots in $plots"
