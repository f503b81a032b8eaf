# shellcheck shell=bash
# run_case's locals are set and read by the functions it calls (bash's
# dynamic scope), and the errors by run.sh: SC2034 cannot see either.
# shellcheck disable=SC2034
# One case of the matrix on both clusters (sourced by run.sh): its job
# submitted on each, waited for, its records read back and checked
# (records.sh, check_alloc.sh), the two sides judged, the verdict counted.

# run_case STATE LABEL ARGS EXPECT: one matrix line. The pieces below read
# and set its locals; the counts (passed, failed, ...) are run.sh's.
run_case() {
	local st=$1 label=$2 args=$3 expect=$4 pend_reason= want_recs is_compared outcome side
	local -a problems=() comps=()
	local -A jid=() res=() q=() nodes_seen=() checked=()
	case_expectation || return 0
	enter_state || return 0
	# No record of an earlier job may be taken for this one.
	clear_records
	[ ${#cleared_[@]} -eq 0 ] || problems+=("records of an earlier job were there before this case was submitted: ${cleared_[*]}")
	submit_case
	wait_case
	left_in_queue
	expected_records
	for side in plain topo; do read_side "$side"; done
	# Every record goes now: none may be read as the next case's.
	clear_records
	judge_case
	report_case
}

# case_expectation: pend_reason= the REASON of an "expect-pending: REASON"
# 4th column; a 4th column of another form fails the case (returns 1).
case_expectation() {
	case $expect in
	'') ;;
	expect-pending:*)
		pend_reason=${expect#expect-pending:}
		pend_reason=${pend_reason# }
		;;
	esac
	if [ -z "$pend_reason" ] && [ -n "$expect" ]; then
		failed=$((failed + 1))
		echo "  $label ($st): FAIL: the matrix line's 4th column '$expect' is not 'expect-pending: REASON'"
		failures+=("$label ($st): broken matrix line: '$expect'")
		return 1
	fi
}

# enter_state: the case's state on both clusters, unless they are in it
# already; when it cannot be set the case fails, not run (returns 1).
enter_state() {
	[ "$st" != "$cur_state" ] || return 0
	if ! set_state "$st"; then
		failed=$((failed + 1))
		echo "--- state: $st: FAIL: $state_err ($label not run)"
		failures+=("state $st: could not be set: $state_err ($label not run)")
		cur_state=
		return 1
	fi
	cur_state=$st
	echo "--- state: $st"
}

# submit_case: the job on both sides; jid[SIDE]= its id, or empty and
# res[SIDE]="refused: WHY".
submit_case() {
	local side
	for side in plain topo; do
		# shellcheck disable=SC2086
		if ! jid[$side]=$(on "${dir_[$side]}" env LOOM_DIFF_SIDE=$side sbatch --parsable -J "t-$label" -o /dev/null \
			$args "$out/job.sh" 2>"$out/$side.err"); then
			jid[$side]=
			res[$side]="refused: $(tr '\n' ' ' <"$out/$side.err")"
		fi
		jid[$side]=${jid[$side]%%;*}
	done
	submitted=$((submitted + 1))
}

# wait_case: until the job has left both queues (ran and ended), up to
# $wait_s s; a case expected to pend stops waiting once it pends on both
# with a reason. q[SIDE]= what is left of it there, "ID|STATE|REASON" lines.
wait_case() {
	local deadline=$(( EPOCHSECONDS + wait_s )) gone pend_both side s r
	while :; do
		gone=1 pend_both=1
		for side in plain topo; do
			q[$side]=
			if [ -z "${jid[$side]}" ]; then pend_both=0; continue; fi
			if ! q[$side]=$(on "${dir_[$side]}" squeue -h -n "t-$label" -o '%i|%T|%r' 2>&1); then
				q[$side]="?|squeue failed|${q[$side]//$'\n'/ }"
			fi
			[ -n "${q[$side]}" ] || { pend_both=0; continue; }
			gone=0
			while IFS='|' read -r _ s r; do
				[ "$s" = PENDING ] && [ -n "$r" ] && [ "$r" != None ] || pend_both=0
			done <<<"${q[$side]}"
		done
		[ $gone = 0 ] || break
		[ -z "$pend_reason" ] || [ $pend_both = 0 ] || break
		[ "$EPOCHSECONDS" -lt "$deadline" ] || break
		nap 0.3
	done
}

# left_in_queue: res[SIDE]= "pending (REASON)" or "still STATE after ..."
# where the job is still queued, and its test jobs cancelled on both.
left_in_queue() {
	local side s r
	for side in plain topo; do
		[ -n "${q[$side]}" ] || continue
		IFS='|' read -r _ s r <<<"${q[$side]}"
		if [ "$s" = PENDING ]; then res[$side]="pending ($r)"; else res[$side]="still $s after $wait_s s${r:+ ($r)}"; fi
	done
	if [ -n "${q[plain]}${q[topo]}" ]; then
		cancel_tests || { problems+=("cleanup: $cancel_err"); cur_state=; }
	fi
}

# light NODES: every one of NODES is a weight-1 node (n9-n16) in the weighted state.
light() { local h; for h in $1; do [ "${h#n}" -ge 9 ] || return 1; done; }
# judge_case: what the two sides did, against what the tier asks of them;
# is_compared=1 when the job ran on both and both were checked.
judge_case() {
	# The matrix asks only for what Slurm takes: a refusal by plain Slurm is a
	# broken case (or a release that changed), never a pass.
	case ${res[plain]:-} in refused*) problems+=("refused by plain cons_tres: ${res[plain]}") ;; esac
	is_compared=0
	case ${res[plain]:-}/${res[topo]:-} in
	ran*/ran*) [ -z "${checked[plain]:-}" ] || [ -z "${checked[topo]:-}" ] || is_compared=1 ;;
	esac
	# Plain Slurm ran it: select/topo must run it too.
	case ${res[plain]:-} in ran*) case ${res[topo]:-} in ran*) ;; *) problems+=("ran on plain cons_tres, under select/topo: ${res[topo]:-nothing}") ;; esac ;; esac
	# Where select/topo steps aside: exactly plain Slurm's nodes.
	case $label in spread-*|contiguous-*|lln-*|required-all*)
		[ "${nodes_seen[plain]:-}" = "${nodes_seen[topo]:-}" ] ||
			problems+=("select/topo steps aside here, but its nodes (${nodes_seen[topo]:-}) are not cons_tres's (${nodes_seen[plain]:-})") ;;
	esac
	# Weights: what plain Slurm keeps on the light nodes (n9-n16) stays there.
	if [ "$st" = weighted ]; then
		if light "${nodes_seen[plain]:-n1}" && ! light "${nodes_seen[topo]:-n1}"; then
			problems+=("cons_tres kept it on the weight-1 nodes, select/topo used a weight-10 node: ${nodes_seen[topo]:-}")
		fi
	fi
	# Compared, or expected to pend and pending on both; nothing else passes.
	outcome=compared
	if [ -n "$pend_reason" ]; then
		outcome='expected-pending'
		case ${res[plain]:-}/${res[topo]:-} in
		pending*/pending*) ;;
		*) problems+=("expected to pend on both ($pend_reason), but plain: ${res[plain]:-?}, topo: ${res[topo]:-?}") ;;
		esac
	elif [ "$is_compared" = 0 ]; then
		problems+=("not compared: plain: ${res[plain]:-?}; topo: ${res[topo]:-?}")
	fi
}

# report_case: the case's line, its verdict, and the counts.
report_case() {
	local p
	printf '  %-24s %-44s | %-30s | %s\n' "$label" "$args" "plain: ${res[plain]:-?}" "topo: ${res[topo]:-?}"
	[ "$is_compared" = 0 ] || compared=$((compared + 1))
	if [ ${#problems[@]} -eq 0 ]; then
		passed=$((passed + 1))
		if [ "$outcome" = expected-pending ]; then
			expected_pending=$((expected_pending + 1))
			expected+=("$label ($st): $pend_reason")
			echo "    expected pending: $pend_reason"
		fi
	else
		failed=$((failed + 1))
		for p in "${problems[@]}"; do echo "    FAIL: $p"; done
		failures+=("$label ($st): ${problems[0]}")
	fi
}
