# cluster: --nodes 12 --gpus-per-node 8 --select topo --topo-line node_sweep=1s
# Link health in placement. A loom:suspect mark of a link check (ib_errors,
# as `loom health check` sets it) on one node makes its leaf a leaf with a
# degraded link. A --comm=heavy gang leaves the leaf it took before for a
# clean one; a --comm=light gang keeps its leaf (not the marked node itself).
leaf_of() { local n=${1#n}; echo "leaf$(( (n - 1) / 4 + 1 ))"; }
leaves_of() { local h; for h in $(expand_hosts "$1"); do leaf_of "$h"; done | sort -u | tr '\n' ' '; }
gang() { # OPTIONS...: "JOBID NODELIST" of a 2-node gang once it runs
	local j
	j=$(submit -N2 --gres=gpu:8 "$@" -o /dev/null --wrap 'sleep 600')
	wait_state "$j" RUNNING 30
	echo "$j $(job_field "$j" NodeList)"
}
stop() { scancel "$@"; for j in "$@"; do wait_state "$j" "CANCELLED|COMPLETED" 30; done; }
# A node of LEAF outside HOSTLIST.
other_in() {
	local l=${1#leaf} n
	for n in $(seq $(( (l - 1) * 4 + 1 )) $(( l * 4 ))); do
		expand_hosts "$2" | grep -x "n$n" >/dev/null || { echo "n$n"; return; }
	done
}
read -r jh heavy0 < <(gang --comm=heavy)
stop "$jh"
read -r jl light0 < <(gang --comm=light)
stop "$jl"
X=$(leaves_of "$heavy0"); X=${X% }
Y=$(leaves_of "$light0"); Y=${Y% }
[ "$(echo "$X" | wc -w)" = 1 ] && [ "$(echo "$Y" | wc -w)" = 1 ] || fail "a 2-node gang spread over leaves: $heavy0, $light0"
note "no mark: --comm=heavy on $heavy0 ($X), --comm=light on $light0 ($Y)"
marked=$(other_in "$X" "$heavy0")
[ "$Y" = "$X" ] || marked="$marked $(other_in "$Y" "$light0")"
for m in $marked; do
	scontrol update nodename="$m" extra="loom:suspect:ib_errors:mlx5_0 port 1 symbol errors +4100 in 60s" ||
		fail "scontrol update extra= refused"
done
nap 2 # select/topo's node sweep (node_sweep=1s) reads the marks
read -r jh heavy < <(gang --comm=heavy)
for l in $(leaves_of "$heavy"); do
	[ "$l" = "$X" ] && fail "the heavy gang took $heavy, on $X with a degraded link ($marked marked)"
	[ "$l" = "$Y" ] && fail "the heavy gang took $heavy, on $Y with a degraded link ($marked marked)"
done
note "marked $marked: --comm=heavy on $heavy"
stop "$jh"
read -r jl light < <(gang --comm=light)
[ "$(leaves_of "$light")" = "$Y " ] || fail "the light gang moved from $Y to $light: light gangs may use a degraded leaf"
for m in $marked; do
	expand_hosts "$light" | grep -x "$m" >/dev/null && fail "the light gang got the marked node $m itself: $light"
done
note "marked $marked: --comm=light still on $light"
stop "$jl"
for m in $marked; do scontrol update nodename="$m" extra= >/dev/null 2>&1 || scontrol update nodename="$m" extra=none; done
