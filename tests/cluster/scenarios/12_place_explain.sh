# cluster: --nodes 16 --gpus-per-node 8 --select topo --conf-line DebugFlags=SelectType
# `loom place --explain` reproduces decisions select/topo made in slurmctld,
# from the fabric, state and request the plugin kept (DebugFlags=SelectType).
xdir="$LOOM_CLUSTER_DIR/state/loom-place"
jobs=()
for g in 3 2 8; do
	j=$(submit -N1 --gres=gpu:$g -o /dev/null --wrap 'sleep 600')
	wait_state "$j" RUNNING 30
	jobs+=("$j")
done
j=$(submit -N4 --gres=gpu:8 --constraint=h100 -o /dev/null --wrap 'sleep 600')
wait_state "$j" RUNNING 30
jobs+=("$j")
j=$(submit -N3 --gres=gpu:8 --comm=heavy -o /dev/null --wrap 'sleep 600')
wait_state "$j" RUNNING 30
jobs+=("$j")
for j in "${jobs[@]}"; do
	wait_file "$xdir/job_$j.decision" 10
	wait_file "$xdir/cluster.json" 10
	slurm_nodes=$(job_field "$j" NodeList)
	out=$(loom place --explain --cluster "$xdir/cluster.json" --state "$xdir/job_$j.state" \
		--request "$(cat "$xdir/job_$j.request")" --json) || fail "loom place --explain failed for job $j: $out"
	chosen=$(echo "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(",".join(d["candidates"][0]["nodes"]))')
	chosen=$(scontrol show hostlist "$chosen")
	[ "$chosen" = "$slurm_nodes" ] || fail "job $j: slurmctld placed it on $slurm_nodes, loom place --explain says $chosen (request: $(cat "$xdir/job_$j.request"))"
	note "job $j ($(cat "$xdir/job_$j.request")): slurmctld $slurm_nodes = loom place --explain $chosen"
done
scancel "${jobs[@]}"
