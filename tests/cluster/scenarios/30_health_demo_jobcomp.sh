# cluster: --nodes 5 --gpus-per-node 8 --conf-line JobCompParams=max_drains=2
# demo: A GPU fault on one node of a running checkpointed 4-node job: the node is drained with a loom: reason and the job resumes on healthy nodes
# jobcomp/health end to end: a job that exits 1 by itself is neither requeued
# nor blamed on a node; a checkpointed 4-node job whose third node reports an
# uncorrectable ECC error gets that node drained with a loom: reason and is
# requeued, and resumes on healthy nodes; faults on more nodes than the drain
# cap allows drain only up to the cap.
source "$LOOM_SRCDIR/tests/ckpt/scenario_lib.sh"
ckpt_site # a checkpoint root for the --ckpt job below
out=$(scratch)
log=$LOOM_CLUSTER_DIR/log/slurmctld.log
drained() { sinfo -h -N -t drain,drained,draining -o %N | sort -u; }

# 1. The user's own error.
u=$(submit -N1 -o "$out/user.out" --wrap 'echo "Traceback (most recent call last):"; echo "ValueError: bad batch size"; exit 1')
wait_state "$u" FAILED 30
# The worker runs after the callback; its line for the job is its decision.
wait_log -F "jobcomp/health: job $u FAILED" "$log" 60
[ "$(job_field "$u" Restarts)" = 0 ] || fail "user error job $u was requeued (Restarts=$(job_field "$u" Restarts))"
[ "$(job_state "$u")" = FAILED ] || fail "user error job $u is $(job_state "$u"), expected FAILED"
[ -z "$(drained)" ] || fail "a user error drained nodes: $(drained)"
note "job $u (exit 1): FAILED, not requeued, nothing drained ($(grep -o "jobcomp/health: job $u FAILED[^;]*" "$log" | head -1 | cut -c1-100))"

# 2. A GPU fault on the job's third node; the job is checkpoint-enabled.
cat >"$out/gpu.sh" <<'JOB'
#!/bin/bash
third=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | sed -n 3p)
echo "run restart=${SLURM_RESTART_COUNT:-0} nodes=$SLURM_JOB_NODELIST"
if [ "${SLURM_RESTART_COUNT:-0}" = 0 ]; then
	echo "$third:4242:4290 [2] NCCL WARN Cuda failure 'uncorrectable ECC error encountered'"
	exit 1
fi
echo "resumed from checkpoint"
JOB
# --ckpt with a budget of its own (1 restart; jobcomp's restart_budget is 3):
# jobcomp/health must know the job as checkpointed from what sbatch --ckpt
# set, and requeue it on the job's budget.
g=$(submit -N4 --gres=gpu:8 --requeue --ckpt --ckpt-max-restarts=1 -o "$out/gpu-%j.out" --open-mode=append "$out/gpu.sh")
wait_file "$out/gpu-$g.out" 30
deadline=$(( EPOCHSECONDS + 30 ))
until [ -n "$(drained)" ]; do
	[ "$EPOCHSECONDS" -lt "$deadline" ] || fail "no node drained after the GPU fault of job $g: $(cat "$out/gpu-$g.out")"
	nap 0.5
done
culprit=$(head -1 "$out/gpu-$g.out" | sed 's/.*nodes=//' | xargs scontrol show hostnames | sed -n 3p)
[ "$(drained)" = "$culprit" ] || fail "drained '$(drained)', expected the third node $culprit"
reason=$(sinfo -h -n "$culprit" -o %E)
case $reason in "loom: jobcomp: gpu_fault: job $g: "*) ;; *) fail "$culprit drained with reason '$reason'" ;; esac
wait_state "$g" COMPLETED 90
grep -q "resumed from checkpoint" "$out/gpu-$g.out" || fail "job $g did not resume: $(cat "$out/gpu-$g.out")"
second=$(grep "restart=1" "$out/gpu-$g.out" | sed 's/.*nodes=//' | xargs scontrol show hostnames)
echo "$second" | grep -x "$culprit" >/dev/null && fail "job $g restarted on the drained node $culprit"
note "job $g: $culprit drained ('$reason'), requeued, resumed on ${second//$'\n'/ }"
line=$(grep -F "job $g FAILED (--ckpt): gpu_fault:" "$log" | head -1)
[ -n "$line" ] || fail "jobcomp/health did not know job $g as a --ckpt job: $(grep -F "job $g " "$log" | tail -3)"
case $line in *"requeued: requeue (restart 1 of 1) (the job's --ckpt-max-restarts)"*) ;; *) fail "job $g not requeued on its own budget: $line" ;; esac
note "jobcomp/health: ${line#*jobcomp/health: }"

# 3. Faults on three more nodes at once (jobs that may not be requeued): the cap (2 per hour, one used) lets one more drain.
jobs=()
for i in 1 2 3; do
	jobs+=("$(submit -N1 --exclusive --no-requeue -o "$out/f$i.out" \
		--wrap 'echo "$SLURMD_NODENAME:77:78 [0] NCCL WARN Cuda failure: uncorrectable ECC error encountered"; exit 1')")
done
for j in "${jobs[@]}"; do wait_state "$j" FAILED 60; done
# jobcomp/health's line for each job comes after its drain or its capped
# drain: once all three are there, no third drain can follow.
for j in "${jobs[@]}"; do wait_log -F "jobcomp/health: job $j FAILED: gpu_fault:" "$log" 60; done
n=$(drained | wc -l)
[ "$n" = 2 ] || fail "expected 2 drained nodes under the cap, found $n: $(drained)"
grep -q "drain cap reached" "$log" || fail "no 'drain cap reached' in slurmctld.log"
capped=$(grep -E "jobcomp/health: job ($(IFS='|'; echo "${jobs[*]}")) FAILED: .*drained \[0\] capped \[1\]" -c "$log")
[ "$capped" = 2 ] || fail "expected 2 of jobs ${jobs[*]} capped, jobcomp/health says: $(grep -E "jobcomp/health: job ($(IFS='|'; echo "${jobs[*]}")) FAILED" "$log" | grep -o 'drained.*capped \[[0-9]*\]')"
note "3 faulty nodes, cap 2: drained $(drained | xargs); the rest logged"
wait_file "$LOOM_CLUSTER_DIR/state/loom-health/loom-failure-stats.json" 30
note "stats: $(tr -d ' \n' <"$LOOM_CLUSTER_DIR/state/loom-health/loom-failure-stats.json" | cut -c1-160)..."
