#!/bin/bash
# The Python SDK's reads and writes of checkpoint bytes (tests/ckpt/test_sdk_io.py):
# with Debian's PyTorch 1.13 (/usr/bin/python3: torch.save) and with PyTorch
# 2.13 (scripts/torch-venv.sh: DCP, 2 ranks). Neither may be missing.
set -u
src=${LOOM_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
py=$(bash "$src/scripts/torch-venv.sh") || { echo "sdk_io: FAIL: cannot make the PyTorch 2.13 environment" >&2; exit 1; }
exec env LOOM_SDK_IO_STRICT=1 LOOM_TORCH_PYTHON="$py" /usr/bin/python3 "$src/tests/ckpt/test_sdk_io.py" -v
