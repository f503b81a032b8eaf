# health benchmarks (bench_health*): appended by the health part.
