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
# list is accepted: "COMPLETED|FAILED"). Fails on timeout, naming the state seen,
# and early when the job has ended in another state: a final state that holds
# for 30 s (a requeue passes through none of them for that long) fails at once,
# with the end of the job's output.
wait_state() {
	local job=$1 want=$2 limit=${3:-60} deadline st ended=0
	deadline=$(( EPOCHSECONDS + limit ))
	while :; do
		st=$(job_state "$job")
		if [ -n "$st" ] && [[ $st =~ ^($want)$ ]]; then
			return 0
		fi
		case $st in
		COMPLETED | FAILED | CANCELLED | TIMEOUT | OUT_OF_MEMORY | BOOT_FAIL | DEADLINE)
			[ "$ended" != 0 ] || ended=$EPOCHSECONDS
			[ $(( EPOCHSECONDS - ended )) -lt 30 ] ||
				fail "job $job: ended $st (reason $(job_field "$job" Reason), exit $(job_field "$job" ExitCode)), expected $want; its output ends: $(job_output_tail "$job")" ;;
		*) ended=0 ;;
		esac
		[ "$EPOCHSECONDS" -lt "$deadline" ] || fail "job $job: state ${st:-unknown} (reason $(job_field "$job" Reason 2>/dev/null || echo ?)) after ${limit}s, expected $want"
		nap 0.5
	done
}

# job_output_tail JOBID [BYTES]: the end of the job's standard output, on one line.
job_output_tail() {
	local out
	out=$(job_field "$1" StdOut)
	[ -n "$out" ] && [ -r "$out" ] || { echo "(no output file: ${out:-unknown})"; return; }
	tail -c "${2:-1500}" "$out" | tr '\n' ';'
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

# log_count [-F] PATTERN FILE: how many lines of FILE match PATTERN (grep -E;
# -F: a fixed string); 0 when there is no such file.
log_count() {
	local how=-E n
	if [ "$1" = -F ]; then how=-F; shift; fi
	n=$(grep -c "$how" -e "$1" "$2" 2>/dev/null) || true
	echo "${n:-0}"
}

# wait_log [-F] PATTERN FILE [TIMEOUT_S [COUNT]]: wait until FILE has COUNT
# (default 1) lines that match PATTERN (grep -E; -F: a fixed string): the
# line a daemon or plugin logs once it has made the decision a check is
# about. Fails on timeout, naming the count seen.
wait_log() {
	local fixed=() limit deadline n
	if [ "$1" = -F ]; then fixed=(-F); shift; fi
	limit=${3:-60}
	deadline=$(( EPOCHSECONDS + limit ))
	while :; do
		n=$(log_count "${fixed[@]}" "$1" "$2")
		[ "$n" -lt "${4:-1}" ] || return 0
		[ "$EPOCHSECONDS" -lt "$deadline" ] || fail "$(basename "$2"): $n line(s) matching '$1' after ${limit}s, expected ${4:-1}"
		nap 0.3
	done
}

# slurm_now: the time as Slurm prints it (2026-01-31T12:00:00, local), by the
# shell; such times compare as strings.
slurm_now() { printf '%(%Y-%m-%dT%H:%M:%S)T\n' -1; }

# wait_evaluated JOBID SINCE [TIMEOUT_S]: wait until Slurm's scheduler (the
# main one or backfill) has considered the pending job after SINCE (a time as
# Slurm prints it): its LastSchedEval is later. For a check that the job was
# not started, where no log line says that the scheduler looked at it.
wait_evaluated() {
	local job=$1 since=$2 limit=${3:-60} deadline seen
	deadline=$(( EPOCHSECONDS + limit ))
	while :; do
		seen=$(job_field "$job" LastSchedEval)
		[[ -z $seen || $seen = Unknown || ! $seen > $since ]] || return 0
		[ "$EPOCHSECONDS" -lt "$deadline" ] || fail "job $job: not considered by the scheduler after $since within ${limit}s (LastSchedEval=${seen:-?}, state $(job_state "$job"), reason $(job_field "$job" Reason))"
		nap 0.5
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
