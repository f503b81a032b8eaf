# cluster: --nodes 16 --gpus-per-node 8 --select topo --conf-line DebugFlags=SelectType
# --locality takes the kinds `loom topo show` prints for this cluster (its
# fabric is a topology.conf, which names no levels: leaf, pod, spine by
# height) and a kind it does not have is refused at submit, never left to fail
# in slurmctld's log. (DebugFlags=SelectType: select/topo logs each job it
# cannot place now, the decision a waiting job is checked by.)
log="$LOOM_CLUSTER_DIR/log/slurmctld.log"
d=$(scratch)
pod_of() { local n=${1#n}; echo "pod$(( (n - 1) / 8 + 1 ))"; }
"$LOOM_BUILDDIR/tools/loom" topo convert --from "$(dirname "$SLURM_CONF")/topology.conf" --to json -o "$d/fabric.json" ||
	fail "loom topo convert cannot read the cluster's topology.conf"
kinds=$("$LOOM_BUILDDIR/tools/loom" topo show "$d/fabric.json" | sed -n 's/^locality kinds: //p')
[ "$kinds" = "leaf, pod, spine" ] || fail "loom topo show prints kinds '$kinds' for the test cluster"
note "loom topo show: locality kinds: $kinds"

# pod:strict: three busy nodes in each pod leave 5 free in each; a 6-node
# gang waits, then starts inside the pod that frees a node.
blockers=()
for n in n1 n2 n3 n9 n10 n11; do
	b=$(submit -N1 -w "$n" --gres=gpu:1 -o /dev/null --wrap 'sleep 600')
	blockers+=("$b")
done
for b in "${blockers[@]}"; do wait_state "$b" RUNNING 30; done
g=$(submit -N6 --gres=gpu:8 --locality=pod:strict -o /dev/null --wrap 'sleep 600')
# select/topo's decision, in two scheduling passes: it cannot place the gang now.
wait_log -F "select/topo: JobId=$g: cannot fit now" "$log" 60 2
[ "$(job_state "$g")" = PENDING ] ||
	fail "pod:strict gang $g is $(job_state "$g") on $(job_field "$g" NodeList) with 5 nodes free per pod"
grep -q "JobId=$g: placement engine failed" "$log" && fail "the engine failed on pod:strict: $(grep -m1 "JobId=$g: placement engine failed" "$log")"
note "pod:strict 6-node gang waits with 5 free nodes in each pod ($(job_field "$g" Reason))"
scancel "${blockers[3]}" # frees n9: pod2 has 6
wait_state "$g" RUNNING 40
pods=$(for h in $(expand_hosts "$(job_field "$g" NodeList)"); do pod_of "$h"; done | sort -u)
[ "$pods" = pod2 ] || fail "pod:strict gang $g ran on $(job_field "$g" NodeList) (pods: ${pods//$'\n'/ })"
note "then it ran inside pod2: $(job_field "$g" NodeList)"
scancel "$g" "${blockers[@]}"

# A kind this cluster does not have: refused at submit, the kinds in the log.
if out=$(sbatch -N1 --gres=gpu:1 --locality=galaxy -o /dev/null --wrap true 2>&1); then
	fail "sbatch --locality=galaxy was accepted: $out"
fi
note "sbatch --locality=galaxy: $(echo "$out" | head -1)"
grep -q -- "--locality=galaxy: this cluster has no domain of that kind (kinds: leaf, pod, spine): job refused" "$log" ||
	fail "slurmctld.log does not name the kinds for --locality=galaxy"
