#!/bin/bash
# cluster: --nodes 8 --gpus-per-node 8 --topo-line spares=leaf:1
# A spare of the same leaf takes a failed node's place: select/topo keeps
# the last node of each leaf (n4, n8) out of long jobs; a checkpointed
# 3-node job on a leaf gets a GPU fault on one node; jobcomp/health drains
# it and restarts the job at once on its two healthy nodes plus the leaf's
# spare, in a reservation of its own; the job resumes from its checkpoint
# and ends bitwise identical to an uninterrupted run. (How long the
# replacement takes is printed, not asserted: speed is the benchmarks' to
# measure.)
source "$LOOM_SRCDIR/tests/ckpt/scenario_lib.sh"
ckpt_site
export TRAIN_STEP_DELAY=0.003 TRAIN_STEPS=3000
out=$CK_SCRATCH
pool=$LOOM_CLUSTER_DIR/state/loom-spares.json

cat >"$out/gang.sh" <<'JOB'
#!/bin/bash
echo "start $(date +%s.%N) restart=${SLURM_RESTART_COUNT:-0} nodes=$SLURM_JOB_NODELIST"
python3 "$LOOM_SRCDIR/tests/ckpt/train.py" &
pid=$!
if [ "${SLURM_RESTART_COUNT:-0}" = 0 ]; then
	third=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | sed -n 3p)
	while [ ! -e "$FAULT" ] && kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
	# What NCCL prints when the GPU under a rank dies.
	echo "$third:4242:4290 [2] NCCL WARN Cuda failure 'uncorrectable ECC error encountered'"
	kill "$pid"; wait "$pid"
	exit 1
fi
wait "$pid"
JOB
chmod +x "$out/gang.sh"
run=$(LOOM_SRCDIR=$LOOM_SRCDIR FAULT=$out/fault submit -N3 --gres=gpu:8 --requeue --ckpt --ckpt-interval=3s \
	--job-name=ckpt-run -o "$out/ckpt-run.out" --open-mode=append --export=ALL "$out/gang.sh")
ref=$(ckpt_train ckpt-ref --ckpt --ckpt-interval=3s)
wait_state "$run" RUNNING 60
nodes=$(job_field "$run" NodeList)
note "job $run (3 nodes, no time limit) on $nodes, uninterrupted job $ref on $(job_field "$ref" NodeList)"
wait_file "$pool" 30
loom place --spares --spare-file "$pool" | sed 's/^/  | /'
spares=$(loom place --spares --spare-file "$pool" --json | python3 -c 'import json,sys; print(" ".join(d["spares"] for d in json.load(sys.stdin)["domains"]))')
[ "$spares" = "n4 n8" ] || fail "spare pool '$spares', expected the last node of each leaf: n4 n8"
for n in $(expand_hosts "$nodes"); do
	case $n in n4|n8) fail "job $run (no time limit) was given the spare $n" ;; esac
done
case $nodes in "n[1-3]") leaf=leaf1 spare=n4 ;; "n[5-7]") leaf=leaf2 spare=n8 ;; *) fail "job $run on $nodes: not the three non-spare nodes of one leaf" ;; esac
culprit=$(expand_hosts "$nodes" | sed -n 3p)
ckpt_wait_commit "$run" 90
note "job $run committed $(cat "$CK_ROOT/root/$run/latest"): GPU fault on $culprit"
t0=$(date +%s.%N)
touch "$out/fault"
deadline=$(( EPOCHSECONDS + 180 ))
until grep -q '^start .* restart=1 ' "$out/ckpt-run.out"; do
	[ "$EPOCHSECONDS" -lt "$deadline" ] || fail "job $run not running again 180 s after the fault: $(job_field "$run" JobState) $(job_field "$run" Reason); $(grep -F "job $run" "$LOOM_CLUSTER_DIR/log/slurmctld.log" | tail -3)"
	nap 0.2
done
line=$(grep '^start .* restart=1 ' "$out/ckpt-run.out")
again=${line##*nodes=}
secs=$(awk -v a="$(echo "$line" | cut -d' ' -f2)" -v b="$t0" 'BEGIN {printf "%.1f", a - b}')
want=$(expand_hosts "$nodes" | grep -vx "$culprit"; echo "$spare")
[ "$(expand_hosts "$again" | sort)" = "$(echo "$want" | sort)" ] ||
	fail "job $run restarted on $again, expected its healthy nodes and the $leaf spare: ${want//$'\n'/ }"
case $(sinfo -h -n "$culprit" -o %E) in "loom: jobcomp: gpu_fault: job $run: "*) ;; *) fail "$culprit: reason '$(sinfo -h -n "$culprit" -o %E)'" ;; esac
resv=$(job_field "$run" Reservation)
[ "$resv" = "loom_spare_${run}_1" ] || fail "job $run: Reservation=$resv, expected loom_spare_${run}_1"
comment=$(admin_note "$run" "loom: ")
[ "$comment" = "loom: restarted on spares $culprit -> $spare (leaf $leaf) in reservation $resv" ] ||
	fail "job $run: AdminComment's restart note '$comment' ($(job_field "$run" AdminComment))"
admin_notes_kept "$run"
note "fault on $culprit to running again on $again: $secs s (measured, not asserted); $comment"
wait_log -F "job $run: loom: restarted on spares" "$LOOM_CLUSTER_DIR/log/slurmctld.log" 30
wait_state "$ref" COMPLETED 240
wait_state "$run" COMPLETED 240
grep -q '^resumed from step' "$out/ckpt-run.out" || fail "job $run did not resume from a checkpoint"
note "$(grep '^resumed' "$out/ckpt-run.out")"
ckpt_compare ckpt-ref ckpt-run "restarted on a spare"
