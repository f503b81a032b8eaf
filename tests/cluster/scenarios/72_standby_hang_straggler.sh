#!/bin/bash
# cluster: --nodes 9 --gpus-per-node 2 --select cons_tres
# Progress reports (4 nodes x 2 ranks, srun per rank, one standby; the
# ranks step about 5 times a second, in lock-step every 10 steps):
#   - rank 2 throttled from outside (stopped and continued by turns): named
#     a straggler in the job's AdminComment, its node marked suspect
#     (loom:suspect:straggler:), the job goes on;
#   - rank 5 stopped (SIGSTOP): its heartbeat stops, the others wait for it;
#     the keeper finds the hang, names rank 5, marks its node suspect (not
#     drained) and starts the step again on the others plus the standby.
# The job ends with every rank identical to an uninterrupted run.
source "$LOOM_SRCDIR/tests/ckpt/scenario_lib.sh"
standby_site hang_floor=10s
prog=$LOOM_SRCDIR/tests/ckpt/train_ranks.py
export TRAIN_COMM=none TRAIN_STEPS=450 TRAIN_STEP_SLEEP=0.2 TRAIN_EVERY=25 LOOM_CKPT_COMMIT_TIMEOUT=60
out=$CK_SCRATCH
# rank_pid JOB RANK: the pid of that rank's training process in this cluster
# (every node is this host, and the clusters of the other releases beside
# it run jobs of the same ids).
rank_pid() {
	local p
	for p in $(pgrep -f "$prog"); do
		grep -qxz "SLURM_JOB_ID=$1" "/proc/$p/environ" 2>/dev/null &&
			grep -qxz "SLURM_PROCID=$2" "/proc/$p/environ" &&
			grep -qxz "SLURM_CONF=$SLURM_CONF" "/proc/$p/environ" && { echo "$p"; return; }
	done
}
ref=$(standby_ranks ref)
run=$(standby_ranks run --ckpt-standby=1)
wait_state "$run" RUNNING 60
mapfile -t hosts < <(expand_hosts "$(job_field "$run" NodeList)")
slow=${hosts[1]} stuck=${hosts[2]} standby=${hosts[4]}
ckpt_wait_commit "$run" 120
p2=$(rank_pid "$run" 2)
[ -n "$p2" ] || fail "no process of rank 2 of job $run"
note "job $run on ${hosts[*]}: throttling rank 2 ($slow, pid $p2)"
# (A flag ends the loop: a signal would run the runner's trap, inherited, in it.)
( while [ ! -e "$out/unthrottle" ] && kill -STOP "$p2" 2>/dev/null; do sleep 0.3; kill -CONT "$p2"; sleep 0.1; done ) &
throttle=$!
wait_log -F "job $run: straggler: rank 2 on $slow" "$LOOM_CLUSTER_DIR/log/slurmd-${hosts[0]}.log" 90
touch "$out/unthrottle"
wait "$throttle"
kill -CONT "$p2"
extra() { scontrol show node "$1" | sed -n 's/^ *Extra=//p'; }
case $(extra "$slow") in "loom:suspect:straggler:job $run: rank 2 on $slow: "*) ;;
	*) fail "$slow is not marked a straggler: Extra=$(extra "$slow")" ;; esac
named=$(admin_note "$run" "loom straggler: ")
case $named in "loom straggler: rank 2 on $slow: "*) ;; *) fail "job $run: AdminComment's straggler note '$named'" ;; esac
note "$named"
p5=$(rank_pid "$run" 5)
[ -n "$p5" ] || fail "no process of rank 5 of job $run"
note "stopping rank 5 ($stuck, pid $p5)"
t0=$(date +%s.%N)
kill -STOP "$p5"
wait_log -F "starting the step again" "$out/run.out" 120
t1=$(date +%s.%N)
line=$(grep -m1 'starting the step again' "$out/run.out")
case $line in *"$stuck -> $standby (hang)"*) ;; *) fail "job $run: the restart is not $stuck -> $standby (hang): $line" ;; esac
note "srun: ${line#*: } ($(awk -v a="$t1" -v b="$t0" 'BEGIN {printf "%.1f", a - b}') s after the stop)"
case $(extra "$stuck") in "loom:suspect:hang:job $run: rank 5 on $stuck: "*) ;;
	*) fail "$stuck is not marked suspect for the hang: Extra=$(extra "$stuck")" ;; esac
case $(sinfo -h -n "$stuck" -o %T) in drain*) fail "$stuck was drained for a stopped process" ;; esac
wait_state "$run" COMPLETED 300
wait_state "$ref" COMPLETED 300
[ "$(job_field "$run" Restarts)" = 0 ] || fail "job $run was requeued: not recovered in its allocation"
diff <(standby_finals ref) <(standby_finals run) >/dev/null ||
	fail "job $run: final states differ from the uninterrupted run: $(diff <(standby_finals ref) <(standby_finals run) | tr '\n' ';')"
[ "$(standby_finals run | wc -l)" = 8 ] || fail "job $run did not end on 8 ranks"
note "job $run: straggler named, hang recovered in the allocation; 8 ranks identical to job $ref"
