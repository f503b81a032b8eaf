# cluster: --nodes 4 --gpus-per-node 8 --select topo
# sbatch shows loom's placement options, refuses bad values naming the option
# and the value, and accepts good ones.
help=$(sbatch --help 2>&1)
echo "$help" | grep -F -- "--comm=heavy|normal|light" >/dev/null || fail "sbatch --help does not list --comm"
echo "$help" | grep -F -- "--locality=KIND" >/dev/null || fail "sbatch --help does not list --locality"
# Every option the plugins register is in its man page, and every option a page documents is registered.
res=$(python3 "$LOOM_SRCDIR/tests/tools/man_options.py" - "$LOOM_SRCDIR" <<<"$help") || fail "$res"
note "$res"
if out=$(sbatch -N1 --comm=sometimes --wrap true 2>&1); then
	fail "sbatch accepted --comm=sometimes: $out"
fi
echo "$out" | grep "comm: bad value 'sometimes'" >/dev/null || fail "refusal does not name option and value: $out"
note "refused: $(echo "$out" | head -1)"
if out=$(sbatch -N1 --locality='leaf;rm' --wrap true 2>&1); then
	fail "sbatch accepted --locality='leaf;rm': $out"
fi
j=$(submit -N2 --gres=gpu:8 --comm=heavy --locality=leaf:strict -o /dev/null --wrap 'true')
wait_state "$j" COMPLETED 30
note "job $j with --comm=heavy --locality=leaf:strict ran on $(job_field "$j" NodeList)"
