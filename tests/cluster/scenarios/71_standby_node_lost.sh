#!/bin/bash
# cluster: --nodes 9 --gpus-per-node 2 --select cons_tres --conf-line SlurmdTimeout=30
# Two faults on a 4-node --ckpt job holding one standby (4 nodes x 2 ranks,
# srun per rank, each rank with state of its own):
#   - slurmd killed on the second node: Slurm sets the node DOWN and takes it
#     out of the --no-kill job; the keeper drains it ("loom: standby:
#     node_failure") and srun starts the step again on the other three plus
#     the standby, in the allocation;
#   - then a GPU fault on the standby that took its place (rank 7's node
#     now: the ranks fill the active nodes in order), with no standby left: the step
#     ends, the keeper says so, and the job takes the requeue path
#     (jobcomp/health drains the node and requeues it).
# The job ends with every rank's state bitwise identical to an
# uninterrupted run, its ranks resumed from one committed step each time.
source "$LOOM_SRCDIR/tests/ckpt/scenario_lib.sh"
standby_site
export TRAIN_COMM=none TRAIN_STEPS=1500 TRAIN_STEP_SLEEP=0.04 TRAIN_EVERY=50 LOOM_CKPT_COMMIT_TIMEOUT=60
out=$CK_SCRATCH
committed() { cat "$CK_ROOT/root/$run/latest" 2>/dev/null; }
# wait_newer STEP_DIR: a checkpoint newer than STEP_DIR committed.
wait_newer() {
	local deadline=$(( EPOCHSECONDS + 120 ))
	while [ "$(committed)" = "$1" ] || [ -z "$(committed)" ]; do
		[ "$EPOCHSECONDS" -lt "$deadline" ] || fail "job $run committed nothing after $1: $(job_output_tail "$run")"
		nap 0.2
	done
}

ref=$(standby_ranks ref)
run=$(TRAIN_FAULT_FILE=$out/fault TRAIN_FAULT_RANK=7 standby_ranks run --ckpt-standby=1)
wait_state "$run" RUNNING 60
mapfile -t hosts < <(expand_hosts "$(job_field "$run" NodeList)")
[ "${#hosts[@]}" = 5 ] || fail "job $run (-N4 --ckpt-standby=1) holds ${#hosts[@]} nodes, expected 5"
lost=${hosts[1]} standby=${hosts[4]} second=${hosts[4]}
ckpt_wait_commit "$run" 120
first=$(committed)
pid=$(cat "$LOOM_CLUSTER_DIR/run/slurmd-$lost.pid")
note "job $run on ${hosts[*]} committed $first: killing slurmd on $lost (pid $pid)"
kill -9 "$pid"
wait_log -F "starting the step again" "$out/run.out" 120
line=$(grep -m1 'starting the step again' "$out/run.out")
note "srun: ${line#*: }"
case $line in *"$lost -> $standby (node_failure)"*) ;; *) fail "job $run: the first restart is not $lost -> $standby: $line" ;; esac
case $(sinfo -h -n "$lost" -o %E) in "loom: standby: node_failure: job $run: "*) ;;
	*) fail "$lost: reason '$(sinfo -h -n "$lost" -o %E)', expected loom's standby drain" ;; esac
[ "$(job_field "$run" Restarts)" = 0 ] || fail "job $run was requeued after slurmd was lost: not recovered in its allocation"
comment=$(admin_note "$run" "loom standby: ")
[ "$comment" = "loom standby: $lost -> $standby (node_failure), restart 1 in the allocation, 0 standby left" ] ||
	fail "job $run: AdminComment's standby note '$comment'"
# The second fault, with no standby left, once the restarted step committed.
wait_newer "$first"
note "job $run committed $(committed) after its restart: GPU fault on rank 7 ($second), no standby left"
touch "$out/fault"
wait_log -F "job $run: " "$LOOM_CLUSTER_DIR/log/slurmd-${hosts[0]}.log" 5
deadline=$(( EPOCHSECONDS + 180 ))
until [ "$(job_field "$run" Restarts)" -ge 1 ] 2>/dev/null; do
	[ "$EPOCHSECONDS" -lt "$deadline" ] || fail "job $run was not requeued after its second fault: $(job_state "$run"); $(job_output_tail "$run")"
	nap 0.5
done
grep -q "job $run: gpu_fault on $second (.*): no standby left for $second: the job goes the requeue path" \
	"$LOOM_CLUSTER_DIR/log/slurmd-${hosts[0]}.log" || fail "the keeper did not say job $run goes the requeue path"
wait_state "$run" COMPLETED 300
wait_state "$ref" COMPLETED 300
[ "$(grep -c 'starting the step again' "$out/run.out")" = 1 ] || fail "job $run restarted in its allocation more than once"
case $(sinfo -h -n "$second" -o %E) in "loom: jobcomp: gpu_fault: job $run: "*) ;;
	*) fail "$second: reason '$(sinfo -h -n "$second" -o %E)', expected jobcomp/health's drain" ;; esac
[ "$(standby_finals ref | wc -l)" = 8 ] || fail "job $ref (uninterrupted) did not end on 8 ranks"
last=$(standby_finals run | wc -l)
[ "$last" = 8 ] || fail "job $run ended on $last ranks, expected 8"
from=$(grep -o 'resumed_from=[0-9]*' "$out/run.out" | sort -u)
[ "$(echo "$from" | wc -l)" = 1 ] && [ "$from" != resumed_from=0 ] ||
	fail "job $run: its last run's ranks did not resume from one committed step: ${from//$'\n'/ }"
diff <(standby_finals ref) <(standby_finals run) >/dev/null ||
	fail "job $run: final states differ from the uninterrupted run: $(diff <(standby_finals ref) <(standby_finals run) | tr '\n' ';')"
note "job $run: $lost lost -> $standby in the allocation, then $second's GPU fault -> requeued (Restarts=$(job_field "$run" Restarts)); 8 ranks identical to job $ref"
