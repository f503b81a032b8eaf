#!/bin/sh
# Replays the seed corpus of fuzz_topo_cluster_json through its entry point.
exec "$LOOM_BUILDDIR/tests/fuzz/replay_topo_cluster_json" "$LOOM_SRCDIR/tests/fuzz/corpus/topo_cluster_json"
