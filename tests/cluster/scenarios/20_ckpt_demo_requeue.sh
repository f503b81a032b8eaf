#!/bin/bash
# demo: A checkpointed job (sbatch --ckpt) is requeued mid-run and finishes bitwise identical to an uninterrupted run
# cluster: --nodes 2 --select cons_tres
# The demo: the same deterministic training job twice, once left alone and
# once requeued (`scontrol requeue`) after its first checkpoint. The
# interrupted one resumes from its newest complete checkpoint and ends with
# bitwise identical weights; the last line says so side by side.
source "$LOOM_SRCDIR/tests/ckpt/scenario_lib.sh"
ckpt_site
export TRAIN_STEP_DELAY=0.003

ref=$(ckpt_train ckpt-ref --ckpt --ckpt-interval=3s)
run=$(ckpt_train ckpt-run --ckpt --ckpt-interval=3s)
note "uninterrupted job $ref, interrupted job $run"
wait_state "$run" RUNNING 60
ckpt_wait_commit "$run" 90
note "job $run committed $(cat "$CK_ROOT/root/$run/latest"): scontrol requeue $run"
# slurmctld sometimes answers a requeue with a transient error: try a few times.
for try in 1 2 3 4 5; do
	scontrol requeue "$run" && break
	[ "$try" -lt 5 ] || fail "scontrol requeue $run refused"
	nap 1
done
wait_state "$ref" COMPLETED 240
wait_state "$run" COMPLETED 240
grep -q '^resumed from step' "$CK_SCRATCH/ckpt-run.out" || fail "job $run did not resume from a checkpoint"
[ "$(ckpt_final ckpt-run restarts)" = 1 ] || fail "job $run: restart count $(ckpt_final ckpt-run restarts), expected 1"
[ "$(job_field "$run" Restarts)" = 1 ] || fail "job $run: Slurm counts $(job_field "$run" Restarts) restarts"
note "$(grep '^resumed' "$CK_SCRATCH/ckpt-run.out")"
ckpt_compare ckpt-ref ckpt-run "requeued"
