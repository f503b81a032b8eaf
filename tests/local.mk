# Test tiers: unit (Check, under each part's local.mk), plugin-load and cluster
# scenarios (tests/cluster, run by scripts/test.sh against a real Slurm), fuzz.
include tests/fuzz/local.mk

# Configured --without-check: make check fails and says why (the unit tests
# are not there), never a pass of the shell tests alone.
if !HAVE_CHECK
TESTS += tests/no_check.sh
endif
EXTRA_DIST += tests/no_check.sh
