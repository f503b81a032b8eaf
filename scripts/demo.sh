#!/bin/bash
# The loom demo: build loom, start a real Slurm test cluster on this host with
# loom's plugins loaded, run GPU gangs and show where they landed, then show a
# checkpointed job surviving a fault. Installs what is missing. Run as root.
#
#   scripts/demo.sh [--dir DIR] [--slurm VERSION]
#
# VERSION is one of `scripts/slurm.sh supported` (default 22.05.8, Debian's);
# another release is built from shared/vendor the first time (minutes).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
if [ "$(id -u)" != 0 ]; then
	command -v sudo >/dev/null && exec sudo -E "$0" "$@"
	echo "demo: run as root: the test cluster runs Slurm daemons as root" >&2
	exit 1
fi
dir=/tmp/loom-cluster
slurm=$("$top/scripts/slurm.sh" default)
while [ $# -gt 0 ]; do
	case $1 in
	--dir) dir=$2; shift 2 ;;
	--slurm) slurm=$2; shift 2 ;;
	*) echo "demo: unknown option '$1' (usage: demo.sh [--dir DIR] [--slurm VERSION])" >&2; exit 2 ;;
	esac
done
"$top/scripts/slurm.sh" prefix "$slurm" >/dev/null || exit 2
export LOOM_BUILDDIR=${LOOM_BUILDDIR:-$("$top/scripts/slurm.sh" builddir "$slurm")}
export LOOM_CLUSTER_DIR=$dir LOOM_SLURM=$slurm
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "Building loom (installs what is missing; first run takes a few minutes)"
"$top/scripts/build.sh" --slurm "$slurm"
"$LOOM_BUILDDIR/tools/loom" --version

step "Starting a Slurm $slurm test cluster: 16 nodes x 8 GPUs, 4 leaf switches, 2 pods"
"$top/tests/cluster/cluster.sh" up --slurm "$slurm" --dir "$dir" --nodes 16 --gpus-per-node 8 --select topo >/dev/null
export SLURM_CONF=$dir/etc/slurm.conf
slurm_bin=$("$top/scripts/slurm.sh" prefix "$slurm")/bin
export PATH="$LOOM_BUILDDIR/tools:$slurm_bin:$PATH"
grep -m1 "select/topo loaded" "$dir/log/slurmctld.log" | sed 's/^/slurmctld.log: /'
sinfo -o '%10P %5D %8T %15f %N'
echo; echo "topology.conf:"; sed 's/^/  /' "$dir/etc/topology.conf"

step "A 4-node x 8-GPU gang: sbatch -N4 --gres=gpu:8"
out=$dir/scratch; mkdir -p "$out"; chmod 1777 "$out"
j=$(sbatch --parsable -N4 --gres=gpu:8 -o "$out/demo-gang.out" \
	--wrap 'srun bash -c "echo \$SLURMD_NODENAME rank=\$SLURM_PROCID GPUs=\$CUDA_VISIBLE_DEVICES switch=\$SLURM_TOPOLOGY_ADDR"')
for _ in $(seq 1 60); do
	st=$(scontrol show job "$j" | sed -n 's/.*JobState=\([A-Z]*\).*/\1/p')
	[ "$st" = COMPLETED ] || [ "$st" = FAILED ] && break
	sleep 0.5
done
echo "job $j: $st on $(scontrol show job "$j" | sed -n 's/^ *NodeList=//p')"
sort -t= -k2 -n "$out/demo-gang.out" | sed 's/^/  /'

# The demo scenarios, each on a fresh cluster of its own shape (tests/cluster/scenarios/*_demo_*).
for s in "$top"/tests/cluster/scenarios/*_demo_*.sh; do
	[ -f "$s" ] || continue
	step "$(sed -n 's/^# demo: //p' "$s" | head -1)"
	"$top/tests/cluster/run.sh" --slurm "$slurm" --dir "$dir" --builddir "$LOOM_BUILDDIR" "$s" | grep -vE '^(=== |[0-9]+ passed)'
done

step "Leaving the 16-node cluster up for you"
"$top/tests/cluster/cluster.sh" up --slurm "$slurm" --dir "$dir" --nodes 16 --gpus-per-node 8 --select topo >/dev/null
sinfo -o '%10P %5D %8T %15f %N'

step "Done. The cluster is still running:"
echo "  eval \"\$($top/tests/cluster/cluster.sh env --dir $dir)\"   # use sinfo, sbatch, squeue on it"
echo "  $top/tests/cluster/cluster.sh down --dir $dir              # stop it"
