# topo benchmarks (bench_topo*): appended by the topo part.
