#!/bin/bash
# cluster: --nodes 7 --select cons_tres
# Distributed training, 2 nodes x 2 ranks (gloo, CPU; Debian's PyTorch; whole nodes), each
# rank with state of its own (tests/ckpt/train_ranks.py), checkpointed through
# the SDK and spank_ckpt:
#   - srun per rank, a node of the job set down after a checkpoint: Slurm
#     requeues the job, every rank resumes from one committed step;
#   - torchrun per node (one srun task per node, 2 workers each), past its
#     time limit: spank_ckpt asks through the request file (srun is not
#     signalled: the torchrun agents live), the ranks agree and save, the
#     coordinator requeues, the job resumes.
# Both end with every rank's state bitwise identical to an uninterrupted run
# (srun per rank), resumed from a step > 0, and every committed checkpoint
# holds the 4 ranks' parts with 4 different states.
source "$LOOM_SRCDIR/tests/ckpt/scenario_lib.sh"
ckpt_site
py=/usr/bin/python3
"$py" -c 'import torch.distributed' 2>/dev/null || fail "Debian's PyTorch is not importable by $py (apt-get install python3-torch)"
prog=$LOOM_SRCDIR/tests/ckpt/train_ranks.py
# 450 steps of ~0.15 s: about 70 s, longer than the 1 min limit.
export TRAIN_COMM=gloo TRAIN_STEPS=450 TRAIN_STEP_SLEEP=0.15 TRAIN_EVERY=100 LOOM_CKPT_COMMIT_TIMEOUT=60
# The nodes of this cluster share one host (with the clusters of the other
# releases, whose job ids are the same): the ranks meet at 127.0.0.1, on a
# port the batch script finds free (tests/ckpt/free_port.py).
rendezvous="export MASTER_ADDR=127.0.0.1 MASTER_PORT=\$($py $LOOM_SRCDIR/tests/ckpt/free_port.py)"
ranks_srun() { # NAME SBATCH_ARGS...
	local name=$1
	shift
	submit --job-name="$name" -N2 --ntasks-per-node=2 --exclusive -o "$CK_SCRATCH/$name.out" --ckpt "$@" \
		--wrap "$rendezvous; exec srun --kill-on-bad-exit=1 $py $prog"
}
ranks_torchrun() { # NAME SBATCH_ARGS...
	local name=$1
	shift
	# A bash wrapper that stays the torchrun agent's parent (no exec), as in
	# spank_place(8)'s recipe: neither may die of a checkpoint request.
	# --redirects/--tee 1: Debian's torchrun 1.13 fails on Python 3.11 with their default (0).
	submit --job-name="$name" -N2 --ntasks-per-node=2 --exclusive -o "$CK_SCRATCH/$name.out" --ckpt "$@" \
		--wrap "$rendezvous; srun --ntasks=2 --ntasks-per-node=1 bash -c '$py -m torch.distributed.run \
--nnodes 2 --nproc_per_node 2 --node_rank \$SLURM_NODEID --master_addr \$MASTER_ADDR --master_port \$MASTER_PORT \
--redirects 1 --tee 1 --log_dir $CK_SCRATCH/$name.\$SLURM_JOB_ID.\$SLURM_NODEID $prog; echo wrapper exit \$?'"
}
# finals NAME: "rank R sha256=H" per rank, sorted, from the job's output.
finals() { grep -o 'rank [0-9]* final step=[0-9]* sha256=[0-9a-f]*' "$CK_SCRATCH/$1.out" | sed 's/ final step=[0-9]*//' | sort; }
# compare NAME JOBID WHAT: 4 ranks, one resume step > 0, the reference's states, whole checkpoints.
compare() {
	local name=$1 job=$2 what=$3 from
	[ "$(finals "$name" | wc -l)" = 4 ] || { tail -30 "$CK_SCRATCH/$name.out" >&2; fail "job $job ($what) did not end on 4 ranks"; }
	from=$(grep -o 'resumed_from=[0-9]*' "$CK_SCRATCH/$name.out" | sort -u)
	[ "$(echo "$from" | wc -l)" = 1 ] && [ "$from" != resumed_from=0 ] ||
		fail "job $job ($what): the ranks did not resume from one committed step: ${from//$'\n'/ }"
	diff <(finals ref) <(finals "$name") >/dev/null ||
		fail "job $job ($what): final states differ from the uninterrupted run: $(diff <(finals ref) <(finals "$name") | tr '\n' ';')"
	PYTHONPATH=$LOOM_SRCDIR/sdk/python "$py" "$LOOM_SRCDIR/tests/ckpt/ranks_check.py" "$CK_ROOT/root/$job" 4 >"$CK_SCRATCH/$name.check" ||
		fail "job $job ($what): $(tail -1 "$CK_SCRATCH/$name.check")"
	note "job $job ($what): restart count $(job_field "$job" Restarts), resumed from ${from#resumed_from=} on every rank, 4 states identical to the uninterrupted run"
}

ref=$(ranks_srun ref)
fault=$(ranks_srun srun-fault --ckpt-interval=1h)
limit=$(ranks_torchrun torchrun-limit --time=1 --ckpt-interval=1h)
wait_state "$fault" RUNNING 60
ckpt_wait_commit "$fault" 120
node=$(expand_hosts "$(job_field "$fault" NodeList)" | tail -1)
note "job $fault committed $(cat "$CK_ROOT/root/$fault/latest") on $(job_field "$fault" NodeList): setting $node down"
scontrol update nodename="$node" state=down reason="loom test: node failure" || fail "cannot set $node down"
# The first time limit is the one under test. The resumed run gets room to
# finish: on a loaded host 4 ranks may not end in a minute, and another
# requeue at its limit would only repeat what the first one showed.
deadline=$(( EPOCHSECONDS + 300 ))
until [ "$(job_field "$limit" Restarts)" -ge 1 ] 2>/dev/null; do
	[ "$EPOCHSECONDS" -lt "$deadline" ] && [[ $(job_state "$limit") =~ ^(PENDING|RUNNING|REQUEUED|COMPLETING)$ ]] ||
		fail "job $limit was not requeued before its time limit ($(job_state "$limit")): $(job_output_tail "$limit")"
	nap 0.5
done
scontrol update jobid="$limit" timelimit=10 || fail "cannot raise job $limit's time limit"
note "job $limit requeued at its first time limit: its resumed run may take 10 min"
wait_state "$ref" COMPLETED 300
wait_state "$fault" COMPLETED 420
wait_state "$limit" COMPLETED 600
[ "$(job_field "$fault" Restarts)" -ge 1 ] || fail "job $fault was not requeued after its node went down"
[ "$(job_field "$limit" Restarts)" -ge 1 ] || fail "job $limit was not requeued before its time limit"
[ "$(finals ref | wc -l)" = 4 ] && [ "$(finals ref | awk '{print $3}' | sort -u | wc -l)" = 4 ] ||
	fail "job $ref (uninterrupted) did not end with 4 ranks of 4 different states: $(finals ref | tr '\n' ';')"
compare srun-fault "$fault" "srun per rank, node $node down"
compare torchrun-limit "$limit" "torchrun per node, time limit"
# The time limit's ask went through the request file (srun and the torchrun
# agents got no signal: they lived on to the requeue), and the coordinator
# requeued the job after the checkpoint it asked for.
logs=("$LOOM_CLUSTER_DIR"/log/slurmd-*.log)
line=$(grep -h "job $limit: asked for a checkpoint (time limit" "${logs[@]}" | head -1)
[ -n "$line" ] || fail "job $limit: no slurmd log line says spank_ckpt asked for a checkpoint before the time limit"
case $line in *"request "*" in $CK_ROOT/root/$limit/.loom-request"*) ;;
	*) fail "job $limit: the ask did not go through the request file: $line" ;; esac
grep -h "job $limit: requeued: checkpoint step" "${logs[@]}" >/dev/null ||
	fail "job $limit: no slurmd log line says the coordinator requeued it after a committed checkpoint"
note "job $limit: ${line#*job "$limit": }"
