# cluster: --nodes 8 --gpus-per-node 8 --cabling across
# Leaves cabled across the node names (leaf1: n1 n3 n5 n7, leaf2: n2 n4 n6
# n8). A 6-node gang spans both leaves; Slurm ranks its nodes in name order,
# so ring neighbours keep crossing leaves. spank_place gives every step
# loom's order: LOOM_HOSTFILE and LOOM_NODE_RANK on each node, and
# LOOM_TASK_HOSTFILE for srun --distribution=arbitrary, which then puts
# consecutive ranks on the same leaf: the ring crosses a leaf twice.
topo="$(dirname "$SLURM_CONF")/topology.conf"
# The leaf a node is on, as topology.conf says.
leaf_of() {
	awk -v n="$1" '/^SwitchName=leaf/ {
		split($2, a, "="); m = split(a[2], l, ",")
		for (i = 1; i <= m; i++) if (l[i] == n) { split($1, s, "="); print s[2] } }' "$topo"
}
# Ring neighbours (each host and the next, the last and the first) on different leaves.
crossings() {
	local h l prev="" first="" c=0 n=0
	for h in "$@"; do
		l=$(leaf_of "$h")
		[ -n "$l" ] || fail "$h is on no leaf of $topo"
		[ $n -gt 0 ] && [ "$l" != "$prev" ] && c=$((c + 1))
		[ $n -eq 0 ] && first=$l
		prev=$l
		n=$((n + 1))
	done
	[ $n -gt 2 ] && [ "$prev" != "$first" ] && c=$((c + 1))
	echo $c
}
d=$(scratch)
j=$(submit -N 6 --ntasks-per-node=2 --gres=gpu:8 -o "$d/out" --wrap "
cp \"\$LOOM_HOSTFILE\" $d/hostfile
cp \"\$LOOM_TASK_HOSTFILE\" $d/taskfile
echo \"\$LOOM_NODE_RANK\" >$d/batch-rank
echo \"\$SLURM_JOB_NODELIST\" >$d/nodelist
echo \"\$LOOM_HOSTFILE\" \"\$LOOM_TASK_HOSTFILE\" >$d/paths
srun -n 6 --ntasks-per-node=1 bash -c 'echo \$SLURMD_NODENAME \$LOOM_NODE_RANK; echo \$LOOM_HOSTFILE >>$d/paths' >$d/node-ranks
SLURM_HOSTFILE=\$LOOM_TASK_HOSTFILE srun --distribution=arbitrary -n 12 bash -c 'echo \$SLURM_PROCID \$SLURMD_NODENAME' >$d/task-ranks
")
wait_state "$j" COMPLETED 60
[ -s "$d/hostfile" ] || fail "no LOOM_HOSTFILE in the batch step: $(cat "$d/out")"
mapfile -t slurm < <(expand_hosts "$(cat "$d/nodelist")")
mapfile -t loom < "$d/hostfile"
[ "${#slurm[@]}" = 6 ] || fail "the job got ${#slurm[@]} nodes: ${slurm[*]}"
[ "$(printf '%s\n' "${loom[@]}" | sort)" = "$(printf '%s\n' "${slurm[@]}" | sort)" ] ||
	fail "LOOM_HOSTFILE (${loom[*]}) is not the job's nodes (${slurm[*]})"
cs=$(crossings "${slurm[@]}")
cl=$(crossings "${loom[@]}")
note "Slurm's order ${slurm[*]}: $cs of 6 ring neighbours on different leaves"
note "LOOM_HOSTFILE ${loom[*]}: $cl of 6"
[ "$cl" = 2 ] || fail "loom's order crosses leaves $cl times, expected 2 (one leaf, then the other)"
[ "$cs" -gt "$cl" ] || fail "Slurm's order crosses leaves $cs times, no more than loom's $cl"
# Every node of a step knows its place in that order.
br=$(cat "$d/batch-rank")
[ -n "$br" ] && [ "${loom[$br]}" = "${slurm[0]}" ] ||
	fail "the batch host ${slurm[0]} has LOOM_NODE_RANK $(cat "$d/batch-rank")"
[ "$(wc -l <"$d/node-ranks")" = 6 ] || fail "srun on 6 nodes printed: $(cat "$d/node-ranks")"
while read -r node rank; do
	[ -n "$rank" ] || fail "$node has no LOOM_NODE_RANK"
	[ "${loom[$rank]}" = "$node" ] || fail "$node has LOOM_NODE_RANK $rank, LOOM_HOSTFILE line $((rank + 1)) is ${loom[$rank]}"
done <"$d/node-ranks"
# srun with the task file: 2 tasks per node, ranks in loom's order.
[ "$(wc -l <"$d/taskfile")" = 12 ] || fail "LOOM_TASK_HOSTFILE has $(wc -l <"$d/taskfile") lines for 12 tasks"
sort -n "$d/task-ranks" >"$d/task-ranks.sorted"
[ "$(wc -l <"$d/task-ranks.sorted")" = 12 ] || fail "srun --distribution=arbitrary printed: $(cat "$d/task-ranks")"
while read -r rank node; do
	want=${loom[$((rank / 2))]}
	[ "$node" = "$want" ] || fail "task $rank ran on $node, loom's order puts it on $want"
done <"$d/task-ranks.sorted"
mapfile -t by_rank < <(awk '{print $2}' "$d/task-ranks.sorted")
note "srun --distribution=arbitrary: ranks 0-11 on ${by_rank[*]}"
# The files go with their steps (slurmstepd removes them as it exits, which
# may be a moment after slurmctld has the job COMPLETED).
paths=$(cat "$d/paths")
[ -n "$paths" ] || fail "the steps named no hostfile"
for _ in $(seq 1 50); do
	# shellcheck disable=SC2086 # the hostfiles, one word each
	left=$(ls $paths 2>/dev/null || true)
	[ -z "$left" ] && break
	nap 0.2
done
[ -z "$left" ] || fail "hostfiles left 10 s after the job: $left"
