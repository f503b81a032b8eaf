#!/bin/bash
# A Python virtual environment with PyTorch 2.13.0 (CPU build) plus the
# training frameworks that loom_ckpt's adapters support (loom_ckpt.lightning,
# loom_ckpt.hf), for tests/ckpt/frameworks.sh and the examples/ scripts.
# Made once under /var/cache/loom (LOOM_FRAMEWORKS_VENV), reused after; a
# lock makes concurrent callers wait for the one that builds it.
#
# Every pin is exact. torch goes in first, and every later pip call gets a
# constraints file pinning torch==2.13.0: otherwise a framework's unpinned
# `torch` requirement may pull a CUDA build of several GB.
# Prints the environment's python.
set -euo pipefail
torch_version=2.13.0
pins=(numpy==2.4.6 lightning==2.6.6 transformers==5.25.0 accelerate==1.16.0)
venv=${LOOM_FRAMEWORKS_VENV:-/var/cache/loom/venv-frameworks}
py=$venv/bin/python
stamp=$venv/.loom-pins
want="torch==$torch_version ${pins[*]}"

ready() {
	[ -x "$py" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ] &&
		"$py" -c "import torch, lightning, transformers, accelerate" 2>/dev/null
}

if ready; then
	echo "$py"
	exit 0
fi
mkdir -p "$(dirname "$venv")"
exec 9>"$venv.lock"
flock 9
if ! ready; then
	rm -rf "$venv"
	/usr/bin/python3 -m venv "$venv" >&2
	constraints=$venv/constraints.txt
	echo "torch==$torch_version" >"$constraints"
	"$venv/bin/pip" install -q "torch==$torch_version" >&2 ||
		{ echo "frameworks-venv: pip install torch==$torch_version into $venv failed" >&2; exit 1; }
	"$venv/bin/pip" install -q -c "$constraints" "${pins[@]}" >&2 ||
		{ echo "frameworks-venv: pip install ${pins[*]} into $venv failed" >&2; exit 1; }
	"$py" -c "import torch, lightning, transformers, accelerate" >&2 ||
		{ echo "frameworks-venv: $venv installed but its imports fail" >&2; exit 1; }
	echo "$want" >"$stamp"
fi
echo "$py"
