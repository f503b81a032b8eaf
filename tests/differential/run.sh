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
# checked: node count, required and excluded nodes, tasks per node, GPUs per
# node and in total, whole nodes, features, switches, contiguity, spread. A job
# that runs on plain Slurm must run under select/topo too (not fail, hang or be
# refused). Where select/topo steps aside (--spread-job, --contiguous, LLN, a
# --nodelist that is the whole job) the nodes must be exactly plain Slurm's;
# with node weights, a job plain Slurm keeps on the light nodes stays there.
# Which nodes the engine picks may differ otherwise: that is the point of loom.
# The last line reads "N passed, N failed".
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
# shellcheck source=tests/cluster/nap.sh
. "$top/tests/cluster/nap.sh"
slurm=${LOOM_SLURM:-}
builddir=${LOOM_BUILDDIR:-}
sizes=${LOOM_DIFF_SIZES:-"1 3 6"}
only=
while [ $# -gt 0 ]; do
	case $1 in
	--slurm) slurm=$2; shift 2 ;;
	--builddir) builddir=$2; shift 2 ;;
	--sizes) sizes=$2; shift 2 ;;
	--only) only=$2; shift 2 ;;
	-h|--help) sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
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
conf_of() { echo "$1/etc/slurm.conf"; }
dir_of() { if [ "$1" = plain ]; then echo "$plain_dir"; else echo "$topo_dir"; fi; }
on() { local d=$1; shift; SLURM_CONF=$d/etc/slurm.conf "$@"; }
both() { on "$plain_dir" "$@" && on "$topo_dir" "$@"; }

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
set_state() {
	local d
	for d in "$plain_dir" "$topo_dir"; do
		on "$d" scancel --user="$(id -un)" >/dev/null 2>&1
	done
	wait_drained
	if [ "$1" = weighted ]; then
		both scontrol update nodename=n[1-8] weight=10 && both scontrol update nodename=n[9-16] weight=1
	else
		both scontrol update nodename=n[1-16] weight=1
	fi
	local line j
	while read -r line; do
		[ -n "$line" ] || continue
		for d in "$plain_dir" "$topo_dir"; do
			# shellcheck disable=SC2086
			j=$(on "$d" sbatch --parsable -J background -o /dev/null $line --wrap 'sleep 3000') ||
				{ echo "differential: background job '$line' refused on $d"; return 1; }
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
		[ "$EPOCHSECONDS" -lt "$deadline" ] || { echo "differential: background jobs of state $1 not running"; return 1; }
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
# Test jobs only: the background stays.
cancel_tests() {
	local d
	for d in "$plain_dir" "$topo_dir"; do
		on "$d" squeue -h -o '%i %j' | awk '$2 != "background" {print $1}' | xargs -r env SLURM_CONF="$(conf_of "$d")" scancel
	done
	local deadline=$(( EPOCHSECONDS + 20 ))
	while :; do
		[ -n "$( { on "$plain_dir" squeue -h -o '%j'; on "$topo_dir" squeue -h -o '%j'; } | grep -vx background)" ] || return 0
		[ "$EPOCHSECONDS" -lt "$deadline" ] || return 1
		nap 0.2
	done
}

# ------------------------------------------------------------------ the matrix
# Lines: "STATE<TAB>LABEL<TAB>SBATCH ARGS"; N is the size.
matrix() {
	local n r
	for st in idle fragmented; do
		for n in $sizes; do
			r=$((n + 2))
			printf '%s\t%s\t%s\n' \
				"$st" "gang-N$n" "-N $n --gres=gpu:8" \
				"$st" "subnode-N$n" "-N $n --gres=gpu:2 --ntasks-per-node=2" \
				"$st" "exclusive-N$n" "-N $n --exclusive" \
				"$st" "range-N$n-$r" "-N $n-$r --gres=gpu:8" \
				"$st" "range-min-N$n-$r" "-N $n-$r --use-min-nodes --gres=gpu:8" \
				"$st" "required-N$n" "-N $n -w n5 --gres=gpu:4" \
				"$st" "exclude-N$n" "-N $n -x n[1-4] --gres=gpu:8" \
				"$st" "contiguous-N$n" "-N $n --contiguous --gres=gpu:4" \
				"$st" "spread-n$((n + 1))" "-n $((n + 1)) --spread-job" \
				"$st" "gpus-per-task-n$((2 * n))" "-n $((2 * n)) --gpus-per-task=2" \
				"$st" "gpus-total-$((4 * n))" "--gpus=$((4 * n))" \
				"$st" "mem-per-gpu-N$n" "-N $n --gres=gpu:4 --mem-per-gpu=1000" \
				"$st" "cores-N$n" "-N $n --ntasks-per-node=4 --cores-per-socket=8 --gres=gpu:1" \
				"$st" "constraint-N$n" "-N $n --constraint=h100 --gres=gpu:4" \
				"$st" "switches-N$n" "-N $n --switches=$(( (n + 3) / 4 )) --gres=gpu:8" \
				"$st" "distribution-N$n" "-N $n -n $((4 * n)) --distribution=cyclic --gres=gpu:2" \
				"$st" "lln-N$n" "-p lln -N $n --gres=gpu:2"
		done
		printf '%s\t%s\t%s\n' \
			"$st" "array-3" "--array=1-3 -N 1 --gres=gpu:4" \
			"$st" "hetjob" "-N 1 --gres=gpu:4 : -N 2 --gres=gpu:8" \
			"$st" "required-all" "-w n3,n4 -N 2 --gres=gpu:8" \
			"$st" "required-all-no-N" "-w n3,n4 --gres=gpu:2"
	done
	for n in $sizes; do
		printf '%s\t%s\t%s\n' \
			weighted "weighted-N$n" "-N $n --gres=gpu:8" \
			weighted "weighted-subnode-N$n" "-N $n --gres=gpu:3"
	done
	printf '%s\t%s\t%s\n' weighted "weighted-N10" "-N 10 --gres=gpu:8"
}

# ------------------------------------------------------------------ checks
# The allocation as the job saw it: one line per component of the job
# (array tasks and het components too), "JOBID|NUMNODES|NODELIST|TASKS_PER_NODE",
# then `scontrol show job -d` of it.
job_script() {
	cat <<'EOF'
#!/bin/bash
# One file per job, array task or het component: "alloc|NUMNODES|NODELIST|TASKS_PER_NODE"
# and its `scontrol show job -d`.
record() { # ID NUMNODES NODELIST TASKS_PER_NODE
	local f=__OUT__/$LOOM_DIFF_SIDE-$1.alloc
	# (An array's first task and a het leader print every task or component:
	# only this one's record.)
	{ echo "alloc|$2|$3|$4"; scontrol show job -d "$1" | awk -v id="JobId=$1" '/^JobId=/ { keep = ($1 == id) } keep'; } \
		>"$f.tmp" && mv "$f.tmp" "$f"
}
if [ -n "${SLURM_HET_SIZE:-}" ]; then
	for ((i = 0; i < SLURM_HET_SIZE; i++)); do
		id=SLURM_JOB_ID_HET_GROUP_$i nn=SLURM_JOB_NUM_NODES_HET_GROUP_$i
		nl=SLURM_JOB_NODELIST_HET_GROUP_$i tp=SLURM_TASKS_PER_NODE_HET_GROUP_$i
		record "${!id}" "${!nn}" "${!nl}" "${!tp}"
	done
else
	record "$SLURM_JOB_ID" "$SLURM_JOB_NUM_NODES" "$SLURM_JOB_NODELIST" "$SLURM_TASKS_PER_NODE"
fi
EOF
}

nodes_of() { [ -z "$1" ] || on "$plain_dir" scontrol show hostnames "$1" 2>/dev/null; }
num() { echo "${1#n}"; }

# check_alloc LABEL ARGS FILE: what Slurm promises for this job, on this allocation.
# Prints one line per broken promise.
check_alloc() {
	local label=$1 args=$2 f=$3 line nn nl tpn hosts h
	line=$(grep -m1 '^alloc|' "$f")
	IFS='|' read -r _ nn nl tpn _ <<<"$line"
	hosts=$(nodes_of "$nl")
	local count=0
	for h in $hosts; do count=$((count + 1)); done
	[ "$count" = "$nn" ] || echo "SLURM_JOB_NUM_NODES=$nn but $count nodes in $nl"
	# shellcheck disable=SC2086
	set -- $args
	local min= max= w= x= ntpn= gres= gpus= gpt= ntasks= contig=0 spread=0 excl=0 feat= sw=
	while [ $# -gt 0 ]; do
		case $1 in
		-N) min=${2%-*}; max=${2#*-}; shift 2 ;;
		-w) w=$2; shift 2 ;;
		-x) x=$2; shift 2 ;;
		-n) ntasks=$2; shift 2 ;;
		--ntasks-per-node=*) ntpn=${1#*=}; shift ;;
		--gres=gpu:*) gres=${1#--gres=gpu:}; shift ;;
		--gpus=*) gpus=${1#*=}; shift ;;
		--gpus-per-task=*) gpt=${1#*=}; shift ;;
		--contiguous) contig=1; shift ;;
		--spread-job) spread=1; shift ;;
		--exclusive) excl=1; shift ;;
		--constraint=*) feat=${1#*=}; shift ;;
		--switches=*) sw=${1#*=}; sw=${sw%@*}; shift ;;
		*) shift ;;
		esac
	done
	if [ -n "$min" ]; then
		[ "$nn" -ge "$min" ] && [ "$nn" -le "$max" ] || echo "$nn nodes, asked for $min-$max"
	fi
	if [ -n "$w" ]; then
		for h in $(nodes_of "$w"); do echo "$hosts" | grep -x "$h" >/dev/null || echo "required node $h not in $nl"; done
	fi
	if [ -n "$x" ]; then
		for h in $(nodes_of "$x"); do echo "$hosts" | grep -x "$h" >/dev/null && echo "excluded node $h in $nl"; done
	fi
	if [ -n "$ntpn" ]; then
		echo "$tpn" | tr ',' '\n' | sed 's/(x[0-9]*)//' | grep -vx "$ntpn" >/dev/null &&
			echo "tasks per node $tpn, asked for $ntpn"
	fi
	# GPUs per node, from the detail lines "Nodes=n3 CPU_IDs=0-3 Mem=... GRES=gpu:4(IDX:0-3)"
	# (older releases: "GRES_IDX=gpu(IDX:0-3)"). Count the indexes.
	local per_node total=0 g
	# (Parsed by the shell: nap.sh says why.)
	local l nodes idx c part_ detail_re='^ +Nodes=([^ ]*)' idx_re='gpu[^(]*\(IDX:([^)]*)\)'
	local -a per_node=()
	while IFS= read -r l; do
		[[ $l =~ $detail_re ]] || continue
		nodes=${BASH_REMATCH[1]} idx= c=0
		[[ ! $l =~ $idx_re ]] || idx=${BASH_REMATCH[1]}
		for part_ in ${idx//,/ }; do
			if [[ $part_ == *-* ]]; then c=$((c + ${part_#*-} - ${part_%-*} + 1)); elif [ -n "$part_" ]; then c=$((c + 1)); fi
		done
		for h in $(nodes_of "$nodes"); do per_node+=("$h $c"); done
	done <"$f"
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
	if [ $excl = 1 ]; then
		grep -E '^ +Nodes=' "$f" | grep -v 'CPU_IDs=0-15' >/dev/null && echo "--exclusive but not every core: $(grep -E '^ +Nodes=' "$f" | head -2 | tr -s ' ')"
	fi
	if [ -n "$feat" ]; then
		for h in $hosts; do [ "$(num "$h")" -ge 9 ] || echo "node $h lacks feature $feat"; done
	fi
	if [ -n "$sw" ]; then
		local leaves
		leaves=$(for h in $hosts; do echo $(( ($(num "$h") - 1) / 4 )); done | sort -u | wc -l)
		[ "$leaves" -le "$sw" ] || echo "$leaves leaves, --switches=$sw"
	fi
	if [ $contig = 1 ]; then
		local first last
		first=$(for h in $hosts; do num "$h"; done | sort -n | head -1)
		last=$(for h in $hosts; do num "$h"; done | sort -n | tail -1)
		[ $((last - first + 1)) = "$count" ] || echo "--contiguous but $nl"
	fi
	if [ $spread = 1 ]; then
		[ "$count" -ge "$ntasks" ] || echo "--spread-job -n $ntasks on $count nodes"
	fi
}

# ------------------------------------------------------------------ run
passed=0
failed=0
both_ran=0
both_pending=0
failures=()
cur_state=
job_script | sed "s|__OUT__|$out|" >"$out/job.sh"
while IFS=$'\t' read -r st label args; do
	[ -z "$only" ] || [[ $label =~ $only ]] || continue
	if [ "$st" != "$cur_state" ]; then
		set_state "$st" || { failed=$((failed + 1)); failures+=("state $st: could not be set"); cur_state=; continue; }
		cur_state=$st
		echo "--- state: $st"
	fi
	declare -A jid=() res=()
	for side in plain topo; do
		# shellcheck disable=SC2086
		if ! jid[$side]=$(on "$(dir_of $side)" env LOOM_DIFF_SIDE=$side sbatch --parsable -J "t-$label" -o /dev/null \
			$args "$out/job.sh" 2>"$out/$side.err"); then
			jid[$side]=
			res[$side]="refused: $(tr '\n' ' ' <"$out/$side.err")"
		fi
		jid[$side]=${jid[$side]%%;*}
	done
	# Wait until the job has left both queues (ran and ended), or 20 s: pending.
	deadline=$(( EPOCHSECONDS + 20 ))
	while [ -n "$(on "$plain_dir" squeue -h -n "t-$label" -o %i)$(on "$topo_dir" squeue -h -n "t-$label" -o %i)" ] &&
	      [ "$EPOCHSECONDS" -lt "$deadline" ]; do
		nap 0.3
	done
	for side in plain topo; do
		[ -n "${jid[$side]}" ] || continue
		why=$(on "$(dir_of $side)" squeue -h -n "t-$label" -t PD -o %r 2>/dev/null | head -1)
		[ -z "$why" ] || res[$side]="pending ($why)"
	done
	cancel_tests
	# Allocations of each side: the .alloc files of its job (components and tasks).
	problems=()
	declare -A nodes_seen=()
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
		for f in "${files[@]}"; do
			comp_args=$args
			if [[ $args == *" : "* ]]; then
				off=$(sed -n 's/.*HetJobOffset=\([0-9]*\).*/\1/p' "$f" | head -1)
				comp_args=$(echo "$args" | awk -F' : ' -v i="${off:-0}" '{print $(i + 1)}')
			fi
			while read -r p; do
				[ -n "$p" ] && problems+=("$side: $p")
			done < <(check_alloc "$label" "${comp_args#--array=1-3 }" "$f")
			IFS='|' read -r _ _ nl _ <"$f" # the first line: alloc|NUMNODES|NODELIST|TASKS_PER_NODE
			all="$all $nl"
		done
		nodes_seen[$side]=$(for x in $all; do nodes_of "$x"; done | sort -V | tr '\n' ' ')
		nl=${nodes_seen[$side]% }
		res[$side]="ran on $nl"
		rm -f "${files[@]}"
	done
	# The matrix asks only for what Slurm takes: a refusal by plain Slurm is a
	# broken case (or a release that changed), never a pass.
	case ${res[plain]:-} in refused*) problems+=("refused by plain cons_tres: ${res[plain]}") ;; esac
	case ${res[plain]:-}/${res[topo]:-} in ran*/ran*) both_ran=$((both_ran + 1)) ;; pending*/pending*) both_pending=$((both_pending + 1)) ;; esac
	# Plain Slurm ran it: select/topo must run it too.
	case ${res[plain]:-} in ran*) case ${res[topo]:-} in ran*) ;; *) problems+=("ran on plain cons_tres, under select/topo: ${res[topo]:-nothing}") ;; esac ;; esac
	# Where select/topo steps aside: exactly plain Slurm's nodes.
	case $label in spread-*|contiguous-*|lln-*|required-all*)
		[ "${nodes_seen[plain]:-}" = "${nodes_seen[topo]:-}" ] ||
			problems+=("select/topo steps aside here, but its nodes (${nodes_seen[topo]:-}) are not cons_tres's (${nodes_seen[plain]:-})") ;;
	esac
	# Weights: what plain Slurm keeps on the light nodes (n9-n16) stays there.
	if [ "$st" = weighted ]; then
		light() { for h in $1; do [ "$(num "$h")" -ge 9 ] || return 1; done; }
		if light "${nodes_seen[plain]:-n1}" && ! light "${nodes_seen[topo]:-n1}"; then
			problems+=("cons_tres kept it on the weight-1 nodes, select/topo used a weight-10 node: ${nodes_seen[topo]:-}")
		fi
	fi
	printf '  %-24s %-44s | %-30s | %s\n' "$label" "$args" "plain: ${res[plain]:-?}" "topo: ${res[topo]:-?}"
	if [ ${#problems[@]} -eq 0 ]; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		for p in "${problems[@]}"; do echo "    FAIL: $p"; done
		failures+=("$label ($st): ${problems[0]}")
	fi
	unset jid res nodes_seen
done < <(matrix)
if [ $failed -gt 0 ]; then
	echo "failed jobs:"
	printf '  %s\n' "${failures[@]}"
	mkdir -p "$base-failed"
	cp -r "$plain_dir/log" "$base-failed/plain-log" 2>/dev/null
	cp -r "$topo_dir/log" "$base-failed/topo-log" 2>/dev/null
	echo "(daemon logs kept in $base-failed)"
fi
echo "differential: $both_ran jobs ran on both clusters, $both_pending pending on both (the state leaves no room)"
if [ $((passed + failed)) = 0 ] || [ $both_ran = 0 ]; then
	echo "differential: no job ran on both clusters: nothing was compared"
	failed=$((failed + 1))
fi
echo "$passed passed, $failed failed"
[ $failed = 0 ]
