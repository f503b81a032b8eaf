#!/bin/bash
# Checkpoints of 4 ranks through the Python SDK, launched the ways users
# launch them on one host, each rank with different state
# (tests/ckpt/train_ranks.py). For each launch: an uninterrupted run, a run
# whose ranks all die abruptly mid-training (saves in flight), and a restart;
# every rank of the restarted run resumes from one step and ends bitwise
# identical to the uninterrupted run, and every committed checkpoint holds 4
# parts with 4 different states.
#   1. srun per rank (SLURM_PROCID/SLURM_NTASKS), no communication library:
#      the ranks agree through rank 0's stamped step.
#   2. torchrun, Debian's PyTorch 1.13 (gloo): agreement through the process
#      group, state with torch.save per rank; torchrun itself restarts them.
#   3. torchrun, PyTorch 2.13 (scripts/torch-venv.sh): DCP into the shared
#      staging directory through a gloo group of the SDK's; relaunched.
#   4. the same with a model sharded by FSDP2, and restored by 2 ranks.
# Without Debian's PyTorch or the 2.13 environment this fails, it does not skip.
set -u
src=${LOOM_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
work=$(mktemp -d /tmp/loom-ranks-py.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "ranks_python: FAIL: $*" >&2; exit 1; }
export LOOM_PYTHON_SDK=$src/sdk/python TRAIN_EVERY=50 LOOM_CKPT_AGREE_SECONDS=0.1 LOOM_CKPT_COMMIT_TIMEOUT=20
prog=$src/tests/ckpt/train_ranks.py

# finals OUT: "rank R sha256=H" per rank, sorted, from a run's output.
finals() { grep -o 'rank [0-9]* final step=[0-9]* sha256=[0-9a-f]*' "$1" | sed 's/ final step=[0-9]*//' | sort; }
# check_run NAME REF RUN DIR WRITER: the restarted run equals the reference, and the checkpoints are whole.
check_run() {
	local name=$1 ref=$2 run=$3 dir=$4 writer=$5 n
	[ "$(finals "$ref" | wc -l)" = 4 ] || fail "$name: the uninterrupted run did not end on 4 ranks: $(cat "$ref")"
	[ "$(finals "$run" | wc -l)" = 4 ] || fail "$name: the restarted run did not end on 4 ranks: $(tail -20 "$run")"
	n=$(grep -o 'resumed_from=[0-9]*' "$run" | sort -u)
	[ "$(echo "$n" | wc -l)" = 1 ] && [ "$n" != resumed_from=0 ] || fail "$name: the ranks did not resume from one committed step: $n"
	[ "$(finals "$ref" | awk '{print $3}' | sort -u | wc -l)" = 4 ] || fail "$name: the 4 ranks do not hold 4 different states"
	diff <(finals "$ref") <(finals "$run") >/dev/null ||
		fail "$name: the restarted run differs from the uninterrupted one: $(diff <(finals "$ref") <(finals "$run") | tr '\n' ';')"
	grep -q "writer=$writer" "$run" || fail "$name: expected the $writer path: $(grep -m1 final "$run")"
	PYTHONPATH=$src/sdk/python python3 "$src/tests/ckpt/ranks_check.py" "$dir" 4 || fail "$name: the checkpoints are not whole"
	echo "ranks_python: $name: resumed from ${n#resumed_from=} on every rank, 4 final states identical to the uninterrupted run"
}

# 1. srun per rank. These ranks share no communication library: they meet
# every 10 steps through files (TRAIN_BARRIER_DIR), the lock-step a real
# job's collectives give it, so none is more than 10 steps past the step
# rank 0 stamps 1 s of steps ahead. A checkpoint that fails anyway (rank 0's
# deadline, 10 s) costs that checkpoint, and training goes on.
srun_ranks() { # DIR RESTART_COUNT [ENV...]
	local dir=$1 rc=$2 r pids=()
	shift 2
	for r in 0 1 2 3; do
		env SLURM_PROCID=$r SLURM_NTASKS=4 SLURM_STEP_NUM_TASKS=4 SLURM_JOB_ID=77 SLURM_STEP_ID=0 LOOM_CKPT_COMMIT_TIMEOUT=10 \
			LOOM_RESTART_COUNT="$rc" LOOM_CKPT_DIR="$dir" TRAIN_STEPS=400 TRAIN_STEP_SLEEP=0.01 \
			LOOM_CKPT_STAMP_LEAD=1 TRAIN_BARRIER_DIR="$dir.barrier" "$@" python3 "$prog" >>"$dir.out" 2>>"$dir.err" &
		pids+=($!)
	done
	for r in "${pids[@]}"; do wait "$r"; done
}
srun_ranks "$work/s-ref" 0
srun_ranks "$work/s-run" 0 TRAIN_CRASH_AT=350
[ -z "$(finals "$work/s-run.out")" ] || fail "srun: the crashing run was not interrupted"
srun_ranks "$work/s-run" 1
check_run "srun per rank, stamped step" "$work/s-ref.out" "$work/s-run.out" "$work/s-run" plain

# 2. and 3. torchrun.
torchrun() { # PYTHON DIR [ENV...]
	local py=$1 dir=$2
	shift 2
	# --redirects/--tee 1: Debian's torchrun 1.13 fails on Python 3.11 with their default (0).
	env LOOM_CKPT_DIR="$dir" TRAIN_COMM=gloo TRAIN_STEPS=300 "$@" timeout 300 "$py" -m torch.distributed.run \
		--standalone --nnodes 1 --nproc_per_node 4 --redirects 1 --tee 1 --log_dir "$dir.logs" \
		--max_restarts "${RESTARTS:-0}" "$prog" >>"$dir.out" 2>>"$dir.err"
}
torch1=
for p in /usr/bin/python3 python3; do
	if "$p" -c 'import torch.distributed' 2>/dev/null; then torch1=$p; break; fi
done
[ -n "$torch1" ] || fail "Debian's PyTorch is not importable (apt-get install python3-torch)"
torchrun "$torch1" "$work/t1-ref" || fail "torchrun ($torch1): the uninterrupted run failed: $(tail -5 "$work/t1-ref.err")"
RESTARTS=1 torchrun "$torch1" "$work/t1-run" TRAIN_CRASH_AT=230 ||
	fail "torchrun ($torch1): the run restarted by torchrun failed: $(tail -5 "$work/t1-run.err")"
check_run "torchrun, torch $("$torch1" -c 'import torch; print(torch.__version__)'), restarted by torchrun" \
	"$work/t1-ref.out" "$work/t1-run.out" "$work/t1-run" torch-save

torch2=$("$src/scripts/torch-venv.sh") || fail "no PyTorch 2.13 environment (scripts/torch-venv.sh)"
torchrun "$torch2" "$work/t2-ref" || fail "torchrun ($torch2): the uninterrupted run failed: $(tail -5 "$work/t2-ref.err")"
torchrun "$torch2" "$work/t2-run" TRAIN_CRASH_AT=230
[ -z "$(finals "$work/t2-run.out")" ] || fail "torchrun ($torch2): the crashing run was not interrupted"
torchrun "$torch2" "$work/t2-run" LOOM_RESTART_COUNT=1 || fail "torchrun ($torch2): the relaunch failed: $(tail -5 "$work/t2-run.err")"
check_run "torchrun, torch $("$torch2" -c 'import torch; print(torch.__version__)'), DCP, relaunched" \
	"$work/t2-ref.out" "$work/t2-run.out" "$work/t2-run" torch-dcp

# 4. FSDP2 (fully_shard, gloo, CPU) on PyTorch 2.13: every rank holds a
# different shard of one model and of Adam's moments (DTensors) through DCP.
# Crashed and relaunched: bitwise identical shards. Then a job of 2 ranks
# restores the 4-rank checkpoint of the last step (DCP reshards): the full
# parameters it holds are those the 4 ranks saved.
fsdp() { torchrun "$torch2" "$@" TRAIN_COMM=fsdp TRAIN_STEPS=200; }
fsdp "$work/f-ref" TRAIN_SAVE_LAST=1 || fail "FSDP: the uninterrupted run failed: $(tail -5 "$work/f-ref.err")"
fsdp "$work/f-run" TRAIN_CRASH_AT=160
[ -z "$(finals "$work/f-run.out")" ] || fail "FSDP: the crashing run was not interrupted"
fsdp "$work/f-run" LOOM_RESTART_COUNT=1 || fail "FSDP: the relaunch failed: $(tail -5 "$work/f-run.err")"
check_run "torchrun, FSDP2 on torch 2.13, DCP, relaunched" "$work/f-ref.out" "$work/f-run.out" "$work/f-run" torch-dcp
cp -a "$work/f-ref" "$work/f-two"
full() { grep -o 'rank [0-9]* full=[0-9a-f]*' "$1" | awk '{print $3}' | sort -u; }
torchrun2() { # like torchrun, 2 processes
	local py=$1 dir=$2
	shift 2
	env LOOM_CKPT_DIR="$dir" TRAIN_COMM=fsdp TRAIN_STEPS=200 "$@" timeout 300 "$py" -m torch.distributed.run \
		--standalone --nnodes 1 --nproc_per_node 2 --redirects 1 --tee 1 --log_dir "$dir.logs" \
		"$prog" >>"$dir.out" 2>>"$dir.err"
}
torchrun2 "$torch2" "$work/f-two" || fail "FSDP: the 2-rank job failed: $(tail -5 "$work/f-two.err")"
[ "$(full "$work/f-ref.out" | wc -l)" = 1 ] || fail "FSDP: the 4 ranks disagree on the full parameters: $(full "$work/f-ref.out")"
grep -q 'resumed_from=200' "$work/f-two.out" || fail "FSDP: the 2-rank job did not restore step 200: $(grep final "$work/f-two.out")"
[ "$(full "$work/f-two.out")" = "$(full "$work/f-ref.out")" ] ||
	fail "FSDP: resharded to 2 ranks, the full parameters differ: $(full "$work/f-two.out") against $(full "$work/f-ref.out")"
echo "ranks_python: FSDP2, 4 ranks' checkpoint restored by 2 ranks (DCP reshards): the same full parameters"
