#!/bin/bash
# Runs the Python SDK's tests (tests/ckpt/test_sdk_python.py, and
# test_datafile.py for its data file writer) with python3.
set -u
src=${LOOM_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
command -v python3 >/dev/null || { echo "sdk_python: python3 not found" >&2; exit 1; }
python3 "$src/tests/ckpt/test_sdk_python.py" -v || exit 1
exec python3 "$src/tests/ckpt/test_datafile.py" -v
