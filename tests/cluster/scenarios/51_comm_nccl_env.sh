# cluster: --nodes 4 --gpus-per-node 8 --place-args comm_env=yes
# NCCL settings from the fabric, asked for per job (--comm-env=auto) on a site
# that enables them. The cluster file: every node an Azure ND H100 v5 (the
# recorded NCCL topology file, its HCAs named mlx5_<GPU>), on the test
# cluster's leaves. A job that asks gets, on each node, NCCL_TOPO_FILE (a
# file NCCL's loader takes) and NCCL_IB_HCA (its GPUs' HCAs); a job that sets
# NCCL_IB_HCA itself keeps it; a job that does not ask gets neither.
etc=$(dirname "$SLURM_CONF")
d=$(scratch)
loom=$LOOM_BUILDDIR/tools/loom
"$loom" topo convert --from "$LOOM_SRCDIR/tests/data/topology/nccl-topo-azure-ndv5-h100.xml" --to json \
	-o "$d/ndv5.json" || fail "loom topo convert of the ND H100 v5 file failed"
"$loom" topo convert --from "$etc/topology.conf" --to json -o "$d/fabric.json" || fail "loom topo convert of topology.conf failed"
python3 - "$d/ndv5.json" "$d/fabric.json" "$d/cluster.json" <<'PY' || fail "cannot write the cluster file"
import json, sys
hw = json.load(open(sys.argv[1]))["hardware"]
fabric = json.load(open(sys.argv[2]))
(name, h), = hw.items()
names = {}
for k, g in enumerate(h["gpus"]):
    names[g["nic"]] = "mlx5_%d" % k
    g["nic"] = names[g["nic"]]
for n in h["nics"]:
    n["device"] = names.get(n["device"], n["device"])
fabric["hardware"] = hw
for n in fabric["nodes"]:
    n["hardware"] = name
json.dump(fabric, open(sys.argv[3], "w"), indent=1)
PY
"$loom" topo show "$d/cluster.json" >/dev/null || fail "loom topo show refuses the cluster file"
# spank_place reads loom-topo.conf when each task starts (select/topo only at
# start and reconfigure; it keeps placing on topology.conf, the same leaves).
echo "cluster_file=$d/cluster.json" >>"$etc/loom-topo.conf"
show='for v in NCCL_TOPO_FILE NCCL_IB_HCA LOOM_COMM_ENV LOOM_COMM_ENV_ERROR; do echo "$SLURMD_NODENAME $v=${!v}"; done; [ -n "$NCCL_TOPO_FILE" ] && cp "$NCCL_TOPO_FILE" '"$d"'/topo.$SLURMD_NODENAME.xml; true'

j=$(submit -N 2 --gres=gpu:8 -o "$d/plain.out" --wrap "srun bash -c '$show'")
wait_state "$j" COMPLETED 60
grep -E "NCCL_(TOPO_FILE|IB_HCA)=." "$d/plain.out" && fail "a job that did not ask got NCCL settings: $(cat "$d/plain.out")"

if out=$(sbatch -N1 --comm-env=sometimes --wrap true 2>&1); then fail "sbatch accepted --comm-env=sometimes: $out"; fi
echo "$out" | grep "comm-env: bad value 'sometimes'" >/dev/null || fail "refusal does not name the value: $out"

j=$(submit -N 2 --gres=gpu:8 --comm-env=auto -o "$d/auto.out" --wrap "srun bash -c '$show'")
wait_state "$j" COMPLETED 60
hca="=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1,mlx5_4:1,mlx5_5:1,mlx5_6:1,mlx5_7:1"
for node in $(expand_hosts "$(job_field "$j" NodeList)"); do
	grep -x "$node NCCL_IB_HCA=$hca" "$d/auto.out" >/dev/null ||
		fail "$node: NCCL_IB_HCA is not its 8 GPUs' HCAs: $(grep "^$node NCCL" "$d/auto.out")"
	[ -s "$d/topo.$node.xml" ] || fail "$node: no NCCL_TOPO_FILE: $(grep "^$node" "$d/auto.out")"
	[ "$(grep -c 'class="0x0302' "$d/topo.$node.xml")" = 8 ] || fail "$node: NCCL_TOPO_FILE does not hold 8 GPUs"
	res=$(python3 "$LOOM_SRCDIR/tests/consumers/check_nccl_xml.py" -q "$d/topo.$node.xml" 2>&1) ||
		fail "$node: NCCL's loader rules refuse NCCL_TOPO_FILE: $res"
	# The step's own file on this node, not the batch step's it inherited.
	grep "^$node NCCL_TOPO_FILE=.*loom-hosts\.$j\.batch\." "$d/auto.out" >/dev/null &&
		fail "$node: the srun task has the batch step's NCCL_TOPO_FILE: $(grep "^$node NCCL_TOPO" "$d/auto.out")"
	note "$node: $(grep "^$node LOOM_COMM_ENV=" "$d/auto.out" | cut -d' ' -f2-); ${res#*: }"
done

# The job's own NCCL_IB_HCA stays.
j=$(NCCL_IB_HCA=mlx5_9 submit -N 1 --gres=gpu:8 --comm-env=auto -o "$d/own.out" --wrap "srun bash -c '$show'")
wait_state "$j" COMPLETED 60
grep " NCCL_IB_HCA=mlx5_9$" "$d/own.out" >/dev/null || fail "the job's NCCL_IB_HCA was overridden: $(cat "$d/own.out")"
grep "LOOM_COMM_ENV=.*the job's own: NCCL_IB_HCA" "$d/own.out" >/dev/null || fail "LOOM_COMM_ENV does not say it kept NCCL_IB_HCA: $(cat "$d/own.out")"
grep -E " NCCL_TOPO_FILE=/" "$d/own.out" >/dev/null || fail "NCCL_TOPO_FILE missing next to the job's NCCL_IB_HCA: $(cat "$d/own.out")"
note "with the job's own NCCL_IB_HCA: $(grep LOOM_COMM_ENV= "$d/own.out" | cut -d' ' -f2-)"
