#!/bin/bash
# A Python virtual environment with PyTorch 2.13.0 (the CPU build: pinned, as
# a plain `torch` requirement downloads a CUDA build of several GB), for the
# tests of the SDK's DCP path; Debian's python3-torch (1.13) has no DCP async
# save. Made once under /var/cache/loom (LOOM_TORCH_VENV), reused after.
# Prints the environment's python.
set -euo pipefail
version=2.13.0
venv=${LOOM_TORCH_VENV:-/var/cache/loom/venv-torch-$version}
py=$venv/bin/python
if [ -x "$py" ] && "$py" -c "import torch, sys; sys.exit(torch.__version__.split('+')[0] != '$version')" 2>/dev/null; then
	echo "$py"
	exit 0
fi
mkdir -p "$(dirname "$venv")"
exec 9>"$venv.lock"
flock 9
if ! [ -x "$py" ] || ! "$py" -c "import torch" 2>/dev/null; then
	rm -rf "$venv"
	/usr/bin/python3 -m venv "$venv" >&2
	"$venv/bin/pip" install -q "torch==$version" numpy >&2 ||
		{ echo "torch-venv: pip install torch==$version failed" >&2; exit 1; }
fi
echo "$py"
