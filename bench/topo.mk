# topo benchmarks (bench_topo*).
# Also `loom topo`: tools/local.mk defines tools_loom_SOURCES after lib/topo/local.mk
# is read, so the subcommand's files are added here, after it.
tools_loom_SOURCES += tools/loom_topo.cpp tools/loom_topo_check.cpp

LOOM_BENCHES += bench/bench_topo
EXTRA_PROGRAMS += bench/bench_topo
bench_bench_topo_SOURCES = bench/bench_topo.cpp
bench_bench_topo_LDADD = $(LOOM_LIBS)
