# cluster: --nodes 4 --gpus-per-node 8 --select topo
# A drained node gets no jobs, even when every other node is busy.
out=$(scratch)
scontrol update nodename=n2 state=drain reason="test: drained by admin"
jobs=()
for i in 1 2 3 4 5; do
	jobs+=("$(submit -N1 --exclusive --gres=gpu:8 -o "$out/d$i.out" --wrap 'sleep 30')")
done
big=$(submit -N4 --gres=gpu:8 -o /dev/null --wrap 'true')
# Three nodes are usable: three jobs run, two wait, the 4-node job waits.
deadline=$(( EPOCHSECONDS + 30 ))
while [ "$(squeue -h -t R -o %i | wc -l)" -lt 3 ]; do
	[ "$EPOCHSECONDS" -lt "$deadline" ] || fail "expected 3 running jobs: $(squeue -h -o '%i %T %N')"
	nap 0.5
done
# The scheduler's decision on the waiting jobs, with every other node busy:
# it has considered each of them since now (their LastSchedEval). No log
# line says so for all of them: select/topo's "cannot fit now" (only with
# DebugFlags=SelectType) names the one job it is asked about, not those
# queued behind it (Priority) nor the 4-node job Slurm holds back itself
# (ReqNodeNotAvail).
since=$(slurm_now)
for j in "${jobs[@]}" "$big"; do
	[ "$(job_state "$j")" != PENDING ] || wait_evaluated "$j" "$since" 60
done
used=$(squeue -h -t R -o %N | xargs -n1 scontrol show hostnames | sort)
echo "$used" | grep -x n2 >/dev/null && fail "a job was started on drained node n2: $(squeue -h -o '%i %T %N')"
[ "$(squeue -h -t R -o %i | wc -l)" = 3 ] || fail "expected exactly 3 running jobs: $(squeue -h -o '%i %T %N')"
[ "$(job_state "$big")" = PENDING ] || fail "4-node job $big is $(job_state "$big"), expected PENDING"
state=$(sinfo -h -n n2 -o %T)
case $state in drained|draining) ;; *) fail "n2 is $state, expected drained" ;; esac
note "running on: ${used//$'\n'/ }; n2: $state; 4-node job: PENDING ($(job_field "$big" Reason))"
scancel "${jobs[@]}" "$big"
