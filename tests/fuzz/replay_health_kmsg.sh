#!/bin/sh
# Replays the health_kmsg fuzz seed corpus through the target (make check).
exec "$LOOM_BUILDDIR/tests/fuzz/replay_health_kmsg" "$LOOM_SRCDIR/tests/fuzz/corpus/health_kmsg"
