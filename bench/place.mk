# place benchmarks (bench_place*): appended by the place part.
