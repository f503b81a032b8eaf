#!/bin/bash
# `loom health check` exit codes on recorded roots, as a monitor reads them
# (Nagios/Icinga: 0 ok, 1 warning, 2 critical, 3 unknown), the same code in
# --json and in the Prometheus textfile; and what --drain asks of Slurm in
# each case, through a stand-in scontrol that answers with a node record
# recorded from a real slurmctld (tests/data/health/scontrol) and logs every
# update it is asked for. Unknown never drains.
#   health_exit_codes.sh [LOOM]      (default $LOOM_BUILDDIR/tools/loom)
set -uo pipefail
loom=${1:-${LOOM_BUILDDIR:-.}/tools/loom}
src=${LOOM_SRCDIR:-.}
data=$src/tests/data/health
[ -x "$loom" ] || { echo "health_exit_codes: $loom: not an executable"; exit 1; }
[ -f "$data/nvidia-smi-q-8xh100-535.161.08.txt" ] || { echo "health_exit_codes: no recorded data under $data"; exit 1; }
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
fail=0 n=0
bad() { echo "health_exit_codes: FAIL $*"; fail=1; }
smi=$data/nvidia-smi-q-8xh100-535.161.08.txt

# Recorded roots, one per outcome.
mk() { mkdir -p "$t/$1/proc/driver/nvidia" && echo "$t/$1"; }
ok=$(mk ok); cp "$smi" "$ok/nvidia-smi-q.txt"
hot=$(mk hot); sed '777s/: 30 C$/: 86 C/' "$smi" >"$hot/nvidia-smi-q.txt"   # GPU 3 at 86 C: suspect (84)
xid=$(mk xid); cp "$smi" "$xid/nvidia-smi-q.txt"; mkdir -p "$xid/var/log"; cp "$data/kmsg-xid-119-h100.log" "$xid/var/log/kern.log"
nodata=$(mk nodata)                                                            # the driver, no GPU data
empty=$(mk empty); : >"$empty/nvidia-smi-q.txt"
binary=$(mk binary); head -c 4096 "$loom" >"$binary/nvidia-smi-q.txt"
trunc=$(mk trunc); cp "$data/nvidia-smi-q-truncated.txt" "$trunc/nvidia-smi-q.txt"
fifo=$(mk fifo); mkfifo "$fifo/nvidia-smi-q.txt"
: >"$t/empty.conf"
grep -q "GPU Current Temp *: 86 C" "$hot/nvidia-smi-q.txt" || { echo "health_exit_codes: cannot make the hot root"; exit 1; }

expect() { # WANT NAME ARGS...: exit code, and the same code in --json and Prometheus
	local want=$1 name=$2 rc jrc prom
	shift 2
	n=$((n + 1))
	timeout 30 "$loom" health check --node n1 "$@" >"$t/out" 2>"$t/err"
	rc=$?
	[ "$rc" = "$want" ] || { bad "$name: exit $rc, expected $want: $(head -3 "$t/out" "$t/err" | tr '\n' ' ')"; return; }
	timeout 30 "$loom" health check --node n1 --json --prometheus "$t/prom" "$@" >"$t/json" 2>/dev/null
	jrc=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["exit_code"])' "$t/json" 2>/dev/null)
	[ "$jrc" = "$want" ] || bad "$name: --json exit_code '$jrc', expected $want"
	prom=$(sed -n 's/^loom_health_outcome{[^}]*} //p' "$t/prom" 2>/dev/null)
	[ "$prom" = "$want" ] || bad "$name: loom_health_outcome '$prom', expected $want"
}
expect 0 "ok root" --root "$ok" --config "$t/empty.conf"
expect 1 "GPU 3 at 86 C" --root "$hot" --config "$t/empty.conf"
expect 2 "Xid 119 in the kernel log" --root "$xid" --config "$t/empty.conf"
expect 3 "driver loaded, no nvidia-smi output" --root "$nodata" --config "$t/empty.conf"
expect 3 "empty nvidia-smi output" --root "$empty" --config "$t/empty.conf"
expect 3 "binary nvidia-smi output" --root "$binary" --config "$t/empty.conf"
expect 3 "truncated nvidia-smi output" --root "$trunc" --config "$t/empty.conf"
expect 3 "a FIFO in place of the nvidia-smi output" --root "$fifo" --config "$t/empty.conf"
printf 'gpu_count=8\n' >"$t/expect8.conf"
rm -rf "$t/bare"; mkdir -p "$t/bare"
expect 3 "gpu_count=8, no GPU data, no driver" --root "$t/bare" --config "$t/expect8.conf"
printf 'gpu_temp_suspect=hot\n' >"$t/bad.conf"
n=$((n + 1))
"$loom" health check --root "$ok" --config "$t/bad.conf" >/dev/null 2>"$t/err"
rc=$?
[ "$rc" = 3 ] || bad "a bad health.conf exits $rc, expected 3 (unknown)"
grep -q "gpu_temp_suspect" "$t/err" || bad "a bad health.conf: stderr does not name the key: $(head -1 "$t/err")"
n=$((n + 1))
"$loom" health check --root "$ok" --no-such-option >/dev/null 2>&1
rc=$?
[ "$rc" = 2 ] || bad "a bad option exits $rc, expected 2 (usage)"

# --drain through a stand-in scontrol: a recorded idle node (n1 of the
# 26.05 recording after its notes were cleared: Gres=gpu:8, no Extra, no
# Comment), each update logged.
rec=$data/scontrol/26.05.3/show-node-cleared.txt
cat >"$t/scontrol" <<EOF
#!/bin/bash
echo "\$*" >>"$t/calls"
case "\$1" in
show) cat "$rec" ;;
update) echo "\$*" >>"$t/updates" ;;
*) echo "unexpected: \$*" >>"$t/updates"; exit 1 ;;
esac
EOF
chmod +x "$t/scontrol"
printf 'scontrol=%s\n' "$t/scontrol" >"$t/drain.conf"
drain() { # WANT NAME ROOT: exit code and the updates asked for
	: >"$t/updates"
	n=$((n + 1))
	"$loom" health check --node n1 --drain --quiet --no-predict --root "$3" --config "$t/drain.conf" \
		--state-dir "$t/state-$2" >/dev/null 2>"$t/err"
	local rc=$?
	[ "$rc" = "$1" ] || bad "--drain $2: exit $rc, expected $1: $(head -2 "$t/err" | tr '\n' ' ')"
}
drain 3 unknown "$nodata"
grep -q 'state=drain' "$t/updates" && bad "--drain drained on unknown: $(cat "$t/updates")"
grep -q '^update nodename=n1 extra=loom:suspect:collector_gpu:' "$t/updates" ||
	bad "--drain on unknown did not mark n1 suspect: $(cat "$t/updates")"
drain 2 xid "$xid"
grep -q '^update nodename=n1 state=drain reason=loom: gpu_xid: ' "$t/updates" ||
	bad "--drain on Xid 119 did not drain with loom's reason: $(cat "$t/updates")"
drain 1 hot "$hot"
grep -q '^update nodename=n1 extra=loom:suspect:gpu_temp:' "$t/updates" ||
	bad "--drain on a hot GPU did not mark n1 suspect: $(cat "$t/updates")"
grep -q 'state=drain' "$t/updates" && bad "--drain drained a suspect node: $(cat "$t/updates")"
drain 0 ok "$ok"
[ -s "$t/updates" ] && bad "--drain on an ok node with nothing of loom's asked for updates: $(cat "$t/updates")"
# The Gres of the node (gpu:8) is the expected count: a root with 4 GPUs drains.
four=$(mk four)
awk '/^GPU [0-9A-Fa-f]+:/{g++} g<=4' "$smi" | sed 's/^Attached GPUs *: 8/Attached GPUs                             : 4/' >"$four/nvidia-smi-q.txt"
drain 2 four-gpus "$four"
grep -q 'reason=loom: gpu_count: 4 GPUs visible, 8 expected' "$t/updates" ||
	bad "4 of the 8 GPUs of Gres=gpu:8 did not drain with gpu_count: $(cat "$t/updates") $(head -2 "$t/err")"

# Without --drain (a prolog, an epilog, by hand) Slurm is never called; the
# Gres the last --drain check was told is still the expected count.
: >"$t/calls"
n=$((n + 1))
"$loom" health check --node n1 --quiet --no-predict --root "$four" --config "$t/drain.conf" \
	--state-dir "$t/state-four-gpus" >/dev/null 2>"$t/err"
rc=$?
[ "$rc" = 2 ] || bad "without --drain, 4 of the 8 GPUs of the last known Gres: exit $rc, expected 2: $(head -2 "$t/err")"
[ -s "$t/calls" ] && bad "a check without --drain called scontrol: $(cat "$t/calls")"

[ "$fail" = 0 ] || { echo "health_exit_codes: FAIL ($n cases)"; exit 1; }
echo "health_exit_codes: ok, $n cases"
