# Benchmarks (bench_*): built by `make bench`, not by `make all` (no build,
# test or package needs them); scripts/bench.sh builds and runs them with the
# cluster benchmarks (bench/*.sh).
# A part adds: LOOM_BENCHES += bench/bench_x and EXTRA_PROGRAMS += bench/bench_x.
LOOM_BENCHES =
EXTRA_PROGRAMS =
include bench/topo.mk
include bench/place.mk
include bench/ckpt.mk
include bench/health.mk
bench: $(LOOM_BENCHES)
.PHONY: bench
EXTRA_DIST += bench/slurmctld_scale.sh bench/slurmctld_job_test.sh bench/health_fault_to_running.sh bench/backfill_plans.sh \
	bench/ckpt_standby_recovery.sh \
	bench/sim_report.sh bench/sim_args.sh bench/sim_spares.sh bench/sim_standby.sh bench/sim_standby_page.py bench/sim_bands.py bench/sim_comm.sh bench/sim_tiers.sh bench/sim_tiers_search.sh bench/sim_load_search.sh bench/rank_order.sh bench/results
