#!/bin/bash
# cluster: --nodes 1 --select cons_tres
# A user cannot make spank_ckpt write outside the allowed roots: '..' and
# foreign paths are refused at submit time with the option and value named,
# and a symlink planted in the checkpoint root is refused, not followed.
source "$LOOM_SRCDIR/tests/ckpt/scenario_lib.sh"
ckpt_site
user=nobody
as_user() { runuser -u "$user" -- "$@"; }
outside=$CK_SCRATCH/outside
mkdir -p "$outside"
chown "$user" "$outside"

for bad in "$CK_ROOT/../outside" "/etc/loom-escape" "relative/dir"; do
	if out=$(as_user sbatch --parsable --ckpt-dir="$bad" --wrap true 2>&1); then
		fail "sbatch accepted --ckpt-dir=$bad (job $out)"
	fi
	echo "$out" | grep -F -- "--ckpt-dir: '$bad'" >/dev/null || fail "refusal does not name the option and value: $out"
	note "refused: $(echo "$out" | grep -F -- --ckpt-dir | head -1)"
done
if out=$(as_user sbatch --parsable --ckpt --ckpt-keep=0 --wrap true 2>&1); then
	fail "sbatch accepted --ckpt-keep=0"
fi
echo "$out" | grep -F -- "--ckpt-keep: '0'" >/dev/null || fail "refusal does not name --ckpt-keep: $out"

# The user plants <root>/nobody -> a directory outside the root.
as_user ln -s "$outside" "$CK_ROOT/$user"
job=$(cd /tmp && as_user sbatch --parsable -o "$CK_SCRATCH/escape.out" --ckpt --wrap "touch $outside/ran" 2>&1) || fail "sbatch: $job"
# slurmstepd refuses the directory before the script runs.
deadline=$(( EPOCHSECONDS + 60 ))
until grep -q "job $job: checkpoint directory: .*symlink" "$LOOM_CLUSTER_DIR"/log/slurmd-n1.log; do
	[ "$EPOCHSECONDS" -lt "$deadline" ] || fail "slurmd log does not say why job $job was refused"
	nap 0.5
done
nap 1
[ -z "$(ls -A "$outside")" ] || fail "something was created outside the root: $(ls -A "$outside")"
# The script never ran (it would have touched $outside/ran); the job failed
# with the reason in its own output; and the node stays in service: a user
# must not be able to drain nodes with a planted symlink.
wait_state "$job" FAILED 30
grep -q "spank_ckpt: job $job refused: checkpoint directory: .*symlink" "$CK_SCRATCH/escape.out" ||
	fail "job $job's output does not say why it was refused: $(cat "$CK_SCRATCH/escape.out")"
case $(sinfo -h -n n1 -o %T) in idle|mixed|allocated|completing) ;; *) fail "n1 is $(sinfo -h -n n1 -o '%T: %E') after a refused job" ;; esac
note "job $job refused (FAILED, n1 $(sinfo -h -n n1 -o %T)): $(head -1 "$CK_SCRATCH/escape.out")"
