# lib/sim: `loom sim`, the whole system at 10k-100k GPUs in simulation, on
# lib/place's engine, lib/ckpt's interval policy and lib/health's judgement.
lib_libloom_sim_la_SOURCES += \
	lib/sim/cluster_gen.hpp lib/sim/cluster_gen.cpp \
	lib/sim/jobs.hpp lib/sim/jobs.cpp lib/sim/job_mix.cpp \
	lib/sim/failures.hpp lib/sim/failures.cpp \
	lib/sim/cost.hpp lib/sim/cost.cpp \
	lib/sim/placer.hpp lib/sim/placer.cpp \
	lib/sim/simulator.hpp lib/sim/simulator.cpp lib/sim/sim_engine.hpp \
	lib/sim/sim_runs.cpp lib/sim/sim_failures.cpp lib/sim/sim_spares.cpp lib/sim/sim_standby.cpp \
	lib/sim/sim_schedule.cpp lib/sim/sim_metrics.cpp \
	lib/sim/report.hpp lib/sim/report.cpp

# `loom sim`.
tools_loom_SOURCES += tools/loom_sim.cpp tools/loom_sim_args.hpp tools/loom_sim_args.cpp

if HAVE_CHECK
check_PROGRAMS += tests/unit/test_sim
TESTS += tests/unit/test_sim
tests_unit_test_sim_SOURCES = tests/unit/test_sim.cpp tests/unit/check_main.hpp tests/unit/sim_fixture.hpp \
	tests/unit/test_sim_failures.cpp tests/unit/test_sim_cost.cpp tests/unit/test_sim_scheduler.cpp tests/unit/test_sim_standby.cpp
tests_unit_test_sim_CPPFLAGS = $(AM_CPPFLAGS) $(CHECK_CFLAGS) $(JSONC_CFLAGS)
tests_unit_test_sim_LDADD = $(LOOM_SIM_LIBS) $(CHECK_LIBS)
endif
EXTRA_DIST += tests/data/sim
# loom sim end to end: placers, replay of its decisions with loom place, plots.
TESTS += tests/tools/sim_cli.sh
EXTRA_DIST += tests/tools/sim_cli.sh
