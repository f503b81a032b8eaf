# ckpt benchmarks: async save stall and background writer throughput (`make bench`).
LOOM_BENCHES += bench/bench_ckpt
EXTRA_PROGRAMS += bench/bench_ckpt
bench_bench_ckpt_SOURCES = bench/bench_ckpt.cpp
bench_bench_ckpt_CPPFLAGS = $(AM_CPPFLAGS) $(JSONC_CFLAGS)
bench_bench_ckpt_LDADD = $(LOOM_LIBS)
