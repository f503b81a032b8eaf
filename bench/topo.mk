# topo benchmarks (bench_topo*).
LOOM_BENCHES += bench/bench_topo
EXTRA_PROGRAMS += bench/bench_topo
bench_bench_topo_SOURCES = bench/bench_topo.cpp
bench_bench_topo_LDADD = $(LOOM_LIBS)
