# cluster: --nodes 4 --gpus-per-node 8 --select topo
# select/topo loads into slurmctld and into the clients, and Slurm runs on it.

log="$LOOM_CLUSTER_DIR/log/slurmctld.log"
grep -q "select/topo loaded (over select/cons_tres)" "$log" || fail "slurmctld log does not show select/topo loaded"
note "slurmctld: $(grep -m1 'select/topo loaded' "$log" | cut -c1-100)"
st=$(scontrol show config | sed -n 's/^SelectType *= *//p')
[ "$st" = select/topo ] || fail "scontrol show config: SelectType=$st, expected select/topo"
# Clients load every select plugin too: sinfo and squeue must work.
sinfo -h -o '%D %T' | grep "^4 idle$" >/dev/null || fail "sinfo does not show 4 idle nodes: $(sinfo -h -o '%D %T')"
squeue -h >/dev/null || fail "squeue failed with select/topo in PluginDir"
# No plugin load errors for our plugins.
if grep -E "error: .*(select_topo|select/topo)" "$log"; then fail "select/topo logged errors"; fi
