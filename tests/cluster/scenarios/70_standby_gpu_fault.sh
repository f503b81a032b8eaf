#!/bin/bash
# cluster: --nodes 9 --gpus-per-node 2 --select cons_tres
# A GPU fault on one node of a 4-node --ckpt job holding one standby
# (sbatch --ckpt-standby=1, job_submit/loom): 4 nodes x 2 ranks (srun per
# rank, each rank with state of its own, tests/ckpt/train_ranks.py). The
# job gets 5 nodes, its step runs on the first 4; a rank on the third node
# prints NCCL's GPU fault and dies. The batch step's keeper drains that node
# ("loom: standby: gpu_fault: job J"), releases it from the job, and srun
# (the same process the script started, no loop in the script) starts the
# step again on the healthy nodes plus the standby. Same job id, no requeue;
# every rank resumes from one committed step and ends bitwise identical to
# an uninterrupted run. (Fault to step running again is printed, not
# asserted: bench/ measures speed.)
source "$LOOM_SRCDIR/tests/ckpt/scenario_lib.sh"
standby_site
py=/usr/bin/python3
export TRAIN_COMM=none TRAIN_STEPS=600 TRAIN_STEP_SLEEP=0.04 TRAIN_EVERY=50 LOOM_CKPT_COMMIT_TIMEOUT=60
out=$CK_SCRATCH

ref=$(standby_ranks ref)
run=$(TRAIN_FAULT_FILE=$out/fault TRAIN_FAULT_RANK=5 standby_ranks run --ckpt-standby=1)
wait_state "$run" RUNNING 60
mapfile -t hosts < <(expand_hosts "$(job_field "$run" NodeList)")
[ "${#hosts[@]}" = 5 ] || fail "job $run (-N4 --ckpt-standby=1) holds ${#hosts[@]} nodes, expected 5"
[ "$(job_field "$run" Restarts)" = 0 ] || fail "job $run was requeued before the fault"
grep -q "job_submit/loom: --ckpt-standby=1: 1 standby node(s) beside 4" "$LOOM_CLUSTER_DIR/log/slurmctld.log" ||
	fail "slurmctld's log does not say job_submit/loom added the standby"
standby=${hosts[4]} culprit=${hosts[2]}
# The step runs on the active nodes only.
deadline=$(( EPOCHSECONDS + 60 ))
until step_nodes=$(squeue -h -s -j "$run" -o '%i %N' | awk -v s="$run.0" '$1 == s { print $2 }') && [ -n "$step_nodes" ]; do
	[ "$EPOCHSECONDS" -lt "$deadline" ] || fail "job $run never started step 0: $(job_output_tail "$run")"
	nap 0.2
done
[ "$(expand_hosts "$step_nodes" | paste -sd' ')" = "${hosts[*]:0:4}" ] ||
	fail "step $run.0 runs on $step_nodes, expected the 4 active nodes ${hosts[*]:0:4} (standby $standby)"
ckpt_wait_commit "$run" 120
note "job $run on ${hosts[*]} (standby $standby) committed $(cat "$CK_ROOT/root/$run/latest"): GPU fault on rank 5 ($culprit)"
t0=$(date +%s.%N)
touch "$out/fault"
wait_log -F "starting the step again" "$out/run.out" 120
t1=$(date +%s.%N)
wait_state "$run" COMPLETED 300
wait_state "$ref" COMPLETED 300
[ -e "$out/fault.fired" ] || fail "rank 5 never took the fault"
line=$(grep -m1 'starting the step again' "$out/run.out")
note "srun: ${line#*: }"
[ "$(job_field "$run" Restarts)" = 0 ] || fail "job $run was requeued (Restarts=$(job_field "$run" Restarts)): not recovered in its allocation"
left=$(expand_hosts "$(job_field "$run" NodeList)" | paste -sd' ')
want=$(printf '%s\n' "${hosts[@]}" | grep -vx "$culprit" | paste -sd' ')
[ "$left" = "$want" ] || fail "job $run ends on '$left', expected '$want' ($culprit released)"
case $(sinfo -h -n "$culprit" -o %E) in "loom: standby: gpu_fault: job $run: "*) ;;
	*) fail "$culprit: reason '$(sinfo -h -n "$culprit" -o %E)', expected loom's standby drain" ;; esac
comment=$(admin_note "$run" "loom standby: ")
[ "$comment" = "loom standby: $culprit -> $standby (gpu_fault), restart 1 in the allocation, 0 standby left" ] ||
	fail "job $run: AdminComment's standby note '$comment' ($(job_field "$run" AdminComment))"
[ "$(standby_finals ref | wc -l)" = 8 ] && [ "$(standby_finals ref | awk '{print $3}' | sort -u | wc -l)" = 8 ] ||
	fail "job $ref (uninterrupted) did not end with 8 ranks of 8 different states: $(standby_finals ref | tr '\n' ';')"
from=$(grep -o 'resumed_from=[0-9]*' "$out/run.out" | sort -u)
[ "$(echo "$from" | wc -l)" = 1 ] && [ "$from" != resumed_from=0 ] ||
	fail "job $run: the ranks did not resume from one committed step: ${from//$'\n'/ }"
diff <(standby_finals ref) <(standby_finals run) >/dev/null ||
	fail "job $run: final states differ from the uninterrupted run: $(diff <(standby_finals ref) <(standby_finals run) | tr '\n' ';')"
PYTHONPATH=$LOOM_SRCDIR/sdk/python "$py" "$LOOM_SRCDIR/tests/ckpt/ranks_check.py" "$CK_ROOT/root/$run" 8 >"$out/check" ||
	fail "job $run: $(tail -1 "$out/check")"
secs=$(awk -v a="$t1" -v b="$t0" 'BEGIN {printf "%.1f", a - b}')
note "job $run: $comment; resumed from ${from#resumed_from=} on 8 ranks, identical to job $ref (fault asked to srun starting again: ${secs}s)"
