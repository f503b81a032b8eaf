# cluster: --nodes 4 --gpus-per-node 8 --select topo --select-params CR_Core,CR_LLN
# SelectTypeParameters=CR_LLN (least loaded nodes, cluster-wide) keeps its
# meaning: select/topo steps aside for every job and says so, and a 4-GPU job
# beside a half-busy n1 gets the node plain cons_tres gives it on the same
# cluster with the same parameters (an idle node on 22.05 to 25.11; plain
# cons_tres on 26.05 with topology/tree packs it on n1 too). The engine alone
# would pack it on n1.
log=$LOOM_CLUSTER_DIR/log/slurmctld.log
lln_job() { # prints the node of a 4-GPU job submitted beside a job on n1
	local b j
	b=$(submit -w n1 --gres=gpu:4 -n 8 -o /dev/null --wrap 'sleep 60')
	wait_state "$b" RUNNING 30
	j=$(submit -N1 --gres=gpu:4 -n 1 -o /dev/null --wrap true)
	wait_state "$j" COMPLETED 30
	echo "$j $(job_field "$j" NodeList)"
	scancel "$b"
}
read -r j topo_node < <(lln_job)
grep -q "JobId=$j placed by cons_tres on .*(SelectTypeParameters LLN asks for Slurm's own choice" "$log" ||
	fail "select/topo's log does not say it stepped aside for CR_LLN: $(grep "JobId=$j" "$log" | tail -1)"

base_dir="$LOOM_CLUSTER_DIR-cons_tres"
trap '"$LOOM_SRCDIR/tests/cluster/cluster.sh" down --dir "$base_dir" >/dev/null 2>&1' EXIT
base_up=$("$LOOM_SRCDIR/tests/cluster/cluster.sh" up --dir "$base_dir" --nodes 4 --gpus-per-node 8 \
	--select cons_tres --select-params CR_Core,CR_LLN --builddir "$LOOM_BUILDDIR" 2>&1) ||
	fail "the cons_tres comparison cluster did not start: $(echo "$base_up" | grep -m3 -iE 'error|fail' | tr '\n' ' ')"
base_conf=$(echo "$base_up" | sed -n 's/^export SLURM_CONF=//p')
read -r _ plain_node < <(SLURM_CONF=$base_conf lln_job)
[ "$topo_node" = "$plain_node" ] ||
	fail "with CR_LLN select/topo put job $j on $topo_node, plain cons_tres on $plain_node"
note "CR_LLN: job $j on $topo_node under select/topo (stepped aside), $plain_node under plain cons_tres"
