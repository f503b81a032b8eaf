# cluster: --nodes 8 --gpus-per-node 8 --select topo
# Backfill's plan for a job that must wait is the engine's (will_run=engine),
# where cons_tres + topology/tree plans other nodes for the same start.
# Every GPU is busy; the jobs that end first free n1 and n2 whole (leaf1) and
# half of n5 and n6 (leaf2: a 4-GPU job ends, another 4-GPU job stays). A
# 2-node x 4-GPU job then waits for that time. cons_tres plans it on n1 and n2
# (its nodes with the most free GPUs, and the first leaf that fits); the engine
# packs it onto the half-used n5 and n6 and keeps n1 and n2 whole (sub-node jobs
# on partly used nodes first). The plan squeue shows (SchedNodes) is the
# engine's, slurmctld logs that it replaced cons_tres's, and slurmctld stays up.
# (With will_run=cons_tres the plan is n[1-2]: tests/mutations/scenario16-*.)
log=$LOOM_CLUSTER_DIR/log/slurmctld.log
# The engine's plan is logged (with cons_tres's) under DebugFlags=SelectType.
scontrol setdebugflags +SelectType || fail "scontrol setdebugflags +SelectType refused"
# The jobs that end first end at one second, set with EndTime: started a
# second apart on a loaded machine, by their time limits they would end a
# second apart, and a plan on the nodes that free last rightly starts later.
blocking=0
short=()
for i in 1 2 3 4 5 6 7 8; do
	case $i in
	1|2) short+=("$(submit -w "n$i" --gres=gpu:8 --time=5 -o /dev/null --wrap 'sleep 600')"); blocking=$((blocking + 1)) ;;
	5|6)
		short+=("$(submit -w "n$i" --gres=gpu:4 --time=5 -o /dev/null --wrap 'sleep 600')")
		submit -w "n$i" --gres=gpu:4 --time=5 -o /dev/null --wrap 'sleep 600' >/dev/null
		blocking=$((blocking + 2))
		;;
	*) submit -w "n$i" --gres=gpu:8 --time=5 -o /dev/null --wrap 'sleep 600' >/dev/null; blocking=$((blocking + 1)) ;;
	esac
done
deadline=$(( EPOCHSECONDS + 30 ))
until [ "$(squeue -h -t R | wc -l)" = "$blocking" ]; do
	[ "$EPOCHSECONDS" -lt "$deadline" ] || fail "the $blocking blocking jobs are not all running: $(squeue -h -o '%i %T %R %N' | tr '\n' ';')"
	nap 0.3
done
ends=$(date -d "@$((EPOCHSECONDS + 120))" +%FT%T)
for sj in "${short[@]}"; do
	scontrol update JobId="$sj" EndTime="$ends" || fail "scontrol update JobId=$sj EndTime=$ends refused"
done
j=$(submit -N2 --gres=gpu:4 --time=1 -o /dev/null --wrap true)
deadline=$(( EPOCHSECONDS + 30 ))
plan=
while :; do
	plan=$(squeue -h -j "$j" -o '%Y' 2>/dev/null | grep -v '^(null)$' | grep -v '^$' || true)
	[ -z "$plan" ] || break
	[ "$EPOCHSECONDS" -lt "$deadline" ] || fail "backfill made no plan for job $j in 30 s (state $(job_state "$j"), reason $(job_field "$j" Reason))"
	nap 0.5
done
hosts=$(expand_hosts "$plan" | tr '\n' ' ')
[ "$hosts" = "n5 n6 " ] || fail "job $j planned on $plan, expected n[5-6]: the engine's plan (the half-used nodes of leaf2), not cons_tres's (running jobs, node and end: $(squeue -h -t R -o '%i %N %e' | tr '\n' ';'); $(grep "select/topo: JobId=$j: the engine" "$log" | tail -1))"
line=$(grep -m1 "select/topo: JobId=$j will run on .* (engine; cons_tres planned " "$log") ||
	fail "slurmctld's log has no line for job $j's plan by the engine replacing cons_tres's: $(grep "JobId=$j" "$log" | tail -3 | tr '\n' ';')"
theirs=${line##*cons_tres planned }
theirs=${theirs%)}
[ "$theirs" != "$plan" ] || fail "the log says cons_tres planned $theirs, the plan it replaced is the same: $line"
start=$(squeue -h -j "$j" -o '%S')
note "job $j (-N2 x 4 GPUs, every GPU busy) planned on $plan at $start; cons_tres alone planned $theirs"
sinfo -h >/dev/null || fail "slurmctld does not answer after planning"
