# cluster: --nodes 12 --gpus-per-node 8 --select topo --classes a100:4,h100:4,b200:4 --topo-line gpu_class.a100=throughput:1,mem:80G,price:1.20 --topo-line gpu_class.h100=throughput:2,mem:80G,price:1.80 --topo-line gpu_class.b200=throughput:3,mem:192G,price:4.20 --topo-line gpu_tier.bigmem=value,mem:150G
# GPU tiers: a job asks for a need, not a model. Three classes by node
# features (n1-n4 a100, n5-n8 h100, n9-n12 b200), 1x 2x 3x, priced 1.20,
# 1.80 and 4.20 per GPU-hour: per unit of work 1.20, 0.90 and 1.40.
#  - value (lowest price per work) lands on h100, fast on b200, balanced on
#    h100 (1 x 1.5 against b200's 1.56 x 1 and a100's 1.33 x 3);
#  - with h100 full, value moves to a100 (1.20 per work against 1.40) and
#    balanced to b200 (1.56 against a100's 4);
#  - the site tier bigmem (value, 150G per GPU) lands on b200, the only class with it;
#  - a model named in --constraint still wins over a tier;
#  - bad names are refused at submit with the names the site has, bounds no
#    class meets too; --help lists the site's tier;
#  - the class, tier and price per hour are in the job's SystemComment and in
#    jobcomp/health's record of it.
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
for _ in $(seq 50); do
	grep -E "jobcomp/health: job $j CANCELLED.*loom: class=h100 tier=value price_per_h=28.80" \
		"$LOOM_CLUSTER_DIR/log/slurmctld.log" >/dev/null && break
	sleep 0.2
done
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

# h100 full (a 4-node job on it): value and balanced part ways.
full=$(submit -N4 --gres=gpu:8 --constraint=h100 -o /dev/null --wrap 'sleep 600')
wait_state "$full" RUNNING 30 || fail "the h100 filler is $(job_state "$full")"
read -r jv nodes < <(gang --gpu-tier=value)
expect_class "$jv" "$nodes" a100 "h100 full: --gpu-tier=value"
read -r jb nodes < <(gang --gpu-tier=balanced)
expect_class "$jb" "$nodes" b200 "h100 full: --gpu-tier=balanced"
stop "$jv" "$jb" "$full"

# Refused at submit, naming what the site has.
refused() { # WANT OPTIONS...
	local want=$1 out rc
	shift
	out=$(sbatch --parsable -N1 --gres=gpu:8 "$@" -o /dev/null --wrap true 2>&1) && rc=0 || rc=$?
	[ $rc != 0 ] || { scancel "${out%%;*}" 2>/dev/null; fail "sbatch $* was accepted"; }
	echo "$out" | grep -F "$want" >/dev/null || fail "sbatch $* says: $out (expected: $want)"
	note "sbatch $*: refused: $(echo "$out" | grep -F "$want" | head -1)"
}
refused "unknown tier 'cheapest': this site has value, balanced, fast, bigmem" --gpu-tier=cheapest
refused "unknown class 'v100': this site has a100, h100, b200" --gpu-tier=value --gpu-min-class=v100
refused "no GPU class meets" --gpu-tier=fast --gpu-mem=1T
refused "bad value 'lots'" --gpu-mem=lots
sbatch --help 2>&1 | grep -F -- "--gpu-tier=value|balanced|fast|bigmem" >/dev/null ||
	fail "sbatch --help does not list the site's tier: $(sbatch --help 2>&1 | grep -F -- --gpu-tier)"
note "sbatch --help: $(sbatch --help 2>&1 | grep -F -- --gpu-tier= | head -1 | sed 's/^ *//' | cut -c1-60)"
