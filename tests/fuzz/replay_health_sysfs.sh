#!/bin/sh
# Replays the health_sysfs fuzz seed corpus through the target (make check).
exec "$LOOM_BUILDDIR/tests/fuzz/replay_health_sysfs" "$LOOM_SRCDIR/tests/fuzz/corpus/health_sysfs"
