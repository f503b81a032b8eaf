# cluster: --nodes 3 --gpus-per-node 8
# loom health check --drain as HealthCheckProgram runs it, with a GPU fault
# injected through the collectors' root path: the node is drained with a
# loom: reason naming the check and the evidence; once healthy for the
# hold-down time loom resumes it; a node an admin drained is never resumed.
out=$(scratch)
loom="$LOOM_BUILDDIR/tools/loom"
data="$LOOM_SRCDIR/tests/data/health"
mkdir -p "$out/faulty/var/log" "$out/healthy/var/log"
cp "$data/kmsg-xid-119-h100.log" "$out/faulty/var/log/kern.log"
cp "$data/nvidia-smi-q-8xh100-535.161.08.txt" "$out/faulty/nvidia-smi-q.txt"
cp "$data/nvidia-smi-q-8xh100-535.161.08.txt" "$out/healthy/nvidia-smi-q.txt"
check() { # NODE ROOT
	SLURMD_NODENAME=$1 "$loom" health check --drain --quiet --root "$2" --state-dir "$out/state-$1" --hold-down 3s
}
t0=$(date +%s.%N)
rc=0
check n2 "$out/faulty" || rc=$?
t1=$(date +%s.%N)
[ "$rc" = 2 ] || fail "health check on the faulty root exited $rc, expected 2"
reason=$(sinfo -h -n n2 -o %E)
case $reason in "loom: gpu_xid: GPU 4 (0000:9b:00): Xid 119 x5: reset_gpu"*) ;; *) fail "n2 reason '$reason'" ;; esac
case $(sinfo -h -n n2 -o %T) in drained|draining) ;; *) fail "n2 is $(sinfo -h -n n2 -o %T), expected drained" ;; esac
[ -s "$out/state-n2/suspect" ] || fail "no suspect flag for n2"
note "n2 drained in $(awk "BEGIN{printf \"%.2f\", $t1 - $t0}") s: '$reason'"
# Healthy again: not resumed before the hold-down, resumed after it.
check n2 "$out/healthy" || fail "healthy check exited $?"
case $(sinfo -h -n n2 -o %T) in drained|draining) ;; *) fail "n2 resumed before its hold-down" ;; esac
[ -e "$out/state-n2/suspect" ] && fail "suspect flag left after a healthy check"
nap 3
check n2 "$out/healthy" || fail "healthy check exited $?"
# (slurmctld marks a resumed node not-responding, "idle*", until its next ping)
st=$(sinfo -h -n n2 -o %T | tr -d '*')
case $st in idle|mixed|allocated) ;; *) fail "n2 is $st after the hold-down, expected back in service" ;; esac
note "n2 resumed after the 3 s hold-down ($st)"
# An admin's drain stays.
scontrol update nodename=n3 state=drain reason="admin: replacing DIMM"
check n3 "$out/healthy" || fail "healthy check on n3 exited $?"
nap 3
check n3 "$out/healthy" || fail "healthy check on n3 exited $?"
[ "$(sinfo -h -n n3 -o %E)" = "admin: replacing DIMM" ] || fail "n3 reason changed to '$(sinfo -h -n n3 -o %E)'"
case $(sinfo -h -n n3 -o %T) in drained|draining) ;; *) fail "loom resumed the admin-drained n3" ;; esac
# And a fault on it does not overwrite the admin's reason; the verdict is
# still drain (exit 2, loom-health(1)).
rc=0
check n3 "$out/faulty" || rc=$?
[ "$rc" = 2 ] || fail "health check on the faulty root of the admin-drained n3 exited $rc, expected 2"
[ "$(sinfo -h -n n3 -o %E)" = "admin: replacing DIMM" ] || fail "loom overwrote the admin's reason on n3"
note "n3 (admin: replacing DIMM) left alone"
