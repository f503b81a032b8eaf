#!/bin/bash
# cluster: --nodes 1 --select cons_tres
# A checkpointed job that fails again without having written a checkpoint
# since its last restart is held instead of looping: it writes one
# checkpoint, is requeued (restart 1, resumes, writes nothing), is requeued
# again (restart 2) and spank_ckpt holds it before its script runs. What the
# user sees: JobState=PENDING, held (Priority=0, Reason=job_requeued_in_held_state),
# the reason in Comment and in the slurmd log; the checkpoint is still the one
# and the node stays in service (a failed launch would drain it).
# `scontrol release` lets it run again, from that checkpoint.
# A job whose directory holds only a framework's own checkpoints (files loom
# did not write) is told so at each start, and is not held for "no
# progress" that loom cannot see: its second requeue runs.
source "$LOOM_SRCDIR/tests/ckpt/scenario_lib.sh"
ckpt_site

# The job: the first run commits step 1; later runs resume from it and write
# nothing; once $go exists a run finishes. Each run appends a line to the output.
go=$CK_SCRATCH/go
prog=$CK_SCRATCH/held.py
cat >"$prog" <<EOF
import os, sys, time
sys.path.insert(0, "$LOOM_SRCDIR/sdk/python")
import loom_ckpt
ck = loom_ckpt.Checkpointer()
c = ck.restore()
print("run restart=%s resumed=%s" % (os.environ.get("LOOM_RESTART_COUNT"), c.step if c else "none"), flush=True)
if c is None:
    ck.save(1, {"state.bin": b"one"})
    print("saved step 1", flush=True)
elif os.path.exists("$go"):
    print("finished", flush=True)
    sys.exit(0)
while True:  # until requeued
    time.sleep(1)
EOF
chmod 644 "$prog"
out=$CK_SCRATCH/held.out
job=$(submit --job-name=ckpt-held -N1 -o "$out" --open-mode=append --ckpt --ckpt-interval=1h \
	--wrap "exec python3 $prog")
dir=$CK_ROOT/root/$job

# wait_line TEXT [TIMEOUT]: wait for a line in the job's output.
wait_line() {
	local deadline=$(( EPOCHSECONDS + ${2:-120} ))
	until grep -qxF "$1" "$out" 2>/dev/null; do
		[ "$EPOCHSECONDS" -lt "$deadline" ] || { cat "$out" >&2; fail "job $job never printed '$1'"; }
		nap 0.5
	done
}
checkpoints() { (cd "$dir" && ls -d step-* 2>/dev/null | tr '\n' ' ' | sed 's/ $//'); }

wait_line "saved step 1" 90
ckpt_wait_commit "$job" 30
note "job $job committed $(cat "$dir/latest"): scontrol requeue $job"
ckpt_requeue "$job"
wait_line "run restart=1 resumed=1" 180
[ "$(checkpoints)" = step-000000000001 ] || fail "checkpoints after restart 1: $(checkpoints)"
note "restart 1 resumed from step 1 and wrote nothing: scontrol requeue $job"
ckpt_requeue "$job"

# Restart 2: slurmstepd holds the job before the script runs.
deadline=$(( EPOCHSECONDS + 180 ))
until grep -q "spank_ckpt: job $job: loom: failed again without a new checkpoint" "$LOOM_CLUSTER_DIR"/log/slurmd-*.log &&
	[ "$(job_state "$job")" = PENDING ] && [ "$(job_field "$job" Priority)" = 0 ]; do
	[ "$EPOCHSECONDS" -lt "$deadline" ] ||
		fail "job $job not held after restart 2: state $(job_state "$job"), $(scontrol show job -o "$job" | grep -o 'Priority=[^ ]*\|Reason=[^ ]*' | tr '\n' ' ')"
	nap 0.5
done
logline=$(grep -h "spank_ckpt: job $job: loom: failed again" "$LOOM_CLUSTER_DIR"/log/slurmd-*.log | tail -1)
echo "$logline" | grep -F "failed again without a new checkpoint since restart 1 (newest step 1): holding the job" >/dev/null ||
	fail "slurmd log line does not give the reason: $logline"
note "slurmd: ${logline#*spank_ckpt: }"
# slurmctld's end of the held start: its third "Requeuing" line (after the
# two scontrol requeues), logged once the batch step is gone, so whether
# the node is drained for a failed launch is decided by then. That the job
# then stays pending has no line to wait for: the scheduler does not look
# at a held job (Priority=0) at all; the hold checked below is the decision.
wait_log "Requeuing JobId=$job\$" "$LOOM_CLUSTER_DIR/log/slurmctld.log" 60 3
show=$(scontrol show job "$job")
echo "$show" | grep 'JobState=PENDING ' >/dev/null || fail "job $job is not pending: $(echo "$show" | grep -o 'JobState=[^ ]*')"
echo "$show" | grep ' Priority=0 ' >/dev/null || fail "job $job is not held (Priority=0): $show"
reason=$(job_field "$job" Reason)
case $reason in
job_requeued_in_held_state|JobHeldUser|JobHeldAdmin) ;;
*) fail "job $job: Reason=$reason, expected a hold" ;;
esac
echo "$show" | grep -F 'Comment=loom: failed again without a new checkpoint since restart 1 (newest step 1)' >/dev/null ||
	fail "Comment does not say why job $job is held: $(echo "$show" | grep -o 'Comment=.*')"
note "scontrol show job: JobState=PENDING Priority=0 Reason=$reason $(echo "$show" | grep -o 'Comment=.*')"
grep -q '^run restart=2' "$out" && fail "the held start ran the script: $(cat "$out")"
grep -q "spank_ckpt: job $job: held: the batch script is not started" "$LOOM_CLUSTER_DIR"/log/slurmd-*.log ||
	fail "slurmd log does not say the held start stopped before the script"
node_state=$(sinfo -h -N -n n1 -o %T | head -1)
case $node_state in
*drain*|*down*|*fail*) fail "holding job $job took n1 out of service: $node_state ($(sinfo -h -R))" ;;
esac
[ "$(checkpoints)" = step-000000000001 ] || fail "checkpoints while held: $(checkpoints)"
loom ckpt verify "$dir" >/dev/null || fail "the checkpoint does not verify: $(loom ckpt verify "$dir" 2>&1)"

# Released, it runs again from the same checkpoint (and this time finishes).
touch "$go"
scontrol release "$job" || fail "scontrol release $job refused"
wait_state "$job" COMPLETED 180
restarts=$(job_field "$job" Restarts)
grep -q "^run restart=$restarts resumed=1\$" "$out" || { cat "$out" >&2; fail "the released run did not resume from step 1"; }
grep -qxF finished "$out" || fail "the released run did not finish"
note "released: ran again as restart $restarts, resumed from step 1, finished"

# A framework's own checkpoints: loom says so in the job's output and runs
# restart 2 (the budget alone limits it).
fdir=$CK_ROOT/root/foreign
mkdir -p "$fdir/checkpoint-500"
echo weights >"$fdir/checkpoint-500/model.bin"
fout=$CK_SCRATCH/foreign.out
fjob=$(submit --job-name=ckpt-foreign -N1 -o "$fout" --open-mode=append --ckpt --ckpt-dir="$fdir" --ckpt-interval=1h \
	--wrap 'echo "run restart=$LOOM_RESTART_COUNT"; exec sleep 600')
out=$fout job=$fjob
wait_line "run restart=0" 90
ckpt_requeue "$fjob"
wait_line "run restart=1" 180
ckpt_requeue "$fjob"
wait_line "run restart=2" 180
grep -q "spank_ckpt: job $fjob: loom: failed again" "$LOOM_CLUSTER_DIR"/log/slurmd-*.log &&
	fail "job $fjob was held although loom cannot see its progress"
told=$(grep -c "^spank_ckpt: job $fjob: $fdir holds checkpoint-500, not written through loom's SDK" "$fout")
[ "$told" = 3 ] || { cat "$fout" >&2; fail "job $fjob was told about checkpoint-500 at $told of its 3 starts"; }
note "job $fjob: restart 2 ran; each start was told: $(grep -m1 "holds checkpoint-500" "$fout" | cut -c1-160)..."
scancel "$fjob"
