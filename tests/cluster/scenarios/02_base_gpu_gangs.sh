# cluster: --nodes 16 --gpus-per-node 8 --select topo
# 2-node and 4-node --gres=gpu:8 jobs complete with every GPU of every node visible.
out=$(scratch)
for n in 2 4; do
	j=$(submit -N "$n" --gres=gpu:8 -o "$out/gang$n.out" \
		--wrap 'srun bash -c "echo \$SLURMD_NODENAME CUDA_VISIBLE_DEVICES=\$CUDA_VISIBLE_DEVICES"')
	wait_state "$j" COMPLETED 60
	[ "$(job_field "$j" ExitCode)" = "0:0" ] || fail "job $j exit code $(job_field "$j" ExitCode)"
	lines=$(wc -l <"$out/gang$n.out")
	[ "$lines" = "$n" ] || fail "job $j: $lines task lines, expected $n: $(cat "$out/gang$n.out")"
	hosts=$(awk '{print $1}' "$out/gang$n.out" | sort -u | wc -l)
	[ "$hosts" = "$n" ] || fail "job $j ran on $hosts distinct nodes, expected $n"
	if grep -v "CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7$" "$out/gang$n.out"; then
		fail "job $j: a task did not see all 8 GPUs"
	fi
	note "job $j (-N$n --gres=gpu:8): $(job_field "$j" NodeList), CUDA_VISIBLE_DEVICES=0,...,7 on each"
done
