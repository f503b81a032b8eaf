#!/bin/sh
# Replays the health_nvsmi fuzz seed corpus through the target (make check).
exec "$LOOM_BUILDDIR/tests/fuzz/replay_health_nvsmi" "$LOOM_SRCDIR/tests/fuzz/corpus/health_nvsmi"
