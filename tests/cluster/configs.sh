# What a test cluster's `up` writes under $dir (sourced by cluster.sh): the
# build tree the plugins come from and the plugins copied from it, the fake
# GPU devices, and the configs: slurm.conf, plugstack.conf, loom-topo.conf,
# gres.conf and topology.conf. The settings are cluster.sh's options.

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

# plugstack.conf: spank_place and spank_ckpt, those of them installed.
write_plugstack() {
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
}

# slurm.conf: the daemons and plugins, the nodes (slurmctld on port BASE,
# node i on BASE+i), then the lines of --conf-line and --conf-extra.
write_slurm_conf() {
	local base=$1 ctl_port=$1 host gres_line plugindir_list jobcomp plugstack
	host=$(hostname -s)
	plugindir_list="$slurm_plugindir:$dir/plugins"

	gres_line=
	[ "$gpus" -gt 0 ] && gres_line="Gres=gpu:$gpus"

	jobcomp="JobCompType=jobcomp/none"
	if [ -f "$dir/plugins/jobcomp_health.so" ]; then
		jobcomp="JobCompType=jobcomp/health
JobCompLoc=$dir/state/loom-health"
	fi
	plugstack="PlugStackConfig=$dir/etc/plugstack.conf"
	# --ckpt-standby's nodes (job_submit_loom(8)).
	[ -f "$dir/plugins/job_submit_loom.so" ] && plugstack="$plugstack
JobSubmitPlugins=loom"

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
	write_nodes "$base" "$host"
	if [ ${#conf_lines[@]} -gt 0 ]; then
		printf '%s\n' "# --- from --conf-line" "${conf_lines[@]}" >>"$conf"
	fi
	if [ -n "$conf_extra" ]; then
		[ -f "$conf_extra" ] || die "--conf-extra $conf_extra: no such file"
		{ echo "# --- from $conf_extra"; cat "$conf_extra"; } >>"$conf"
	fi
}

# slurm.conf's nodes on ports from BASE, on host HOST, by GPU class in node
# order (--classes; default the first half a100, the rest h100), and their
# partition. Sets class_names, write_configs' local: the classes, for
# loom-topo.conf.
write_nodes() {
	local base=$1 host=$2 half spec=$classes first=1 cls count last
	half=$(( (nodes + 1) / 2 ))
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
}

# loom-topo.conf for select/topo: the fabric is Slurm's topology.conf; the
# GPU classes are the nodes' features (class_names). snapshot_check: every
# job_test compares the engine's incremental state with a full read of the
# node table; run.sh fails a scenario that logs a difference.
write_loom_topo_conf() {
	printf '%s\n' "# select/topo (loom-topo.conf(5))" "gpu_classes=$class_names" "placement=$placement" "will_run=$will_run" \
		"snapshot_check=$snapshot_check" >"$dir/etc/loom-topo.conf"
	if [ ${#topo_lines[@]} -gt 0 ]; then
		printf '%s\n' "${topo_lines[@]}" >>"$dir/etc/loom-topo.conf"
	fi
}

# gres.conf. No NodeName=: the lines apply to every node, dynamic ones
# (slurmd -Z) too.
write_gres_conf() {
	local last_gpu=$(( gpus - 1 ))
	: >"$dir/etc/gres.conf"
	echo "AutoDetect=off" >>"$dir/etc/gres.conf"
	if [ "$gpus" -gt 0 ]; then
		if [ "$gpus" = 1 ]; then
			echo "Name=gpu File=$dir/dev/nvidia0" >>"$dir/etc/gres.conf"
		else
			echo "Name=gpu File=$dir/dev/nvidia[0-$last_gpu]" >>"$dir/etc/gres.conf"
		fi
	fi
}

# Every config of the cluster; slurmctld and the nodes take the ports from
# BASE on.
write_configs() {
	local base=$1 class_names=
	write_plugstack
	write_slurm_conf "$base"
	write_loom_topo_conf
	write_gres_conf
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
	for so in "$builddir/plugins/jobcomp_health/.libs/jobcomp_health.so" \
		"$builddir/plugins/job_submit_loom/.libs/job_submit_loom.so"; do
		[ -f "$so" ] && cp "$so" "$dir/plugins/"
	done
	return 0
}
