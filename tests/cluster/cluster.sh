#!/bin/bash
# loom test cluster: a real Slurm (slurmctld + N slurmd) on this host, with
# loom's plugins loaded from the build tree. The Slurm release is Debian's
# packages (22.05.8, the default) or one built by scripts/slurm.sh.
#
#   cluster.sh up   [--nodes N] [--gpus-per-node G] [--dir DIR] [--select topo|topo_cons_tres|cons_tres]
#                   (topo_cons_tres: select/topo under the name Slurm 25.05+ treats as cons_tres)
#                   [--select-params P]   (SelectTypeParameters, default CR_Core)
#                   [--builddir DIR] [--conf-extra FILE] [--plugstack-args "k=v ..."] [--timeout S]
#                   [--place-args "k=v ..."]  (spank_place's plugstack.conf arguments; --plugstack-args: spank_ckpt's)
#                   [--placement topo|cons_tres]   (select/topo's placement=, see loom-topo.conf)
#                   [--will-run engine|cons_tres]  (select/topo's will_run=: who plans backfill's starts)
#                   [--conf-line "Key=Value"]...  (lines appended to slurm.conf)
#                   [--topo-line "key=value"]...  (lines appended to loom-topo.conf)
#                   [--loom all|none]  (none: no loom plugin at all, plain Slurm; implies --select cons_tres)
#                   [--snapshot-check yes|no]  (select/topo's snapshot_check=, default yes)
#                   [--cabling block|across]  (block: n1-n4 on leaf1, ...; across: node i on leaf
#                                              ((i-1) mod leaves)+1, so Slurm's node order crosses leaves)
#                   [--classes "a100:4,h100:4,b200:4"]  (GPU classes by node count, in node order; gpu_classes=)
#                   [--slurm VERSION]  (default $LOOM_SLURM or 22.05.8; scripts/slurm.sh supported lists them)
#   cluster.sh down [--dir DIR]
#   cluster.sh env  [--dir DIR]        prints the exports that point clients at it (SLURM_CONF, PATH)
#   cluster.sh logs [--dir DIR]        prints the tail of every daemon log
#
# Everything lives under DIR (default /tmp/loom-cluster): configs in etc/, state in
# state/, logs in log/, pid files in run/, fake GPU devices in dev/, the plugins in
# plugins/; etc/slurm-release names the release. Nodes are n1..nN, 4 per leaf switch, 2 leaves per pod, pods under one
# spine (topology.conf); the first half of the nodes carry feature "a100", the
# second half "h100" (two GPU generations; --classes sets others). N is 1 to 4096: slurmd start in
# batches, and `up` refuses when N slurmd will not fit in memory (a slurmd
# holds the node table: 2 MiB each at 256 nodes, 10 at 2,048) or in the file
# descriptors it may open. `up` waits until every node is idle;
# `down` stops exactly the processes this cluster started (pid files, and the job
# steps whose environment names this cluster). A second `up` cleans up first.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
# shellcheck source=tests/cluster/nap.sh
. "$top/tests/cluster/nap.sh"

nodes=16
gpus=8
dir=${LOOM_CLUSTER_DIR:-/tmp/loom-cluster}
select=topo
select_params=CR_Core
builddir=${LOOM_BUILDDIR:-}
slurm=${LOOM_SLURM:-}
conf_extra=
plugstack_args=
place_args=
placement=topo
will_run=engine
conf_lines=()
topo_lines=()
timeout=
loom=all
snapshot_check=yes
cabling=block
classes=""

die() { echo "cluster: error: $*" >&2; exit 1; }
say() { echo "cluster: $*" >&2; }

usage() {
	sed -n '2,30p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
	exit 2
}

cmd=${1:-}
[ -n "$cmd" ] || usage
shift
while [ $# -gt 0 ]; do
	case $1 in
	--nodes) nodes=$2; shift 2 ;;
	--gpus-per-node) gpus=$2; shift 2 ;;
	--dir) dir=$2; shift 2 ;;
	--select) select=$2; shift 2 ;;
	--select-params) select_params=$2; shift 2 ;;
	--builddir) builddir=$2; shift 2 ;;
	--conf-extra) conf_extra=$2; shift 2 ;;
	--plugstack-args) plugstack_args=$2; shift 2 ;;
	--place-args) place_args=$2; shift 2 ;;
	--placement) placement=$2; shift 2 ;;
	--will-run) will_run=$2; shift 2 ;;
	--conf-line) conf_lines+=("$2"); shift 2 ;;
	--topo-line) topo_lines+=("$2"); shift 2 ;;
	--timeout) timeout=$2; shift 2 ;;
	--loom) loom=$2; shift 2 ;;
	--snapshot-check) snapshot_check=$2; shift 2 ;;
	--cabling) cabling=$2; shift 2 ;;
	--classes) classes=$2; shift 2 ;;
	--slurm) slurm=$2; shift 2 ;;
	-h|--help) usage ;;
	*) die "unknown option '$1' (see: cluster.sh --help)" ;;
	esac
done
case $nodes in ''|*[!0-9]*) die "--nodes '$nodes': expected a number" ;; esac
case $gpus in ''|*[!0-9]*) die "--gpus-per-node '$gpus': expected a number" ;; esac
[ "$nodes" -ge 1 ] && [ "$nodes" -le 4096 ] || die "--nodes $nodes: expected 1 to 4096"
case $snapshot_check in yes|no) ;; *) die "--snapshot-check '$snapshot_check': expected yes or no" ;; esac
case $cabling in block|across) ;; *) die "--cabling '$cabling': expected block or across" ;; esac
if [ -n "$classes" ]; then
	sum=0
	for c in ${classes//,/ }; do
		case $c in [a-z]*:[0-9]*) ;; *) die "--classes '$classes': expected CLASS:COUNT,..." ;; esac
		sum=$((sum + ${c#*:}))
	done
	[ "$sum" = "$nodes" ] || die "--classes '$classes' names $sum nodes, --nodes is $nodes"
fi
# Waiting for the nodes: a minute, and more for a large cluster (registration
# of thousands of slurmd on a few cores takes minutes).
[ -n "$timeout" ] || timeout=$(( nodes > 240 ? nodes / 4 : 60 ))
case $timeout in ''|*[!0-9]*) die "--timeout '$timeout': expected seconds" ;; esac
[ "$gpus" -ge 0 ] && [ "$gpus" -le 16 ] || die "--gpus-per-node $gpus: expected 0 to 16"
case $select in topo|cons_tres|topo_cons_tres) ;; *) die "--select '$select': expected topo, topo_cons_tres or cons_tres" ;; esac
case $loom in all) ;; none) select=cons_tres ;; *) die "--loom '$loom': expected all or none" ;; esac
case $dir in /*) ;; *) dir="$(pwd)/$dir" ;; esac
conf="$dir/etc/slurm.conf"

# The Slurm release: an existing cluster's own for down/env/logs, else the
# one asked for (or the default). Daemons and clients come from its prefix.
if [ -z "$slurm" ] && [ "$cmd" != up ] && [ -f "$dir/etc/slurm-release" ]; then
	slurm=$(cat "$dir/etc/slurm-release")
fi
[ -n "$slurm" ] || slurm=$("$top/scripts/slurm.sh" default)
slurm_prefix=$("$top/scripts/slurm.sh" prefix "$slurm") || exit 2
slurm_plugindir=$("$top/scripts/slurm.sh" plugindir "$slurm")
slurm_sbin=$slurm_prefix/sbin
export PATH="$slurm_prefix/bin:$PATH"

# The parts of `up` and `down`, each in its own file beside this one.
# shellcheck source=tests/cluster/processes.sh
. "$here/processes.sh"
# shellcheck source=tests/cluster/daemons.sh
. "$here/daemons.sh"
# shellcheck source=tests/cluster/ports.sh
. "$here/ports.sh"
# shellcheck source=tests/cluster/configs.sh
. "$here/configs.sh"

do_up() {
	local i
	[ "$(id -u)" = 0 ] || die "the test cluster runs its daemons as root (SlurmUser=root): run as root"
	[ -x "$slurm_sbin/slurmctld" ] && [ -x "$slurm_sbin/slurmd" ] ||
		die "Slurm $slurm is not installed in $slurm_prefix (scripts/slurm.sh install $slurm)"
	local have
	have=$("$slurm_sbin/slurmctld" -V 2>/dev/null | awk '{print $2}')
	[ "$have" = "$slurm" ] || die "$slurm_sbin/slurmctld is Slurm '${have:-?}', not $slurm"
	# A previous cluster in this dir (or its remains after a crash): stop it first.
	do_down
	check_resources
	find_builddir
	ensure_munge
	rm -rf "$dir/state" "$dir/spool" "$dir/log" "$dir/run" "$dir/scratch"
	mkdir -p "$dir/etc" "$dir/state" "$dir/spool" "$dir/log" "$dir/run"
	for i in $(seq 1 "$nodes"); do mkdir -p "$dir/spool/d/n$i"; done
	make_devices
	install_plugins
	local base
	base=$(pick_ports $((nodes + 1)))
	write_configs "$base"
	echo "$slurm" >"$dir/etc/slurm-release"

	export SLURM_CONF=$conf
	LOOM_CLUSTER_DAEMON=$dir "$slurm_sbin/slurmctld" -i >"$dir/log/slurmctld.stdout" 2>&1 ||
		{ cat "$dir/log/slurmctld.stdout" >&2; print_logs >&2; die "slurmctld failed to start"; }
	start_slurmd 1 "$nodes"
	wait_idle || die "cluster did not come up (logs above, and under $dir/log)"
	say "up: Slurm $slurm, $nodes nodes x $gpus GPUs, select/$select, plugins: $(cd "$dir/plugins" && ls ./*.so 2>/dev/null | tr '\n' ' ' | sed 's|\./||g')"
	print_env
}

print_env() {
	echo "export SLURM_CONF=$conf"
	[ "$slurm_prefix" = /usr ] || echo "export PATH=$slurm_prefix/bin:\$PATH"
}

case $cmd in
up) do_up ;;
down) do_down; say "down: $dir" ;;
env) [ -f "$conf" ] || die "no cluster configured under $dir"; print_env ;;
logs) print_logs ;;
-h|--help|help) usage ;;
*) die "unknown command '$cmd' (up, down, env, logs)" ;;
esac
