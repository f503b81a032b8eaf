# Benchmarks (bench_*), installed under $(pkglibexecdir)/bench; scripts/bench.sh runs them
# with the cluster benchmarks (bench/*.sh).
# A part adds: BENCH_PROGRAMS += bench/bench_x (and may list it in EXTRA_PROGRAMS too).
BENCHdir = $(pkglibexecdir)/bench
BENCH_PROGRAMS =
EXTRA_PROGRAMS =
include bench/topo.mk
include bench/place.mk
include bench/ckpt.mk
include bench/health.mk
bench: $(BENCH_PROGRAMS)
.PHONY: bench
EXTRA_DIST += bench/slurmctld_job_test.sh bench/health_fault_to_running.sh
