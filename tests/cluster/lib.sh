# Helpers for cluster scenarios (sourced by tests/cluster/run.sh before each one).
# SLURM_CONF, LOOM_CLUSTER_DIR, LOOM_SRCDIR and LOOM_BUILDDIR are set.

# nap SECONDS, and why scenarios wait with it.
# shellcheck source=tests/cluster/nap.sh
. "$(dirname "${BASH_SOURCE[0]}")/nap.sh"

# Stop the scenario with a message; run.sh prints the daemon logs.
fail() {
	echo "FAIL: $*" >&2
	[ -z "${LOOM_FAIL_REASONS:-}" ] || echo "$*" >>"$LOOM_FAIL_REASONS"
	exit 1
}

note() { echo "  $*"; }

# job_field JOBID FIELD: one field of `scontrol show job -o` (e.g. JobState,
# NodeList, Restarts): one scontrol, parsed by the shell (nap.sh says why).
job_field() {
	local out f fields=()
	out=$(scontrol show job -o "$1" 2>/dev/null) || true
	read -ra fields <<<"$out"
	for f in "${fields[@]}"; do
		if [[ $f == "$2="* ]]; then
			printf '%s\n' "${f#"$2="}"
			return 0
		fi
	done
}

# job_state JOBID: PENDING, RUNNING, COMPLETED, FAILED, ... (empty if unknown).
job_state() { job_field "$1" JobState; }

# wait_state JOBID STATE [TIMEOUT_S]: wait until the job is in STATE (a |-separated
# list is accepted: "COMPLETED|FAILED"). Fails on timeout, naming the state seen.
wait_state() {
	local job=$1 want=$2 limit=${3:-60} deadline st
	deadline=$(( EPOCHSECONDS + limit ))
	while :; do
		st=$(job_state "$job")
		if [ -n "$st" ] && [[ $st =~ ^($want)$ ]]; then
			return 0
		fi
		[ "$EPOCHSECONDS" -lt "$deadline" ] || fail "job $job: state ${st:-unknown} (reason $(job_field "$job" Reason 2>/dev/null || echo ?)) after ${limit}s, expected $want"
		nap 0.5
	done
}

# wait_file PATH [TIMEOUT_S]: wait until PATH exists and is not empty.
wait_file() {
	local path=$1 limit=${2:-60} deadline
	deadline=$(( EPOCHSECONDS + limit ))
	until [ -s "$path" ]; do
		[ "$EPOCHSECONDS" -lt "$deadline" ] || fail "$path did not appear within ${limit}s"
		nap 0.3
	done
}

# submit SBATCH_ARGS...: sbatch --parsable, fails the scenario when refused.
submit() {
	local out
	out=$(sbatch --parsable "$@" 2>&1) || fail "sbatch $*: $out"
	echo "${out%%;*}"
}

# expand_hosts HOSTLIST: one node name per line.
expand_hosts() { scontrol show hostnames "$1"; }

# The scenario's scratch directory (kept on failure).
scratch() {
	local d="$LOOM_CLUSTER_DIR/scratch"
	mkdir -p "$d"
	chmod 1777 "$d"
	echo "$d"
}

# slurm_at_least MAJOR.MINOR: the cluster's Slurm release (etc/slurm-release,
# written by cluster.sh) is that one or newer.
slurm_release() { cat "$(dirname "$SLURM_CONF")/slurm-release" 2>/dev/null || echo "${LOOM_SLURM:-22.05.8}"; }
slurm_at_least() {
	local have want
	have=$(slurm_release | awk -F. '{printf "%d%03d", $1, $2}')
	want=$(echo "$1" | awk -F. '{printf "%d%03d", $1, $2}')
	[ "$have" -ge "$want" ]
}
