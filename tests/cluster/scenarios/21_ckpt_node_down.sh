#!/bin/bash
# cluster: --nodes 3 --select cons_tres
# A checkpointed job whose node is set down mid-run: Slurm requeues it, it
# restarts (on whichever node is up: ReturnToService=2 lets the node
# return) from its newest complete checkpoint and ends with
# the same weights as an uninterrupted run, with restart count 1.
source "$LOOM_SRCDIR/tests/ckpt/scenario_lib.sh"
ckpt_site
export TRAIN_STEP_DELAY=0.003

ref=$(ckpt_train ckpt-ref --ckpt --ckpt-interval=3s -w n3)
run=$(ckpt_train ckpt-run --ckpt --ckpt-interval=3s -x n3)
wait_state "$run" RUNNING 60
ckpt_wait_commit "$run" 90
node=$(job_field "$run" NodeList)
note "job $run committed $(cat "$CK_ROOT/root/$run/latest") on $node: setting $node down"
scontrol update nodename="$node" state=down reason="loom test: node failure" || fail "cannot set $node down"
wait_state "$ref" COMPLETED 240
wait_state "$run" COMPLETED 300
[ "$(ckpt_final ckpt-run restarts)" = 1 ] || fail "job $run: restart count $(ckpt_final ckpt-run restarts), expected 1"
grep -q '^resumed from step' "$CK_SCRATCH/ckpt-run.out" || fail "job $run did not resume from a checkpoint"
ckpt_compare ckpt-ref ckpt-run "node down"
