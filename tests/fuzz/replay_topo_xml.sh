#!/bin/sh
# Replays the seed corpus of fuzz_topo_xml through its entry point.
exec "$LOOM_BUILDDIR/tests/fuzz/replay_topo_xml" "$LOOM_SRCDIR/tests/fuzz/corpus/topo_xml"
