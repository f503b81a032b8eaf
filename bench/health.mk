# health benchmarks (bench_health*).
LOOM_BENCHES += bench/bench_health_check bench/bench_health_predictor
EXTRA_PROGRAMS += bench/bench_health_check bench/bench_health_predictor
bench_bench_health_check_SOURCES = bench/bench_health_check.cpp
bench_bench_health_check_LDADD = $(LOOM_LIBS)
bench_bench_health_predictor_SOURCES = bench/bench_health_predictor.cpp
bench_bench_health_predictor_LDADD = $(LOOM_LIBS)
