# The processes of a test cluster (sourced by cluster.sh): whether a pid
# lives, which pids are this cluster's (daemons by pid file and environment,
# job steps by working directory and descent), and `down`, which stops
# exactly those. $dir and $conf are cluster.sh's.

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
	local p left
	[ $# -gt 0 ] || return 0
	kill -TERM "$@" 2>/dev/null || true
	for _ in $(seq 1 100); do
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
