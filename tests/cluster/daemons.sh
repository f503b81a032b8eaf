# Starting a test cluster's daemons and waiting for them (sourced by
# cluster.sh): munged, the resources N slurmd need, slurmd in batches, the
# wait until every node is idle, and the daemon logs printed when one fails.
# $dir, $conf, $nodes, $slurm, $slurm_sbin and $timeout are cluster.sh's.

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
