#!/bin/bash
# Replays the manifest fuzz target's seed corpus (make check).
exec "$LOOM_BUILDDIR/tests/fuzz/replay_ckpt_manifest" "$LOOM_SRCDIR/tests/fuzz/corpus/ckpt_manifest"
