#!/bin/bash
# cluster: --nodes 9 --gpus-per-node 2 --select cons_tres
# kill -9 in the middle of a recovery inside the allocation loses no
# checkpoint and leaves no node half-drained. A 4-node x 2-rank --ckpt job
# with one standby gets a GPU fault on its third node; the moment its srun
# has told the keeper its step ended (ended.0) it is killed with SIGKILL:
# waiting for the answer, or just executed again on the new layout (the same
# process). The batch script is that srun (exec), so the job ends and takes
# the requeue path: the culprit is drained with loom's reason (DRAIN and the
# reason together, never half of it), the job is requeued, resumes from a
# committed checkpoint and ends with every rank identical to an
# uninterrupted run; every checkpoint in its directory is whole. (Killing
# the batch step's slurmstepd itself leaves a job Slurm still counts
# RUNNING: that is Slurm's, not a recovery's.)
source "$LOOM_SRCDIR/tests/ckpt/scenario_lib.sh"
standby_site
py=/usr/bin/python3
export TRAIN_COMM=none TRAIN_STEPS=600 TRAIN_STEP_SLEEP=0.04 TRAIN_EVERY=50 LOOM_CKPT_COMMIT_TIMEOUT=60
out=$CK_SCRATCH
ref=$(standby_ranks ref)
run=$(TRAIN_FAULT_FILE=$out/fault TRAIN_FAULT_RANK=5 standby_ranks run --ckpt-standby=1)
wait_state "$run" RUNNING 60
mapfile -t hosts < <(expand_hosts "$(job_field "$run" NodeList)")
culprit=${hosts[2]}
ckpt_wait_commit "$run" 120
# The job's srun: the batch script's process (exec), of this cluster's job.
srun_pid=
for p in $(pgrep -x srun); do
	case $(ps -o stat= -p "$p") in Z*) continue ;; esac # sruns of earlier jobs nobody reaped
	[ "$(ps -o comm= -p "$(ps -o ppid= -p "$p" | tr -d ' ')")" = srun ] && continue # srun's own child
	grep -qxz "SLURM_JOB_ID=$run" "/proc/$p/environ" 2>/dev/null &&
		grep -qxz "SLURM_CONF=$SLURM_CONF" "/proc/$p/environ" && srun_pid=$p
done
[ -n "$srun_pid" ] || fail "no srun of job $run"
note "job $run on ${hosts[*]} committed $(cat "$CK_ROOT/root/$run/latest"): GPU fault on $culprit, then kill -9 of srun $srun_pid mid-recovery"
touch "$out/fault"
deadline=$(( EPOCHSECONDS + 60 ))
until [ -e "$LOOM_CLUSTER_DIR/run/loom-ckpt/$run/ended.0" ]; do
	[ "$EPOCHSECONDS" -lt "$deadline" ] || fail "job $run's srun never said its step ended"
	nap 0.05
done
note "killing $(ps -o pid=,args= -p "$srun_pid")"
kill -9 "$srun_pid"
deadline=$(( EPOCHSECONDS + 180 ))
until [ "$(job_field "$run" Restarts)" -ge 1 ] 2>/dev/null; do
	[ "$EPOCHSECONDS" -lt "$deadline" ] || fail "job $run was not requeued after its srun was killed: $(job_state "$run") $(job_field "$run" Reason)"
	nap 0.5
done
state=$(sinfo -h -n "$culprit" -o '%T|%E')
case $state in drain*"|loom: "*) ;; *) fail "$culprit after the kill: '$state', expected drained with loom's reason" ;; esac
wait_state "$run" COMPLETED 300
wait_state "$ref" COMPLETED 300
diff <(standby_finals ref) <(standby_finals run) >/dev/null ||
	fail "job $run: final states differ from the uninterrupted run: $(diff <(standby_finals ref) <(standby_finals run) | tr '\n' ';')"
[ "$(standby_finals run | wc -l)" = 8 ] || fail "job $run did not end on 8 ranks"
PYTHONPATH=$LOOM_SRCDIR/sdk/python "$py" "$LOOM_SRCDIR/tests/ckpt/ranks_check.py" "$CK_ROOT/root/$run" 8 >"$out/check" ||
	fail "job $run: $(tail -1 "$out/check")"
note "job $run: $culprit ${state%%|*} ('${state#*|}'); requeued (Restarts=$(job_field "$run" Restarts)), resumed, 8 ranks identical to job $ref; $(tail -1 "$out/check")"
