# ckpt benchmarks (bench_ckpt*): appended by the ckpt part.
