#!/bin/bash
# cluster: --nodes 2 --select cons_tres
# A checkpointed job that needs longer than its time limit (1 min): the
# coordinator asks for a checkpoint before the limit (margin_min=20s), sees it
# committed, requeues the job, and the job finishes over several runs with
# the weights of an uninterrupted run and the restart count Slurm reports.
# Each requeued run restores the newest checkpoint (step S > 0, the one
# spank_ckpt names as its start point) and trains on from S: identical
# weights alone would not show it (a run started over from step 0 ends with
# them too, given time).
source "$LOOM_SRCDIR/tests/ckpt/scenario_lib.sh"
ckpt_site

# resumed FILE: sets $resumed to the training program's "resumed from step S
# (step-...)" line in FILE (read by the shell, no process per poll); false if none.
resumed() {
	local l
	resumed=
	[ -f "$1" ] || return 1
	while IFS= read -r l; do
		case $l in "resumed from step "*) resumed=$l; return 0 ;; esac
	done <"$1"
	return 1
}

ref=$(ckpt_train ckpt-ref --ckpt)
# ~12 ms a step: 6000 steps need about 75 s, more than the 60 s limit.
run=$(TRAIN_STEP_DELAY=0.010 ckpt_train ckpt-run --ckpt --time=1)
out=$CK_SCRATCH/ckpt-run.out
# The first run (no checkpoint yet: it starts at step 0) is requeued before
# its limit; the second one starts from the first one's checkpoint.
deadline=$(( EPOCHSECONDS + 150 ))
until [ "$(job_field "$run" Restarts)" -ge 1 ] 2>/dev/null; do
	[ "$EPOCHSECONDS" -lt "$deadline" ] ||
		fail "job $run was not requeued within 150 s (state $(job_state "$run"), reason $(job_field "$run" Reason))"
	nap 0.5
done
wait_state "$run" RUNNING 120
deadline=$(( EPOCHSECONDS + 60 ))
until resumed "$out"; do
	[ "$EPOCHSECONDS" -lt "$deadline" ] ||
		fail "job $run: its requeued run did not resume from a checkpoint (no 'resumed from step' line in 60 s): $(head -c 300 "$out" | tr '\n' ';')"
	nap 0.5
done
read -r _ _ _ s1 _ <<<"$resumed"
# The step the first run committed before it was requeued (spank_ckpt's log).
# Between that commit and the kill the run may commit a newer one (its
# SIGTERM save): the requeued run must start from that one or a later one,
# never from an older step or from scratch.
line=$(grep -h "job $run: requeued: checkpoint step [0-9]* committed" "$LOOM_CLUSTER_DIR"/log/slurmd-*.log | head -1)
c1=${line##*checkpoint step }
c1=${c1%% *}
case $c1 in '' | *[!0-9]*) fail "job $run: no spank_ckpt line names the step committed before the requeue: '$line'" ;; esac
case $s1 in '' | *[!0-9]*) fail "job $run: cannot read the step in '$resumed'" ;; esac
[ "$s1" -ge "$c1" ] ||
	fail "job $run's requeued run resumed from step $s1, older than step $c1, which its first run committed before the requeue: $line"
note "job $run, requeued run: $resumed; its first run committed step $c1 before the requeue"
wait_state "$ref" COMPLETED 240
wait_state "$run" COMPLETED 420
restarts=$(job_field "$run" Restarts)
[ "${restarts:-0}" -ge 1 ] || fail "job $run was never requeued before its time limit"
[ "$(ckpt_final ckpt-run restarts)" = "$restarts" ] || fail "job $run: training saw restart $(ckpt_final ckpt-run restarts), Slurm counts $restarts"
note "job $run finished after $restarts requeue(s) at its time limit"
# The last run (the output holds only its lines): restored step S > 0 from
# the checkpoint spank_ckpt found, named for that step, and trained from S on.
resumed "$out" || fail "job $run: the last run did not resume from a checkpoint: $(head -c 300 "$out" | tr '\n' ';')"
read -r _ _ _ s name <<<"$resumed"
name=${name#(}
name=${name%)}
case $s in '' | *[!0-9]*) fail "job $run: cannot read the step in '$resumed'" ;; esac
[ "$s" -gt 0 ] && [ "$s" -lt "$TRAIN_STEPS" ] || fail "job $run resumed from step $s, expected a step between 0 and $TRAIN_STEPS: '$resumed'"
[ "$name" = "$(printf 'step-%012d' "$s")" ] || fail "job $run resumed step $s from checkpoint '$name'"
[ "$(ckpt_final ckpt-run resumed_from)" = "$s" ] ||
	fail "job $run restored step $s but its training loop started at step $(ckpt_final ckpt-run resumed_from)"
# spank_ckpt named the same checkpoint to the job when that run started.
grep -q "job $run on .*: checkpoints in .*, resuming from [^ ]*/$name, " "$LOOM_CLUSTER_DIR"/log/slurmd-*.log ||
	fail "job $run resumed from $name, but no slurmd log says spank_ckpt started it from that checkpoint: $(grep -h "job $run on " "$LOOM_CLUSTER_DIR"/log/slurmd-*.log | tail -3 | tr '\n' ';')"
note "job $run's last run: $resumed; its training loop ran from step $s to $TRAIN_STEPS"
ckpt_compare ckpt-ref ckpt-run "time-limited"
