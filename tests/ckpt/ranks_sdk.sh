#!/bin/bash
# The C++ SDK in a job of 4 ranks (doc/loom-ckpt-protocol.md section 7): 4
# processes of tests/ckpt/ranks_writer, ranks from SLURM_PROCID/SLURM_NTASKS,
# each saving its own bytes at the same steps. Every step is committed once,
# by rank 0, with 4 parts; every rank restores its own bytes; a job of 2
# ranks restores nothing of it. Then rank 2 is killed (kill -9) before it
# writes its part of a step: rank 0 gives up at its deadline naming rank 2,
# and that step is never committed. Then section 7.5 without a collective:
# 3 ranks call should_checkpoint(step) every step; a request file, and then
# the checkpoint signal sent to rank 0 alone, make every rank save the same
# step, the one rank 0 stamped in .loom-save-at.<run>.
#
#   tests/ckpt/ranks_sdk.sh            (LOOM_BUILDDIR locates the program)
set -u
build=${LOOM_BUILDDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
prog=$build/tests/ckpt/ranks_writer
[ -x "$prog" ] || { echo "ranks_sdk: $prog not built" >&2; exit 1; }
tmp=$(mktemp -d /tmp/loom-ranks-XXXXXX)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT
dir=$tmp/ckpt
mkdir "$dir"
fail() { echo "ranks_sdk: FAIL: $*" >&2; exit 1; }

# rank WORLD R STEP_ID ARGS...: one rank of a job step, as srun would start it.
# Run it in the background only: it execs, so that $! is the program that a
# kill must reach.
rank() {
	local world=$1 r=$2 stepid=$3
	shift 3
	exec env -u RANK -u WORLD_SIZE -u SLURM_STEP_NUM_TASKS -u OMPI_COMM_WORLD_RANK -u PMIX_RANK \
		-u LOOM_RESTART_COUNT -u SLURM_RESTART_COUNT -u TORCHELASTIC_RESTART_COUNT \
		LOOM_CKPT_DIR="$dir" LOOM_CKPT_KEEP=10 LOOM_CKPT_COMMIT_TIMEOUT="${LOOM_CKPT_COMMIT_TIMEOUT:-60}" SLURM_JOB_ID=77 SLURM_STEP_ID="$stepid" \
		SLURM_NTASKS="$world" SLURM_PROCID="$r" "$prog" "$@"
}

# job WORLD STEP_ID ARGS...: every rank at once; fails naming the ranks that failed.
job() {
	local world=$1 stepid=$2 r bad=""
	shift 2
	pids=()
	for ((r = 0; r < world; r++)); do
		rank "$world" "$r" "$stepid" "$@" > "$tmp/out.$r" 2> "$tmp/err.$r" &
		pids+=($!)
	done
	for ((r = 0; r < world; r++)); do
		wait "${pids[$r]}" || bad="$bad $r: $(cat "$tmp/err.$r")"
	done
	pids=()
	[ -z "$bad" ] || fail "$* with $world ranks: rank$bad"
}

job 4 0 save 1 3
for s in 1 2 3; do
	"$prog" check "$dir" "$s" 4 || fail "step $s is not one checkpoint of 4 parts"
done
[ "$(cat "$dir/latest")" = step-000000000003 ] || fail "latest is $(cat "$dir/latest")"
[ -z "$(ls -A "$dir/.staging" 2>/dev/null)" ] || fail "staging left behind: $(ls -A "$dir/.staging")"
job 4 1 restore 3
job 2 1 restore none
job 1 1 restore none

# Rank 2 stops before its part of step 4 and is killed there.
fifo=$tmp/ready
mkfifo "$fifo"
export LOOM_TEST_STOP_RANK=2 LOOM_TEST_FIFO=$fifo LOOM_CKPT_COMMIT_TIMEOUT=2
pids=()
for r in 0 1 2 3; do
	rank 4 "$r" 2 save 4 4 > "$tmp/out.$r" 2> "$tmp/err.$r" &
	pids+=($!)
done
read -r -t 120 line < "$fifo" || fail "rank 2 never reached step 4"
kill -9 "${pids[2]}"
{ wait "${pids[2]}"; } 2>/dev/null # not "Killed" on stderr
wait "${pids[0]}" && fail "rank 0 committed step 4 without rank 2"
grep -q "rank 2 of 4 did not finish its part of step 4 within 2 s" "$tmp/err.0" ||
	fail "rank 0 does not name rank 2: $(cat "$tmp/err.0")"
for r in 1 3; do
	wait "${pids[$r]}" || fail "rank $r: $(cat "$tmp/err.$r")"
done
pids=()
unset LOOM_TEST_STOP_RANK LOOM_TEST_FIFO LOOM_CKPT_COMMIT_TIMEOUT
[ ! -e "$dir/step-000000000004" ] || fail "step 4 was committed without rank 2's part"
[ "$(cat "$dir/latest")" = step-000000000003 ] || fail "latest moved to $(cat "$dir/latest")"
job 4 3 restore 3

# loom ckpt shows the world size and names an absent rank: step 6 is step 3
# with rank 3's part left out of its manifest.
loom=$build/tools/loom
cp -r "$dir/step-000000000003" "$dir/step-000000000006"
python3 - "$dir/step-000000000006/MANIFEST.json" <<'PY' || fail "cannot make a torn step 6"
import json, sys
m = json.load(open(sys.argv[1]))
m["step"] = 6
m["ranks"] = [dict(p, step=6) for p in m["ranks"] if p["rank"] != 3]
json.dump(m, open(sys.argv[1], "w"))
PY
out=$("$loom" ckpt verify "$dir" --ranks 4) && fail "verify passes a torn checkpoint: $out"
grep -q "^step-000000000006: BROKEN: .*rank 3 of 4 has no part" <<<"$out" || fail "verify does not name rank 3: $out"
grep -q "^step-000000000003: ok (step 3, 4 ranks, 4 files)$" <<<"$out" || fail "verify: $out"
grep -q "^restore by a job of 4 ranks would take $dir/step-000000000003 (step 3)$" <<<"$out" || fail "verify: $out"
out=$("$loom" ckpt verify "$dir" --ranks 2)
grep -q "^step-000000000003: ok (step 3, 4 ranks, 4 files; not for this job: written by 4 ranks, this job has 2 ranks)$" <<<"$out" ||
	fail "verify --ranks 2: $out"
grep -q "^no complete checkpoint for a job of 2 ranks in $dir$" <<<"$out" || fail "verify --ranks 2: $out"
out=$("$loom" ckpt ls "$dir")
grep -q "^CHECKPOINT  *STEP  *RANKS  *FILES " <<<"$out" || fail "ls has no RANKS column: $out"
grep -q "^step-000000000003  *3  *4  *4 .* ok (latest)$" <<<"$out" || fail "ls: $out"
grep -q "^step-000000000006  *6  *-  .*broken: .*rank 3 of 4 has no part" <<<"$out" || fail "ls: $out"
# Inside a --ckpt job, without a directory: the job's $LOOM_CKPT_DIR.
[ "$(LOOM_CKPT_DIR=$dir "$loom" ckpt ls)" = "$out" ] || fail "ls without DIR does not list \$LOOM_CKPT_DIR"
out=$(env -u LOOM_CKPT_DIR "$loom" ckpt ls 2>&1) && fail "ls without DIR or \$LOOM_CKPT_DIR succeeded: $out"
grep -q "a checkpoint directory or --job ID is required" <<<"$out" || fail "ls without DIR: $out"
out=$("$loom" ckpt ls --job 1 "$dir" 2>&1) && fail "ls with DIR and --job succeeded: $out"
out=$("$loom" ckpt ls "$dir" --json)
python3 -c '
import json, sys
c = {x["name"]: x for x in json.load(sys.stdin)}
s3, s6 = c["step-000000000003"], c["step-000000000006"]
assert (s3["format"], s3["world_size"], s3["layout"], s3["parts"], s3["reason"]) == ("loom-ckpt/2", 4, "ranks", 4, "ok"), s3
assert s6["reason"] == "rank-missing" and "world_size" not in s6, s6
' <<<"$out" || fail "ls --json: $out"
# agree STEP_ID TRIGGER...: 3 ranks of "ranks_writer agree" (steps of 1 ms,
# a stamp 3 s ahead); once every rank is 50 steps in, TRIGGER makes rank 0
# wish to save; every rank saves the step rank 0 stamps, and it is
# committed. Sets $agreed. These ranks share no collective that keeps them
# in lock-step, as a real job's does: the lead covers how far apart a loaded
# machine (the sanitizer build beside the cluster tiers) lets them drift;
# 0.2 s did not.
mkfifo "$tmp/agree"
exec 4<> "$tmp/agree"
agree() {
	local stepid=$1 r line
	shift
	pids=()
	for r in 0 1 2; do
		LOOM_TEST_FIFO=$tmp/agree LOOM_CKPT_STAMP_LEAD=3 LOOM_CKPT_SIGNAL=USR1 \
			rank 3 "$r" "$stepid" agree 30000 > "$tmp/out.$r" 2> "$tmp/err.$r" 4>&- &
		pids+=($!)
	done
	for r in 0 1 2; do
		read -r -t 60 line <&4 && [ "$line" = ready ] || fail "agree: the ranks did not start"
	done
	"$@"
	for r in 0 1 2; do
		wait "${pids[$r]}" || fail "agree ($*): rank $r: $(cat "$tmp/err.$r")"
	done
	pids=()
	agreed=$(sed -n 's/^saved //p' "$tmp/out.0")
	for r in 1 2; do
		[ "$(cat "$tmp/out.$r")" = "saved $agreed" ] || fail "agree ($*): rank 0 saved $agreed, rank $r $(cat "$tmp/out.$r")"
	done
	"$prog" check "$dir" "$agreed" 3 || fail "agree ($*): step $agreed is not one checkpoint of 3 parts"
	local stamp=$dir/.loom-save-at.j77_r0_s$stepid
	[ "$(cat "$stamp")" = "{\"step\": $agreed, \"seq\": 1}" ] || fail "agree ($*): $stamp: $(cat "$stamp")"
	grep -q "^loom_ckpt: rank 1 of 3 without allreduce_max: .*call should_checkpoint(step)" "$tmp/err.1" ||
		fail "agree: should_checkpoint() without a step is not told: $(cat "$tmp/err.1")"
}
request() {
	printf '{"seq": %d, "reason": "time_limit", "time": %d}\n' "$1" "$(date +%s)" > "$dir/.loom-request.tmp"
	mv "$dir/.loom-request.tmp" "$dir/.loom-request"
}
request 1 # older than the ranks: no request
agree 4 request 2
by_request=$agreed
signal_rank0() { kill -USR1 "${pids[0]}"; }
agree 5 signal_rank0

echo "ranks_sdk: 4 ranks: steps 1-3 committed with 4 parts each, each rank restored its own bytes;" \
	"rank 2 killed before its part of step 4: not committed, rank 0 named it; loom ckpt names rank 3 absent;" \
	"3 ranks saved step $by_request on a request, step $agreed on rank 0's signal, as rank 0 stamped them"
