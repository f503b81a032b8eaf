#!/bin/bash
# Run cluster scenarios against a real Slurm: a fresh test cluster for each one.
#
#   tests/cluster/run.sh [--slurm VERSION] [--builddir DIR] [--dir DIR] [--keep] [SCENARIO...]
#
# VERSION is the Slurm release of every cluster (default $LOOM_SLURM or 22.05.8);
# the build tree defaults to the one for that release (_build, _build-VERSION).
# SCENARIO is a file under tests/cluster/scenarios/ (or a path); default: all of
# them in order. A scenario picks its cluster with a comment line near the top:
#   # cluster: --nodes 4 --gpus-per-node 8 --select topo
# A scenario that tests loom's own programs rather than Slurm's interfaces
# (the examples) may name the releases it runs on by default:
#   # releases: 22.05.8
# Named on the command line, it runs on any release.
# DIR defaults to /tmp/loom-cluster-VERSION. On failure the daemon logs are
# printed and kept under DIR/failed/<scenario>/.
# The last line reads "N passed, N failed".
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
builddir=${LOOM_BUILDDIR:-}
slurm=${LOOM_SLURM:-}
dir=${LOOM_CLUSTER_DIR:-}
keep=0
scenarios=()
while [ $# -gt 0 ]; do
	case $1 in
	--builddir) builddir=$2; shift 2 ;;
	--dir) dir=$2; shift 2 ;;
	--keep) keep=1; shift ;;
	--slurm) slurm=$2; shift 2 ;;
	-h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
	*) scenarios+=("$1"); shift ;;
	esac
done
[ -n "$slurm" ] || slurm=$("$top/scripts/slurm.sh" default)
# Each release its own directory (and so its own ports): two runs at once do
# not stop each other's daemons.
[ -n "$dir" ] || dir=/tmp/loom-cluster-$slurm
slurm_prefix=$("$top/scripts/slurm.sh" prefix "$slurm") || exit 2
[ -n "$builddir" ] || builddir=$("$top/scripts/slurm.sh" builddir "$slurm")
case $builddir in /*) ;; *) builddir="$(pwd)/$builddir" ;; esac
elsewhere=()
if [ ${#scenarios[@]} -eq 0 ]; then
	for f in "$here"/scenarios/*.sh; do
		[ -f "$f" ] || continue
		only=$(sed -n 's/^# releases: //p' "$f" | head -1)
		if [ -n "$only" ] && ! [[ " $only " == *" $slurm "* ]]; then
			elsewhere+=("$(basename "$f" .sh) (on $only)")
			continue
		fi
		scenarios+=("$f")
	done
fi
[ ${#scenarios[@]} -gt 0 ] || { echo "cluster tests: no scenarios found" >&2; echo "0 passed, 1 failed"; exit 1; }

export LOOM_SRCDIR=$top LOOM_BUILDDIR=$builddir LOOM_CLUSTER_DIR=$dir LOOM_SLURM=$slurm
export PATH="$builddir/tools:$slurm_prefix/bin:$PATH"
echo "cluster tests: Slurm $slurm ($slurm_prefix), build tree $builddir"
[ ${#elsewhere[@]} = 0 ] || echo "cluster tests: run on other releases: ${elsewhere[*]}"
# Stopped (the watchdog of scripts/test.sh, ^C): the cluster goes down with it.
trap '"$here/cluster.sh" down --dir "$dir" >/dev/null 2>&1; exit 143' TERM INT
passed=0
failed=0
failed_names=()
failed_reasons=()
rm -rf "$dir/failed"
for s in "${scenarios[@]}"; do
	[ -f "$s" ] || s="$here/scenarios/$s"
	[ -f "$s" ] || [ ! -f "$s.sh" ] || s=$s.sh # a scenario by name, without .sh
	[ -f "$s" ] || { echo "cluster tests: no such scenario: $s" >&2; failed=$((failed + 1)); continue; }
	s=$(cd "$(dirname "$s")" && pwd)/$(basename "$s")
	name=$(basename "$s" .sh)
	opts=$(sed -n 's/^# cluster: //p' "$s" | head -1)
	# A line '# cluster[>=MAJOR.MINOR]: ...' replaces it on that release and newer.
	while read -r min alt; do
		[ -n "$min" ] || continue
		if [ "$(echo "$slurm" | awk -F. '{printf "%d%03d", $1, $2}')" -ge "$(echo "$min" | awk -F. '{printf "%d%03d", $1, $2}')" ]; then
			opts=$alt
		fi
	done < <(sed -n 's/^# cluster\[>=\([0-9.]*\)\]: \(.*\)$/\1 \2/p' "$s")
	echo "=== $name${opts:+ ($opts)}"
	start=$EPOCHSECONDS
	# The options as a shell would split them (quotes kept: --plugstack-args "a=1 b=2").
	eval "set -- $opts"
	if ! up_out=$("$here/cluster.sh" up --slurm "$slurm" --dir "$dir" --builddir "$builddir" "$@" 2>&1); then
		echo "$up_out"
		echo "--- FAIL: $name: cluster did not come up"
		reason=$(echo "$up_out" | grep -m1 -E 'error|die|not' | head -c 400)
		failed=$((failed + 1)); failed_names+=("$name"); failed_reasons+=("$name: cluster did not come up${reason:+: $reason}")
		continue
	fi
	export SLURM_CONF="$dir/etc/slurm.conf"
	# fail() (lib.sh) also appends its message to LOOM_FAIL_REASONS, for the summary.
	export LOOM_FAIL_REASONS="$dir/.fail-reasons"
	rm -f "$LOOM_FAIL_REASONS"
	( cd "$dir" && set -e && source "$here/lib.sh" && source "$s" )
	rc=$?
	# select/topo's consistency check (snapshot_check=yes, cluster.sh): its
	# incremental state must match a full read of the node table throughout.
	if [ $rc = 0 ] && [ -f "$dir/log/slurmctld.log" ]; then
		diff_line=$(grep -m1 'snapshot differs from the node table' "$dir/log/slurmctld.log")
		if [ -n "$diff_line" ]; then
			echo "FAIL: select/topo's state differed from Slurm's node table: $diff_line" | tee -a "$LOOM_FAIL_REASONS"
			rc=1
		fi
	fi
	secs=$(( EPOCHSECONDS - start ))
	if [ $rc = 0 ]; then
		echo "--- PASS: $name (${secs}s)"
		passed=$((passed + 1))
	else
		echo "--- FAIL: $name (${secs}s)"
		reason=$(head -n1 "$LOOM_FAIL_REASONS" 2>/dev/null | head -c 400)
		failed=$((failed + 1)); failed_names+=("$name"); failed_reasons+=("$name: ${reason:-exited with status $rc}")
		"$here/cluster.sh" logs --dir "$dir" 2>&1 | sed 's/^/    /'
		mkdir -p "$dir/failed/$name"
		cp -r "$dir/log" "$dir/etc" "$dir/failed/$name/" 2>/dev/null
		echo "    (logs kept in $dir/failed/$name)"
	fi
	[ $keep = 1 ] || "$here/cluster.sh" down --dir "$dir" >/dev/null 2>&1
done
if [ ${#failed_names[@]} -gt 0 ]; then
	echo "failed scenarios: ${failed_names[*]}"
	printf '  %s\n' "${failed_reasons[@]}"
fi
echo "$passed passed, $failed failed"
[ $failed = 0 ]
