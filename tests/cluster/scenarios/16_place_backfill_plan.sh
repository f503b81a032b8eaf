# cluster: --nodes 8 --gpus-per-node 8 --select topo
# Backfill's plan for a job that must wait is the engine's (will_run=engine):
# with every node busy and the jobs on n3, n4 (leaf1) and n5 (leaf2) ending
# first, a 2-node gang is planned on n3 and n4, one leaf, at the time those
# end; the plan is the one squeue shows (SchedNodes) and slurmctld stays up.
for i in 1 2 3 4 5 6 7 8; do
	case $i in 3|4|5) t=1 ;; *) t=5 ;; esac
	submit -w "n$i" --gres=gpu:8 --time="$t" -o /dev/null --wrap 'sleep 600' >/dev/null
done
deadline=$(( EPOCHSECONDS + 30 ))
until [ "$(squeue -h -t R | wc -l)" = 8 ]; do
	[ "$EPOCHSECONDS" -lt "$deadline" ] || fail "the 8 blocking jobs are not all running: $(squeue -h -o '%i %T %R' | tr '\n' ';')"
	nap 0.3
done
j=$(submit -N2 --gres=gpu:8 --time=1 -o /dev/null --wrap true)
deadline=$(( EPOCHSECONDS + 30 ))
plan=
while :; do
	plan=$(squeue -h -j "$j" -o '%Y' 2>/dev/null | grep -v '^(null)$' | grep -v '^$' || true)
	[ -z "$plan" ] || break
	[ "$EPOCHSECONDS" -lt "$deadline" ] || fail "backfill made no plan for job $j in 30 s (state $(job_state "$j"), reason $(job_field "$j" Reason))"
	nap 0.5
done
hosts=$(expand_hosts "$plan" | tr '\n' ' ')
[ "$hosts" = "n3 n4 " ] || fail "job $j planned on $plan, expected n[3-4]: the two nodes of one leaf that free first"
start=$(squeue -h -j "$j" -o '%S')
note "job $j (-N2, every node busy) planned on $plan at $start"
sinfo -h >/dev/null || fail "slurmctld does not answer after planning"
