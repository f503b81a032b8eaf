# cluster: --nodes 4 --gpus-per-node 8 --select topo --select-params CR_Core,CR_LLN
# SelectTypeParameters=CR_LLN (least loaded nodes, cluster-wide) keeps its
# meaning: select/topo steps aside for every job and says so. With n1 half
# busy, a 4-GPU job goes to an idle node (the least loaded), where the engine
# alone would pack it next to the running one.
log=$LOOM_CLUSTER_DIR/log/slurmctld.log
b=$(submit -w n1 --gres=gpu:4 -n 8 -o /dev/null --wrap 'sleep 60')
wait_state "$b" RUNNING 30
j=$(submit -N1 --gres=gpu:4 -n 1 -o /dev/null --wrap true)
wait_state "$j" COMPLETED 30
[ "$(job_field "$j" NodeList)" != n1 ] || fail "with CR_LLN job $j went to n1, the most loaded node"
grep -q "JobId=$j placed by cons_tres on .*(SelectTypeParameters LLN asks for Slurm's own choice" "$log" ||
	fail "select/topo's log does not say it stepped aside for CR_LLN: $(grep "JobId=$j" "$log" | tail -1)"
note "CR_LLN: job $j on $(job_field "$j" NodeList), not beside job $b on n1; select/topo stepped aside"
scancel "$b"
