#!/bin/sh
# Replays the seed corpus of fuzz_topo_topology_conf through its entry point.
exec "$LOOM_BUILDDIR/tests/fuzz/replay_topo_topology_conf" "$LOOM_SRCDIR/tests/fuzz/corpus/topo_topology_conf"
