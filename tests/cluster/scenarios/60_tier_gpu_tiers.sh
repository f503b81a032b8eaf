# cluster: --nodes 12 --gpus-per-node 8 --select topo --classes a100:4,h100:4,b200:4 --topo-line gpu_class.a100=throughput:1,mem:80G,price:1.20 --topo-line gpu_class.h100=throughput:2,mem:80G,price:1.80 --topo-line gpu_class.b200=throughput:3,mem:192G,price:4.20 --topo-line gpu_tier.bigmem=value,mem:150G --conf-line DebugFlags=SelectType --conf-line Epilog=$dir/etc/epilog.sh
# GPU tiers: a job asks for a need, not a model. Three classes by node
# features (n1-n4 a100, n5-n8 h100, n9-n12 b200), 1x 2x 3x, priced 1.20,
# 1.80 and 4.20 per GPU-hour: per unit of work 1.20, 0.90 and 1.40.
#  - value (lowest price per work) lands on h100, fast on b200, balanced on
#    h100 (1 x 1.5 against b200's 1.56 x 1 and a100's 1.33 x 3);
#  - with h100 full, value moves to a100 (1.20 per work against 1.40) and
#    balanced to b200 (1.56 against a100's 4);
#  - the site tier bigmem (value, 150G per GPU) lands on b200, the only class with it;
#  - a model named in --constraint still wins over a tier;
#  - where Slurm chooses the nodes (--contiguous, --spread-job) the tier
#    still chooses the class;
#  - a value job with a time limit may wait for its cheapest class (a
#    quarter of its limit, value_wait): with h100 full it waits, and runs on
#    h100 once it frees, also while h100's nodes are still completing
#    (their epilog runs) when the scheduler looks; past its budget it takes
#    a100;
#  - a gang no one class holds runs across classes only with --gpu-mixed;
#    --gpu-mixed without a tier or bounds is refused at submit;
#  - bad names are refused at submit with the names the site has, bounds no
#    class meets too; --help lists the site's tier;
#  - the class, tier and price per hour are in the job's SystemComment and in
#    jobcomp/health's record of it.
# The Epilog (slurm.conf, above) holds a job's nodes COMPLETING while
# etc/epilog-hold.<job id> exists, 60 s at most.
cat >"$LOOM_CLUSTER_DIR/etc/epilog.sh" <<EOF
#!/bin/bash
for ((i = 0; i < 600; i++)); do [ -e "$LOOM_CLUSTER_DIR/etc/epilog-hold.\$SLURM_JOB_ID" ] || exit 0; sleep 0.1; done
EOF
chmod 755 "$LOOM_CLUSTER_DIR/etc/epilog.sh"
class_of() { local n=${1#n}; if [ "$n" -le 4 ]; then echo a100; elif [ "$n" -le 8 ]; then echo h100; else echo b200; fi; }
classes_of() { local h; for h in $(expand_hosts "$1"); do class_of "$h"; done | sort -u | tr '\n' ' '; }
gang() { # OPTIONS...: "JOBID NODELIST" of a 2-node gang once it runs
	local j
	j=$(submit -N2 --gres=gpu:8 "$@" -o /dev/null --wrap 'sleep 600')
	wait_state "$j" RUNNING 30 || fail "job $j ($*) is $(job_state "$j"): $(job_field "$j" Reason)"
	echo "$j $(job_field "$j" NodeList)"
}
stop() { scancel "$@"; for j in "$@"; do wait_state "$j" "CANCELLED|COMPLETED" 30; done; }
expect_class() { # JOBID NODELIST CLASS WHAT
	[ "$(classes_of "$2")" = "$3 " ] || fail "$4 ran on $2 ($(classes_of "$2")), expected $3"
	note "$4: $2 ($3)"
}

read -r j nodes < <(gang --gpu-tier=value)
expect_class "$j" "$nodes" h100 "--gpu-tier=value"
sc=$(scontrol show job -o "$j" | grep -o 'SystemComment=loom:.*price_per_h=[0-9.]*')
[ "$sc" = "SystemComment=loom: class=h100 tier=value price_per_h=28.80" ] ||
	fail "the job's record says '$sc', expected class=h100 tier=value price_per_h=28.80 (16 GPUs x 1.80)"
note "record: ${sc#SystemComment=}"
stop "$j"
# jobcomp/health's record of the job carries it too.
wait_log -F "jobcomp/health: job $j CANCELLED" "$LOOM_CLUSTER_DIR/log/slurmctld.log" 30
grep -E "jobcomp/health: job $j CANCELLED.*loom: class=h100 tier=value price_per_h=28.80" \
	"$LOOM_CLUSTER_DIR/log/slurmctld.log" >/dev/null ||
	fail "jobcomp/health's line for job $j lacks its class, tier and price: $(grep "jobcomp/health: job $j " "$LOOM_CLUSTER_DIR/log/slurmctld.log")"
note "jobcomp/health: $(grep -o "jobcomp/health: job $j CANCELLED.*" "$LOOM_CLUSTER_DIR/log/slurmctld.log" | head -1 | sed 's/.*; loom:/... loom:/')"
read -r j nodes < <(gang --gpu-tier=fast)
expect_class "$j" "$nodes" b200 "--gpu-tier=fast"
stop "$j"
read -r j nodes < <(gang --gpu-tier=balanced)
expect_class "$j" "$nodes" h100 "--gpu-tier=balanced"
stop "$j"
read -r j nodes < <(gang --gpu-tier=bigmem)
expect_class "$j" "$nodes" b200 "--gpu-tier=bigmem (site tier, 150G per GPU)"
stop "$j"
read -r j nodes < <(gang --gpu-tier=fast --constraint=a100)
expect_class "$j" "$nodes" a100 "--gpu-tier=fast --constraint=a100 (the model named wins)"
stop "$j"
# Slurm chooses the nodes (--contiguous, --spread-job: cons_tres's own
# choice, which takes the first nodes it can, n1-n2 on a100): the tier still
# picks the class, Slurm the nodes within it, and the record says so.
read -r j nodes < <(gang --gpu-tier=fast --contiguous)
expect_class "$j" "$nodes" b200 "--gpu-tier=fast --contiguous"
sc=$(scontrol show job -o "$j" | grep -o 'SystemComment=loom:.*price_per_h=[0-9.]*')
[ "$sc" = "SystemComment=loom: class=b200 tier=fast price_per_h=67.20" ] ||
	fail "the --contiguous job's record says '$sc', expected class=b200 tier=fast price_per_h=67.20 (16 GPUs x 4.20)"
grep -E "JobId=$j placed by cons_tres on .*Slurm chooses the nodes: --contiguous; class b200" \
	"$LOOM_CLUSTER_DIR/log/slurmctld.log" >/dev/null ||
	fail "slurmctld's log does not say job $j's class: $(grep "JobId=$j " "$LOOM_CLUSTER_DIR/log/slurmctld.log" | tail -2)"
stop "$j"
read -r j nodes < <(gang --gpu-tier=value --spread-job)
expect_class "$j" "$nodes" h100 "--gpu-tier=value --spread-job"
stop "$j"

# h100 full (a 4-node job on it): value and balanced part ways.
full=$(submit -N4 --gres=gpu:8 --constraint=h100 -o /dev/null --wrap 'sleep 600')
wait_state "$full" RUNNING 30 || fail "the h100 filler is $(job_state "$full")"
read -r jv nodes < <(gang --gpu-tier=value)
expect_class "$jv" "$nodes" a100 "h100 full: --gpu-tier=value"
read -r jb nodes < <(gang --gpu-tier=balanced)
expect_class "$jb" "$nodes" b200 "h100 full: --gpu-tier=balanced"
stop "$jv" "$jb" "$full"

# A value job that may wait: 20 minutes of limit, so up to 5 min for h100
# (what follows waits for up to 4 min of log lines on a loaded machine).
log=$LOOM_CLUSTER_DIR/log/slurmctld.log
full=$(submit -N4 --gres=gpu:8 --constraint=h100 -o /dev/null --wrap 'sleep 600')
wait_state "$full" RUNNING 30 || fail "the h100 filler is $(job_state "$full")"
jw=$(submit -N2 --gres=gpu:8 --gpu-tier=value -t 20 -o /dev/null --wrap 'sleep 600')
# select/topo's decisions, each saying it waits for h100: backfill's (no
# backfill plan) and the main scheduler's (cannot fit now), in two of its
# passes.
fits="JobId=$jw: cannot fit now.*value tier: waiting for h100"
plans="JobId=$jw: no backfill plan: .*waiting for h100"
wait_log "$plans" "$log" 60
wait_log "$fits" "$log" 60 2
line=$(grep -oE "$fits.*" "$log" | head -1)
note "h100 full, --gpu-tier=value -t 20: ${line#*: }"
[ "$(job_state "$jw")" = PENDING ] || fail "job $jw did not wait for h100: $(job_state "$jw") on $(job_field "$jw" NodeList)"
# Waiting by choice holds nothing: a later job takes every a100 node meanwhile.
ja=$(submit -N4 --gres=gpu:8 --constraint=a100 -o /dev/null --wrap 'sleep 600')
wait_state "$ja" RUNNING 30 || fail "a later a100 job is $(job_state "$ja") while job $jw waits for h100: $(job_field "$ja" Reason)"
note "meanwhile a later -N4 --constraint=a100 job runs on $(job_field "$ja" NodeList): the waiting job holds no a100 node"
nplans=$(log_count "$plans" "$log")
stop "$ja"
# a100 is free again and h100 still full: the job keeps waiting through
# backfill, which offers it only the nodes free now, and the main
# scheduler. Their decisions since: backfill's (it runs again only on a
# change, here the end of job $ja), and two of the main scheduler's once
# a100 is free (any start, backfill's too, is decided there).
nfits=$(log_count "$fits" "$log")
wait_log "$plans" "$log" 60 $((nplans + 1))
wait_log "$fits" "$log" 60 $((nfits + 2))
[ "$(job_state "$jw")" = PENDING ] ||
	fail "job $jw took $(job_field "$jw" NodeList) once a100 freed, within its wait for h100 ($(grep -oE "JobId=$jw placed.*" "$log" | head -1))"
note "a100 free, h100 full: job $jw still waits for h100 (since: backfill's pass, $(( $(log_count "$fits" "$log") - nfits )) of the main scheduler's)"
# The h100 job ends; its nodes stay COMPLETING (the Epilog held) while the
# scheduler looks twice: Slurm offers them to no one, and the job still
# waits for them rather than take a100.
hold=$LOOM_CLUSTER_DIR/etc/epilog-hold.$full
touch "$hold"
nfits=$(log_count "$fits" "$log")
scancel "$full"
wait_state "$full" COMPLETING 30
deadline=$(( EPOCHSECONDS + 90 ))
while [ "$(log_count "$fits" "$log")" -lt $((nfits + 2)) ] && [ "$(job_state "$jw")" = PENDING ]; do
	[ "$EPOCHSECONDS" -lt "$deadline" ] || { rm -f "$hold"; fail "no two scheduler passes over job $jw in 90 s while h100 completes"; }
	nap 0.3
done
[ "$(job_state "$jw")" = PENDING ] ||
	{ rm -f "$hold"; fail "job $jw took $(job_field "$jw" NodeList) while h100's nodes were completing, within its wait for h100"; }
note "h100's nodes completing (epilog held): job $jw still waits for h100 ($(sinfo -h -n "$(job_field "$full" NodeList)" -o '%T' | sort -u | tr '\n' ' '))"
rm -f "$hold"
wait_state "$full" "CANCELLED|COMPLETED" 90
wait_state "$jw" RUNNING 30 || fail "job $jw is $(job_state "$jw") once h100 is free: $(job_field "$jw" Reason)"
expect_class "$jw" "$(job_field "$jw" NodeList)" h100 "h100 freed within its wait: --gpu-tier=value -t 20"
stop "$jw"
# Its budget spent (1 minute of limit: 15 s), it takes the next class.
full=$(submit -N4 --gres=gpu:8 --constraint=h100 -o /dev/null --wrap 'sleep 600')
wait_state "$full" RUNNING 30 || fail "the h100 filler is $(job_state "$full")"
jt=$(submit -N2 --gres=gpu:8 --gpu-tier=value -t 1 -o /dev/null --wrap 'sleep 600')
wait_state "$jt" RUNNING 60 || fail "job $jt (--gpu-tier=value -t 1) is $(job_state "$jt") past its 15 s: $(job_field "$jt" Reason)"
expect_class "$jt" "$(job_field "$jt" NodeList)" a100 "h100 full past its wait: --gpu-tier=value -t 1"
waited=$(( $(date -d "$(job_field "$jt" StartTime)" +%s) - $(date -d "$(job_field "$jt" SubmitTime)" +%s) ))
[ "$waited" -ge 14 ] || fail "job $jt started $waited s after submit: it did not wait its 15 s for h100"
grep -E "JobId=$jt: cannot fit now.*waiting for h100" "$log" >/dev/null ||
	fail "job $jt never said it waited for h100"
note "it waited $waited s (a quarter of its 1 min limit), then took a100"
stop "$jt" "$full"

# A 5-node gang: no class has 5 nodes. It spans classes only with --gpu-mixed.
j1=$(submit -N5 --gres=gpu:8 --gpu-tier=value -o /dev/null --wrap 'sleep 600')
# select/topo's decision, in two scheduling passes: no class holds the gang.
wait_log "JobId=$j1: cannot fit now.*no eligible class holds the whole gang" "$log" 60 2
[ "$(job_state "$j1")" = PENDING ] || fail "the 5-node value gang without --gpu-mixed is $(job_state "$j1") on $(job_field "$j1" NodeList)"
note "-N5 --gpu-tier=value: pending (no class holds 5 nodes)"
stop "$j1"
j2=$(submit -N5 --gres=gpu:8 --gpu-tier=value --gpu-mixed -o /dev/null --wrap 'sleep 600')
wait_state "$j2" RUNNING 30 || fail "the 5-node --gpu-mixed gang is $(job_state "$j2"): $(job_field "$j2" Reason)"
nodes=$(job_field "$j2" NodeList)
used=$(classes_of "$nodes")
[ "$(expand_hosts "$nodes" | wc -l)" = 5 ] && [ "$(wc -w <<<"$used")" -ge 2 ] ||
	fail "the --gpu-mixed gang ran on $nodes ($used): expected 5 nodes of at least two classes"
sc=$(scontrol show job -o "$j2" | grep -oE 'SystemComment=loom: class=[a-z0-9+]+ tier=value')
expect=$(xargs <<<"$used" | tr ' ' '+')
[ "$sc" = "SystemComment=loom: class=$expect tier=value" ] ||
	fail "the --gpu-mixed gang's record says '$sc', expected class=$expect"
note "-N5 --gpu-tier=value --gpu-mixed: $nodes ($used), ${sc#SystemComment=}"
stop "$j2"

# Refused at submit, naming what the site has.
refused() { # WANT OPTIONS...
	local want=$1 out rc
	shift
	out=$(sbatch --parsable -N1 --gres=gpu:8 "$@" -o /dev/null --wrap true 2>&1) && rc=0 || rc=$?
	[ $rc != 0 ] || { scancel "${out%%;*}" 2>/dev/null; fail "sbatch $* was accepted"; }
	echo "$out" | grep -F -e "$want" >/dev/null || fail "sbatch $* says: $out (expected: $want)"
	note "sbatch $*: refused: $(echo "$out" | grep -F -e "$want" | head -1)"
}
refused "unknown tier 'cheapest': this site has value, balanced, fast, bigmem" --gpu-tier=cheapest
refused "unknown class 'v100': this site has a100, h100, b200" --gpu-tier=value --gpu-min-class=v100
refused "no GPU class meets" --gpu-tier=fast --gpu-mem=1T
refused "bad value 'lots'" --gpu-mem=lots
refused "--gpu-mixed" --gpu-mixed
sbatch --help 2>&1 | grep -F -- "--gpu-tier=value|balanced|fast|bigmem" >/dev/null ||
	fail "sbatch --help does not list the site's tier: $(sbatch --help 2>&1 | grep -F -- --gpu-tier)"
note "sbatch --help: $(sbatch --help 2>&1 | grep -F -- --gpu-tier= | head -1 | sed 's/^ *//' | cut -c1-60)"

# A typo in loom-topo.conf (what slurmctld refuses as fatal at its next
# start): sbatch reads the file with the same reader and refuses a job that
# needs the tiers with the same message, naming the file, line and key; a job
# that gives no tier option (or an srun step of a running job) does not read
# the file and is not refused for an admin's edit.
topo_conf=$LOOM_CLUSTER_DIR/etc/loom-topo.conf
cp "$topo_conf" "$topo_conf.good"
echo "gpu_clases=a100" >>"$topo_conf"
line=$(wc -l <"$topo_conf")
refused "loom: cannot check --gpu-tier: $topo_conf:$line: unknown key 'gpu_clases'" --gpu-tier=value
plain=$(sbatch --parsable -N1 -o /dev/null --wrap true 2>&1) ||
	{ mv "$topo_conf.good" "$topo_conf"; fail "a job without tier options was refused for loom-topo.conf's typo: $plain"; }
mv "$topo_conf.good" "$topo_conf"
wait_state "${plain%%;*}" COMPLETED 60
note "a job without tier options: accepted and ran (job ${plain%%;*})"
