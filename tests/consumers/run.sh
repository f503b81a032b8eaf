#!/bin/bash
# The consumers tier: every file loom writes, given to the program that reads
# it, on real and generated fabrics and machines.
#
#   tests/consumers/run.sh [--slurm VERSION] [--builddir DIR] [--dir DIR]
#
# - topology.conf (`loom topo convert`) to a real slurmctld with
#   topology/tree: it must start, and `scontrol show topology` must hold every
#   node under the switch the fabric file puts it under, every switch
#   reachable. Fabrics: the real NDR fabric in tests/data (counted from the
#   file by gen_fabric.py expect-real), a generated three-tier fat tree and a
#   generated rail-optimised fabric, and the test cluster's topology.conf
#   read back.
# - gres.conf with Links= to the real slurmd (`slurmd -G` prints the GRES it
#   configured) for the recorded machines: as many GPUs as a person counts in
#   each file (cross-checked by count_gpus.py, which does not use loom), and
#   the Links= it reports must be the NVLink counts a person reads there.
# - loom's hwloc XML reader against hwloc's own tools (hwloc-calc): the CPUs
#   of every NUMA node.
# - NCCL topology XML (`--to nccl`) against the rules of NCCL's own loader
#   (check_nccl_xml.py, from NCCL's source), with the file's GPUs, and run
#   through NCCL itself when a GPU machine is at hand (not here).
# A python helper or checker that crashes, exits non-zero or (a checker)
# prints no ok: line is a failed check.
# Needs root (slurmctld runs as SlurmUser=root), munge, python3 and hwloc.
# Ends with "consumers: N checks, N failed"; exits 1 if any failed.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
# shellcheck source=tests/cluster/nap.sh
. "$top/tests/cluster/nap.sh"
slurm=${LOOM_SLURM:-}
builddir=${LOOM_BUILDDIR:-$top}
dir=/tmp/loom-consumers
while [ $# -gt 0 ]; do
	case $1 in
	--slurm) slurm=$2; shift 2 ;;
	--builddir) builddir=$2; shift 2 ;;
	--dir) dir=$2; shift 2 ;;
	-h|--help) sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "consumers: unknown option '$1'" >&2; exit 2 ;;
	esac
done
die() { echo "consumers: error: $*" >&2; exit 1; }
[ -n "$slurm" ] || slurm=$("$top/scripts/slurm.sh" default)
prefix=$("$top/scripts/slurm.sh" prefix "$slurm") || exit 2
export PATH="$prefix/bin:$PATH"
sbin=$prefix/sbin
[ "$prefix" != /usr ] || sbin=/usr/sbin
loom=$builddir/tools/loom
[ -x "$loom" ] || die "$loom is not built"
for t in python3 hwloc-calc munge; do command -v "$t" >/dev/null || die "$t is missing (scripts/deps.sh installs it)"; done
data=$top/tests/data/topology
# shellcheck source=tests/cluster/ports.sh
. "$top/tests/cluster/ports.sh"

checks=0
failed=0
failures=()
# shellcheck source=tests/consumers/checks.sh
. "$here/checks.sh"
# shellcheck source=tests/consumers/daemons.sh
. "$here/daemons.sh"
# shellcheck source=tests/consumers/topology.sh
. "$here/topology.sh"
# shellcheck source=tests/consumers/gres.sh
. "$here/gres.sh"

rm -rf "$dir"
mkdir -p "$dir"
if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
	mkdir -p /run/munge && chown munge:munge /run/munge 2>/dev/null
	runuser -u munge -- /usr/sbin/munged --force 2>/dev/null || runuser -u munge -- /usr/sbin/munged
	nap 0.5
fi

trap 'stop_all; exit 143' TERM INT

mkdir -p "$dir/fabrics"
# Hosts of the real fabric that are no compute nodes, read in the file: three
# HCAs describe themselves as "localhost", two as "ubuntu" (installer
# defaults), two belong to B11-P1-CUFM-02 (the cluster's UFM server).
gen real-ndr expect-real "$data/ibnetdiscover-ndr-fabric.out" localhost,ubuntu,B11-P1-CUFM-02 "$dir/fabrics/ndr.json" &&
	topology real-ndr "$data/ibnetdiscover-ndr-fabric.out" "$dir/fabrics/ndr.json"
gen fat-tree-4x4x8 fat-tree 4 4 8 "$dir/fabrics/fat-tree.ibnet" "$dir/fabrics/fat-tree.json" &&
	topology fat-tree-4x4x8 "$dir/fabrics/fat-tree.ibnet" "$dir/fabrics/fat-tree.json"
gen rail-4su-8rails rail 4 8 16 "$dir/fabrics/rail.ibnet" "$dir/fabrics/rail.json" &&
	topology rail-4su-8rails "$dir/fabrics/rail.ibnet" "$dir/fabrics/rail.json"
# The test cluster's own topology.conf, through loom and back: 4 leaves of 4
# nodes, 2 pods of 2 leaves, one spine (its first line says so).
if python3 - "$dir/fabrics/cluster16.json" 2>"$dir/fabrics/cluster16.err" <<'PY'
import json, sys
n = ["n%02d" % i for i in range(1, 17)]
json.dump({"nodes": n, "levels": [[n[0:4], n[4:8], n[8:12], n[12:16]], [n[0:8], n[8:16]], [n]]}, open(sys.argv[1], "w"))
PY
then topology cluster16 "$data/cluster16-topology.conf" "$dir/fabrics/cluster16.json"
else no "cluster16: writing its expectation failed: $(tail -1 "$dir/fabrics/cluster16.err")"; fi
# NVL72 racks: the switch tree for topology/tree, the NVLink domains as blocks
# for topology/block (23.11+), both in one topology.yaml (25.05+). Two spines
# of two racks each is the shape of Topograph's NVL72 model
# (shared/data/topology/topograph-model-nvl72.yaml: core, spine-1/2,
# leaf-S-R with node[SR01-SR18] in NVLink domain nvl-S-R, block sizes 18, 36, 72).
gen nvl72 nvl72 2 2 "$dir/fabrics/nvl72.json" "$dir/fabrics/nvl72.expect.json" && nvl72=1 || nvl72=0
[ "$nvl72" = 0 ] || topology nvl72-tree "$dir/fabrics/nvl72.json" "$dir/fabrics/nvl72.expect.json"
# release as a number: 22.05.8 -> 2205
rel=$(echo "$slurm" | awk -F. '{printf "%d%02d", $1, $2}')
if [ "$rel" -ge 2311 ]; then
	topology nvl72-block "$dir/fabrics/nvl72.json" "$dir/fabrics/nvl72.expect.json" block "" block
	# The block sizes Topograph's model names for this shape.
	if grep -qx 'BlockSizes=18,36,72' "$dir/nvl72-block/etc/topology.conf"; then ok "nvl72-block: BlockSizes=18,36,72, as Topograph's model says"
	else no "nvl72-block: $(grep BlockSizes "$dir/nvl72-block/etc/topology.conf"), the model says 18, 36, 72"; fi
	# The block file read back by loom: one NVLink domain per BlockName=.
	if "$loom" topo convert --from "$dir/nvl72-block/etc/topology.conf" --to json -o "$dir/nvl72-block/back.json" 2>"$dir/nvl72-block/back.err"; then
		got=$("$loom" topo show --json "$dir/nvl72-block/back.json" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(len(d["nvlink_domains"]), d["nodes"])')
		want="$(grep -c '^BlockName=' "$dir/nvl72-block/etc/topology.conf") $(wc -l <"$dir/nvl72-block/nodes")"
		if [ "$got" = "$want" ]; then ok "nvl72-block: read back, $got (NVLink domains, nodes)"; else no "nvl72-block: read back $got, the file has $want"; fi
	else
		no "nvl72-block: loom cannot read its own block file: $(tail -1 "$dir/nvl72-block/back.err")"
	fi
else
	echo "note: Slurm $slurm has no topology/block (23.11 and later): the block file is not loaded here"
fi
if [ "$rel" -ge 2505 ]; then
	topology nvl72-yaml-tree "$dir/fabrics/nvl72.json" "$dir/fabrics/nvl72.expect.json" topology.yaml "" tree
	topology nvl72-yaml-block "$dir/fabrics/nvl72.json" "$dir/fabrics/nvl72.expect.json" topology.yaml nvlink block
else
	echo "note: Slurm $slurm reads no topology.yaml (25.05 and later): it is not loaded here"
fi

# gres.conf to slurmd: `slurmd -G` prints each GRES it configured.
# The GPUs and the expected Links= rows, counted in each file by hand:
#  hwloc-dgx2.xml: 16 GPUs (PCIDev "0302 [10de:1db8]", V100, each with an
#    OSDev nvml0..nvml15). NVLinkBandwidth gives each of them 6 links of
#    25000 MB/s, all to NVSwitches (PCIDev objects): 6 to every other GPU.
#  hwloc-power8-p100.xml: 4 GPUs (PCIDev "0302 [10de:15f9]", P100, each with
#    OSDevs cudaN, opencl0dN, nvmlN). GPU0-GPU1 and GPU2-GPU3 at 40000 MB/s
#    (2 NVLink-1 links), the rest of each GPU's bandwidth goes to its CPU
#    Package.
#  nccl-topo-azure-ndv4-a100.xml, nccl-topo-azure-ndv5-h100.xml: 8 GPUs each
#    (<pci class="0x030200">: these files have no <gpu> elements, NCCL makes
#    GPUs of class 0x03 devices), no <nvlink> element: 0 links.
gres dgx2 "$data/hwloc-dgx2.xml" 16 '6'
gres power8 "$data/hwloc-power8-p100.xml" 4 '2 if i // 2 == j // 2 else 0'
gres ndv4 "$data/nccl-topo-azure-ndv4-a100.xml" 8 '0'
gres ndv5 "$data/nccl-topo-azure-ndv5-h100.xml" 8 '0'

# hwloc: the CPUs of each NUMA node, by loom and by hwloc-calc. Debian's
# hwloc 2.9 refuses version="3.0" files; its loader reads these once the
# version attribute says 2.0 (the elements it reads are the same).
hwloc() {
	local name=$1 file=$2 d="$dir/hwloc-$1" id cpus want bad=0 count=0
	mkdir -p "$d"
	sed 's/<topology version="3.0">/<topology version="2.0">/' "$file" >"$d/v2.xml"
	"$loom" topo convert --from "$file" --to json -o "$d/loom.json" 2>"$d/convert.err" ||
		{ no "hwloc $name: loom could not read it: $(tail -1 "$d/convert.err")"; return; }
	# loom writes ranges ("0-1,8-9"), hwloc-calc lists ("0,1,8,9"): compare as
	# lists. No NUMA node at all is a failure (py: an empty output).
	py "hwloc $name: the NUMA nodes in loom's json" "$d/numa" -c 'import json,sys
d = json.load(open(sys.argv[1])); n = d["nodes"][0]
h = d.get("hardware", {}).get(n.get("hardware", ""), n)
for m in h.get("numa", []):
    out = []
    for part in m.get("cpus", "").split(","):
        a, _, b = part.partition("-")
        out += list(range(int(a), int(b or a) + 1)) if a else []
    print(m["id"], ",".join(map(str, out)))' "$d/loom.json" || return
	while read -r id cpus; do
		count=$((count + 1))
		if ! want=$(hwloc-calc --input "$d/v2.xml" --physical-output --intersect pu "node:$id" 2>"$d/calc.err" </dev/null) || [ -z "$want" ]; then
			no "hwloc $name: NUMA $id: hwloc-calc gives no CPUs: $(tail -1 "$d/calc.err")"; bad=1; continue
		fi
		[ "$cpus" = "$want" ] || { no "hwloc $name: NUMA $id: loom reads CPUs $cpus, hwloc-calc $want"; bad=1; }
	done <"$d/numa"
	want=$(hwloc-calc --input "$d/v2.xml" --number-of node all 2>"$d/calc.err") ||
		{ no "hwloc $name: hwloc-calc cannot count the NUMA nodes: $(tail -1 "$d/calc.err")"; return; }
	[ "$count" = "$want" ] || { no "hwloc $name: loom reads $count NUMA nodes, hwloc $want"; bad=1; }
	[ $bad = 1 ] || ok "hwloc $name: $count NUMA nodes with the CPUs hwloc gives them"
}
hwloc dgx2 "$data/hwloc-dgx2.xml"
hwloc power8 "$data/hwloc-power8-p100.xml"
hwloc gb10 "$data/hwloc-dgx-gb10.xml"

# NCCL topology XML: checked against the rules of NCCL's own loader
# (check_nccl_xml.py re-implements its parser and names the NCCL source of
# every rule). The real files it is checked on must pass as they are.
# nccl NAME FILE GPUS: loom's NCCL XML of FILE (GPUS GPUs, read by hand
# above) through the checker; and its GPUs, counted by count_gpus.py the way
# NCCL's loader makes them, must be the file's.
nccl() {
	local name=$1 file=$2 gpus=$3 d="$dir/nccl-$1" got
	mkdir -p "$d"
	if ! "$loom" topo convert --from "$file" --to nccl -o "$d/topo.xml" 2>"$d/convert.err"; then
		no "nccl $name: loom topo convert failed: $(tail -1 "$d/convert.err")"
		return
	fi
	python3 "$here/check_nccl_xml.py" -q "$d/topo.xml" >"$d/check.out" 2>&1
	relay "nccl $name, loom's file by NCCL's loader's rules" "$d/check.out" $? "$d/topo.xml: "
	if ! got=$(python3 "$here/count_gpus.py" "$d/topo.xml" 2>"$d/count.err"); then
		no "nccl $name: count_gpus.py failed on loom's file: $(tail -1 "$d/count.err")"
	elif [ "$got" = "$gpus" ]; then ok "nccl $name: loom's file has the $gpus GPUs of ${file##*/}"
	else no "nccl $name: loom's file has $got GPUs, ${file##*/} has $gpus"; fi
}
for f in nccl-topo-azure-ndv4-a100.xml nccl-topo-azure-ndv5-h100.xml; do
	python3 "$here/check_nccl_xml.py" -q "$data/$f" >"$dir/nccl-real-$f.out" 2>&1
	relay "nccl: the checker on the real $f" "$dir/nccl-real-$f.out" $? "$data/$f: "
done
nccl ndv4 "$data/nccl-topo-azure-ndv4-a100.xml" 8
nccl ndv5 "$data/nccl-topo-azure-ndv5-h100.xml" 8
nccl dgx2 "$data/hwloc-dgx2.xml" 16
nccl power8 "$data/hwloc-power8-p100.xml" 4

echo "consumers: $checks checks, $failed failed (Slurm $slurm)"
if [ "$failed" -gt 0 ]; then
	echo "failed checks:"
	printf '  %s\n' "${failures[@]}"
	exit 1
fi
