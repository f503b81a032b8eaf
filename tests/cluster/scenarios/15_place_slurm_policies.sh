# cluster: --nodes 16 --gpus-per-node 8 --select topo
# Slurm's placement options that ask for something other than the tightest
# placement keep their meaning under select/topo: --spread-job spreads tasks
# over as many nodes as possible (srun -n 2/4/6 gets 2/4/6 nodes, as on plain
# cons_tres), --contiguous gets consecutive nodes. select/topo steps aside for
# them and its log line says which option asked for it.
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
