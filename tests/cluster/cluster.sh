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

# ----------------------------------------------------------------- processes

# True if pid is alive and not a zombie.
# Read by the shell: teardown asks this of every daemon ten times a second
# (tests/cluster/nap.sh says why no process is started for it).
alive() {
	local line st
	{ read -r line <"/proc/$1/stat"; } 2>/dev/null || return 1
	st=${line##*) }
	st=${st%% *}
	[ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ]
}

# Pids whose environment carries LOOM_CLUSTER_DAEMON=$dir: the daemons this
# cluster started and the slurmstepd processes they forked (never the shells
# that run tests: only the daemons are started with that variable).
cluster_pids() {
	local p
	local vars v
	for p in /proc/[0-9]*; do
		p=${p#/proc/}
		[ "$p" = $$ ] && continue
		{ mapfile -d '' -t vars <"/proc/$p/environ"; } 2>/dev/null || continue
		for v in "${vars[@]}"; do
			if [ "$v" = "LOOM_CLUSTER_DAEMON=$dir" ]; then
				alive "$p" && echo "$p"
				break
			fi
		done
	done
}

# slurmstepd processes of this cluster (their working directory is under $dir:
# slurmd's, inherited; slurmstepd clears its environment) and every process
# below them (the job's tasks).
step_pids() {
	local p cwd roots=() tree
	for p in $(pgrep -x slurmstepd 2>/dev/null); do
		cwd=$(readlink "/proc/$p/cwd" 2>/dev/null || true)
		case $cwd in "$dir"/*) roots+=("$p") ;; esac
	done
	[ ${#roots[@]} -gt 0 ] || return 0
	tree=$(ps -eo pid=,ppid=)
	local queue=("${roots[@]}") q c
	while [ ${#queue[@]} -gt 0 ]; do
		q=${queue[0]}
		queue=("${queue[@]:1}")
		echo "$q"
		for c in $(echo "$tree" | awk -v p="$q" '$2==p{print $1}'); do queue+=("$c"); done
	done
}

# Stop the pids given, TERM then KILL, waiting up to 10 s.
stop_pids() {
	local p i left
	[ $# -gt 0 ] || return 0
	kill -TERM "$@" 2>/dev/null || true
	for i in $(seq 1 100); do
		left=0
		for p in "$@"; do alive "$p" && left=1; done
		[ $left = 0 ] && return 0
		nap 0.1
	done
	kill -KILL "$@" 2>/dev/null || true
}

pidfile_pids() {
	local f p args
	for f in "$dir"/run/*.pid; do
		[ -f "$f" ] || continue
		{ read -r p <"$f"; } 2>/dev/null || p=
		case $p in ''|*[!0-9]*) continue ;; esac
		# Only our daemons: the pid must still run slurmctld or slurmd.
		alive "$p" || continue
		{ mapfile -d '' -t args <"/proc/$p/cmdline"; } 2>/dev/null || continue
		case ${args[0]:-} in slurmctld | slurmd | */slurmctld | */slurmd) echo "$p" ;; esac
	done
}

do_down() {
	local pids steps
	if [ -f "$conf" ] && [ -n "$(pidfile_pids)" ]; then
		# Cancel jobs first so that their steps end through Slurm.
		SLURM_CONF=$conf timeout 5 scancel --quiet --full --state=RUNNING,PENDING,SUSPENDED \
			--user="$(id -un)" >/dev/null 2>&1 || true
		SLURM_CONF=$conf timeout 5 scancel --quiet --full >/dev/null 2>&1 || true
	fi
	pids=$(pidfile_pids)
	# shellcheck disable=SC2086
	stop_pids $pids
	steps="$(cluster_pids) $(step_pids)"
	# shellcheck disable=SC2086
	[ -z "${steps// /}" ] || stop_pids $steps
	rm -f "$dir"/run/*.pid
}

# ----------------------------------------------------------------- munge

# munged's threads: its default two refuse credentials ("Resource temporarily
# unavailable") when hundreds of slurmd and a burst of sbatch ask at once.
munge_threads=$(( nodes > 256 ? 16 : 2 ))

ensure_munge() {
	local pid
	if munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
		pid=$(pgrep -xo munged || true)
		# A munged with too few threads for this many nodes is
		# started again with more (num-threads + its own few).
		if [ -n "$pid" ] && [ "$(awk '/^Threads:/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)" -lt "$munge_threads" ]; then
			say "restarting munged with $munge_threads threads for $nodes nodes"
			kill "$pid" 2>/dev/null || true
			local i
			for i in $(seq 1 50); do alive "$pid" || break; nap 0.1; done
		else
			return 0
		fi
	fi
	command -v munged >/dev/null || [ -x /usr/sbin/munged ] || die "munge is not installed (apt-get install munge)"
	[ -f /etc/munge/munge.key ] || die "/etc/munge/munge.key is missing (reinstall munge or run mungekey)"
	say "starting munged"
	mkdir -p /run/munge /var/log/munge /var/lib/munge
	chown munge:munge /run/munge /var/log/munge /var/lib/munge 2>/dev/null || true
	runuser -u munge -- /usr/sbin/munged --force --num-threads="$munge_threads" 2>/dev/null ||
		runuser -u munge -- /usr/sbin/munged --num-threads="$munge_threads"
	local i
	for i in $(seq 1 50); do
		munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && return 0
		nap 0.1
	done
	die "munged started but 'munge -n | unmunge' still fails"
}

# ----------------------------------------------------------------- ports

# shellcheck source=tests/cluster/ports.sh
. "$here/ports.sh"

# ----------------------------------------------------------------- config

find_builddir() {
	if [ -n "$builddir" ]; then
		case $builddir in /*) ;; *) builddir="$(pwd)/$builddir" ;; esac
		[ -d "$builddir" ] || die "--builddir $builddir: no such directory"
		return
	fi
	local b
	local cands=("$("$top/scripts/slurm.sh" builddir "$slurm")")
	[ "$slurm" != "$("$top/scripts/slurm.sh" default)" ] || cands+=("$top")
	for b in "${cands[@]}"; do
		if [ -f "$b/plugins/select_topo/.libs/select_topo.so" ]; then builddir=$b; return; fi
	done
	builddir=
}

# hostlist n[A-B]
range() { if [ "$1" = "$2" ]; then echo "n$1"; else echo "n[$1-$2]"; fi; }

write_topology() {
	local leaves pods l p first last out="$dir/etc/topology.conf"
	leaves=$(( (nodes + 3) / 4 ))
	pods=$(( (leaves + 1) / 2 ))
	{
		echo "# loom test cluster: $nodes nodes, $leaves leaf switches of 4 ($cabling cabling), $pods pods of 2 leaves, one spine"
		for l in $(seq 1 "$leaves"); do
			if [ "$cabling" = across ]; then
				echo "SwitchName=leaf$l Nodes=$(seq -s, -f "n%g" "$l" "$leaves" "$nodes") LinkSpeed=400"
				continue
			fi
			first=$(( (l - 1) * 4 + 1 )); last=$(( l * 4 ))
			[ $last -le "$nodes" ] || last=$nodes
			echo "SwitchName=leaf$l Nodes=$(range "$first" "$last") LinkSpeed=400"
		done
		for p in $(seq 1 "$pods"); do
			first=$(( (p - 1) * 2 + 1 )); last=$(( p * 2 ))
			[ $last -le "$leaves" ] || last=$leaves
			if [ $first = $last ]; then
				echo "SwitchName=pod$p Switches=leaf$first LinkSpeed=800"
			else
				echo "SwitchName=pod$p Switches=leaf[$first-$last] LinkSpeed=800"
			fi
		done
		if [ "$pods" = 1 ]; then
			echo "SwitchName=spine Switches=pod1 LinkSpeed=1600"
		else
			echo "SwitchName=spine Switches=pod[1-$pods] LinkSpeed=1600"
		fi
	} >"$out"
}

write_configs() {
	local base=$1 ctl_port=$1 host half last_gpu gres_line plugindir_list jobcomp plugstack
	host=$(hostname -s)
	half=$(( (nodes + 1) / 2 ))
	last_gpu=$(( gpus - 1 ))
	plugindir_list="$slurm_plugindir:$dir/plugins"

	gres_line=
	[ "$gpus" -gt 0 ] && gres_line="Gres=gpu:$gpus"

	jobcomp="JobCompType=jobcomp/none"
	if [ -f "$dir/plugins/jobcomp_health.so" ]; then
		jobcomp="JobCompType=jobcomp/health
JobCompLoc=$dir/state/loom-health"
	fi
	plugstack="PlugStackConfig=$dir/etc/plugstack.conf"
	: >"$dir/etc/plugstack.conf"
	if [ -f "$dir/plugins/spank_place.so" ]; then
		echo "required $dir/plugins/spank_place.so $place_args" >>"$dir/etc/plugstack.conf"
	fi
	if [ -f "$dir/plugins/spank_ckpt.so" ]; then
		# The checkpoint helper from the build tree, not the configured libexec.
		local helper=
		[ -x "$dir/plugins/loom-ckpt-helper" ] && helper="helper=$dir/plugins/loom-ckpt-helper"
		echo "required $dir/plugins/spank_ckpt.so $helper $plugstack_args" >>"$dir/etc/plugstack.conf"
	fi

	cat >"$conf" <<EOF
# loom test cluster (tests/cluster/cluster.sh): $nodes nodes x $gpus GPUs under $dir
ClusterName=loomtest
SlurmctldHost=$host
SlurmctldPort=$ctl_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=cred_expire=5
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/d/%n
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd-%n.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
PluginDir=$plugindir_list
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
$jobcomp
SelectType=select/$select
SelectTypeParameters=$select_params
TopologyPlugin=topology/tree
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=2,bf_interval=1
SlurmdParameters=config_overrides
GresTypes=gpu
MailProg=/bin/true
ReturnToService=2
MinJobAge=600
KillWait=5
InactiveLimit=0
MpiDefault=none
$plugstack
NodeName=DEFAULT CPUs=16 Sockets=2 CoresPerSocket=8 ThreadsPerCore=1 RealMemory=8000 $gres_line
EOF
	# GPU classes by node count, in node order (--classes; default the first
	# half a100, the rest h100).
	local spec=$classes first=1 cls count last class_names=""
	[ -n "$spec" ] || spec="a100:$half,h100:$((nodes - half))"
	for cls in ${spec//,/ }; do
		count=${cls#*:}
		cls=${cls%%:*}
		[ "$count" -gt 0 ] || continue
		last=$((first + count - 1))
		echo "NodeName=$(range $first $last) NodeHostname=$host NodeAddr=127.0.0.1 Port=[$((base + first))-$((base + last))] Feature=$cls,gpu_$cls" >>"$conf"
		class_names="$class_names${class_names:+,}$cls"
		first=$((last + 1))
	done
	echo "PartitionName=gpu Nodes=$(range 1 "$nodes") Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO" >>"$conf"
	if [ ${#conf_lines[@]} -gt 0 ]; then
		printf '%s\n' "# --- from --conf-line" "${conf_lines[@]}" >>"$conf"
	fi
	if [ -n "$conf_extra" ]; then
		[ -f "$conf_extra" ] || die "--conf-extra $conf_extra: no such file"
		{ echo "# --- from $conf_extra"; cat "$conf_extra"; } >>"$conf"
	fi

	# select/topo: the fabric is Slurm's topology.conf; features a100/h100 are GPU generations.
	# snapshot_check: every job_test compares the engine's incremental state
	# with a full read of the node table; run.sh fails a scenario that logs a
	# difference.
	printf '%s\n' "# select/topo (loom-topo.conf(5))" "gpu_classes=$class_names" "placement=$placement" "will_run=$will_run" \
		"snapshot_check=$snapshot_check" >"$dir/etc/loom-topo.conf"
	if [ ${#topo_lines[@]} -gt 0 ]; then
		printf '%s\n' "${topo_lines[@]}" >>"$dir/etc/loom-topo.conf"
	fi

	# No NodeName=: the lines apply to every node, dynamic ones (slurmd -Z) too.
	: >"$dir/etc/gres.conf"
	echo "AutoDetect=off" >>"$dir/etc/gres.conf"
	if [ "$gpus" -gt 0 ]; then
		if [ "$gpus" = 1 ]; then
			echo "Name=gpu File=$dir/dev/nvidia0" >>"$dir/etc/gres.conf"
		else
			echo "Name=gpu File=$dir/dev/nvidia[0-$last_gpu]" >>"$dir/etc/gres.conf"
		fi
	fi
	write_topology
}

make_devices() {
	local i
	mkdir -p "$dir/dev"
	for i in $(seq 0 $((gpus - 1))); do
		[ -c "$dir/dev/nvidia$i" ] && continue
		rm -f "$dir/dev/nvidia$i"
		mknod "$dir/dev/nvidia$i" c 195 "$i" 2>/dev/null || ln -s /dev/null "$dir/dev/nvidia$i"
	done
}

install_plugins() {
	mkdir -p "$dir/plugins"
	rm -f "$dir"/plugins/*.so
	[ "$loom" = all ] || return 0
	[ -n "$builddir" ] || { say "warning: no build tree found: no loom plugin is loaded"; return 0; }
	local so
	case $select in
	topo|topo_cons_tres)
		so="$builddir/plugins/select_topo/.libs/select_topo.so"
		[ -f "$so" ] || die "--select $select but $so is not built (configure --with-slurm-src, make)"
		cp "$so" "$dir/plugins/"
		if [ "$select" = topo_cons_tres ]; then
			[ -e "$builddir/plugins/select_topo/.libs/select_topo_cons_tres.so" ] ||
				die "--select topo_cons_tres needs Slurm 25.05 or newer (this build is for $slurm)"
			ln -sf select_topo.so "$dir/plugins/select_topo_cons_tres.so"
		fi
		;;
	esac
	# loom_fabric.so: spank_place opens it beside itself in slurmstepd.
	for so in "$builddir/plugins/spank_ckpt/.libs/spank_ckpt.so" "$builddir/plugins/spank_place/.libs/spank_place.so" \
		"$builddir/plugins/spank_place/.libs/loom_fabric.so"; do
		[ -f "$so" ] && cp "$so" "$dir/plugins/"
	done
	# spank_ckpt executes its helper for the work in the user's directory.
	if [ -f "$builddir/plugins/spank_ckpt/.libs/spank_ckpt.so" ]; then
		[ -x "$builddir/plugins/spank_ckpt/loom-ckpt-helper" ] ||
			die "$builddir/plugins/spank_ckpt/loom-ckpt-helper is not built (make)"
		cp "$builddir/plugins/spank_ckpt/loom-ckpt-helper" "$dir/plugins/"
	fi
	so="$builddir/plugins/jobcomp_health/.libs/jobcomp_health.so"
	[ -f "$so" ] && cp "$so" "$dir/plugins/"
	return 0
}

# The tail of slurmctld's log and of the first few slurmd logs (all stay in $dir/log).
print_logs() {
	local f n=0
	if [ -f "$dir/log/slurmctld.log" ]; then
		echo "===== $dir/log/slurmctld.log (last 30 lines)"
		tail -n 30 "$dir/log/slurmctld.log"
	fi
	[ -s "$dir/log/slurmctld.stdout" ] && { echo "===== slurmctld stdout/stderr"; tail -n 10 "$dir/log/slurmctld.stdout"; }
	for f in "$dir"/log/slurmd-*.log; do
		[ -f "$f" ] || continue
		n=$((n + 1))
		[ $n -le 3 ] || { echo "===== (more slurmd logs in $dir/log)"; break; }
		echo "===== $f (last 6 lines)"
		tail -n 6 "$f"
	done
}

wait_idle() {
	local deadline states
	deadline=$(( EPOCHSECONDS + timeout ))
	local out n st idle
	local -A seen count
	while :; do
		# One sinfo a poll, counted by the shell: each node once (a node in
		# several partitions is listed once per partition), by state.
		out=$(SLURM_CONF=$conf sinfo -h -N -o '%N %T' 2>/dev/null) || out=
		seen=() count=() idle=0
		while read -r n st; do
			{ [ -n "$n" ] && [ -z "${seen[$n]:-}" ]; } || continue
			seen[$n]=1
			count[$st]=$(( ${count[$st]:-0} + 1 ))
		done <<<"$out"
		idle=${count[idle]:-0}
		states=
		for st in "${!count[@]}"; do states+=" ${count[$st]} $st"; done
		[ "$idle" != "$nodes" ] || return 0
		if [ "$EPOCHSECONDS" -ge "$deadline" ]; then
			echo "cluster: error: nodes not idle after ${timeout}s (states:${states:- none reported})" >&2
			print_logs >&2
			return 1
		fi
		nap 0.3
	done
}

# What N slurmd need, checked before any starts: memory and descriptors
# (slurmctld may hold a connection to every slurmd at once). A slurmd's
# proportional set size grows with the node table it holds by about 4.2 KiB
# per node of the cluster, over a base that depends on the release: measured
# on 22.05.8, 2.2 MiB each at 256 nodes, 5.6 at 1,250 and 9.5 at 2,048 (base
# 1.5 MiB); on 26.05.3, 4.6 MiB at 256 and 8.9 at 1,250 (base 3.5 MiB, taken
# for every release from 24.11 on). And slurmctld's 512 MiB.
check_resources() {
	local avail_kib need_kib fds base_kib=3584 each_kib
	case $slurm in 22.05.*) base_kib=1536 ;; esac
	each_kib=$(( base_kib + nodes * 42 / 10 ))
	avail_kib=$(awk '/^MemAvailable:/ {print $2}' /proc/meminfo)
	need_kib=$(( nodes * each_kib + 512 * 1024 ))
	if [ -n "$avail_kib" ] && [ "$avail_kib" -lt "$need_kib" ]; then
		die "--nodes $nodes needs about $(( need_kib / 1024 )) MiB ($nodes slurmd of Slurm $slurm of about $(( each_kib / 1024 )) MiB, and slurmctld); $(( avail_kib / 1024 )) MiB are available"
	fi
	fds=$(( nodes * 2 + 1024 ))
	if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt "$fds" ]; then
		ulimit -n "$fds" 2>/dev/null ||
			die "--nodes $nodes: slurmctld needs $fds file descriptors; the limit is $(ulimit -n) (hard $(ulimit -Hn))"
	fi
}

# Start slurmd for n$1..n$2, in batches of 32 started at once: each waits
# for its own daemonizing, and a failure names its node.
start_slurmd() {
	local first=$1 last=$2 i b pids=() names=()
	for i in $(seq "$first" "$last"); do
		LOOM_CLUSTER_DAEMON=$dir "$slurm_sbin/slurmd" -N "n$i" >"$dir/log/slurmd-n$i.stdout" 2>&1 &
		pids+=($!); names+=("n$i")
		if [ ${#pids[@]} -ge 32 ] || [ "$i" = "$last" ]; then
			for b in "${!pids[@]}"; do
				wait "${pids[$b]}" ||
					{ cat "$dir/log/slurmd-${names[$b]}.stdout" >&2; print_logs >&2; die "slurmd -N ${names[$b]} failed to start"; }
			done
			pids=(); names=()
		fi
	done
}

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
