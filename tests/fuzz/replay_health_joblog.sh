#!/bin/sh
# Replays the health_joblog fuzz seed corpus through the target (make check).
exec "$LOOM_BUILDDIR/tests/fuzz/replay_health_joblog" "$LOOM_SRCDIR/tests/fuzz/corpus/health_joblog"
