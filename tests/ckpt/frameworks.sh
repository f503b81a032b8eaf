#!/bin/bash
# The framework adapters for real: examples/lightning/train.py
# (loom_ckpt.lightning.LoomCheckpoint; also with epochs of one batch, every
# save at an epoch's end), examples/hf/train.py (loom_ckpt.hf.LoomCallback)
# and examples/accelerate/train.py (loom_ckpt.hf.accelerate_save/_restore),
# each with 2 ranks on CPU (torchrun, gloo),
# every rank on its own data:
#   (a) an uninterrupted run;
#   (b) a run asked to checkpoint mid-training through spank_ckpt's request
#       file (loom-ckpt-helper request), SIGKILLed once a loom commit is there
#       (for HF with one rank late to write its file: tests/ckpt/late_rank);
#   (c) a restart in the same directory, which must resume from that commit
#       (step > 0) and end with final weights bitwise identical (sha256) to
#       (a) on every rank;
#   (d) HF only: a new job whose output_dir holds a checkpoint-N no loom
#       commit covers starts from step 0 and sets that directory aside.
# Needs the venv of scripts/frameworks-venv.sh (made on first use, from
# PyPI): without it this test fails, it does not skip.
set -u
src=${LOOM_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${LOOM_BUILDDIR:-$src}
helper=$build/plugins/spank_ckpt/loom-ckpt-helper
fail() { echo "frameworks: FAIL: $*" >&2; exit 1; }
[ -x "$helper" ] || fail "$helper is missing: build the tree first (LOOM_BUILDDIR=$build)"
py=$(bash "$src/scripts/frameworks-venv.sh") ||
	fail "cannot make the frameworks venv (scripts/frameworks-venv.sh): see its messages above"
"$py" -c 'import torch, lightning, transformers, accelerate' ||
	fail "$py cannot import torch, lightning, transformers and accelerate"
work=$(mktemp -d /tmp/loom-frameworks.XXXXXX)
runner=
# descendants PID: the processes below PID (torchrun starts each rank in a session of its own)
descendants() {
	local c
	for c in $(ps -o pid= --ppid "$1"); do
		echo "$c"
		descendants "$c"
	done
}
# kill_run: SIGKILL the run in flight, its ranks first (as a node failure would)
kill_run() {
	[ -n "$runner" ] || return 0
	local ranks
	ranks=$(descendants "$runner")
	# shellcheck disable=SC2086 # a list of pids, one word each
	[ -n "$ranks" ] && kill -KILL $ranks 2>/dev/null
	kill -KILL "$runner" 2>/dev/null
	wait "$runner" 2>/dev/null
	runner=
}
cleanup() {
	kill_run
	rm -rf "$work"
}
trap cleanup EXIT
export PYTHONPATH=$src/sdk/python HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 OMP_NUM_THREADS=1
unset LOOM_CKPT_SIGNAL LOOM_CKPT_INTERVAL SLURM_JOB_ID LOOM_CKPT_RUN_ID

free_port() { "$py" "$src/tests/ckpt/free_port.py"; }

# launch NAME CKPT_DIR [VAR=VALUE...]: torchrun with 2 ranks in the background ($runner); output in $work/NAME.out
launch() {
	local name=$1 dir=$2
	shift 2
	mkdir -p "$dir"
	(cd "$work" && exec env LOOM_CKPT_DIR="$dir" TRAIN_OUTPUT_DIR="$dir.hf-output" "$@" \
		"$py" -m torch.distributed.run --nnodes 1 --nproc-per-node 2 --master-addr 127.0.0.1 \
		--master-port "$(free_port)" "$script") >"$work/$name.out" 2>&1 &
	runner=$!
}

# finals NAME: "rank sha256" of each rank's final line, sorted
finals() { sed -n 's/^rank \([0-9]*\) final step=[0-9]* sha256=\([0-9a-f]*\) resumed_from=[0-9]*$/\1 \2/p' "$work/$1.out" | sort; }

show_fail() { # NAME MESSAGE
	sed 's/^/    /' "$work/$1.out" | tail -40 >&2
	fail "$2"
}

check_framework() { # LABEL SCRIPT STEPS SLEEP [VAR=VALUE... for (b)]
	local label=$1 steps=$3 sleep=$4
	script=$2
	shift 4
	# (a)
	launch "$label-ref" "$work/$label-ref" TRAIN_STEPS="$steps"
	wait "$runner" || show_fail "$label-ref" "$label: the uninterrupted run failed"
	runner=
	local ref
	ref=$(finals "$label-ref")
	[ "$(echo "$ref" | wc -l)" = 2 ] || show_fail "$label-ref" "$label: the uninterrupted run did not print its final line on both ranks"
	# (b)
	local dir=$work/$label-run
	launch "$label-kill" "$dir" TRAIN_STEPS="$steps" TRAIN_STEP_SLEEP="$sleep" "$@"
	local committed=
	for _ in $(seq 180); do
		"$helper" --uid="$(id -u)" --gid="$(id -g)" request "$dir" time_limit >/dev/null 2>&1 ||
			fail "$label: $helper request $dir failed"
		committed=$(find "$dir" -maxdepth 1 -name 'step-*' -printf '%f\n' | sort | head -1)
		[ -n "$committed" ] && break
		kill -0 "$runner" 2>/dev/null || show_fail "$label-kill" "$label: the run ended before any loom commit"
		sleep 0.5
	done
	[ -n "$committed" ] || show_fail "$label-kill" "$label: no loom commit in $dir after 90 s of requests"
	kill_run
	sleep 1 # nothing of the killed run may write on
	grep -q '^rank [0-9]* final ' "$work/$label-kill.out" && fail "$label: the run finished before it was killed: make it slower"
	local newest
	newest=$(ls "$dir" | sed -n 's/^step-0*\([0-9]\)/\1/p' | sort -n | tail -1)
	echo "  $label: killed (SIGKILL) mid-training; loom commits left: $(find "$dir" -maxdepth 1 -name 'step-*' -printf '%f\n' | sort | tr '\n' ' ')"
	# (c)
	launch "$label-restart" "$dir" TRAIN_STEPS="$steps"
	wait "$runner" || show_fail "$label-restart" "$label: the restarted run failed"
	runner=
	local resumed
	resumed=$(sed -n 's/^rank \([0-9]*\) final .* resumed_from=\([0-9]*\)$/\1 \2/p' "$work/$label-restart.out" | sort)
	[ "$(echo "$resumed" | awk -v s="$newest" '$2 > 0 && $2 == s' | wc -l)" = 2 ] ||
		show_fail "$label-restart" "$label: the restart did not resume from the newest commit (step $newest) on both ranks: '$resumed'"
	[ "$(finals "$label-restart")" = "$ref" ] ||
		show_fail "$label-restart" "$label: final weights differ from the uninterrupted run's: '$(finals "$label-restart")' vs '$ref'"
	echo "  $label: restart resumed at step $(echo "$resumed" | awk 'NR == 1 {print $2}') on both ranks;" \
		"final weights sha256 identical to the uninterrupted run on ranks 0 and 1 ($(echo "$ref" | awk 'NR == 1 {print substr($2, 1, 16)}')...)"
}

echo "frameworks: $("$py" -c 'import torch, lightning, transformers; print("torch", torch.__version__, "lightning", lightning.__version__, "transformers", transformers.__version__)')"
check_framework lightning "$src/examples/lightning/train.py" 60 0.3
# Epochs of one batch: every save is at an epoch's last batch, and the
# restart begins a new epoch (its loader must skip nothing).
TRAIN_BATCHES_PER_EPOCH=1 check_framework lightning-epochs "$src/examples/lightning/train.py" 40 0.3
# (b) with rank 1 late to write its RNG state into HF's checkpoint-N/
# (tests/ckpt/late_rank): rank 0's on_save must leave the directory to it.
check_framework hf "$src/examples/hf/train.py" 40 0.3 \
	PYTHONPATH="$src/tests/ckpt/late_rank:$PYTHONPATH" LOOM_TEST_LATE_RANK=1
# (d) HF, a new job whose output_dir holds an HF checkpoint no loom commit
# of its own covers (the restarted run's, its marker removed: as a run cut
# short mid-save or another job leaves one): it is moved aside, and the
# run starts from step 0 and ends as the uninterrupted run, not resuming it.
stale_hf_checkpoint() {
	local out=$work/hf-stale.hf-output stale
	cp -a "$work/hf-run.hf-output" "$out"
	stale=$(cd "$out" && ls -d checkpoint-* | head -1)
	[ -n "$stale" ] || fail "hf: the restarted run left no checkpoint-N in its output_dir to reuse"
	rm -f "$out/$stale/.loom-placed"
	launch hf-stale "$work/hf-stale" TRAIN_STEPS=40
	wait "$runner" || show_fail hf-stale "hf: the run beside a stale $stale failed"
	runner=
	ls -d "$out/.loom-unadopted/$stale".* >/dev/null 2>&1 && [ ! -e "$out/$stale" ] ||
		show_fail hf-stale "hf: the stale $out/$stale was not moved to .loom-unadopted/"
	[ "$(finals hf-stale)" = "$(finals hf-ref)" ] ||
		show_fail hf-stale "hf: a fresh run beside a stale $stale ends unlike the uninterrupted run"
	echo "  hf: a new job's output_dir held $stale (no loom commit): moved to .loom-unadopted/, the run began at step 0"
}
stale_hf_checkpoint
check_framework accelerate "$src/examples/accelerate/train.py" 60 0.3
echo "frameworks: Lightning, HF Trainer and Accelerate, 2 ranks each: a loom commit made on spank_ckpt's request" \
	"mid-training survives SIGKILL, and the restart resumes from it bitwise identical to an uninterrupted run"
