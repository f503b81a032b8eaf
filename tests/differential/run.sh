#!/bin/bash
# The differential tier: the same generated jobs on a plain cons_tres cluster
# and on a select/topo cluster of the same shape (16 nodes x 8 GPUs, leaves of
# 4 nodes, pods of 8), side by side.
#
#   tests/differential/run.sh [--slurm VERSION] [--builddir DIR] [--sizes "1 3 6"] [--only REGEX]
#
# Each job is a point of a matrix over Slurm's placement options (node counts
# and ranges, --use-min-nodes, -w, -x, --exclusive, --ntasks-per-node,
# --gpus-per-task, --gpus, --mem-per-gpu, --cores-per-socket, --constraint,
# --switches, --contiguous, --spread-job, --distribution, partition LLN,
# node Weight, job arrays, heterogeneous jobs) at several sizes, in several
# cluster states (idle; fragmented by the same background jobs on both; node
# weights set). For every job, on both clusters, what Slurm promises is
# checked: node count (the minimum with --use-min-nodes), required and
# excluded nodes, tasks per node and in all, GPUs per node and in total,
# memory per GPU, cores per socket, the task distribution the job was given,
# whole nodes, features, switches, contiguity, spread, the partition, every
# array task and het component. An option the checker does not know fails the
# case (a broken test, never a silent pass). A job that runs on plain Slurm
# must run under select/topo too (not fail, hang or be refused). Where
# select/topo steps aside (--spread-job, --contiguous, LLN, a --nodelist that
# is the whole job) the nodes must be exactly plain Slurm's; with node
# weights, a job plain Slurm keeps on the light nodes stays there. Which nodes
# the engine picks may differ otherwise: that is the point of loom.
# A case passes only when it was compared (its job ran on both clusters and
# both allocations were checked, from records of its own job only), or when
# the matrix marks it "expect-pending: REASON" and it pended on both. Anything
# else (pending, refused, still running after the wait, no record, a record
# of another job, a cleanup that did not finish) fails, named. The wait for a
# job to leave both queues ends after LOOM_DIFF_WAIT seconds (default 60).
# At the end: how many cases were submitted, compared, expected-pending (with
# the reasons) and failed; the last line reads "N passed, N failed".
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
# shellcheck source=tests/cluster/nap.sh
. "$top/tests/cluster/nap.sh"
slurm=${LOOM_SLURM:-}
builddir=${LOOM_BUILDDIR:-}
sizes=${LOOM_DIFF_SIZES:-"1 3 6"}
wait_s=${LOOM_DIFF_WAIT:-60}
only=
while [ $# -gt 0 ]; do
	case $1 in
	--slurm) slurm=$2; shift 2 ;;
	--builddir) builddir=$2; shift 2 ;;
	--sizes) sizes=$2; shift 2 ;;
	--only) only=$2; shift 2 ;;
	-h|--help) sed -n '2,33p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "differential: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
done
[ -n "$slurm" ] || slurm=$("$top/scripts/slurm.sh" default)
prefix=$("$top/scripts/slurm.sh" prefix "$slurm") || exit 2
[ -n "$builddir" ] || builddir=$("$top/scripts/slurm.sh" builddir "$slurm")
export PATH="$prefix/bin:$PATH" LOOM_SLURM=$slurm
base=/tmp/loom-diff-$slurm
plain_dir=$base-plain
topo_dir=$base-topo
out=$base-out
rm -rf "$out"
mkdir -p "$out"
chmod 1777 "$out"

up() { # DIR SELECT
	"$top/tests/cluster/cluster.sh" up --slurm "$slurm" --dir "$1" --builddir "$builddir" --nodes 16 \
		--gpus-per-node 8 --select "$2" --conf-line "PartitionName=lln Nodes=n[1-16] LLN=YES State=UP MaxTime=INFINITE" \
		>"$1.up.log" 2>&1
}
down() {
	"$top/tests/cluster/cluster.sh" down --dir "$plain_dir" >/dev/null 2>&1
	"$top/tests/cluster/cluster.sh" down --dir "$topo_dir" >/dev/null 2>&1
}
trap down EXIT
echo "differential: Slurm $slurm, cons_tres ($plain_dir) against select/topo ($topo_dir), sizes: $sizes"
up "$plain_dir" cons_tres & p1=$!
up "$topo_dir" topo & p2=$!
wait $p1 || { cat "$plain_dir.up.log"; echo "differential: the cons_tres cluster did not come up"; echo "0 passed, 1 failed"; exit 1; }
wait $p2 || { cat "$topo_dir.up.log"; echo "differential: the select/topo cluster did not come up"; echo "0 passed, 1 failed"; exit 1; }
declare -A dir_=([plain]=$plain_dir [topo]=$topo_dir)
on() { local d=$1; shift; SLURM_CONF=$d/etc/slurm.conf "$@"; }
both() { on "$plain_dir" "$@" && on "$topo_dir" "$@"; }
# The shape cluster.sh gives every node (the checks below lean on it).
node_cpus=16 cores_per_socket=8

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
state_err=
busy_nodes=" " # the nodes that carry a background job in this state
set_state() {
	local d
	state_err=
	busy_nodes=" "
	for d in "$plain_dir" "$topo_dir"; do
		on "$d" scancel --user="$(id -un)" >/dev/null 2>&1
	done
	wait_drained || { state_err="jobs still queued 30 s after scancel"; return 1; }
	if [ "$1" = weighted ]; then
		both scontrol update nodename=n[1-8] weight=10 && both scontrol update nodename=n[9-16] weight=1
	else
		both scontrol update nodename=n[1-16] weight=1
	fi || { state_err="scontrol update of the node weights failed"; return 1; }
	local line j
	while read -r line; do
		[ -n "$line" ] || continue
		[[ $line =~ -w\ ([^ ]+) ]] && busy_nodes+="${BASH_REMATCH[1]} "
		for d in "$plain_dir" "$topo_dir"; do
			# shellcheck disable=SC2086
			j=$(on "$d" sbatch --parsable -J background -o /dev/null $line --wrap 'sleep 3000') ||
				{ state_err="background job '$line' refused on $d"; return 1; }
		done
	done < <(state_jobs "$1")
	# Running on both before any test job.
	local deadline=$(( EPOCHSECONDS + 30 )) want plain_running topo_running
	want=$(state_jobs "$1" | grep -c . || true)
	while :; do
		mapfile -t plain_running < <(on "$plain_dir" squeue -h -t R -n background)
		mapfile -t topo_running < <(on "$topo_dir" squeue -h -t R -n background)
		if [ "${#plain_running[@]}" = "$want" ] && [ "${#topo_running[@]}" = "$want" ]; then
			return 0
		fi
		[ "$EPOCHSECONDS" -lt "$deadline" ] || { state_err="background jobs not running after 30 s"; return 1; }
		nap 0.3
	done
}
# No job of the test left on either cluster (completing ones included).
wait_drained() {
	local deadline=$(( EPOCHSECONDS + 30 ))
	while [ -n "$(on "$plain_dir" squeue -h -o %i 2>/dev/null)$(on "$topo_dir" squeue -h -o %i 2>/dev/null)" ]; do
		[ "$EPOCHSECONDS" -lt "$deadline" ] || return 1
		nap 0.2
	done
}
# Test jobs only: the background stays. Fails (cancel_err says why) while a
# test job is still queued 20 s after scancel.
cancel_err=
cancel_tests() {
	local d id name ids left
	cancel_err=
	for d in "$plain_dir" "$topo_dir"; do
		ids=()
		while read -r id name; do [ "$name" = background ] || ids+=("$id"); done < <(on "$d" squeue -h -o '%i %j')
		# (A job that ends between squeue and scancel makes scancel complain:
		# what counts is the queue afterwards.)
		[ ${#ids[@]} -eq 0 ] || on "$d" scancel "${ids[@]}" >/dev/null 2>&1
	done
	local deadline=$(( EPOCHSECONDS + 20 ))
	while :; do
		left=
		for d in "$plain_dir" "$topo_dir"; do
			if ! ids=$(on "$d" squeue -h -o '%i %j' 2>&1); then left+=" squeue failed on $d: $ids"; continue; fi
			while read -r id name; do [ -z "$id" ] || [ "$name" = background ] || left+=" $id($name)"; done <<<"$ids"
		done
		[ -n "$left" ] || return 0
		[ "$EPOCHSECONDS" -lt "$deadline" ] || { cancel_err="test jobs still queued 20 s after scancel:$left"; return 1; }
		nap 0.2
	done
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

# ------------------------------------------------------------------ checks
# The allocation as the job saw it: one file per component of the job (array
# tasks and het components too), "alloc|NUMNODES|NODELIST|TASKS_PER_NODE|DISTRIBUTION",
# then `scontrol show job -d` of it.
job_script() {
	cat <<'EOF'
#!/bin/bash
# One file per job, array task or het component:
# "alloc|NUMNODES|NODELIST|TASKS_PER_NODE|DISTRIBUTION" and its `scontrol show job -d`.
record() { # ID NUMNODES NODELIST TASKS_PER_NODE DISTRIBUTION
	local f=__OUT__/$LOOM_DIFF_SIDE-$1.alloc
	# (An array's first task and a het leader print every task or component:
	# only this one's record.)
	{ echo "alloc|$2|$3|$4|$5"; scontrol show job -d "$1" | awk -v id="JobId=$1" '/^JobId=/ { keep = ($1 == id) } keep'; } \
		>"$f.tmp" && mv "$f.tmp" "$f"
}
if [ -n "${SLURM_HET_SIZE:-}" ]; then
	for ((i = 0; i < SLURM_HET_SIZE; i++)); do
		id=SLURM_JOB_ID_HET_GROUP_$i nn=SLURM_JOB_NUM_NODES_HET_GROUP_$i
		nl=SLURM_JOB_NODELIST_HET_GROUP_$i tp=SLURM_TASKS_PER_NODE_HET_GROUP_$i
		di=SLURM_DISTRIBUTION_HET_GROUP_$i
		record "${!id}" "${!nn}" "${!nl}" "${!tp}" "${!di:-${SLURM_DISTRIBUTION:-}}"
	done
else
	record "$SLURM_JOB_ID" "$SLURM_JOB_NUM_NODES" "$SLURM_JOB_NODELIST" "$SLURM_TASKS_PER_NODE" "${SLURM_DISTRIBUTION:-}"
fi
EOF
}

# hosts_of NODELIST: hosts_=(every host), expanded by the shell (n[1-3,5],n7);
# a form it does not read goes to scontrol.
hosts_of() {
	local s=$1 pre x a b i
	hosts_=()
	while [ -n "$s" ]; do
		if [[ $s =~ ^([A-Za-z_]*)\[([0-9,-]+)\](,|$) ]]; then
			pre=${BASH_REMATCH[1]}
			for x in ${BASH_REMATCH[2]//,/ }; do
				a=${x%-*} b=${x#*-}
				for ((i = 10#$a; i <= 10#$b; i++)); do hosts_+=("$pre$i"); done
			done
		elif [[ $s =~ ^([A-Za-z_]*[0-9]*)(,|$) ]] && [ -n "${BASH_REMATCH[1]}" ]; then
			hosts_+=("${BASH_REMATCH[1]}")
		else
			mapfile -t hosts_ < <(on "$plain_dir" scontrol show hostnames "$1" 2>/dev/null)
			return
		fi
		s=${s:${#BASH_REMATCH[0]}}
	done
}
# tpn_of "4(x3),2": tpn_=(4 4 4 2)
tpn_of() {
	local part c r
	tpn_=()
	for part in ${1//,/ }; do
		if [[ $part =~ ^([0-9]+)\(x([0-9]+)\)$ ]]; then c=${BASH_REMATCH[1]} r=${BASH_REMATCH[2]}; else c=$part r=1; fi
		while ((r-- > 0)); do tpn_+=("$c"); done
	done
}
# in_list ID SPEC: ID is one of "1-3,7" (an --array spec without a step).
in_list() {
	local x
	for x in ${2//,/ }; do
		if [[ $x == *-* ]]; then ((10#$1 >= 10#${x%-*} && 10#$1 <= 10#${x#*-})) && return 0
		elif [ "$1" = "$x" ]; then return 0; fi
	done
	return 1
}
# count_list SPEC: how many ids "1-3,7" names (0: a spec the checker does not read).
count_list() {
	local x n=0
	for x in ${1//,/ }; do
		if [[ $x =~ ^([0-9]+)-([0-9]+)$ ]]; then n=$((n + 10#${BASH_REMATCH[2]} - 10#${BASH_REMATCH[1]} + 1))
		elif [[ $x =~ ^[0-9]+$ ]]; then n=$((n + 1))
		else echo 0; return; fi
	done
	echo $n
}

# check_alloc LABEL ARGS FILE: what Slurm promises for this job, on this allocation.
# Prints one line per broken promise; an option it does not know is one.
check_alloc() {
	local label=$1 args=$2 f=$3 nn nl tpn dist h x count
	local -a rec=()
	mapfile -t rec <"$f"
	IFS='|' read -r _ nn nl tpn dist _ <<<"${rec[0]}"
	local -A on_job=()
	hosts_of "$nl"
	local -a hosts=("${hosts_[@]}")
	count=${#hosts[@]}
	for h in "${hosts[@]}"; do on_job[$h]=1; done
	[ "$count" = "$nn" ] || echo "SLURM_JOB_NUM_NODES=$nn but $count nodes in $nl"
	# The job's record, one string (fields are looked up by name: releases
	# move them between lines).
	local all=" ${rec[*]:1} "
	# shellcheck disable=SC2086
	set -- $args
	local min= max= w= x_= ntpn= gres= gpus= gpt= ntasks= contig=0 spread=0 excl=0 feat= sw=
	local usemin=0 part= array= mpg= cps= distrib=
	while [ $# -gt 0 ]; do
		case $1 in
		-N) min=${2%-*}; max=${2#*-}; shift 2 ;;
		-w) w=$2; shift 2 ;;
		-x) x_=$2; shift 2 ;;
		-n) ntasks=$2; shift 2 ;;
		-p) part=$2; shift 2 ;;
		--partition=*) part=${1#*=}; shift ;;
		--array=*) array=${1#*=}; shift ;;
		--use-min-nodes) usemin=1; shift ;;
		--ntasks-per-node=*) ntpn=${1#*=}; shift ;;
		--gres=gpu:*) gres=${1#--gres=gpu:}; shift ;;
		--gpus=*) gpus=${1#*=}; shift ;;
		--gpus-per-task=*) gpt=${1#*=}; shift ;;
		--mem-per-gpu=*) mpg=${1#*=}; shift ;;
		--cores-per-socket=*) cps=${1#*=}; shift ;;
		--distribution=*) distrib=${1#*=}; shift ;;
		--contiguous) contig=1; shift ;;
		--spread-job) spread=1; shift ;;
		--exclusive) excl=1; shift ;;
		--constraint=*) feat=${1#*=}; shift ;;
		--switches=*) sw=${1#*=}; sw=${sw%@*}; shift ;;
		*) echo "checker: option '$1' is submitted but not checked (a broken test: teach check_alloc what Slurm promises for it)"; shift ;;
		esac
	done
	if [ -n "$min" ]; then
		[ "$nn" -ge "$min" ] && [ "$nn" -le "$max" ] || echo "$nn nodes, asked for $min-$max"
	fi
	# --use-min-nodes: the minimum where the minimum fits. Every request here
	# is per node, so any $min of the job's own nodes would have held it.
	if [ $usemin = 1 ]; then
		if [ -z "$min" ]; then
			echo "checker: --use-min-nodes without -N (a broken test)"
		elif [ -n "$ntasks$gpus$gpt" ]; then
			echo "checker: --use-min-nodes beside a total (-n, --gpus, --gpus-per-task) is not checked (a broken test)"
		else
			[ "$nn" = "$min" ] || echo "--use-min-nodes: $nn nodes, the minimum $min fits (each node's request is the same)"
		fi
	fi
	if [ -n "$w" ]; then
		hosts_of "$w"
		for h in "${hosts_[@]}"; do [ -n "${on_job[$h]:-}" ] || echo "required node $h not in $nl"; done
	fi
	if [ -n "$x_" ]; then
		hosts_of "$x_"
		for h in "${hosts_[@]}"; do [ -z "${on_job[$h]:-}" ] || echo "excluded node $h in $nl"; done
	fi
	tpn_of "$tpn"
	if [ -n "$ntpn" ]; then
		for x in "${tpn_[@]}"; do [ "$x" = "$ntpn" ] || { echo "tasks per node $tpn, asked for $ntpn"; break; }; done
	fi
	if [ -n "$ntasks" ]; then
		local tsum=0
		for x in "${tpn_[@]}"; do tsum=$((tsum + x)); done
		[ "$tsum" = "$ntasks" ] || echo "$tsum tasks in SLURM_TASKS_PER_NODE=$tpn, asked for -n $ntasks"
		[ "${#tpn_[@]}" = "$nn" ] || echo "SLURM_TASKS_PER_NODE=$tpn for $nn nodes"
		for x in "${tpn_[@]}"; do [ "$x" -ge 1 ] || { echo "a node of the job without a task: SLURM_TASKS_PER_NODE=$tpn"; break; }; done
	fi
	if [ -n "$part" ]; then
		if [[ $all =~ [[:space:]]Partition=([^[:space:]]*) ]]; then
			[ "${BASH_REMATCH[1]}" = "$part" ] || echo "partition ${BASH_REMATCH[1]}, asked for -p $part"
		else
			echo "no Partition= in the job's record"
		fi
	fi
	if [ -n "$array" ]; then
		if [[ $all =~ [[:space:]]ArrayTaskId=([0-9]+)[[:space:]] ]]; then
			in_list "${BASH_REMATCH[1]}" "$array" || echo "array task ${BASH_REMATCH[1]}, not one of --array=$array"
		else
			echo "no ArrayTaskId= in the job's record (--array=$array)"
		fi
	fi
	# The detail lines, one per group of nodes alike:
	# "Nodes=n3 CPU_IDs=0-3 Mem=0 GRES=gpu:4(IDX:0-3)" (older releases:
	# "GRES_IDX=gpu(IDX:0-3)"). GPUs: count the indexes; CPUs: the CPU_IDs.
	local total=0 g l nodes idx c part_ lo hi cpus mem a_ b_
	local detail_re='^ +Nodes=([^ ]*)' idx_re='gpu[^(]*\(IDX:([^)]*)\)' cpu_re=' CPU_IDs=([^ ]*)' mem_re=' Mem=([0-9]+)'
	local -a per_node=() cpus_node=() mem_node=() notexcl=() socket_bad=()
	for l in "${rec[@]:1}"; do
		[[ $l =~ $detail_re ]] || continue
		nodes=${BASH_REMATCH[1]} idx= c=0 cpus=0 lo= hi= mem=
		[[ ! $l =~ $idx_re ]] || idx=${BASH_REMATCH[1]}
		for part_ in ${idx//,/ }; do
			if [[ $part_ == *-* ]]; then c=$((c + ${part_#*-} - ${part_%-*} + 1)); elif [ -n "$part_" ]; then c=$((c + 1)); fi
		done
		if [[ $l =~ $cpu_re ]]; then
			for part_ in ${BASH_REMATCH[1]//,/ }; do
				a_=${part_%-*} b_=${part_#*-}
				cpus=$((cpus + b_ - a_ + 1))
				[ -n "$lo" ] && [ "$lo" -le "$a_" ] || lo=$a_
				[ -n "$hi" ] && [ "$hi" -ge "$b_" ] || hi=$b_
			done
		fi
		[[ ! $l =~ $mem_re ]] || mem=${BASH_REMATCH[1]}
		[[ $l == *" CPU_IDs=0-$((node_cpus - 1)) "* ]] || notexcl+=("${l#"${l%%[! ]*}"}")
		hosts_of "$nodes"
		for h in "${hosts_[@]}"; do
			per_node+=("$h $c")
			cpus_node+=("$h $cpus")
			mem_node+=("$h ${mem:-?} $c")
			# A node of a background job: the socket it uses is not whole.
			if [ -n "$cps" ] && [[ $busy_nodes == *" $h "* ]] && [ -n "$lo" ] &&
			   [ $((lo / cores_per_socket)) != $((hi / cores_per_socket)) ]; then
				socket_bad+=("$h CPU_IDs $lo-$hi")
			fi
		done
	done
	if [ -n "$gres" ]; then
		for l in "${per_node[@]}"; do
			read -r h g <<<"$l"
			[ "$g" -ge "$gres" ] || echo "$h has $g GPUs of the job, asked for $gres per node"
		done
		[ "${#per_node[@]}" = "$nn" ] || echo "GPU detail for ${#per_node[@]} of $nn nodes"
	fi
	for l in "${per_node[@]}"; do total=$((total + ${l##* })); done
	[ -z "$gpus" ] || [ "$total" = "$gpus" ] || echo "$total GPUs in all, asked for --gpus=$gpus"
	[ -z "$gpt" ] || [ "$total" -ge $((gpt * ntasks)) ] || echo "$total GPUs in all, asked for $gpt per task x $ntasks"
	if [ $excl = 1 ] && [ ${#notexcl[@]} -gt 0 ]; then
		echo "--exclusive but not every core: ${notexcl[0]}"
	fi
	# --mem-per-gpu=M: the record carries M per GPU (22.05: MemPerTres=gres:gpu:M,
	# newer releases gres/gpu:M) and a MinMemory* field, and the memory the job
	# holds, where the record shows it (Mem= of a detail line, mem= of its
	# TRES; under CR_Core memory is not allocated and both read 0 or nothing),
	# is at least M per GPU.
	if [ -n "$mpg" ]; then
		if ! [[ $mpg =~ ^[0-9]+M?$ ]]; then
			echo "checker: --mem-per-gpu=$mpg is not read (a broken test: MB only)"
		elif [[ $all =~ [[:space:]]MemPerTres=([^[:space:]]*) ]]; then
			local mpt=${BASH_REMATCH[1]} want=${mpg%M}
			[[ ,$mpt, =~ ,(gres[/:])?gpu(:[^:,]+)?:${want}M?, ]] || echo "MemPerTres=$mpt, asked for --mem-per-gpu=$mpg"
			for l in "${mem_node[@]}"; do
				read -r h mem g <<<"$l"
				[ "$mem" = "?" ] || [ "$mem" = 0 ] || [ "$mem" -ge $((want * g)) ] ||
					echo "$h: Mem=$mem for $g GPUs, asked for $want per GPU"
			done
		else
			echo "no MemPerTres= in the job's record (--mem-per-gpu=$mpg)"
		fi
		if ! [[ $all =~ [[:space:]]MinMemory(CPU|Node|TRES)= ]]; then
			echo "no MinMemoryCPU/MinMemoryNode/MinMemoryTRES= in the job's record"
		fi
		# (TRES=, newer releases AllocTRES=.)
		if [[ $all =~ [[:space:]](Alloc)?TRES=([^[:space:]]*) ]] && [[ ,${BASH_REMATCH[2]}, =~ ,mem=([0-9.]+)([KMGT]?), ]]; then
			local tm=${BASH_REMATCH[1]} tu=${BASH_REMATCH[2]}
			case $tu in G) tm=$((${tm%.*} * 1024)) ;; T) tm=$((${tm%.*} * 1048576)) ;; *) tm=${tm%.*} ;; esac
			[ "$tm" -ge $((${mpg%M} * total)) ] || echo "TRES mem=$tm M for $total GPUs, asked for ${mpg%M} per GPU"
		fi
	fi
	# --cores-per-socket=C: the record asks C (ReqB:S:C:T=*:*:C:*, or a
	# CoresPerSocket= field), and cons_tres takes cores only from sockets
	# with C free: on a node of a background job at most one socket is whole.
	if [ -n "$cps" ]; then
		local rc_=
		if [[ $all =~ [[:space:]]ReqB:S:C:T=([^:[:space:]]*):([^:[:space:]]*):([^:[:space:]]*): ]]; then
			rc_=${BASH_REMATCH[3]}
		elif [[ $all =~ [[:space:]]CoresPerSocket=([^[:space:]]*) ]]; then
			rc_=${BASH_REMATCH[1]}
		fi
		if [ -z "$rc_" ]; then
			echo "no ReqB:S:C:T= or CoresPerSocket= in the job's record (--cores-per-socket=$cps)"
		elif [ "$rc_" != "$cps" ]; then
			echo "the record asks $rc_ cores per socket, submitted --cores-per-socket=$cps"
		fi
		[ "$cps" -le "$cores_per_socket" ] || echo "ran with --cores-per-socket=$cps on nodes of $cores_per_socket"
		[ "${#cpus_node[@]}" = "$nn" ] || echo "CPU detail for ${#cpus_node[@]} of $nn nodes"
		for l in "${socket_bad[@]}"; do echo "--cores-per-socket=$cps: $l spans both sockets of a node with a background job"; done
	fi
	# --distribution=D: the job was given D (SLURM_DISTRIBUTION). (How many
	# CPUs each node holds is not part of it: 22.05's cons_tres gives
	# -N 2 -n 8 --distribution=cyclic 7 and 1; the layout is the steps'.)
	if [ -n "$distrib" ]; then
		if [ -z "$dist" ]; then
			echo "the job saw no SLURM_DISTRIBUTION (--distribution=$distrib)"
		elif [ "${dist%%,*}" != "$distrib" ]; then
			echo "SLURM_DISTRIBUTION=$dist, asked for --distribution=$distrib"
		fi
		case ${distrib%%:*} in
		cyclic|block) ;;
		*) echo "checker: --distribution=$distrib is not checked (a broken test)" ;;
		esac
	fi
	if [ -n "$feat" ]; then
		# cluster.sh: n1-n8 carry a100, n9-n16 h100.
		for h in "${hosts[@]}"; do
			case $feat in
			h100) [ "${h#n}" -ge 9 ] || echo "node $h lacks feature $feat" ;;
			a100) [ "${h#n}" -le 8 ] || echo "node $h lacks feature $feat" ;;
			*) echo "checker: --constraint=$feat is not checked (a broken test)"; break ;;
			esac
		done
	fi
	if [ -n "$sw" ]; then
		local -A leaves=()
		for h in "${hosts[@]}"; do leaves[$(( (${h#n} - 1) / 4 ))]=1; done
		[ "${#leaves[@]}" -le "$sw" ] || echo "${#leaves[@]} leaves, --switches=$sw"
	fi
	if [ $contig = 1 ]; then
		local first= last=
		for h in "${hosts[@]}"; do
			x=${h#n}
			[ -n "$first" ] && [ "$first" -le "$x" ] || first=$x
			[ -n "$last" ] && [ "$last" -ge "$x" ] || last=$x
		done
		[ $((last - first + 1)) = "$count" ] || echo "--contiguous but $nl"
	fi
	if [ $spread = 1 ]; then
		[ "$count" -ge "$ntasks" ] || echo "--spread-job -n $ntasks on $count nodes"
	fi
}

# ------------------------------------------------------------------ run
passed=0
failed=0
submitted=0
compared=0
expected_pending=0
failures=()
expected=()
cur_state=
job_script | sed "s|__OUT__|$out|" >"$out/job.sh"
# clear_records: remove every record of both sides; cleared_=(the names there were).
clear_records() {
	local f
	cleared_=()
	for f in "$out"/*.alloc "$out"/*.alloc.tmp; do [ -e "$f" ] && cleared_+=("$f"); done
	[ ${#cleared_[@]} -eq 0 ] || rm -f -- "${cleared_[@]}"
	cleared_=("${cleared_[@]##*/}")
}
while IFS=$'\t' read -r st label args expect; do
	[ -z "$only" ] || [[ $label =~ $only ]] || continue
	pend_reason=
	case $expect in
	'') ;;
	expect-pending:*)
		pend_reason=${expect#expect-pending:}
		pend_reason=${pend_reason# }
		;;
	esac
	if [ -z "$pend_reason" ] && [ -n "$expect" ]; then
		failed=$((failed + 1))
		echo "  $label ($st): FAIL: the matrix line's 4th column '$expect' is not 'expect-pending: REASON'"
		failures+=("$label ($st): broken matrix line: '$expect'")
		continue
	fi
	if [ "$st" != "$cur_state" ]; then
		if ! set_state "$st"; then
			failed=$((failed + 1))
			echo "--- state: $st: FAIL: $state_err ($label not run)"
			failures+=("state $st: could not be set: $state_err ($label not run)")
			cur_state=
			continue
		fi
		cur_state=$st
		echo "--- state: $st"
	fi
	problems=()
	# No record of an earlier job may be taken for this one.
	clear_records
	[ ${#cleared_[@]} -eq 0 ] || problems+=("records of an earlier job were there before this case was submitted: ${cleared_[*]}")
	declare -A jid=() res=() q=()
	for side in plain topo; do
		# shellcheck disable=SC2086
		if ! jid[$side]=$(on "${dir_[$side]}" env LOOM_DIFF_SIDE=$side sbatch --parsable -J "t-$label" -o /dev/null \
			$args "$out/job.sh" 2>"$out/$side.err"); then
			jid[$side]=
			res[$side]="refused: $(tr '\n' ' ' <"$out/$side.err")"
		fi
		jid[$side]=${jid[$side]%%;*}
	done
	submitted=$((submitted + 1))
	# Wait until the job has left both queues (ran and ended), up to $wait_s s;
	# a case expected to pend stops waiting once it pends on both with a reason.
	deadline=$(( EPOCHSECONDS + wait_s ))
	while :; do
		gone=1 pend_both=1
		for side in plain topo; do
			q[$side]=
			if [ -z "${jid[$side]}" ]; then pend_both=0; continue; fi
			if ! q[$side]=$(on "${dir_[$side]}" squeue -h -n "t-$label" -o '%i|%T|%r' 2>&1); then
				q[$side]="?|squeue failed|${q[$side]//$'\n'/ }"
			fi
			[ -n "${q[$side]}" ] || { pend_both=0; continue; }
			gone=0
			while IFS='|' read -r _ s r; do
				[ "$s" = PENDING ] && [ -n "$r" ] && [ "$r" != None ] || pend_both=0
			done <<<"${q[$side]}"
		done
		[ $gone = 0 ] || break
		[ -z "$pend_reason" ] || [ $pend_both = 0 ] || break
		[ "$EPOCHSECONDS" -lt "$deadline" ] || break
		nap 0.3
	done
	for side in plain topo; do
		[ -n "${q[$side]}" ] || continue
		IFS='|' read -r _ s r <<<"${q[$side]}"
		if [ "$s" = PENDING ]; then res[$side]="pending ($r)"; else res[$side]="still $s after $wait_s s${r:+ ($r)}"; fi
	done
	if [ -n "${q[plain]}${q[topo]}" ]; then
		cancel_tests || { problems+=("cleanup: $cancel_err"); cur_state=; }
	fi
	# Allocations of each side: the records of its job (components and tasks),
	# its own job's only, every one of them.
	declare -A nodes_seen=() checked=()
	if [[ $args == *--array=* ]]; then
		a_=${args#*--array=}; a_=${a_%% *}
		want_recs=$(count_list "$a_")
		[ "$want_recs" != 0 ] || problems+=("checker: --array=$a_ is not read (a broken test)")
	else
		want_recs=1
		rest_=$args
		while [[ $rest_ == *" : "* ]]; do want_recs=$((want_recs + 1)); rest_=${rest_#* : }; done
	fi
	comps=()
	rest_=$args
	while [[ $rest_ == *" : "* ]]; do comps+=("${rest_%% : *}"); rest_=${rest_#* : }; done
	comps+=("$rest_")
	for side in plain topo; do
		[ -n "${jid[$side]}" ] || continue
		[ -z "${res[$side]:-}" ] || continue
		files=()
		for f in "$out/$side-"*.alloc; do [ -f "$f" ] && files+=("$f"); done
		if [ ${#files[@]} -eq 0 ]; then
			res[$side]="no allocation recorded"
			continue
		fi
		all=
		own=0
		for f in "${files[@]}"; do
			rid= rarr= rhet= roff=
			while IFS= read -r l; do
				[[ $l =~ ^JobId=([0-9]+) ]] || continue
				rid=${BASH_REMATCH[1]}
				[[ ! $l =~ [[:space:]]ArrayJobId=([0-9]+) ]] || rarr=${BASH_REMATCH[1]}
				[[ ! $l =~ [[:space:]]HetJobId=([0-9]+) ]] || rhet=${BASH_REMATCH[1]}
				[[ ! $l =~ [[:space:]]HetJobOffset=([0-9]+) ]] || roff=${BASH_REMATCH[1]}
				break
			done <"$f"
			if [ -z "$rid" ]; then
				problems+=("$side: ${f##*/} holds no job record (scontrol show job failed in the job?)")
				continue
			fi
			if [ "$rid" != "${jid[$side]}" ] && [ "$rarr" != "${jid[$side]}" ] && [ "$rhet" != "${jid[$side]}" ]; then
				problems+=("$side: a record of job $rid${rarr:+ (array $rarr)}${rhet:+ (het $rhet)}, not of this case's job ${jid[$side]}")
				continue
			fi
			[ "${f##*/}" = "$side-$rid.alloc" ] || { problems+=("$side: ${f##*/} holds the record of job $rid"); continue; }
			own=$((own + 1))
			comp_args=${comps[${roff:-0}]:-}
			[ -n "$comp_args" ] || { problems+=("$side: het component ${roff:-0} of $rid is not in the matrix line"); continue; }
			while read -r p; do
				[ -n "$p" ] && problems+=("$side: $p")
			done < <(check_alloc "$label" "$comp_args" "$f")
			IFS='|' read -r _ _ nl _ <"$f" # the first line: alloc|NUMNODES|NODELIST|TASKS_PER_NODE|DIST
			all="$all $nl"
		done
		if [ "$own" != "$want_recs" ]; then
			problems+=("$side: $own records of job ${jid[$side]}, $want_recs expected (array tasks, het components)")
		else
			checked[$side]=1
		fi
		# The nodes, in node order (n1 n2 ... n16).
		byn=() other_=()
		for x in $all; do
			hosts_of "$x"
			for h in "${hosts_[@]}"; do
				if [[ $h =~ ^n([0-9]+)$ ]]; then byn[${BASH_REMATCH[1]}]+="$h "; else other_+=("$h"); fi
			done
		done
		nodes_seen[$side]=
		for x in "${byn[@]}"; do nodes_seen[$side]+=$x; done
		[ ${#other_[@]} -eq 0 ] || nodes_seen[$side]+="${other_[*]} "
		nl=${nodes_seen[$side]% }
		res[$side]="ran on $nl"
	done
	# Every record goes now: none may be read as the next case's.
	clear_records
	# The matrix asks only for what Slurm takes: a refusal by plain Slurm is a
	# broken case (or a release that changed), never a pass.
	case ${res[plain]:-} in refused*) problems+=("refused by plain cons_tres: ${res[plain]}") ;; esac
	is_compared=0
	case ${res[plain]:-}/${res[topo]:-} in
	ran*/ran*) [ -z "${checked[plain]:-}" ] || [ -z "${checked[topo]:-}" ] || is_compared=1 ;;
	esac
	# Plain Slurm ran it: select/topo must run it too.
	case ${res[plain]:-} in ran*) case ${res[topo]:-} in ran*) ;; *) problems+=("ran on plain cons_tres, under select/topo: ${res[topo]:-nothing}") ;; esac ;; esac
	# Where select/topo steps aside: exactly plain Slurm's nodes.
	case $label in spread-*|contiguous-*|lln-*|required-all*)
		[ "${nodes_seen[plain]:-}" = "${nodes_seen[topo]:-}" ] ||
			problems+=("select/topo steps aside here, but its nodes (${nodes_seen[topo]:-}) are not cons_tres's (${nodes_seen[plain]:-})") ;;
	esac
	# Weights: what plain Slurm keeps on the light nodes (n9-n16) stays there.
	if [ "$st" = weighted ]; then
		light() { for h in $1; do [ "${h#n}" -ge 9 ] || return 1; done; }
		if light "${nodes_seen[plain]:-n1}" && ! light "${nodes_seen[topo]:-n1}"; then
			problems+=("cons_tres kept it on the weight-1 nodes, select/topo used a weight-10 node: ${nodes_seen[topo]:-}")
		fi
	fi
	# Compared, or expected to pend and pending on both; nothing else passes.
	outcome=compared
	if [ -n "$pend_reason" ]; then
		outcome=expected-pending
		case ${res[plain]:-}/${res[topo]:-} in
		pending*/pending*) ;;
		*) problems+=("expected to pend on both ($pend_reason), but plain: ${res[plain]:-?}, topo: ${res[topo]:-?}") ;;
		esac
	elif [ $is_compared = 0 ]; then
		problems+=("not compared: plain: ${res[plain]:-?}; topo: ${res[topo]:-?}")
	fi
	printf '  %-24s %-44s | %-30s | %s\n' "$label" "$args" "plain: ${res[plain]:-?}" "topo: ${res[topo]:-?}"
	[ $is_compared = 0 ] || compared=$((compared + 1))
	if [ ${#problems[@]} -eq 0 ]; then
		passed=$((passed + 1))
		if [ $outcome = expected-pending ]; then
			expected_pending=$((expected_pending + 1))
			expected+=("$label ($st): $pend_reason")
			echo "    expected pending: $pend_reason"
		fi
	else
		failed=$((failed + 1))
		for p in "${problems[@]}"; do echo "    FAIL: $p"; done
		failures+=("$label ($st): ${problems[0]}")
	fi
	unset jid res q nodes_seen checked
done < <(matrix)
if [ $failed -gt 0 ]; then
	echo "failed jobs:"
	printf '  %s\n' "${failures[@]}"
	mkdir -p "$base-failed"
	cp -r "$plain_dir/log" "$base-failed/plain-log" 2>/dev/null
	cp -r "$topo_dir/log" "$base-failed/topo-log" 2>/dev/null
	echo "(daemon logs kept in $base-failed)"
fi
echo "differential: $submitted cases submitted, $compared compared (ran on both, allocations checked), $expected_pending expected-pending, $failed failed"
[ ${#expected[@]} -eq 0 ] || printf 'differential: expected pending: %s\n' "${expected[@]}"
if [ $((compared + expected_pending)) -lt "$submitted" ]; then
	echo "differential: $((submitted - compared - expected_pending)) of $submitted submitted cases neither compared nor expected-pending"
	[ $failed -gt 0 ] || failed=1
fi
if [ $compared = 0 ]; then
	echo "differential: no job ran on both clusters: nothing was compared"
	failed=$((failed + 1))
fi
echo "$passed passed, $failed failed"
[ $failed = 0 ]
