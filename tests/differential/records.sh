# shellcheck shell=bash
# run_case's locals are set and read by the functions it calls (bash's
# dynamic scope), and the errors by run.sh: SC2034 cannot see either.
# shellcheck disable=SC2034
# A case's records (sourced by run.sh): the job script that writes one per
# job, array task or het component, reading them back on each side, and the
# node, task and id lists they hold.

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
# clear_records: remove every record of both sides; cleared_=(the names there were).
clear_records() {
	local f
	cleared_=()
	for f in "$out"/*.alloc "$out"/*.alloc.tmp; do [ -e "$f" ] && cleared_+=("$f"); done
	[ ${#cleared_[@]} -eq 0 ] || rm -f -- "${cleared_[@]}"
	cleared_=("${cleared_[@]##*/}")
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

# ------------------------------------------------------------------ reading them
# The functions below work on run_case's locals (case.sh): label, args, jid,
# res, comps, want_recs, problems, checked, nodes_seen.

# expected_records: want_recs= how many records the job must leave (array
# tasks, het components); comps=(each het component's sbatch args).
expected_records() {
	local a_ rest_
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
}
# read_side SIDE: the allocations of SIDE's job (components and tasks), its
# own job's records only, every one of them, checked; res[SIDE]="ran on
# NODES" and checked[SIDE]=1 when all of them were there.
read_side() {
	local side=$1 f all= own=0
	local -a files=()
	[ -n "${jid[$side]}" ] || return 0
	[ -z "${res[$side]:-}" ] || return 0
	for f in "$out/$side-"*.alloc; do [ -f "$f" ] && files+=("$f"); done
	if [ ${#files[@]} -eq 0 ]; then
		res[$side]="no allocation recorded"
		return 0
	fi
	for f in "${files[@]}"; do read_record "$side" "$f"; done
	if [ "$own" != "$want_recs" ]; then
		problems+=("$side: $own records of job ${jid[$side]}, $want_recs expected (array tasks, het components)")
	else
		checked[$side]=1
	fi
	node_order "$side" "$all"
	res[$side]="ran on ${nodes_seen[$side]% }"
}
# read_record SIDE FILE: when FILE holds a record of this case's job (own+1),
# what check_alloc finds on it goes to problems, its nodes to read_side's all.
read_record() {
	local side=$1 f=$2 rid rarr rhet roff comp_args p nl
	record_ids "$f"
	if [ -z "$rid" ]; then
		problems+=("$side: ${f##*/} holds no job record (scontrol show job failed in the job?)")
		return 0
	fi
	if [ "$rid" != "${jid[$side]}" ] && [ "$rarr" != "${jid[$side]}" ] && [ "$rhet" != "${jid[$side]}" ]; then
		problems+=("$side: a record of job $rid${rarr:+ (array $rarr)}${rhet:+ (het $rhet)}, not of this case's job ${jid[$side]}")
		return 0
	fi
	[ "${f##*/}" = "$side-$rid.alloc" ] || { problems+=("$side: ${f##*/} holds the record of job $rid"); return 0; }
	own=$((own + 1))
	comp_args=${comps[${roff:-0}]:-}
	[ -n "$comp_args" ] || { problems+=("$side: het component ${roff:-0} of $rid is not in the matrix line"); return 0; }
	while read -r p; do
		[ -n "$p" ] && problems+=("$side: $p")
	done < <(check_alloc "$label" "$comp_args" "$f")
	IFS='|' read -r _ _ nl _ <"$f" # the first line: alloc|NUMNODES|NODELIST|TASKS_PER_NODE|DIST
	all="$all $nl"
}
# record_ids FILE: rid= the JobId of FILE's job record (empty: none there),
# rarr= its ArrayJobId, rhet= its HetJobId, roff= its HetJobOffset.
record_ids() {
	local l
	rid= rarr= rhet= roff=
	while IFS= read -r l; do
		[[ $l =~ ^JobId=([0-9]+) ]] || continue
		rid=${BASH_REMATCH[1]}
		[[ ! $l =~ [[:space:]]ArrayJobId=([0-9]+) ]] || rarr=${BASH_REMATCH[1]}
		[[ ! $l =~ [[:space:]]HetJobId=([0-9]+) ]] || rhet=${BASH_REMATCH[1]}
		[[ ! $l =~ [[:space:]]HetJobOffset=([0-9]+) ]] || roff=${BASH_REMATCH[1]}
		break
	done <"$1"
}
# node_order SIDE NODELISTS: nodes_seen[SIDE]= the nodes, in node order (n1
# n2 ... n16; any other name after them), each followed by a space.
node_order() {
	local x h
	local -a byn=() other_=()
	for x in $2; do
		hosts_of "$x"
		for h in "${hosts_[@]}"; do
			if [[ $h =~ ^n([0-9]+)$ ]]; then byn[${BASH_REMATCH[1]}]+="$h "; else other_+=("$h"); fi
		done
	done
	nodes_seen[$1]=
	for x in "${byn[@]}"; do nodes_seen[$1]+=$x; done
	[ ${#other_[@]} -eq 0 ] || nodes_seen[$1]+="${other_[*]} "
}
