# The Slurm daemons of the consumers tier (sourced by run.sh): their ports,
# the slurm.conf they read, the first failure in their logs, and stopping
# slurmctld. $dir is run.sh's.

# Two free ports for the daemons under directory $1 (pick_ports seeds on $dir).
ports_for() { local dir=$1; pick_ports 2; }
# The first fatal line of the logs given, else the first error line.
first_failure() { grep -h -m1 -i 'fatal' "$@" 2>/dev/null | head -1 | grep . || grep -h -m1 -i 'error' "$@" 2>/dev/null | head -1; }

# slurm.conf for NAME's nodes (one per line in NODES), no slurmd needed.
write_conf() {
	local d=$1 nodes=$2 port=$3 extra=${4:-} host n
	host=$(hostname -s)
	mkdir -p "$d/etc" "$d/state" "$d/log" "$d/run" "$d/spool"
	{
		echo "ClusterName=consumers"
		echo "SlurmctldHost=$host"
		echo "SlurmctldPort=$port"
		echo "SlurmUser=root"
		echo "AuthType=auth/munge"
		echo "StateSaveLocation=$d/state"
		echo "SlurmdSpoolDir=$d/spool/%n"
		echo "SlurmctldPidFile=$d/run/slurmctld.pid"
		echo "SlurmctldLogFile=$d/log/slurmctld.log"
		echo "SlurmdLogFile=$d/log/slurmd-%n.log"
		echo "SlurmdPidFile=$d/run/slurmd-%n.pid"
		echo "ProctrackType=proctrack/linuxproc"
		echo "TaskPlugin=task/none"
		echo "JobAcctGatherType=jobacct_gather/none"
		echo "AccountingStorageType=accounting_storage/none"
		echo "SelectType=select/cons_tres"
		echo "TopologyPlugin=topology/tree"
		echo "SlurmdParameters=config_overrides"
		echo "GresTypes=gpu"
		echo "MailProg=/bin/true"
		[ -z "$extra" ] || echo "$extra"
		while read -r n; do
			[ -n "$n" ] && echo "NodeName=$n NodeHostname=$host NodeAddr=127.0.0.1 Port=$((port + 1)) CPUs=1 RealMemory=100"
		done <"$nodes"
		echo "PartitionName=all Nodes=ALL Default=YES State=UP"
	} >"$d/etc/slurm.conf"
}

stop_ctld() {
	local pid
	pid=$(cat "$1/run/slurmctld.pid" 2>/dev/null) || return 0
	kill "$pid" 2>/dev/null
	for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || return 0; nap 0.1; done
	kill -9 "$pid" 2>/dev/null || true
}
# Stopped (the watchdog of scripts/test.sh, ^C): no slurmctld of a check outlives the tier.
stop_all() {
	local p
	for p in "$dir"/*/run/slurmctld.pid; do [ -f "$p" ] && stop_ctld "$(dirname "$(dirname "$p")")"; done
}
