# cluster: --nodes 4 --gpus-per-node 8 --select topo
# cluster[>=25.05]: --nodes 4 --gpus-per-node 8 --select topo_cons_tres --conf-line MaxNodeCount=8 --conf-line "Nodeset=dyn Feature=dyn" --conf-line "PartitionName=dyn Nodes=dyn"
# What Slurm allows only under cons_tres, under select/topo. From 25.05 on,
# as select/topo_cons_tres, nothing is switched off: MaxNodeCount holds, a
# CoreCnt reservation is made and a dynamic node joins (slurmd -Z), takes a
# GPU job and is deleted. On older releases exactly what the README's table
# of releases says is off is off, with Slurm's own message, and the rest works.
log=$LOOM_CLUSTER_DIR/log/slurmctld.log
st=$(scontrol show config | sed -n 's/^SelectType *= *//p')
note "Slurm $(slurm_release), SelectType=$st"

# CoreCnt reservations: 24.11 asks the select plugin (cons_tres answers), 25.05
# asks for cons_tres's plugin id (select/topo carries it); 22.05's scontrol
# tests the SelectType string.
resv_out=$(scontrol create reservation ReservationName=corecnt StartTime=now Duration=10 Users=root CoreCnt=4 Nodes=n1 2>&1) || true
if slurm_at_least 24.11; then
	scontrol show reservation corecnt -o 2>/dev/null | grep 'CoreCnt=4' >/dev/null ||
		fail "CoreCnt reservation refused under $st: $resv_out"
	j=$(submit --reservation=corecnt -n1 -o /dev/null --wrap true)
	wait_state "$j" COMPLETED 30
	note "CoreCnt=4 reservation on n1 made and used by job $j"
	scontrol delete reservation=corecnt
else
	echo "$resv_out" | grep 'CoreCnt or CPUCnt is only supported' >/dev/null ||
		fail "22.05: expected scontrol's CoreCnt refusal, got: $resv_out"
	note "22.05 (off, as documented): $resv_out"
fi

if ! slurm_at_least 25.05; then
	# Dynamic nodes are refused by slurmctld's SelectType test.
	out=$(scontrol create nodename=n9 cpus=16 realmemory=8000 state=future 2>&1) &&
		fail "node creation accepted under $st on $(slurm_release): documented as off"
	echo "$out" | grep 'only compatible with select/cons_tres' >/dev/null || fail "unexpected node creation answer: $out"
	note "dynamic nodes (off, as documented): $(echo "$out" | head -1)"
	return 0
fi

[ "$st" = select/topo_cons_tres ] || fail "SelectType=$st, expected select/topo_cons_tres"
grep -q "select/topo loaded (over select/cons_tres)" "$log" || fail "select/topo did not load under its cons_tres name"
[ "$(scontrol show config | sed -n 's/^MaxNodeCount *= *//p')" = 8 ] || fail "MaxNodeCount not honoured"
if grep -E "only compatible with|only supported with cons_tres|requires the use of select/cons_tres|must be used with cons/tres" "$log"; then
	fail "slurmctld switched off a cons_tres feature under $st"
fi

# A dynamic node: slurmd -Z registers it with its own configuration, under
# leaf1 of the fabric; it gets a GPU job, then is deleted again.
port=$(( $(sed -n 's/^SlurmctldPort=//p' "$SLURM_CONF") + 100 ))
while ss -Hltn "sport = :$port" | grep . >/dev/null; do port=$((port + 1)); done
LOOM_CLUSTER_DAEMON=$LOOM_CLUSTER_DIR "$(dirname "$(command -v scontrol)")/../sbin/slurmd" -Z -N n9 \
	--conf "CPUs=16 Sockets=2 CoresPerSocket=8 ThreadsPerCore=1 RealMemory=8000 Gres=gpu:8 Feature=dyn,h100 Port=$port Topology=default:leaf1" ||
	fail "slurmd -Z -N n9 did not start"
deadline=$(( EPOCHSECONDS + 30 ))
until [ "$(sinfo -h -n n9 -o %T 2>/dev/null)" = idle ]; do
	[ "$EPOCHSECONDS" -lt "$deadline" ] || fail "dynamic node n9 not idle: $(scontrol show node n9 2>&1 | grep -E 'State|Reason')"
	nap 0.5
done
scontrol show node n9 | grep 'State=IDLE+DYNAMIC_NORM' >/dev/null || fail "n9 is not a dynamic node: $(scontrol show node n9 | grep State)"
j=$(submit -p dyn -N1 --gres=gpu:8 -o "$(scratch)/dyn.out" --wrap 'echo "$(hostname -s) $CUDA_VISIBLE_DEVICES $SLURMD_NODENAME"')
wait_state "$j" COMPLETED 30
[ "$(job_field "$j" NodeList)" = n9 ] || fail "job $j ran on $(job_field "$j" NodeList), not the dynamic node"
grep -q ' 0,1,2,3,4,5,6,7 n9$' "$(scratch)/dyn.out" || fail "job on n9 did not see its 8 GPUs: $(cat "$(scratch)/dyn.out")"
grep -q "JobId=$j placed on n9" "$log" || fail "select/topo did not place job $j"
note "dynamic node n9 joined, job $j ran there with 8 GPUs: $(grep -m1 "JobId=$j placed" "$log" | cut -c26-120)"
pid=$(pgrep -f "slurmd -Z -N n9 --conf .*Port=$port " | head -1)
[ -n "$pid" ] && kill "$pid"
for _ in $(seq 1 50); do pgrep -f "slurmd -Z -N n9 --conf .*Port=$port " >/dev/null || break; nap 0.2; done
out=$(scontrol delete nodename=n9 2>&1) || fail "scontrol delete nodename=n9: $out"
sinfo -h -n n9 -o %N 2>/dev/null | grep n9 >/dev/null && fail "n9 still listed after deletion"
note "n9 deleted"
