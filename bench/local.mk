# Benchmarks: `make bench` builds them (not `make all`); scripts/bench.sh runs them.
# A part adds: BENCH_PROGRAMS += bench/bench_x and EXTRA_PROGRAMS += bench/bench_x
BENCH_PROGRAMS =
EXTRA_PROGRAMS =
include bench/topo.mk
include bench/place.mk
include bench/ckpt.mk
include bench/health.mk
bench: $(BENCH_PROGRAMS)
.PHONY: bench
