#!/bin/bash
# cluster: --nodes 2 --select cons_tres
# A checkpointed job that needs longer than its time limit (1 min): the
# coordinator asks for a checkpoint before the limit (margin_min=20s), sees it
# committed, requeues the job, and the job finishes over several runs with
# the weights of an uninterrupted run and the restart count Slurm reports.
source "$LOOM_SRCDIR/tests/ckpt/scenario_lib.sh"
ckpt_site

ref=$(ckpt_train ckpt-ref --ckpt)
# ~12 ms a step: 6000 steps need about 75 s, more than the 60 s limit.
run=$(TRAIN_STEP_DELAY=0.010 ckpt_train ckpt-run --ckpt --time=1)
wait_state "$ref" COMPLETED 240
wait_state "$run" COMPLETED 420
restarts=$(job_field "$run" Restarts)
[ "${restarts:-0}" -ge 1 ] || fail "job $run was never requeued before its time limit"
[ "$(ckpt_final ckpt-run restarts)" = "$restarts" ] || fail "job $run: training saw restart $(ckpt_final ckpt-run restarts), Slurm counts $restarts"
note "job $run finished after $restarts requeue(s) at its time limit"
ckpt_compare ckpt-ref ckpt-run "time-limited"
