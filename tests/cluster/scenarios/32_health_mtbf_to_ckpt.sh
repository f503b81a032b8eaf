# cluster: --nodes 3 --gpus-per-node 8 --select cons_tres --conf-line "JobCompParams=max_drains=10,stats_publish=$LOOM_CLUSTER_DIR/shared/failure-stats.json"
# Failure statistics flow from jobcomp/health to spank_ckpt's automatic
# interval: after two GPU faults on n1, jobcomp/health's published statistics
# give n1 two failures, and a --ckpt job with --ckpt-interval=auto on n1 is
# asked to checkpoint more often than the same job on a node with a clean
# history (Daly's interval: node MTBF (exposure + 1 d) / (failures + 1)).
source "$LOOM_SRCDIR/tests/ckpt/scenario_lib.sh"
out=$(scratch)
shared=$LOOM_CLUSTER_DIR/shared
stats=$shared/failure-stats.json
rm -rf "$shared"
mkdir -p "$shared"
ckpt_site "failure_stats=$stats node_mtbf=1d ckpt_cost=60 interval_max=1d"

interval_on() { # NODE -> the LOOM_CKPT_INTERVAL a --ckpt job gets there
	local j
	j=$(submit -w "$1" --ckpt --ckpt-interval=auto -o "$out/interval-$1-%j.out" --wrap 'echo "interval=$LOOM_CKPT_INTERVAL"')
	wait_state "$j" COMPLETED 60
	sed -n 's/^interval=//p' "$out/interval-$1-$j.out"
}

clean=$(interval_on n2)
[ -n "$clean" ] || fail "no LOOM_CKPT_INTERVAL in the job's environment"
# Daly at C = 60 s, M = 1 d: 3180 s (n2 has run one short job: a few seconds more exposure).
[ "$clean" -ge 3170 ] && [ "$clean" -le 3200 ] || fail "interval on the clean n2 is $clean s, expected about 3180 s"
note "clean node n2: interval $clean s (node_mtbf 1d, ckpt_cost 60 s)"

for i in 1 2; do
	j=$(submit -w n1 --no-requeue -o "$out/fault$i.out" \
		--wrap 'echo "$SLURMD_NODENAME:77:78 [0] NCCL WARN Cuda failure: uncorrectable ECC error encountered"; exit 1')
	wait_state "$j" FAILED 60
	deadline=$(( EPOCHSECONDS + 15 ))
	until sinfo -h -n n1 -o %E | grep "^loom: jobcomp: gpu_fault: job $j" >/dev/null; do
		[ "$EPOCHSECONDS" -lt "$deadline" ] || fail "n1 not drained after fault job $j ($(sinfo -h -n n1 -o '%T %E'))"
		nap 0.3
	done
	scontrol update nodename=n1 state=resume
done
[ -s "$stats" ] || fail "jobcomp/health did not publish $stats"
grep -q '"n1"' "$stats" || fail "n1 missing from $stats"
note "published: $(tr -d ' \n' <"$stats" | grep -o '"n1":{[^}]*' | cut -c1-120)..."

wait_idle_node() { # NODE
	local deadline=$(( EPOCHSECONDS + 30 ))
	until sinfo -h -n "$1" -o %T | grep -x "idle" >/dev/null; do
		[ "$EPOCHSECONDS" -lt "$deadline" ] || fail "$1 not idle: $(sinfo -h -n "$1" -o %T)"
		nap 0.3
	done
}
wait_idle_node n1
faulty=$(interval_on n1)
# n1: M = (E + 1 d) / 3 = 8 h for E of a few seconds: Daly 1819 s.
[ "$faulty" -ge 1810 ] && [ "$faulty" -le 1830 ] || fail "interval on n1 after two faults is $faulty s, expected about 1819 s"
note "n1 after two GPU faults: interval $faulty s, against $clean s on a clean node"
