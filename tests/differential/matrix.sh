# shellcheck shell=bash
# The differential tier's cases (sourced by run.sh): the generated matrix of
# jobs, and the background jobs that make each cluster state.

# ------------------------------------------------------------------ states
# Background jobs, the same on both clusters, on named nodes.
state_jobs() {
	case $1 in
	idle|weighted) ;;
	fragmented)
		echo "-w n1 --gres=gpu:4 -n 4"
		echo "-w n2 --gres=gpu:8 -n 2"
		echo "-w n6 --gres=gpu:8 -n 2"
		echo "-w n7 --gres=gpu:2 -n 2"
		echo "-w n10 --gres=gpu:3 -n 3"
		echo "-w n13 --gres=gpu:8 -n 8"
		echo "-w n14 --gres=gpu:6 -n 6"
		;;
	esac
}

# ------------------------------------------------------------------ the matrix
# Lines: "STATE<TAB>LABEL<TAB>SBATCH ARGS[<TAB>expect-pending: REASON]"; N is
# the size. A case marked expect-pending passes only if its job pends on both
# clusters (the reason is printed); every other case must run on both.
matrix() {
	local n r st pend
	# The fragmented state's nodes with 8 free GPUs per leaf: n3 n4 | n5 n8 |
	# n9 n11 n12 | n15 n16, so the best k leaves hold 3, 5, 7, 9 whole nodes.
	local -a frag_leaf_hold=(0 3 5 7 9)
	for st in idle fragmented; do
		for n in $sizes; do
			r=$((n + 2))
			local sw=$(( (n + 3) / 4 ))
			pend=
			if [ $st = fragmented ] && [ "$n" -gt "${frag_leaf_hold[sw]:-0}" ]; then
				pend="expect-pending: no $sw leaves hold $n nodes with 8 free GPUs in this state (at most ${frag_leaf_hold[sw]:-0}): --switches=$sw waits for them up to max_switch_wait (300 s)"
			fi
			printf '%s\t%s\t%s\t%s\n' \
				"$st" "gang-N$n" "-N $n --gres=gpu:8" "" \
				"$st" "subnode-N$n" "-N $n --gres=gpu:2 --ntasks-per-node=2" "" \
				"$st" "exclusive-N$n" "-N $n --exclusive" "" \
				"$st" "range-N$n-$r" "-N $n-$r --gres=gpu:8" "" \
				"$st" "range-min-N$n-$r" "-N $n-$r --use-min-nodes --gres=gpu:8" "" \
				"$st" "required-N$n" "-N $n -w n5 --gres=gpu:4" "" \
				"$st" "exclude-N$n" "-N $n -x n[1-4] --gres=gpu:8" "" \
				"$st" "contiguous-N$n" "-N $n --contiguous --gres=gpu:4" "" \
				"$st" "spread-n$((n + 1))" "-n $((n + 1)) --spread-job" "" \
				"$st" "gpus-per-task-n$((2 * n))" "-n $((2 * n)) --gpus-per-task=2" "" \
				"$st" "gpus-total-$((4 * n))" "--gpus=$((4 * n))" "" \
				"$st" "mem-per-gpu-N$n" "-N $n --gres=gpu:4 --mem-per-gpu=1000" "" \
				"$st" "cores-N$n" "-N $n --ntasks-per-node=4 --cores-per-socket=8 --gres=gpu:1" "" \
				"$st" "constraint-N$n" "-N $n --constraint=h100 --gres=gpu:4" "" \
				"$st" "switches-N$n" "-N $n --switches=$sw --gres=gpu:8" "$pend" \
				"$st" "distribution-N$n" "-N $n -n $((4 * n)) --distribution=cyclic --gres=gpu:2" "" \
				"$st" "lln-N$n" "-p lln -N $n --gres=gpu:2" ""
		done
		printf '%s\t%s\t%s\t%s\n' \
			"$st" "array-3" "--array=1-3 -N 1 --gres=gpu:4" "" \
			"$st" "hetjob" "-N 1 --gres=gpu:4 : -N 2 --gres=gpu:8" "" \
			"$st" "required-all" "-w n3,n4 -N 2 --gres=gpu:8" "" \
			"$st" "required-all-no-N" "-w n3,n4 --gres=gpu:2" ""
	done
	for n in $sizes; do
		printf '%s\t%s\t%s\t%s\n' \
			weighted "weighted-N$n" "-N $n --gres=gpu:8" "" \
			weighted "weighted-subnode-N$n" "-N $n --gres=gpu:3" ""
	done
	printf '%s\t%s\t%s\t%s\n' weighted "weighted-N10" "-N 10 --gres=gpu:8" ""
}
