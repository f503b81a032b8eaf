# topo benchmarks (bench_topo*).
# Also `loom topo`: tools/local.mk defines tools_loom_SOURCES after lib/topo/local.mk
# is read, so the subcommand's files are added here, after it.
tools_loom_SOURCES += tools/loom_topo.cpp tools/loom_topo_check.cpp
