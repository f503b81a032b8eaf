#!/bin/bash
# cluster: --nodes 6 --select cons_tres
# releases: 22.05.8
# Every example under examples/ (plain, torchrun-dcp, lightning, hf,
# accelerate) run as a user runs it (sbatch job.sbatch, 2 nodes x 2 ranks;
# DDP: 2 x 1, below), checkpointed by spank_ckpt: once left alone, once
# requeued (`scontrol requeue`) after its first committed checkpoint. The
# requeued job resumes on every rank from one step > 0 and ends with every
# rank's final state identical to the uninterrupted job's. examples/plain
# runs a third time as a container would (doc/containers.md): each rank with
# only the variables that document lists. The examples test loom's SDK and
# adapters, not Slurm's interfaces: they run on one release.
source "$LOOM_SRCDIR/tests/ckpt/scenario_lib.sh"
ckpt_site
export LOOM_EXAMPLES=$LOOM_SRCDIR/examples PYTHONPATH=$LOOM_SRCDIR/sdk/python

# finals NAME: "rank R sha256=H" per rank, sorted, from a job's output.
finals() { grep -o 'rank [0-9]* final step=[0-9]* sha256=[0-9a-f]*' "$CK_SCRATCH/$1.out" | sed 's/ final step=[0-9]*//' | sort; }
# interrupt JOB WHAT OUT: requeue the job after its first committed
# checkpoint; a job that ends or stalls first fails with the end of OUT.
interrupt() {
	local deadline=$(( EPOCHSECONDS + 180 ))
	wait_state "$1" RUNNING 120
	until [ -s "$CK_ROOT/root/$1/latest" ]; do
		[ "$EPOCHSECONDS" -lt "$deadline" ] && [ "$(job_state "$1")" = RUNNING ] ||
			fail "$2: job $1 made no checkpoint ($(job_state "$1") after $(( 180 - deadline + EPOCHSECONDS )) s): $(tail -c 1500 "$CK_SCRATCH/$3.out" 2>/dev/null | tr '\n' ';')"
		nap 0.3
	done
	note "$2: job $1 committed $(cat "$CK_ROOT/root/$1/latest"): scontrol requeue $1"
	ckpt_requeue "$1"
}
# compare REF RUN JOB RANKS WHAT [STATES]: the requeued job's ranks resumed
# from one step > 0 and end as the uninterrupted job's, with STATES different
# states (default RANKS: a shard each; 1 for data parallel, DDP's replicas).
compare() {
	local ref=$1 run=$2 job=$3 ranks=$4 what=$5 states=${6:-$4} from
	[ "$(job_field "$job" Restarts)" -ge 1 ] || fail "$what: job $job was not requeued"
	[ "$(finals "$ref" | wc -l)" = "$ranks" ] ||
		{ tail -30 "$CK_SCRATCH/$ref.out" >&2; fail "$what: the uninterrupted job did not end on $ranks ranks"; }
	[ "$(finals "$ref" | awk '{print $3}' | sort -u | wc -l)" = "$states" ] ||
		fail "$what: the $ranks ranks of the uninterrupted job do not hold $states different state(s)"
	from=$(grep -o 'resumed_from=[0-9]*' "$CK_SCRATCH/$run.out" | sort -u)
	[ "$(echo "$from" | wc -l)" = 1 ] && [ "$from" != resumed_from=0 ] ||
		{ tail -30 "$CK_SCRATCH/$run.out" >&2; fail "$what: job $job's ranks did not resume from one step > 0: ${from//$'\n'/ }"; }
	diff <(finals "$ref") <(finals "$run") >/dev/null ||
		fail "$what: job $job ends unlike the uninterrupted job: $(diff <(finals "$ref") <(finals "$run") | tr '\n' ';')"
	note "$what: job $job resumed from ${from#resumed_from=} on all $ranks ranks, final states identical to the uninterrupted job"
}
# example NAME RANKS STATES [SBATCH_ARGS...]: run examples/NAME/job.sbatch twice, interrupt one, compare.
example() {
	local name=$1 ranks=$2 states=$3 ref run
	shift 3
	local script=$LOOM_EXAMPLES/$name/job.sbatch
	ref=$(LOOM_RDZV_PORT=$(free_port) submit --exclusive -o "$CK_SCRATCH/$name-ref.out" "$@" "$script")
	run=$(LOOM_RDZV_PORT=$(free_port) submit --exclusive -o "$CK_SCRATCH/$name-run.out" "$@" "$script")
	interrupt "$run" "examples/$name" "$name-run"
	wait_state "$ref" COMPLETED 600
	wait_state "$run" COMPLETED 600
	compare "$name-ref" "$name-run" "$run" "$ranks" "examples/$name" "$states"
}

# The nodes of this cluster share one host (with the other releases'
# clusters): the ranks meet at 127.0.0.1, each job on a port found free.
free_port() { /usr/bin/python3 "$LOOM_SRCDIR/tests/ckpt/free_port.py"; }
export LOOM_RDZV_HOST=127.0.0.1 LOOM_PYTHON=/usr/bin/python3  # Debian's PyTorch 1.13 (gloo)
/usr/bin/python3 -c 'import torch.distributed' 2>/dev/null || fail "Debian's PyTorch is not importable by /usr/bin/python3"

# The variables doc/containers.md lists (its one code block of names).
vars=$(awk '/^ *```/ { inside = !inside; next } inside && $1 ~ /^[A-Z_]+$/ { print $1 }' "$LOOM_SRCDIR/doc/containers.md")
[ "$(echo "$vars" | wc -l)" -ge 6 ] || fail "doc/containers.md: no list of variables found: $vars"
keep=$(for v in $vars MASTER_ADDR MASTER_PORT; do printf '%s=\"$%s\" ' "$v" "$v"; done)
export STEPS=8000 STEP_SECONDS=0.002
contained=$(submit --exclusive -N2 --ntasks-per-node=2 --ckpt --ckpt-interval=5s -o "$CK_SCRATCH/plain-contained.out" \
	--wrap "export MASTER_ADDR=127.0.0.1 MASTER_PORT=$(free_port); exec srun --kill-on-bad-exit=1 bash -c 'exec env -i PATH=/usr/bin:/bin PYTHONPATH=$PYTHONPATH STEPS=$STEPS STEP_SECONDS=$STEP_SECONDS $keep /usr/bin/python3 $LOOM_EXAMPLES/plain/train.py'")
interrupt "$contained" "examples/plain, only doc/containers.md's variables" plain-contained
example plain 4 4 --ckpt-interval=5s
wait_state "$contained" COMPLETED 300
compare plain-ref plain-contained "$contained" 4 "examples/plain, only doc/containers.md's variables"
unset STEPS STEP_SECONDS

# torchrun per node, in the venv of scripts/frameworks-venv.sh (PyTorch 2.13,
# Lightning, transformers, Accelerate).
py=$(bash "$LOOM_SRCDIR/scripts/frameworks-venv.sh") || fail "cannot make the frameworks venv (scripts/frameworks-venv.sh)"
export LOOM_PYTHON=$py OMP_NUM_THREADS=1
TRAIN_STEPS=300 TRAIN_STEP_SLEEP=0.1 example torchrun-dcp 4 4 --ckpt-interval=5s  # FSDP2: a shard each
# DDP (Lightning, HF, Accelerate): one model, replicated on 2 nodes x 1 rank. With more
# ranks DDP's first step after any restart all-reduces the gradients in
# another order than the uninterrupted run did at that step (its buckets are
# rebuilt after a first step), so the trajectories agree only to rounding:
# two ranks' sum has one order, and the bitwise check holds.
export TRAIN_STEPS=60 TRAIN_STEP_SLEEP=0.3 LOOM_NPROC=1
example lightning 2 1 --ckpt-interval=5s
example hf 2 1 --ckpt-interval=5s
example accelerate 2 1 --ckpt-interval=5s
unset LOOM_NPROC
