# shellcheck shell=bash
# Waiting without starting processes (sourced by the cluster, differential
# and consumers tiers and by every scenario through lib.sh).
#
# The tiers poll Slurm several times a second, four releases at once, and on
# the machines that run them starting a process costs milliseconds of CPU
# (fork and exec): a poll loop built of `sleep`, `date` and small pipelines
# spent more CPU than the daemons it waited for. So: nap instead of sleep,
# $EPOCHSECONDS instead of $(date +%s), and one client call per poll, parsed
# by the shell.

# nap SECONDS: read's timeout on a pipe nobody writes to (this shell holds
# its write end too, so the read never sees end of file).
if [ -z "${loom_nap_fd:-}" ] || ! { true >&"$loom_nap_fd"; } 2>/dev/null; then
	exec {loom_nap_fd}<> <(:)
fi
nap() { read -r -t "$1" -u "$loom_nap_fd" _ || true; }
