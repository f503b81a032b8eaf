#!/bin/bash
# The Python SDK's PyTorch path, for real: tests/ckpt/train_torch.py trains
# with Adam and checkpoints model + optimizer with save_torch_async(); a run
# that dies abruptly mid-training (a save in flight) and is restarted ends
# with parameters bitwise identical to an uninterrupted run, and a torn
# checkpoint is never loaded. Needs PyTorch (Debian: python3-torch, which
# scripts/deps.sh installs): without it this test fails, it does not skip.
set -u
src=${LOOM_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
py=
for p in python3 /usr/bin/python3; do
	if command -v "$p" >/dev/null && "$p" -c 'import torch' 2>/dev/null; then py=$p; break; fi
done
[ -n "$py" ] || { echo "sdk_torch: PyTorch is not importable from python3 or /usr/bin/python3 (apt-get install python3-torch)" >&2; exit 1; }
work=$(mktemp -d /tmp/loom-sdk-torch.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "sdk_torch: FAIL: $*" >&2; exit 1; }
train() { # DIR [ENV...]
	local dir=$1
	shift
	env LOOM_CKPT_DIR="$dir" LOOM_CKPT_INTERVAL=0 TRAIN_CKPT_EVERY=300 "$@" "$py" "$src/tests/ckpt/train_torch.py"
}
echo "sdk_torch: $("$py" -c 'import torch; print("torch", torch.__version__)') with $py"

ref=$(train "$work/ref" 2>"$work/ref.err") || { cat "$work/ref.err" >&2; fail "uninterrupted run failed"; }
echo "uninterrupted: $(echo "$ref" | tail -1)"
grep -q "saving with torch.save\|torch.distributed.checkpoint" "$work/ref.err" ||
	fail "the SDK did not say which PyTorch path it uses: $(cat "$work/ref.err")"
sed 's/^/  sdk: /' "$work/ref.err"

out=$(train "$work/run" TRAIN_CRASH_AFTER=3 2>&1)
rc=$?
[ "$rc" = 3 ] || fail "the crashing run exited $rc: $out"
echo "crashed: $(echo "$out" | grep crashing)"
# Every checkpoint on disk either verifies or is not offered; the newest offered is whole.
PYTHONPATH="$src/sdk/python" "$py" -m loom_ckpt ls "$work/run" | sed 's/^/  /'
again=$(train "$work/run" 2>"$work/run.err") || { cat "$work/run.err" >&2; fail "restarted run failed"; }
echo "restarted: $(echo "$again" | tail -1)"
echo "$again" | grep -E '^resumed from step (600|900)$' >/dev/null || fail "the restart did not resume from step 600 or 900: $again"
[ "$(echo "$ref" | tail -1 | sed 's/ resumed_from=[0-9]*//')" = "$(echo "$again" | tail -1 | sed 's/ resumed_from=[0-9]*//')" ] ||
	fail "the restarted run differs from the uninterrupted one"
echo "sdk_torch: restarted run bitwise identical to the uninterrupted one"
