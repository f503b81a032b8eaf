# health benchmarks (bench_health*).
LOOM_BENCHES += bench/bench_health_check bench/bench_health_predictor
EXTRA_PROGRAMS += bench/bench_health_check bench/bench_health_predictor
bench_bench_health_check_SOURCES = bench/bench_health_check.cpp
bench_bench_health_check_LDADD = $(LOOM_LIBS)
bench_bench_health_predictor_SOURCES = bench/bench_health_predictor.cpp
bench_bench_health_predictor_LDADD = $(LOOM_LIBS)

# Also `loom health`: tools/local.mk defines tools_loom_SOURCES after
# lib/health/local.mk is read, so the subcommand's files are added here.
tools_loom_SOURCES += tools/loom_health.cpp tools/loom_health_check.cpp tools/loom_health_classify.cpp \
	tools/loom_health_netprobe.cpp
