# cluster: --nodes 16 --gpus-per-node 8 --select topo
# Slurm's placement options that ask for something other than the tightest
# placement keep their meaning under select/topo: --spread-job spreads tasks
# over as many nodes as possible (srun -n 2/4/6 gets 2/4/6 nodes, as on plain
# cons_tres), --contiguous gets consecutive nodes. select/topo steps aside for
# them and its log line says which option asked for it. Node Weight, required
# nodes, node ranges and --use-min-nodes hold inside the engine's choice.
log=$LOOM_CLUSTER_DIR/log/slurmctld.log
out=$(scratch)
for n in 2 4 6; do
	timeout 60 srun -n "$n" --spread-job -o "$out/spread-$n.out" printenv SLURMD_NODENAME ||
		fail "srun -n $n --spread-job failed"
	got=$(sort -u "$out/spread-$n.out" | wc -l)
	[ "$got" = "$n" ] || fail "srun -n $n --spread-job ran on $got node(s): $(sort -u "$out/spread-$n.out" | tr '\n' ' ')"
	note "srun -n $n --spread-job: $n tasks on $got nodes ($(sort -u "$out/spread-$n.out" | tr '\n' ' '))"
done
grep -q "placed by cons_tres on .* (--spread-job asks for Slurm's own choice" "$log" ||
	fail "select/topo's log does not say it stepped aside for --spread-job"
note "slurmctld.log: $(grep -m1 'spread-job asks' "$log" | cut -c26-160)"

# --contiguous: consecutive nodes, with n1 busy so that the tightest leaf
# (n5-n8) and a contiguous run differ in nothing Slurm would not promise.
b=$(submit -w n2 --gres=gpu:8 -o /dev/null --wrap 'sleep 60')
wait_state "$b" RUNNING 30
j=$(submit -N3 --contiguous --gres=gpu:8 -o /dev/null --wrap true)
wait_state "$j" COMPLETED 30
nodes=$(expand_hosts "$(job_field "$j" NodeList)" | sed 's/^n//' | sort -n)
first=$(echo "$nodes" | head -1)
[ "$(echo "$nodes" | tr '\n' ' ')" = "$(seq "$first" $((first + 2)) | tr '\n' ' ')" ] ||
	fail "--contiguous job $j got $(job_field "$j" NodeList), not consecutive nodes"
note "sbatch -N3 --contiguous: $(job_field "$j" NodeList)"
scancel "$b"

wait_gone() { # JOBID: no longer holding nodes
	local deadline=$(( EPOCHSECONDS + 30 ))
	while squeue -h -j "$1" 2>/dev/null | grep . >/dev/null; do
		[ "$EPOCHSECONDS" -lt "$deadline" ] || fail "job $1 still in the queue after 30 s"
		nap 0.3
	done
}
wait_gone "$b"

# Constraints the engine honours inside its candidates, each named in the
# placed line. Node Weight: the light nodes first (Weight=10 on n1-n8).
scontrol update nodename=n[1-8] weight=10 || fail "scontrol update weight refused"
j=$(submit -N3 --gres=gpu:8 -o /dev/null --wrap true)
wait_state "$j" COMPLETED 30
for h in $(expand_hosts "$(job_field "$j" NodeList)"); do
	[ "${h#n}" -ge 9 ] || fail "-N3 with n1-n8 at Weight=10 got $(job_field "$j" NodeList): a heavy node while light ones were free"
done
grep -q "JobId=$j placed on .*weight tier 1 of 2" "$log" || fail "placed line of job $j does not name the weight tier"
note "Weight=10 on n1-n8: -N3 got $(job_field "$j" NodeList) ($(grep -o "JobId=$j placed on .*weight tier 1 of 2" "$log" | grep -o 'weight tier 1 of 2'))"
scontrol update nodename=n[1-8] weight=1 || fail "scontrol update weight refused"

# Required nodes plus locality: -w n6 -N3 gets n6 and two more of its leaf (n5-n8).
j=$(submit -w n6 -N3 --gres=gpu:8 -o /dev/null --wrap true)
wait_state "$j" COMPLETED 30
got=$(expand_hosts "$(job_field "$j" NodeList)")
echo "$got" | grep -x n6 >/dev/null || fail "-w n6 job $j got $(job_field "$j" NodeList), without n6"
for h in $got; do [ "${h#n}" -ge 5 ] && [ "${h#n}" -le 8 ] || fail "-w n6 -N3 got $(job_field "$j" NodeList), outside n6's leaf n[5-8]"; done
grep -q "JobId=$j placed on .*with required n6" "$log" || fail "placed line of job $j does not name the required node"
note "-w n6 -N3: $(job_field "$j" NodeList) (n6's leaf)"

# Node ranges: Slurm aims for the maximum; --use-min-nodes for the minimum.
j=$(submit -N 2-6 --gres=gpu:8 -o /dev/null --wrap true)
wait_state "$j" COMPLETED 30
[ "$(job_field "$j" NumNodes)" = 6 ] || fail "-N 2-6 on an idle cluster got $(job_field "$j" NumNodes) nodes, expected 6 (as cons_tres)"
grep -q "JobId=$j placed on .*6 of 2-6 nodes" "$log" || fail "placed line of job $j does not name the count"
j=$(submit -N 2-6 --use-min-nodes --gres=gpu:8 -o /dev/null --wrap true)
wait_state "$j" COMPLETED 30
[ "$(job_field "$j" NumNodes)" = 2 ] || fail "-N 2-6 --use-min-nodes got $(job_field "$j" NumNodes) nodes, expected 2"
note "-N 2-6: 6 nodes; with --use-min-nodes: 2"

# --gpus-per-task with -n is a GPU total the engine places (not handed back).
j=$(submit -n 6 --gpus-per-task=2 -o /dev/null --wrap true)
wait_state "$j" COMPLETED 30
grep -q "JobId=$j placed on " "$log" || fail "-n 6 --gpus-per-task=2 (job $j) was not placed by the engine: $(grep "JobId=$j" "$log" | tail -1)"
note "-n 6 --gpus-per-task=2: $(job_field "$j" NodeList), placed by the engine"
