#!/bin/sh
# Replays the health_config fuzz seed corpus through the target (make check).
exec "$LOOM_BUILDDIR/tests/fuzz/replay_health_config" "$LOOM_SRCDIR/tests/fuzz/corpus/health_config"
