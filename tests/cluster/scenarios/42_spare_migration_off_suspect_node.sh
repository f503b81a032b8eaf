#!/bin/bash
# cluster: --nodes 8 --gpus-per-node 8 --topo-line spares=leaf:1
# Proactive migration: a checkpointed training job runs on a node; the
# node's NIC is predicted to fail in 30 s (the suspect flag spank_ckpt
# watches, as `loom health check` writes it, and the loom:suspect mark in
# the node's Extra). The job checkpoints at once; once that checkpoint is
# committed spank_ckpt requeues it off the node, jobcomp/health gives it its
# leaf's spare, and it resumes there from that checkpoint: no step lost
# beyond it, the same weights as an uninterrupted run.
source "$LOOM_SRCDIR/tests/ckpt/scenario_lib.sh"
out=$(scratch)
ckpt_site "suspect_flag=$out/state-%n/suspect"
export TRAIN_STEP_DELAY=0.004 TRAIN_STEPS=2500
run=$(TRAIN_PROGRESS=$out/progress ckpt_train ckpt-run --ckpt --ckpt-interval=10m --export=ALL)
wait_state "$run" RUNNING 60
node=$(job_field "$run" NodeList)
# The uninterrupted run elsewhere (every --ckpt job on a suspect node moves).
ref=$(ckpt_train ckpt-ref --ckpt --ckpt-interval=10m -x "$node")
case $node in n4|n8) fail "job $run (no time limit) was given the spare $node" ;; esac
leaf=leaf$(( (${node#n} - 1) / 4 + 1 ))
spare=n$(( (${node#n} - 1) / 4 * 4 + 4 ))
deadline=$(( EPOCHSECONDS + 60 ))
until [ "$(cat "$out/progress" 2>/dev/null || echo 0)" -ge 500 ]; do
	[ "$EPOCHSECONDS" -lt "$deadline" ] || fail "job $run made no progress: $(cat "$CK_SCRATCH/ckpt-run.out")"
	nap 0.2
done
[ ! -e "$CK_ROOT/root/$run/latest" ] || fail "job $run checkpointed before the mark (interval 10 min)"
# The prediction, as loom health check --drain records it on the node and in Slurm.
reason="loom: predict: ib0 symbol_error at 90 rising 60/min: reaches 100 in about 1 min"
mkdir -p "$out/state-$node"
t0=$(date +%s.%N)
scontrol update nodename="$node" extra="loom:suspect:predict:ib0 symbol_error reaches 100 in about 1 min" ||
	fail "cannot mark $node suspect"
printf '%s\neta_s=30\n' "$reason" >"$out/state-$node/suspect.tmp" && mv "$out/state-$node/suspect.tmp" "$out/state-$node/suspect"
note "job $run on $node, step $(cat "$out/progress"): $node predicted to fail in 30 s"
deadline=$(( EPOCHSECONDS + 60 ))
until [ "$(job_field "$run" Restarts)" = 1 ] && [ "$(job_state "$run")" = RUNNING ]; do
	[ "$EPOCHSECONDS" -lt "$deadline" ] || fail "job $run not running elsewhere 60 s after the mark: $(job_state "$run") $(job_field "$run" Reason); $(grep -F "job $run" "$LOOM_CLUSTER_DIR/log/slurmctld.log" | tail -3)"
	nap 0.2
done
secs=$(awk -v a="$(date +%s.%N)" -v b="$t0" 'BEGIN {printf "%.1f", a - b}')
again=$(job_field "$run" NodeList)
[ "$again" = "$spare" ] || fail "job $run moved to $again, expected $leaf's spare $spare"
committed=$(cat "$CK_ROOT/root/$run/latest")
comment=$(admin_note "$run" "loom: ")
[ "$comment" = "loom: moved off suspect node(s) to spares $node -> $spare (leaf $leaf) in reservation loom_spare_${run}_1" ] ||
	fail "job $run: AdminComment's restart note '$comment' ($(scontrol show job "$run" | sed -n 's/.*AdminComment=//p'))"
admin_notes_kept "$run"
note "suspect mark to running on $again: $secs s (checkpoint $committed taken at the mark); $comment"
grep -F "requeued: checkpoint step" "$LOOM_CLUSTER_DIR/log/slurmd-$node.log" | tail -1 | sed 's/^/  | /' || true
wait_state "$ref" COMPLETED 240
wait_state "$run" COMPLETED 240
resumed=$(sed -n 's/^resumed from step \([0-9]*\).*/\1/p' "$CK_SCRATCH/ckpt-run.out" | tail -1)
[ "$resumed" = "$((10#${committed#step-}))" ] || fail "job $run resumed from step '$resumed', expected the checkpoint at the mark ($committed)"
note "resumed from step $resumed: no step lost beyond the checkpoint taken at the mark"
ckpt_compare ckpt-ref ckpt-run "moved off a suspect node"
scontrol update nodename="$node" extra=
