#!/bin/bash
# cluster: --nodes 8 --gpus-per-node 8 --topo-line spares=leaf:2
# Two spares per leaf (n3,n4 and n7,n8). Two nodes of one 2-node gang fail
# together: both are replaced in one step by their leaf's two spares, in one
# reservation. Then a leaf whose spares are out of service: a failed gang
# there takes the normal requeue and waits whole (never started on part of
# its nodes) until enough nodes return.
out=$(scratch)
pool=$LOOM_CLUSTER_DIR/state/loom-spares.json
cat >"$out/gang.sh" <<'JOB'
#!/bin/bash
echo "start $(date +%s.%N) restart=${SLURM_RESTART_COUNT:-0} nodes=$SLURM_JOB_NODELIST"
if [ "${SLURM_RESTART_COUNT:-0}" = 0 ]; then
	while [ ! -e "$FAULT" ]; do sleep 0.1; done
	# Every node of the gang loses a GPU at once (a power event on the rack).
	for h in $(scontrol show hostnames "$SLURM_JOB_NODELIST"); do
		echo "$h:4242:4290 [0] NCCL WARN Cuda failure 'uncorrectable ECC error encountered'"
	done
	exit 1
fi
sleep 600
JOB
chmod +x "$out/gang.sh"
started() { grep -c '^start ' "$1" 2>/dev/null || true; }
wait_restart() { # OUT N TIMEOUT
	local deadline=$(( EPOCHSECONDS + $3 ))
	until [ "$(started "$1")" -ge "$2" ]; do
		[ "$EPOCHSECONDS" -lt "$deadline" ] || return 1
		nap 0.2
	done
}

# 1. Two nodes of one gang fail at once.
a=$(FAULT=$out/fault-a submit -N2 --gres=gpu:8 --requeue -o "$out/a.out" --open-mode=append --export=ALL "$out/gang.sh")
wait_state "$a" RUNNING 60
nodes=$(job_field "$a" NodeList)
case $nodes in "n[1-2]") leaf=leaf1 sp="n[3-4]" ;; "n[5-6]") leaf=leaf2 sp="n[7-8]" ;; *) fail "job $a on $nodes: not the two non-spare nodes of a leaf" ;; esac
wait_file "$out/a.out" 30
touch "$out/fault-a"
wait_restart "$out/a.out" 2 60 || fail "job $a not running again 60 s after its two nodes failed: $(job_field "$a" JobState) $(job_field "$a" Reason)"
again=$(grep '^start .* restart=1 ' "$out/a.out" | sed 's/.*nodes=//')
[ "$again" = "$sp" ] || fail "job $a restarted on $again, expected $leaf's two spares $sp"
for n in $(expand_hosts "$nodes"); do
	case $(sinfo -h -n "$n" -o %E) in "loom: jobcomp: gpu_fault: job $a: "*) ;; *) fail "$n: reason '$(sinfo -h -n "$n" -o %E)'" ;; esac
done
[ "$(grep -c "job $a: loom: restarted on spares" "$LOOM_CLUSTER_DIR/log/slurmctld.log")" = 1 ] ||
	fail "job $a: expected one replacement step in slurmctld.log"
note "job $a: both $nodes failed; restarted on $again in one step ($(scontrol show job "$a" | sed -n 's/.*AdminComment=//p'))"

# 2. A gang on the other leaf, whose spares an admin then takes out of
# service; it fails: no spare, the normal requeue, and it waits whole.
if [ "$leaf" = leaf1 ]; then other=(n5 n6) others="n[7-8]" oleaf=leaf2; else other=(n1 n2) others="n[3-4]" oleaf=leaf1; fi
b=$(FAULT=$out/fault-b submit -N2 --gres=gpu:8 --requeue -o "$out/b.out" --open-mode=append --export=ALL "$out/gang.sh")
wait_state "$b" RUNNING 60
[ "$(job_field "$b" NodeList)" = "$(echo "${other[@]}" | tr ' ' '\n' | xargs | sed 's/ /,/' | xargs scontrol show hostlist)" ] ||
	fail "job $b on $(job_field "$b" NodeList), expected ${other[*]}"
# The admin takes the leaf's spares out of service: the leaf's last usable
# nodes are now the gang's own, so no spare is left for it.
scontrol update nodename="$others" state=drain reason="maintenance (test)" || fail "cannot drain $others"
nap 2
loom place --spares --spare-file "$pool" | sed 's/^/  | /' || true
wait_file "$out/b.out" 30
touch "$out/fault-b"
deadline=$(( EPOCHSECONDS + 30 ))
until grep -F "job $b: loom: requeued without spares" "$LOOM_CLUSTER_DIR/log/slurmctld.log" >/dev/null; do
	[ "$EPOCHSECONDS" -lt "$deadline" ] || fail "job $b: no 'requeued without spares' line: $(grep -F "job $b" "$LOOM_CLUSTER_DIR/log/slurmctld.log" | tail -3)"
	nap 0.3
done
why=$(grep -F "job $b: loom: requeued without spares" "$LOOM_CLUSTER_DIR/log/slurmctld.log" | sed 's/.*without spares: //')
case $why in "no usable spare left in leaf $oleaf for "*) ;; *) fail "job $b: why no spares: '$why'" ;; esac
# Slurm's decision: once requeued (jobcomp/health's line for the job comes
# after its requeue) the job is eligible again after the requeue delay
# (cred_expire + 1 = 6 s: its EligibleTime), and the scheduler has
# considered it since: it would have started then if it could.
wait_log -F "jobcomp/health: job $b FAILED: " "$LOOM_CLUSTER_DIR/log/slurmctld.log" 30
eligible=$(job_field "$b" EligibleTime)
wait_evaluated "$b" "$eligible" 60
[ "$(job_state "$b")" = PENDING ] || fail "job $b: $(job_state "$b") on $(job_field "$b" NodeList), expected PENDING (whole, with no spare)"
[ "$(started "$out/b.out")" = 1 ] || fail "job $b started again without enough nodes"
[ -z "$(job_field "$b" Reservation | sed 's/(null)//')" ] || fail "job $b put in reservation $(job_field "$b" Reservation)"
note "job $b: ${other[*]} failed, $oleaf has no usable spare ($why): requeued, PENDING ($(job_field "$b" Reason))"
# Enough nodes return (the admin's two and the failed two): it starts whole, on non-spare nodes.
scontrol update nodename="$others" state=resume
for n in "${other[@]}"; do scontrol update nodename="$n" state=resume; done
wait_restart "$out/b.out" 2 60 || fail "job $b not started again after the nodes returned: $(job_field "$b" Reason)"
note "nodes back: job $b started again on $(grep '^start .* restart=1 ' "$out/b.out" | sed 's/.*nodes=//')"
scancel "$a" "$b"
