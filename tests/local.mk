# Test tiers: unit (Check, under each part's local.mk), plugin-load and cluster
# scenarios (tests/cluster, run by scripts/test.sh against a real Slurm), fuzz.
include tests/fuzz/local.mk
