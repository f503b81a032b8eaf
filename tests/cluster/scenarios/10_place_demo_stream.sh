# cluster: --nodes 16 --gpus-per-node 8 --select topo
# demo: Placement: a stream of small jobs, then a whole-leaf and a two-leaf gang (select/topo vs cons_tres)
# A stream of small GPU jobs followed by large gangs. select/topo packs the
# small jobs into nodes and leaves already in use, so that a 4-node x 8-GPU job
# still gets a whole leaf and a 6-node x 8-GPU job gets two leaves of one pod.
# The same stream then runs under plain cons_tres + topology/tree and both
# placements are printed side by side; select/topo's must be at least as tight
# as cons_tres's for each of them (nodes and leaves of the small jobs, leaves
# and pods of each gang). (Slurm 22.05 puts the 6-node gang across both pods;
# later releases' topology/tree may match select/topo here.)

leaf_of() { # node -> leafN (4 nodes per leaf)
	local n=${1#n}
	echo "leaf$(( (n - 1) / 4 + 1 ))"
}
pod_of() { local n=${1#n}; echo "pod$(( (n - 1) / 8 + 1 ))"; }

# run_stream: prints "label nodelist" per job; leaves the jobs running.
run_stream() {
	local j i small=("2" "2" "4" "1" "3" "4")
	for i in "${!small[@]}"; do
		j=$(submit -N1 --gres=gpu:"${small[$i]}" -o /dev/null --wrap 'sleep 600')
		wait_state "$j" RUNNING 30
		echo "small$((i + 1)):gpu:${small[$i]} $(job_field "$j" NodeList)"
	done
	j=$(submit -N4 --gres=gpu:8 -o /dev/null --wrap 'sleep 600')
	wait_state "$j" RUNNING 30
	echo "gang4x8 $(job_field "$j" NodeList)"
	j=$(submit -N6 --gres=gpu:8 -o /dev/null --wrap 'sleep 600')
	wait_state "$j" RUNNING 30
	echo "gang6x8 $(job_field "$j" NodeList)"
}

# summary NODELIST -> "n[1-4] (leaf1; pod1)"
summary() {
	local hosts leaves pods
	hosts=$(expand_hosts "$1")
	leaves=$(for h in $hosts; do leaf_of "$h"; done | sort -u | tr '\n' ',' | sed 's/,$//')
	pods=$(for h in $hosts; do pod_of "$h"; done | sort -u | tr '\n' ',' | sed 's/,$//')
	echo "$1 ($leaves; $pods)"
}

topo_out=$(run_stream)
scancel --user="$(id -un)" >/dev/null 2>&1 || true

# Assertions on select/topo's placement.
small_nodes=$(echo "$topo_out" | grep '^small' | awk '{print $2}' | while read -r l; do expand_hosts "$l"; done | sort -u)
[ "$(echo "$small_nodes" | wc -l)" -le 3 ] || fail "16 GPUs of small jobs spread over $(wc -w <<<"$small_nodes") nodes: ${small_nodes//$'\n'/ }"
small_leaves=$(for h in $small_nodes; do leaf_of "$h"; done | sort -u | wc -l)
[ "$small_leaves" = 1 ] || fail "small jobs spread over $small_leaves leaves"
g4=$(echo "$topo_out" | awk '$1=="gang4x8"{print $2}')
g6=$(echo "$topo_out" | awk '$1=="gang6x8"{print $2}')
g4_leaves=$(for h in $(expand_hosts "$g4"); do leaf_of "$h"; done | sort -u | wc -l)
[ "$g4_leaves" = 1 ] || fail "4-node gang $g4 spans $g4_leaves leaves, expected one whole leaf"
g6_leaves=$(for h in $(expand_hosts "$g6"); do leaf_of "$h"; done | sort -u | wc -l)
g6_pods=$(for h in $(expand_hosts "$g6"); do pod_of "$h"; done | sort -u | wc -l)
[ "$g6_leaves" = 2 ] && [ "$g6_pods" = 1 ] || fail "6-node gang $g6 spans $g6_leaves leaves in $g6_pods pods, expected 2 leaves of one pod"
grep -q "select/topo: JobId=.* placed on" "$LOOM_CLUSTER_DIR/log/slurmctld.log" || fail "slurmctld log has no select/topo placement line"

# The same stream on plain cons_tres + topology/tree, for comparison.
base_dir="$LOOM_CLUSTER_DIR-cons_tres"
trap '"$LOOM_SRCDIR/tests/cluster/cluster.sh" down --dir "$base_dir" >/dev/null 2>&1' EXIT
base_up=$("$LOOM_SRCDIR/tests/cluster/cluster.sh" up --dir "$base_dir" --nodes 16 --gpus-per-node 8 \
	--select cons_tres --builddir "$LOOM_BUILDDIR" 2>&1) ||
	fail "the cons_tres comparison cluster did not start: $(echo "$base_up" | grep -m3 -iE 'error|fail' | tr '\n' ' ')"
base_conf=$(echo "$base_up" | sed -n 's/^export SLURM_CONF=//p')
[ -n "$base_conf" ] || fail "the cons_tres comparison cluster printed no SLURM_CONF"
base_out=$(SLURM_CONF=$base_conf run_stream)
SLURM_CONF=$base_conf scancel --user="$(id -un)" >/dev/null 2>&1 || true

printf '  %-14s %-34s %s\n' job "select/topo" "cons_tres + topology/tree"
while read -r label nodes; do
	b=$(echo "$base_out" | awk -v l="$label" '$1==l{print $2}')
	[ -n "$b" ] || fail "the cons_tres comparison cluster has no placement for $label: $(echo "$base_out" | tr '\n' ';')"
	printf '  %-14s %-34s %s\n' "$label" "$(summary "$nodes")" "$(summary "$b")"
done <<<"$topo_out"

# count WHAT STREAM_OUTPUT LABEL_PATTERN: distinct nodes, leaves or pods the
# jobs whose label matches take together.
count() {
	local h
	for h in $(echo "$2" | awk -v p="$3" '$1 ~ p {print $2}' | while read -r l; do expand_hosts "$l"; done); do
		case $1 in nodes) echo "$h" ;; leaves) leaf_of "$h" ;; pods) pod_of "$h" ;; esac
	done | sort -u | wc -l
}
tighter=()
for m in "nodes ^small small jobs" "leaves ^small small jobs" "leaves ^gang4x8$ gang4x8" "leaves ^gang6x8$ gang6x8" \
	"pods ^gang6x8$ gang6x8"; do
	read -r what pat label <<<"$m"
	t=$(count "$what" "$topo_out" "$pat")
	b=$(count "$what" "$base_out" "$pat")
	[ "$t" -le "$b" ] || fail "$label: select/topo takes $t $what, cons_tres + topology/tree $b"
	[ "$t" = "$b" ] || tighter+=("$label: $t $what, cons_tres $b")
done
if [ ${#tighter[@]} -gt 0 ]; then
	joined=$(printf '%s; ' "${tighter[@]}")
	note "select/topo tighter than cons_tres + topology/tree: ${joined%; }"
else
	note "select/topo as tight as cons_tres + topology/tree on every job of this stream (Slurm $(slurm_release))"
fi
