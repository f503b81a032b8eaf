# shellcheck shell=bash
# run_case's locals are set and read by the functions it calls (bash's
# dynamic scope), and the errors by run.sh: SC2034 cannot see either.
# shellcheck disable=SC2034
# What Slurm promises for a job, checked on one allocation record of it
# (sourced by run.sh; the record is records.sh's: "alloc|NUMNODES|NODELIST|
# TASKS_PER_NODE|DISTRIBUTION", then `scontrol show job -d` of the job).

# check_alloc LABEL ARGS FILE: what Slurm promises for this job, on this allocation.
# Prints one line per broken promise; an option it does not know is one.
# The pieces below read and set check_alloc's locals: the record (alloc_record),
# the options asked for (alloc_options), the detail lines (alloc_detail).
check_alloc() {
	local label=$1 args=$2 f=$3 nn nl tpn dist count all total=0
	local -a rec=() hosts=()
	local -A on_job=()
	local min= max= w= x_= ntpn= gres= gpus= gpt= ntasks= contig=0 spread=0 excl=0 feat= sw=
	local usemin=0 part= array= mpg= cps= distrib=
	local -a per_node=() cpus_node=() mem_node=() notexcl=() socket_bad=()
	alloc_record "$f"
	# shellcheck disable=SC2086
	alloc_options $args
	check_node_count
	check_node_names
	check_tasks
	check_partition_array
	alloc_detail
	check_gpus
	check_exclusive
	check_mem_per_gpu
	check_cores_per_socket
	check_distribution
	check_placement
}

# alloc_record FILE: rec=(its lines); nn nl tpn dist from its first line;
# hosts=(the job's nodes), count, on_job[NODE]=1; all= the job's record.
alloc_record() {
	local h
	mapfile -t rec <"$1"
	IFS='|' read -r _ nn nl tpn dist _ <<<"${rec[0]}"
	hosts_of "$nl"
	hosts=("${hosts_[@]}")
	count=${#hosts[@]}
	for h in "${hosts[@]}"; do on_job[$h]=1; done
	[ "$count" = "$nn" ] || echo "SLURM_JOB_NUM_NODES=$nn but $count nodes in $nl"
	# The job's record, one string (fields are looked up by name: releases
	# move them between lines).
	all=" ${rec[*]:1} "
}

# alloc_options SBATCH-ARGS...: what the job asked for, one variable per option.
alloc_options() {
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
}

# check_node_count: -N MIN[-MAX], and --use-min-nodes.
check_node_count() {
	if [ -n "$min" ]; then
		[ "$nn" -ge "$min" ] && [ "$nn" -le "$max" ] || echo "$nn nodes, asked for $min-$max"
	fi
	# --use-min-nodes: the minimum where the minimum fits. Every request here
	# is per node, so any $min of the job's own nodes would have held it.
	if [ "$usemin" = 1 ]; then
		if [ -z "$min" ]; then
			echo "checker: --use-min-nodes without -N (a broken test)"
		elif [ -n "$ntasks$gpus$gpt" ]; then
			echo "checker: --use-min-nodes beside a total (-n, --gpus, --gpus-per-task) is not checked (a broken test)"
		else
			[ "$nn" = "$min" ] || echo "--use-min-nodes: $nn nodes, the minimum $min fits (each node's request is the same)"
		fi
	fi
}

# check_node_names: the required nodes (-w) are the job's, the excluded (-x) are not.
check_node_names() {
	local h
	if [ -n "$w" ]; then
		hosts_of "$w"
		for h in "${hosts_[@]}"; do [ -n "${on_job[$h]:-}" ] || echo "required node $h not in $nl"; done
	fi
	if [ -n "$x_" ]; then
		hosts_of "$x_"
		for h in "${hosts_[@]}"; do [ -z "${on_job[$h]:-}" ] || echo "excluded node $h in $nl"; done
	fi
}

# check_tasks: --ntasks-per-node and -n, on SLURM_TASKS_PER_NODE.
check_tasks() {
	local x
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
}

# check_partition_array: -p, and --array (the record's task is one of them).
check_partition_array() {
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
}

# alloc_detail: the detail lines, one per group of nodes alike:
# "Nodes=n3 CPU_IDs=0-3 Mem=0 GRES=gpu:4(IDX:0-3)" (older releases:
# "GRES_IDX=gpu(IDX:0-3)"). GPUs: count the indexes; CPUs: the CPU_IDs.
# per_node=("NODE GPUS"...), cpus_node=("NODE CPUS"...), mem_node=("NODE MEM
# GPUS"...), notexcl=(the lines without every CPU), socket_bad=(the nodes of
# a background job where a --cores-per-socket job spans both sockets).
alloc_detail() {
	local l nodes idx c part_ lo hi cpus mem a_ b_ h
	local detail_re='^ +Nodes=([^ ]*)' idx_re='gpu[^(]*\(IDX:([^)]*)\)' cpu_re=' CPU_IDs=([^ ]*)' mem_re=' Mem=([0-9]+)'
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
}

# check_gpus: GPUs per node (--gres), and in all (--gpus, --gpus-per-task;
# total= the job's GPUs).
check_gpus() {
	local l h g
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
}

# check_exclusive: with --exclusive, every CPU of every node of the job (a
# node without a detail line is not taken for whole).
check_exclusive() {
	[ "$excl" = 1 ] || return 0
	[ "${#cpus_node[@]}" = "$nn" ] || echo "CPU detail for ${#cpus_node[@]} of $nn nodes (--exclusive)"
	[ ${#notexcl[@]} -eq 0 ] || echo "--exclusive but not every core: ${notexcl[0]}"
}

# --mem-per-gpu=M: the record carries M per GPU (22.05: MemPerTres=gres:gpu:M,
# newer releases gres/gpu:M) and a MinMemory* field, and the memory the job
# holds, where the record shows it (Mem= of a detail line, mem= of its
# TRES; under CR_Core memory is not allocated and both read 0 or nothing),
# is at least M per GPU.
check_mem_per_gpu() {
	local l h mem g
	[ -n "$mpg" ] || return 0
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
}

# --cores-per-socket=C: the record asks C (ReqB:S:C:T=*:*:C:*, or a
# CoresPerSocket= field), and cons_tres takes cores only from sockets
# with C free: on a node of a background job at most one socket is whole.
check_cores_per_socket() {
	local l rc_=
	[ -n "$cps" ] || return 0
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
}

# --distribution=D: the job was given D (SLURM_DISTRIBUTION). (How many
# CPUs each node holds is not part of it: 22.05's cons_tres gives
# -N 2 -n 8 --distribution=cyclic 7 and 1; the layout is the steps'.)
check_distribution() {
	[ -n "$distrib" ] || return 0
	if [ -z "$dist" ]; then
		echo "the job saw no SLURM_DISTRIBUTION (--distribution=$distrib)"
	elif [ "${dist%%,*}" != "$distrib" ]; then
		echo "SLURM_DISTRIBUTION=$dist, asked for --distribution=$distrib"
	fi
	case ${distrib%%:*} in
	cyclic|block) ;;
	*) echo "checker: --distribution=$distrib is not checked (a broken test)" ;;
	esac
}

# check_placement: features (--constraint), leaves (--switches), --contiguous
# and --spread-job, on the cluster's shape: cluster.sh gives n1-n8 a100 and
# n9-n16 h100; a leaf switch holds 4 nodes (n1-n4, n5-n8, ...).
check_placement() {
	local h x
	if [ -n "$feat" ]; then
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
	if [ "$contig" = 1 ]; then
		local first= last=
		for h in "${hosts[@]}"; do
			x=${h#n}
			[ -n "$first" ] && [ "$first" -le "$x" ] || first=$x
			[ -n "$last" ] && [ "$last" -ge "$x" ] || last=$x
		done
		[ $((last - first + 1)) = "$count" ] || echo "--contiguous but $nl"
	fi
	if [ "$spread" = 1 ]; then
		[ "$count" -ge "$ntasks" ] || echo "--spread-job -n $ntasks on $count nodes"
	fi
}
