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
note "job $run committed $(cat "$CK_ROOT/root/$run/latest")"
# What the user sees from Slurm: the job's AdminComment names its directory
# and a step committed there, and `loom ckpt ls --job` lists that directory.
deadline=$(( EPOCHSECONDS + 30 ))
until admin=$(scontrol show job "$run" | sed -n 's/^ *AdminComment=//p' | sed 's/ *$//') &&
	[[ $admin == *"loom ckpt: $CK_ROOT/root/$run: step "* ]]; do
	[ "$EPOCHSECONDS" -lt "$deadline" ] || fail "job $run: no checkpoint note in its AdminComment after 30 s: '$admin'"
	nap 0.5
done
step=${admin##*": step "}
step=${step%%,*}
[ -d "$CK_ROOT/root/$run/$(printf 'step-%012d' "$step")" ] ||
	fail "job $run: AdminComment names step $step, which is not a checkpoint in its directory: '$admin'"
listing=$(loom ckpt ls --job "$run") || fail "loom ckpt ls --job $run failed: $listing"
grep -q "$(printf 'step-%012d' "$step")" <<<"$listing" || fail "loom ckpt ls --job $run does not list step $step: $listing"
note "scontrol show job $run: AdminComment=$admin; loom ckpt ls --job $run lists it"
note "scontrol requeue $run"
ckpt_requeue "$run"
wait_state "$ref" COMPLETED 240
wait_state "$run" COMPLETED 240
grep -q '^resumed from step' "$CK_SCRATCH/ckpt-run.out" || fail "job $run did not resume from a checkpoint"
[ "$(ckpt_final ckpt-run restarts)" = 1 ] || fail "job $run: restart count $(ckpt_final ckpt-run restarts), expected 1"
[ "$(job_field "$run" Restarts)" = 1 ] || fail "job $run: Slurm counts $(job_field "$run" Restarts) restarts"
note "$(grep '^resumed' "$CK_SCRATCH/ckpt-run.out")"
ckpt_compare ckpt-ref ckpt-run "requeued"
