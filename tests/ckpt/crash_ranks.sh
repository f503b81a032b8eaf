#!/bin/bash
# Crash safety of checkpoints of several ranks (doc/loom-ckpt-protocol.md
# 7.4): rounds of 2 or 3 ranks of tests/ckpt/ranks_writer (crash mode: every
# rank saves every step, its own files a.bin and b.bin whose bytes name the
# rank and step and whose size varies with both), ranks from SLURM_PROCID and
# SLURM_NTASKS, rank 0 committing with a timeout of 1 s. In each round one
# rank is killed (kill -9) after a random delay (seeded, printed) during the
# saves; the others run into rank 0's commit timeout or finish. Every 10th
# round kills rank 0 instead between the parts and the commit: another rank
# is held before one step until rank 0 has written its part and waits, rank 0
# is stopped, the held rank writes its part, and rank 0 is killed with every
# part of that step staged. After each round tests/ckpt/crash_ranks_check
# checks every committed step (every rank's part, each rank's own bytes of
# that step, whole) and restores as every rank of 2 and of 3: the newest
# committed step of that world, at least the last one rank 0 committed, each
# rank's own bytes.
#
#   tests/ckpt/crash_ranks.sh     CRASH_RANKS_ROUNDS (200), CRASH_RANKS_SEED
#                                 (4242), CRASH_RANKS_LANES (4 rounds at once,
#                                 each lane its own directory)
#
# The directories are on /dev/shm when it is writable (CRASH_RANKS_TMP
# otherwise): a kill -9 is a crash of the process, not of the machine, and
# fsync on a slow disk would make the rounds too long. On failure: the round,
# its seed and what was wrong.
set -u
rounds=${CRASH_RANKS_ROUNDS:-200}
seed=${CRASH_RANKS_SEED:-4242}
lanes=${CRASH_RANKS_LANES:-4}
build=${LOOM_BUILDDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
prog=$build/tests/ckpt/ranks_writer
check=$build/tests/ckpt/crash_ranks_check
[ -x "$prog" ] && [ -x "$check" ] || { echo "crash_ranks: $prog or $check not built" >&2; exit 1; }
base=${CRASH_RANKS_TMP:-/dev/shm}
[ -d "$base" ] && [ -w "$base" ] || base=${TMPDIR:-/tmp}
tmp=$(mktemp -d "$base/loom-crash-ranks-XXXXXX")
trap 'kill $(jobs -p) 2>/dev/null; wait; rm -rf "$tmp"' EXIT
steps=20 # per round

# rank WORLD R ROUND FIRST LAST [VAR=VALUE...]: one rank of a job step, as srun starts
# it; run in the background, it is the process ($!) the kill hits.
rank() {
	local world=$1 r=$2 round=$3 first=$4 last=$5
	shift 5
	exec env -u RANK -u WORLD_SIZE -u SLURM_STEP_NUM_TASKS -u OMPI_COMM_WORLD_RANK -u PMIX_RANK \
		-u LOOM_RESTART_COUNT -u SLURM_RESTART_COUNT -u TORCHELASTIC_RESTART_COUNT \
		LOOM_CKPT_DIR="$dir" LOOM_CKPT_KEEP=3 LOOM_CKPT_COMMIT_TIMEOUT=1 SLURM_JOB_ID="$job" \
		SLURM_STEP_ID="$round" SLURM_NTASKS="$world" SLURM_PROCID="$r" "$@" \
		"$prog" crash "$first" "$last" > "$ldir/out.$r" 2> "$ldir/err.$r" 3>&-
}

# Waits for a file another process writes (there is nothing else to wait on).
wait_file() {
	local i
	for ((i = 0; i < 3000; i++)); do
		[ -e "$1" ] && return 0
		sleep 0.01
	done
	return 1
}

saved() { grep -c '^saved ' "$ldir/out.$1"; }
last_saved() { awk '$1 == "saved" { s = $2 } END { print (s == "" ? -1 : s) }' "$ldir/out.$1"; }

# The others than the victim: ranks above 0 finish; rank 0 finishes or names
# the victim among the ranks that did not finish their part (a rank that
# lives but is slow, on a loaded machine, may be named beside it: nothing is
# committed either way). On a loaded machine rank 0 may also give up on a
# step before the victim's kill, naming only ranks that were late, not lost:
# accepted (as "slow") only when every rank's part of that step is staged in
# the end and the named ranks finished; at most one round in 20.
judge_others() {
	local world=$1 victim=$2 r line named step
	local -a status=()
	for ((r = 0; r < world; r++)); do
		[ "$r" = "$victim" ] && continue
		wait "${pids[$r]}"
		status[$r]=$?
		[ "$r" = 0 ] || { [ "${status[$r]}" = 0 ] && [ ! -s "$ldir/err.$r" ]; } ||
			{ why="rank $r exited ${status[$r]}: $(cat "$ldir/err.$r")"; return 1; }
	done
	[ "$victim" = 0 ] || [ "${status[0]}" = 0 ] && return 0
	line=$(grep -m1 -o "ranks\? [0-9, and]* of $world did not finish \(its\|their\) part of step [0-9]* within 1 s" "$ldir/err.0")
	named=$(echo "$line" | sed 's/^ranks\? \([0-9, and]*\) of .*/\1/; s/,//g; s/ and / /g')
	step=$(echo "$line" | sed -n 's/.* part of step \([0-9]*\) within.*/\1/p')
	[ -n "$step" ] || { why="rank 0 failed: $(cat "$ldir/err.0")"; return 1; }
	if [[ " $named " == *" $victim "* ]]; then
		note="$note, rank 0 gave up on rank(s) $named"
		return 0
	fi
	for ((r = 0; r < world; r++)); do
		ls "$dir/.staging/$(printf 'step-%012d' "$step")".*/.parts/"$(printf 'rank-%05d' "$r")".json >/dev/null 2>&1 ||
			{ why="rank 0 gave up on rank(s) $named at step $step, not on the victim, rank $victim, and rank $r's part of it never came: $(cat "$ldir/err.0")"; return 1; }
	done
	slow=$((slow + 1)) note="$note, rank 0 gave up on slow rank(s) $named at step $step (every part came later)"
	[ "$((slow * 20 * lanes))" -le "$rounds" ] ||
		{ why="rank 0 gave up on live ranks in $slow rounds of this lane: more than one in 20"; return 1; }
}

# start WORLD ROUND FIRST LAST [VAR=VALUE...]: every rank, in pids[]; waits
# until each is about to save (a held rank may say "held" before the others
# are ready: held=1).
start() {
	local world=$1 round=$2 first=$3 last=$4 r line ready=0
	shift 4
	pids=() held=0
	for ((r = 0; r < world; r++)); do
		rank "$world" "$r" "$round" "$first" "$last" LOOM_TEST_FIFO="$ldir/fifo" "$@" &
		pids+=($!)
	done
	while [ "$ready" -lt "$world" ]; do
		read -r -t 30 line <&3 || { why="only $ready ranks started"; return 1; }
		case $line in
		ready) ready=$((ready + 1)) ;;
		held) held=1 ;;
		*) why="a rank said '$line'"; return 1 ;;
		esac
	done
}

# kill_round ROUND WORLD FIRST LAST: one rank killed after a random delay.
kill_round() {
	local round=$1 world=$2 first=$3 last=$4 r st
	local victim=$((RANDOM % world)) ms=$((RANDOM % window))
	desc="$world ranks, kill -9 rank $victim after $ms ms"
	start "$world" "$round" "$first" "$last" || return 1
	sleep "$((ms / 1000)).$(printf '%03d' $((ms % 1000)))"
	kill -9 "${pids[$victim]}" 2>/dev/null # it may have finished
	wait "${pids[$victim]}" 2>/dev/null
	st=$?
	local n
	n=$(saved "$victim")
	if [ "$st" = 0 ]; then
		late=$((late + 1)) note="rank $victim had finished"
		window=$((window * 3 / 4 > 10 ? window * 3 / 4 : 10))
	elif [ "$n" = 0 ]; then
		early=$((early + 1)) note="rank $victim had saved nothing"
		window=$((window * 5 / 4 + 1))
	else
		mid=$((mid + 1)) note="rank $victim had saved $n of $steps"
	fi
	judge_others "$world" "$victim"
}

# stopped PID: wait (10 s at most) until every thread of PID is stopped.
stopped() {
	local deadline=$((SECONDS + 10)) t st running
	while :; do
		running=0
		for t in /proc/"$1"/task/*/stat; do
			read -r st <"$t" 2>/dev/null || continue
			st=${st##*) }
			case ${st%% *} in T | t) ;; *) running=1 ;; esac
		done
		[ "$running" = 0 ] && return 0
		[ "$SECONDS" -lt "$deadline" ] || return 1
		sleep 0.01
	done
}

# committer_round ROUND WORLD FIRST LAST: rank 0 killed with every part of a
# step staged and nothing committed.
committer_round() {
	local round=$1 world=$2 first=$3 last=$4 r line
	local hold=$((1 + RANDOM % (world - 1))) step=$((first + RANDOM % steps))
	local staging
	staging=$dir/.staging/$(printf 'step-%012d' "$step").run-j${job}_r0_s${round}.$((step - first + 1))
	desc="$world ranks, rank $hold held before step $step, kill -9 rank 0 between the parts and the commit"
	start "$world" "$round" "$first" "$last" LOOM_CKPT_COMMIT_TIMEOUT=60 LOOM_TEST_HOLD_RANK="$hold" \
		LOOM_TEST_HOLD_STEP="$step" LOOM_TEST_GO="$ldir/go" || return 1
	[ "$held" = 1 ] || { read -r -t 30 line <&3 && [ "$line" = held ]; } ||
		{ why="rank $hold never held ($line)"; return 1; }
	for ((r = 0; r < world; r++)); do
		[ "$r" = "$hold" ] && continue
		wait_file "$staging/.parts/rank-0000$r.json" || { why="rank $r's part of step $step never came"; return 1; }
	done
	kill -STOP "${pids[0]}"
	# kill returns before the signal has stopped every thread of rank 0: until
	# then its committer may still see the last part come and commit.
	stopped "${pids[0]}" || { why="rank 0 did not stop"; return 1; }
	timeout 30 sh -c 'echo go > "$1"' sh "$ldir/go" || { why="rank $hold never waited to go on"; return 1; }
	read -r -t 30 line <&3 && [ "$line" = saved ] || { why="rank $hold never saved ($line)"; return 1; }
	local parts
	parts=$(find "$staging/.parts" -maxdepth 1 -name 'rank-*.json' -printf '%f\n' | grep -c '^rank-[0-9]*\.json$')
	[ "$parts" = "$world" ] && [ ! -e "$dir/$(printf 'step-%012d' "$step")" ] ||
		{ why="not every part and no commit of step $step: $parts parts, $(ls "$dir")"; return 1; }
	kill -9 "${pids[0]}"
	wait "${pids[0]}" 2>/dev/null
	committer=$((committer + 1)) note="rank 0 killed with $parts parts of step $step staged"
	judge_others "$world" 0 || return 1
	[ "$(last_saved 0)" = $((step > first ? step - 1 : -1)) ] ||
		{ why="rank 0 said it committed step $(last_saved 0)"; return 1; }
	[ ! -e "$dir/$(printf 'step-%012d' "$step")" ] || { why="step $step was committed"; return 1; }
}

# lane L: rounds L, L + lanes, ... in the lane's own directory.
lane() {
	local l=$1 round world first last got rseed
	ldir=$tmp/lane$l dir=$tmp/lane$l/ckpt job=$((700 + l)) window=20
	early=0 mid=0 late=0 committer=0 slow=0 pids=()
	trap 'for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done' EXIT
	trap 'exit 1' TERM
	mkdir -p "$dir"
	mkfifo "$ldir/fifo" "$ldir/go"
	exec 3<> "$ldir/fifo"
	for ((round = l; round < rounds; round += lanes)); do
		[ -e "$tmp/failed" ] && return 0
		rseed=$((seed + round))
		RANDOM=$rseed
		world=$((2 + RANDOM % 2)) first=$((round * 100 + 1)) last=$((round * 100 + steps)) why="" note=""
		if [ $((round % 10)) = 9 ]; then
			committer_round "$round" "$world" "$first" "$last"
		else
			kill_round "$round" "$world" "$first" "$last"
		fi
		if [ -z "$why" ]; then
			got=$("$check" "$dir" "$world" "$(last_saved 0)" 2> "$ldir/check.err") ||
				why="$(cat "$ldir/check.err")"
		fi
		if [ -n "$why" ]; then
			echo "crash_ranks: FAIL: round $round (seed $rseed, lane $l): $desc: $why" | tee -a "$tmp/failed" >&2
			return 1
		fi
		echo "round $round: $desc: $note; $got"
		rm -rf "$dir/.staging" # the debris of this round (prune removes it once old)
	done
	echo "$early $mid $late $committer" > "$ldir/counts"
}

start=$SECONDS
for ((l = 0; l < lanes; l++)); do
	lane "$l" &
done
wait
[ ! -e "$tmp/failed" ] || exit 1
read -r early mid late committer < <(cat "$tmp"/lane*/counts | awk '{ for (i = 1; i <= 4; i++) s[i] += $i }
	END { print s[1], s[2], s[3], s[4] }')
echo "crash_ranks: $rounds rounds (seed $seed) in $((SECONDS - start)) s: $mid kills during the saves," \
	"$early in or before the first, $late after the last;" \
	"$committer kills of rank 0 between the parts and the commit;" \
	"every committed step whole with every rank's part, every rank restored its own bytes"
[ "$mid" -gt 0 ] || { echo "crash_ranks: no kill landed during the saves" >&2; exit 1; }
[ "$rounds" -lt 10 ] || [ "$committer" -gt 0 ] ||
	{ echo "crash_ranks: no kill of rank 0 between the parts and the commit" >&2; exit 1; }
