# cluster: --nodes 2 --gpus-per-node 8 --select topo
# scontrol requeue restarts a job, which then sees SLURM_RESTART_COUNT=1.
out=$(scratch)
j=$(submit -N1 --gres=gpu:1 --requeue -o "$out/rq.out" --open-mode=append \
	--wrap 'echo "start restart_count=${SLURM_RESTART_COUNT:-0}"; sleep 300')
wait_state "$j" RUNNING 30
wait_file "$out/rq.out" 10
scontrol requeue "$j" || fail "scontrol requeue $j refused"
# After cred_expire (5 s) the job starts again.
deadline=$(( EPOCHSECONDS + 60 ))
until grep -q "start restart_count=1" "$out/rq.out"; do
	[ "$EPOCHSECONDS" -lt "$deadline" ] || fail "job $j did not restart with SLURM_RESTART_COUNT=1: $(cat "$out/rq.out")"
	nap 0.5
done
[ "$(job_field "$j" Restarts)" = 1 ] || fail "scontrol shows Restarts=$(job_field "$j" Restarts), expected 1"
note "job $j: $(tr '\n' ' ' <"$out/rq.out")"
scancel "$j"
