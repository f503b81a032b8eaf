#!/bin/bash
# doc/ARCHITECTURE.md's "What links what" against the LIBADD/LDADD lines of
# the build files, and every lib/ module's includes against the modules it
# links (tests/tools/module_graph.py).
set -u
src=${LOOM_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
command -v python3 >/dev/null || { echo "module_graph: python3 not found" >&2; exit 1; }
exec python3 "$src/tests/tools/module_graph.py" "$src"
