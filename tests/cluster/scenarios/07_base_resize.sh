# cluster: --nodes 4 --gpus-per-node 2 --select topo
# What recovery inside an allocation stands on, as this release does it:
# a --no-kill job shrinks while it runs (scontrol update JobId= NodeList=),
# never by its batch host; a step launched with the old environment is
# refused, one launched with the environment a resize script sets runs on
# the nodes left; and a step on part of the nodes, by hostfile, leaves the
# others idle (the standbys).
out=$(scratch)
cat >"$out/job.sh" <<EOF2
#!/bin/bash
printf '%s\n' "\$(scontrol show hostnames "\$SLURM_JOB_NODELIST" | sed -n '2p;3p')" >"$out/hosts"
SLURM_HOSTFILE="$out/hosts" SLURM_DISTRIBUTION=arbitrary SLURM_NTASKS=2 SLURM_NPROCS=2 \
	srun -l printenv SLURMD_NODENAME 2>&1 | sort | sed 's/^/part: /'
echo started
while [ ! -e "$out/shrunk" ]; do sleep 0.2; done
srun -l printenv SLURMD_NODENAME 2>&1 | sort | sed 's/^/old env: /'
export SLURM_JOB_NODELIST=\$(cat "$out/left") SLURM_NODELIST=\$(cat "$out/left") SLURM_JOB_NUM_NODES=2 SLURM_NNODES=2 \
	SLURM_NTASKS=2 SLURM_NPROCS=2 SLURM_TASKS_PER_NODE='1(x2)' SLURM_JOB_CPUS_PER_NODE='1(x2)'
srun -l printenv SLURMD_NODENAME 2>&1 | sort | sed 's/^/new env: /'
EOF2
chmod +x "$out/job.sh"
j=$(submit -N3 -n3 --no-kill -o "$out/job.out" "$out/job.sh")
wait_state "$j" RUNNING 30
deadline=$(( EPOCHSECONDS + 60 ))
until grep -q '^started' "$out/job.out" 2>/dev/null; do
	[ "$EPOCHSECONDS" -lt "$deadline" ] || fail "job $j never started its steps: $(cat "$out/job.out" 2>&1)"
	nap 0.2
done
mapfile -t hosts < <(expand_hosts "$(job_field "$j" NodeList)")
[ "${#hosts[@]}" = 3 ] || fail "job $j holds ${#hosts[@]} nodes, expected 3"
part=$(grep '^part: ' "$out/job.out" | sed 's/^part: [0-9]*: //' | paste -sd' ')
[ "$part" = "${hosts[1]} ${hosts[2]}" ] || fail "the hostfile step ran on '$part', expected '${hosts[1]} ${hosts[2]}'"
# The batch host cannot leave the job.
if scontrol update JobId="$j" NodeList="${hosts[1]},${hosts[2]}" 2>"$out/err"; then
	fail "scontrol removed batch host ${hosts[0]} from job $j"
fi
note "removing the batch host: $(cat "$out/err")"
left="${hosts[0]},${hosts[2]}"
echo "$left" >"$out/left"
scontrol update JobId="$j" NodeList="$left" || fail "scontrol could not remove ${hosts[1]} from job $j"
[ "$(job_field "$j" NumNodes)" = 2 ] || fail "job $j has NumNodes=$(job_field "$j" NumNodes) after the shrink"
touch "$out/shrunk"
wait_state "$j" COMPLETED 60
grep -q '^old env: .*conflicts with allocated node count\|^old env: .*Unable to create step' "$out/job.out" ||
	fail "a step with the old environment was not refused: $(grep '^old env' "$out/job.out")"
ran=$(grep '^new env: ' "$out/job.out" | sed 's/^new env: [0-9]*: //' | paste -sd' ')
[ "$ran" = "${hosts[0]} ${hosts[2]}" ] || fail "the step after the shrink ran on '$ran', expected '${hosts[0]} ${hosts[2]}'"
note "job $j: part of the allocation by hostfile on ${hosts[1]} ${hosts[2]}; shrunk to $left, old environment refused, new one ran on $ran"
