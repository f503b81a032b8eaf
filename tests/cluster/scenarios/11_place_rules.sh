# cluster: --nodes 16 --gpus-per-node 8 --select topo --conf-line DebugFlags=SelectType
# select/topo's rules on the real slurmctld: GPU class, suspect nodes, strict
# locality that waits instead of placing in part, and a broken fabric file at
# reconfigure that keeps the last good one. (DebugFlags=SelectType: select/topo
# logs each job it cannot place now, the decision a waiting job is checked by.)
log=$LOOM_CLUSTER_DIR/log/slurmctld.log
leaf_of() { local n=${1#n}; echo "leaf$(( (n - 1) / 4 + 1 ))"; }

# A class request lands on that class (n9-n16 carry h100).
j=$(submit -N2 --gres=gpu:8 --constraint=h100 -o /dev/null --wrap 'sleep 600')
wait_state "$j" RUNNING 30
for h in $(expand_hosts "$(job_field "$j" NodeList)"); do
	[ "${h#n}" -ge 9 ] || fail "h100 job $j got $h (an a100 node)"
done
note "--constraint=h100: $(job_field "$j" NodeList)"
scancel "$j"; wait_state "$j" "CANCELLED|COMPLETED" 30

# A suspect node is avoided while others fit.
scontrol update nodename=n1 extra=loom:suspect:test || fail "scontrol update extra= refused"
j=$(submit -N4 --gres=gpu:8 -o /dev/null --wrap 'sleep 600')
wait_state "$j" RUNNING 30
nodes=$(expand_hosts "$(job_field "$j" NodeList)")
echo "$nodes" | grep -x n1 >/dev/null && fail "job $j was placed on suspect n1: $(job_field "$j" NodeList)"
note "n1 suspect: 4-node gang went to $(job_field "$j" NodeList)"
scancel "$j"; wait_state "$j" "CANCELLED|COMPLETED" 30
scontrol update nodename=n1 extra= >/dev/null 2>&1 || scontrol update nodename=n1 extra=none

# Strict locality: one busy node in every leaf, a 4-node leaf:strict gang waits
# (never placed across leaves), and starts in the leaf that frees up.
blockers=()
for n in n1 n5 n9 n13; do
	b=$(submit -N1 -w "$n" --gres=gpu:1 -o /dev/null --wrap 'sleep 600')
	wait_state "$b" RUNNING 30
	blockers+=("$b")
done
g=$(submit -N4 --gres=gpu:8 --locality=leaf:strict -o /dev/null --wrap 'sleep 600')
# select/topo's decision, in two scheduling passes: it cannot place the gang now.
wait_log -F "select/topo: JobId=$g: cannot fit now" "$log" 60 2
[ "$(job_state "$g")" = PENDING ] || fail "leaf:strict gang $g is $(job_state "$g") on $(job_field "$g" NodeList) with no whole leaf free"
note "leaf:strict 4-node gang waits while every leaf has a busy node ($(job_field "$g" Reason); $(grep -F "select/topo: JobId=$g: cannot fit now" "$log" | tail -1 | sed 's/.*): //' | cut -c1-100))"
scancel "${blockers[1]}" # frees n5: leaf2 is whole again
wait_state "$g" RUNNING 40
leaves=$(for h in $(expand_hosts "$(job_field "$g" NodeList)"); do leaf_of "$h"; done | sort -u)
[ "$leaves" = leaf2 ] || fail "leaf:strict gang $g got $(job_field "$g" NodeList), expected leaf2"
note "after n5 freed: $(job_field "$g" NodeList) (leaf2)"
scancel "$g" "${blockers[@]}"

# A broken fabric file at reconfigure: the last good fabric stays, jobs still run.
# 22.05 reconfigures in place: select/topo keeps its last good fabric. From
# 23.11 on, slurmctld reconfigures by starting a new controller, which stops
# on the bad file with a fatal error naming it; the running one then goes on,
# with its fabric, and scontrol reconfigure reports the failure.
conf_dir=$(dirname "$SLURM_CONF")
cp "$conf_dir/loom-topo.conf" "$conf_dir/loom-topo.conf.good"
echo "cluster_file=$conf_dir/no-such-cluster.json" >>"$conf_dir/loom-topo.conf"
if slurm_at_least 23.11; then
	if scontrol reconfigure 2>/dev/null; then fail "scontrol reconfigure accepted a missing fabric file"; fi
	wait_log -F "fatal: select/topo: cannot load the fabric: $conf_dir/no-such-cluster.json" "$log" 30
	wait_log -F "reconfigure failed" "$log" 30
	note "slurmctld.log: $(grep -m1 'cannot load the fabric' "$log" | cut -c26-170)"
	note "slurmctld.log: $(grep -m1 'reconfigure failed' "$log" | cut -c26-170)"
else
	scontrol reconfigure || fail "scontrol reconfigure failed"
	wait_log -F "keeping the last good one" "$log" 30
	note "slurmctld.log: $(grep -m1 'keeping the last good one' "$log" | cut -c26-170)"
fi
j=$(submit -N4 --gres=gpu:8 -o /dev/null --wrap 'true')
wait_state "$j" COMPLETED 40
leaves=$(for h in $(expand_hosts "$(job_field "$j" NodeList)"); do leaf_of "$h"; done | sort -u | wc -l)
[ "$leaves" = 1 ] || fail "after a bad reconfigure job $j spans $leaves leaves"
note "after the bad reconfigure a 4-node gang still ran in one leaf: $(job_field "$j" NodeList)"
mv "$conf_dir/loom-topo.conf.good" "$conf_dir/loom-topo.conf"
