# The topology checks of the consumers tier (sourced by run.sh): a fabric's
# expectation written by gen_fabric.py, and loom's topology.conf, block file
# or topology.yaml of that fabric loaded by slurmctld and read back with
# scontrol.

# gen NAME ARGS...: gen_fabric.py ARGS; when it fails, a failed check for NAME
# (whose topology check is then not run).
gen() {
	local name=$1
	shift
	python3 "$here/gen_fabric.py" "$@" 2>"$dir/fabrics/$name.err" && return 0
	no "$name: gen_fabric.py $1 failed (exit $?): $(tail -1 "$dir/fabrics/$name.err")"
	return 1
}

# topology NAME FABRIC EXPECT [FORMAT [SHOW [MODE]]]: FABRIC written by loom
# in FORMAT (topology.conf, block or topology.yaml) into slurmctld; then
# `scontrol show topology [SHOW]` checked (MODE tree or block).
topology() {
	local name=$1 fabric=$2 expect=$3 format=${4:-topology.conf} show=${5:-} mode=${6:-tree} d="$dir/$1" port pid i up=0
	local file=topology.conf plugin=topology/tree
	case $format in
	block) plugin=topology/block ;;
	topology.yaml) file=topology.yaml plugin= ;;
	esac
	mkdir -p "$d/etc"
	if ! "$loom" topo convert --from "$fabric" --to "$format" -o "$d/etc/$file" 2>"$d/convert.err"; then
		no "$name: loom topo convert failed: $(tail -1 "$d/convert.err")"
		return
	fi
	py "$name" "$d/nodes" -c 'import json,sys; print("\n".join(json.load(open(sys.argv[1]))["nodes"]))' "$expect" || return
	port=$(ports_for "$d")
	write_conf "$d" "$d/nodes" "$port"
	if [ -n "$plugin" ]; then
		sed -i "s|^TopologyPlugin=.*|TopologyPlugin=$plugin|" "$d/etc/slurm.conf"
	else
		sed -i "/^TopologyPlugin=/d" "$d/etc/slurm.conf" # topology.yaml names its plugins
	fi
	export SLURM_CONF=$d/etc/slurm.conf
	"$sbin/slurmctld" -i >"$d/log/slurmctld.out" 2>&1
	for i in $(seq 1 100); do
		if scontrol ping 2>/dev/null | grep 'is UP' >/dev/null; then up=1; break; fi
		pid=$(cat "$d/run/slurmctld.pid" 2>/dev/null || true)
		if [ "$i" -gt 10 ] && { [ -z "$pid" ] || ! kill -0 "$pid" 2>/dev/null; }; then break; fi
		nap 0.2
	done
	if [ $up = 0 ]; then
		no "$name: slurmctld did not start with loom's $format: $(first_failure "$d/log/slurmctld.log" "$d/log/slurmctld.out")"
		stop_ctld "$d"
		return
	fi
	ok "$name: slurmctld $slurm started with loom's $format ($(grep -ciE '^(SwitchName|BlockName)=|- (switch|block):' "$d/etc/$file") switches and blocks)"
	if grep -iE 'fatal|error' "$d/log/slurmctld.log" | grep -iE 'topolog|switch' >"$d/topo-errors"; [ -s "$d/topo-errors" ]; then
		no "$name: slurmctld logged topology errors: $(head -1 "$d/topo-errors")"
	fi
	# shellcheck disable=SC2086
	scontrol show topology $show >"$d/show-topology" 2>&1 || no "$name: scontrol show topology $show failed: $(tail -1 "$d/show-topology")"
	python3 "$here/check_topology.py" "$expect" "$d/show-topology" "$mode" >"$d/check.out" 2>&1
	relay "$name" "$d/check.out" $?
	stop_ctld "$d"
	unset SLURM_CONF
}
