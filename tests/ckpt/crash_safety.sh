#!/bin/bash
# Crash safety of the checkpoint protocol: kill -9 the writer at random
# moments, hundreds of times; after each kill a restore must find a whole
# checkpoint, never a torn one, and never one older than the newest the
# writer had committed.
#
#   tests/ckpt/crash_safety.sh [KILLS]        (default 300; LOOM_BUILDDIR locates the programs)
set -u
kills=${1:-300}
build=${LOOM_BUILDDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
writer=$build/tests/ckpt/crash_writer
check=$build/tests/ckpt/crash_check
[ -x "$writer" ] && [ -x "$check" ] || { echo "crash_safety: $writer or $check not built" >&2; exit 1; }
dir=$(mktemp -d /tmp/loom-crash-XXXXXX)
out=$dir.out
trap 'rm -rf "$dir" "$out"' EXIT
RANDOM=4242
restored_max=-1
window=60 # ms
start=$SECONDS
for ((i = 1; i <= kills; i++)); do
    "$writer" "$dir" > "$out" 2> "$dir.err" &
    pid=$!
    # 0 to 60 ms: inside a write, a fsync, a rename, the pointer or retention.
    # On a loaded machine the writer may not reach its first commit that
    # soon: while nothing is committed the window doubles every 10 kills.
    ms=$((RANDOM % window))
    sleep "$((ms / 1000)).$(printf '%03d' $((ms % 1000)))"
    kill -9 "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    if [ -s "$dir.err" ]; then
        echo "crash_safety: kill $i: writer failed: $(cat "$dir.err")" >&2
        exit 1
    fi
    last=$(awk '$1 == "C" { s = $2 } END { print (s == "" ? -1 : s) }' "$out")
    if ! got=$("$check" "$dir" "$last"); then
        echo "crash_safety: kill $i: restore check failed (last committed $last)" >&2
        ls -la "$dir" "$dir/.staging" >&2 2>/dev/null
        exit 1
    fi
    [ -n "$got" ] && restored_max=$got
    if [ "$restored_max" -le 0 ] && [ $((i % 10)) = 0 ] && [ "$window" -lt 2000 ]; then
        window=$((window * 2))
    fi
done
rm -f "$dir.err"
echo "crash_safety: $kills kills, every restore whole and newest; reached step $restored_max in $((SECONDS - start)) s (kill window up to $window ms)"
[ "$restored_max" -gt 0 ] || { echo "crash_safety: the writer never committed anything" >&2; exit 1; }
