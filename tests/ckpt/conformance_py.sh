#!/bin/bash
# Runs the checkpoint conformance corpus against the Python SDK. Without
# python3 this fails (exit 1): the Python side of the protocol is untested.
set -u
src=${LOOM_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
command -v python3 >/dev/null || { echo "conformance_py: FAIL: python3 not found (the Python SDK cannot be checked)" >&2; exit 1; }
exec python3 "$src/tests/ckpt/conformance.py" "$src/tests/ckpt/conformance"
