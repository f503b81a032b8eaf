# place benchmarks: engine vs Slurm topology/tree greedy at 1k/10k/100k GPUs (`make bench`).
LOOM_BENCHES += bench/bench_place
EXTRA_PROGRAMS += bench/bench_place
bench_bench_place_SOURCES = bench/bench_place.cpp
bench_bench_place_LDADD = $(LOOM_LIBS)
