# cluster: --nodes 4 --gpus-per-node 8 --select topo
# The harness itself: after a crash (slurmctld and a slurmd killed -9, a job
# step left behind), a second `up` cleans up first and comes back with exactly
# one slurmctld and one slurmd per node; `down` leaves none of its processes.
daemons() { # count processes started by this cluster
	local n=0 p
	for p in /proc/[0-9]*; do
		{ tr '\0' '\n' <"$p/environ"; } 2>/dev/null | grep -xF "LOOM_CLUSTER_DAEMON=$LOOM_CLUSTER_DIR" >/dev/null && n=$((n + 1))
	done
	echo $n
}
# The task's own duration marks it as this run's (clusters of other releases
# may run this scenario at the same time).
task="sleep 601.$$"
j=$(submit -N1 -o /dev/null --wrap "$task")
wait_state "$j" RUNNING 30
before=$(daemons)
kill -9 "$(cat "$LOOM_CLUSTER_DIR/run/slurmctld.pid")" "$(cat "$LOOM_CLUSTER_DIR/run/slurmd-n2.pid")"
"$LOOM_SRCDIR/tests/cluster/cluster.sh" up --dir "$LOOM_CLUSTER_DIR" --nodes 4 --builddir "$LOOM_BUILDDIR" >/dev/null ||
	fail "second up after a crash failed"
[ "$(pgrep -fc "slurmctld -i" || true)" -ge 1 ] || fail "no slurmctld after the second up"
ctl=0
for p in $(pgrep -x slurmctld); do
	{ tr '\0' '\n' <"/proc/$p/environ"; } 2>/dev/null | grep -xF "LOOM_CLUSTER_DAEMON=$LOOM_CLUSTER_DIR" >/dev/null && ctl=$((ctl + 1))
done
[ "$ctl" = 1 ] || fail "$ctl slurmctld processes of this cluster after the second up, expected 1"
sinfo -h -t idle -o '%D' | grep -x 4 >/dev/null || fail "not 4 idle nodes after the second up: $(sinfo -h -o '%D %T')"
note "processes before crash: $before; after a second up: $(daemons), 4 nodes idle"
"$LOOM_SRCDIR/tests/cluster/cluster.sh" down --dir "$LOOM_CLUSTER_DIR" >/dev/null
nap 0.5
[ "$(daemons)" = 0 ] || fail "$(daemons) processes of this cluster left after down"
for p in $(pgrep -x slurmstepd); do
	case $(readlink "/proc/$p/cwd" 2>/dev/null) in "$LOOM_CLUSTER_DIR"/*) fail "slurmstepd $p of this cluster left after down" ;; esac
done
pgrep -xf "$task" >/dev/null && fail "the job's task survived down"
note "after down: no daemon, step or task of this cluster left"
