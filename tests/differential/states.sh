# shellcheck shell=bash
# run_case's locals are set and read by the functions it calls (bash's
# dynamic scope), and the errors by run.sh: SC2034 cannot see either.
# shellcheck disable=SC2034
# The cluster states of the differential tier (sourced by run.sh): setting
# one on both clusters (node weights, matrix.sh's background jobs) and taking
# a case's test jobs off them again.

state_err=
busy_nodes=" " # the nodes that carry a background job in this state
# set_state STATE: no job left on either cluster, then STATE's node weights
# and background jobs, running on both. Fails (state_err says why) otherwise.
set_state() {
	local d
	state_err=
	busy_nodes=" "
	for d in "$plain_dir" "$topo_dir"; do
		on "$d" scancel --user="$(id -un)" >/dev/null 2>&1
	done
	wait_drained || { state_err="jobs still queued 30 s after scancel"; return 1; }
	if [ "$1" = weighted ]; then
		both scontrol update nodename=n[1-8] weight=10 && both scontrol update nodename=n[9-16] weight=1
	else
		both scontrol update "nodename=n[1-16]" weight=1
	fi || { state_err="scontrol update of the node weights failed"; return 1; }
	start_background "$1" || return 1
	background_running "$1"
}
# start_background STATE: STATE's background jobs, submitted on both clusters.
start_background() {
	local line d
	while read -r line; do
		[ -n "$line" ] || continue
		[[ $line =~ -w\ ([^ ]+) ]] && busy_nodes+="${BASH_REMATCH[1]} "
		for d in "$plain_dir" "$topo_dir"; do
			# shellcheck disable=SC2086
			on "$d" sbatch --parsable -J background -o /dev/null $line --wrap 'sleep 3000' >/dev/null ||
				{ state_err="background job '$line' refused on $d"; return 1; }
		done
	done < <(state_jobs "$1")
}
# background_running STATE: STATE's background jobs running on both before
# any test job, within 30 s.
background_running() {
	local deadline=$(( EPOCHSECONDS + 30 )) want plain_running topo_running
	want=$(state_jobs "$1" | grep -c . || true)
	while :; do
		mapfile -t plain_running < <(on "$plain_dir" squeue -h -t R -n background)
		mapfile -t topo_running < <(on "$topo_dir" squeue -h -t R -n background)
		if [ "${#plain_running[@]}" = "$want" ] && [ "${#topo_running[@]}" = "$want" ]; then
			return 0
		fi
		[ "$EPOCHSECONDS" -lt "$deadline" ] || { state_err="background jobs not running after 30 s"; return 1; }
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
# Test jobs only: the background stays. Fails (cancel_err says why) while a
# test job is still queued 20 s after scancel.
cancel_err=
cancel_tests() {
	local d id name ids left queue
	cancel_err=
	for d in "$plain_dir" "$topo_dir"; do
		ids=()
		while read -r id name; do [ "$name" = background ] || ids+=("$id"); done < <(on "$d" squeue -h -o '%i %j')
		# (A job that ends between squeue and scancel makes scancel complain:
		# what counts is the queue afterwards.)
		[ ${#ids[@]} -eq 0 ] || on "$d" scancel "${ids[@]}" >/dev/null 2>&1
	done
	local deadline=$(( EPOCHSECONDS + 20 ))
	while :; do
		left=
		for d in "$plain_dir" "$topo_dir"; do
			if ! queue=$(on "$d" squeue -h -o '%i %j' 2>&1); then left+=" squeue failed on $d: $queue"; continue; fi
			while read -r id name; do [ -z "$id" ] || [ "$name" = background ] || left+=" $id($name)"; done <<<"$queue"
		done
		[ -n "$left" ] || return 0
		[ "$EPOCHSECONDS" -lt "$deadline" ] || { cancel_err="test jobs still queued 20 s after scancel:$left"; return 1; }
		nap 0.2
	done
}
