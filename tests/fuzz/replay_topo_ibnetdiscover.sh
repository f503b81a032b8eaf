#!/bin/sh
# Replays the seed corpus of fuzz_topo_ibnetdiscover through its entry point.
exec "$LOOM_BUILDDIR/tests/fuzz/replay_topo_ibnetdiscover" "$LOOM_SRCDIR/tests/fuzz/corpus/topo_ibnetdiscover"
