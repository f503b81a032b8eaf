# cluster: --nodes 8 --gpus-per-node 8 --select topo
# select/topo steers gangs away from nodes with a failure history: with
# jobcomp/health's statistics giving leaf1's nodes (n1-n4) GPU faults, a
# 4-node gang that would go to leaf1 goes to leaf2; when the history clears,
# leaf1 is first choice again. The statistics are read by select/topo's own
# thread (failure_stats_poll), never inside job_test.
stats=$LOOM_CLUSTER_DIR/shared/failure-stats.json
mkdir -p "$(dirname "$stats")"
log=$LOOM_CLUSTER_DIR/log/slurmctld.log

gang() { # -> the node list of a 4x8 gang
	local j
	j=$(submit -N4 --gres=gpu:8 -o /dev/null --wrap 'true')
	wait_state "$j" COMPLETED 60
	job_field "$j" NodeList
}
write_stats() { # FAILURES_OF_n1-n4
	local n f=$1 first=1
	{
		echo '{"version": 1, "updated": 1796000000, "nodes": {'
		for n in 1 2 3 4 5 6 7 8; do
			local fails=0
			[ "$n" -le 4 ] && fails=$f
			[ $first = 1 ] || echo ','
			first=0
			printf '"n%d": {"exposure_s": 360000.0, "failures": %d, "by_class": {%s}, "last_failure": %d, "gpu_class": "a100"}' \
				"$n" "$fails" "$([ "$fails" -gt 0 ] && echo "\"gpu_fault\": $fails")" "$([ "$fails" -gt 0 ] && echo 1796000000 || echo 0)"
		done
		echo '}, "gpu_classes": {}}'
	} >"$stats.tmp"
	mv "$stats.tmp" "$stats"
}
wait_log() { # PATTERN: a new line in slurmctld.log after the mark
	local deadline=$(( EPOCHSECONDS + 20 ))
	until tail -n +"$mark" "$log" | grep "$1" >/dev/null; do
		[ "$EPOCHSECONDS" -lt "$deadline" ] || fail "no '$1' in slurmctld.log: $(tail -n +"$mark" "$log" | grep select/topo | tail -3)"
		nap 0.3
	done
}

first=$(gang)
[ "$first" = "n[1-4]" ] || fail "without history the gang went to $first, expected n[1-4] (leaf1)"
note "no history: $first"

write_stats 3
mark=$(( $(wc -l <"$log") + 1 ))
printf 'failure_stats=%s\nfailure_stats_poll=1s\n' "$stats" >>"$LOOM_CLUSTER_DIR/etc/loom-topo.conf"
scontrol reconfigure
wait_log "failure statistics $stats: 4 node(s) weighted below 1"
second=$(gang)
[ "$second" = "n[5-8]" ] || fail "with 3 GPU faults on each of n1-n4 the gang went to $second, expected n[5-8]"
note "n1-n4 with 3 GPU faults each in 100 h (fleet MTBF 67 h, their weight 0.625): $second"

mark=$(( $(wc -l <"$log") + 1 ))
write_stats 0
wait_log "failure statistics $stats: 0 node(s) weighted below 1"
third=$(gang)
[ "$third" = "n[1-4]" ] || fail "after the history cleared the gang went to $third, expected n[1-4]"
note "history cleared: $third"

# A bad file is refused with its path and leaves every node at weight 1.
mark=$(( $(wc -l <"$log") + 1 ))
echo '{"version": 1, "nodes": ' >"$stats"
wait_log "failure statistics unusable, every node at health weight 1: $stats"
note "malformed file: $(tail -n +"$mark" "$log" | grep -m1 'failure statistics unusable' | sed 's/^\[[^]]*\] //' | cut -c1-140)"
