# lib/health: collectors (gather), health config and rules (judge), predictor,
# failure classifier and what a job adds to the failure statistics (their
# file is lib/exchange's). The loom health subcommand and the unit tests are
# listed here too; jobcomp/health has its own local.mk.
lib_libloom_health_la_SOURCES += \
	lib/health/sample.hpp lib/health/sample.cpp \
	lib/health/kernel_log.hpp lib/health/kernel_log.cpp \
	lib/health/link_flaps.hpp lib/health/link_flaps.cpp \
	lib/health/nvidia_smi.hpp lib/health/nvidia_smi.cpp \
	lib/health/nvml.hpp lib/health/nvml.cpp \
	lib/health/infiniband.hpp lib/health/infiniband.cpp \
	lib/health/host_sysfs.hpp lib/health/host_sysfs.cpp \
	lib/health/error_kinds.hpp lib/health/error_kinds.cpp \
	lib/health/job_log.hpp lib/health/job_log.cpp \
	lib/health/gather.hpp lib/health/gather.cpp \
	lib/health/xid_table.hpp lib/health/xid_table.cpp \
	lib/health/config.hpp lib/health/config.cpp \
	lib/health/rules.hpp lib/health/rules.cpp lib/health/rules_gpu.cpp lib/health/rules_host.cpp \
	lib/health/drain.hpp lib/health/drain.cpp \
	lib/health/slurm_ops.hpp lib/health/slurm_ops.cpp \
	lib/health/report.hpp lib/health/report.cpp \
	lib/health/predictor.hpp lib/health/predictor.cpp \
	lib/health/classify.hpp lib/health/classify.cpp \
	lib/health/failure_stats.hpp lib/health/failure_stats.cpp \
	lib/health/jobcomp.hpp lib/health/jobcomp.cpp \
	lib/health/jobcomp_worker.hpp lib/health/jobcomp_worker.cpp lib/health/jobcomp_handle.cpp \
	lib/health/spares.hpp lib/health/spares.cpp \
	lib/health/gpu_runtime.hpp lib/health/gpu_runtime.cpp \
	lib/health/gpu_probe.hpp lib/health/gpu_probe.cpp lib/health/gpu_probe_allreduce.cpp

# `loom health` is added to tools_loom_SOURCES in bench/health.mk: this file is
# included before tools/local.mk defines it.

if HAVE_CHECK
check_PROGRAMS += tests/unit/test_health_collectors
TESTS += tests/unit/test_health_collectors
tests_unit_test_health_collectors_SOURCES = tests/unit/test_health_collectors.cpp tests/unit/check_main.hpp \
	tests/unit/health_collectors_fixture.hpp tests/unit/test_health_collectors_devices.cpp
tests_unit_test_health_collectors_CPPFLAGS = $(AM_CPPFLAGS) $(CHECK_CFLAGS)
tests_unit_test_health_collectors_LDADD = $(LOOM_HEALTH_LIBS) $(CHECK_LIBS)

check_PROGRAMS += tests/unit/test_health_bounded_reads
TESTS += tests/unit/test_health_bounded_reads
tests_unit_test_health_bounded_reads_SOURCES = tests/unit/test_health_bounded_reads.cpp tests/unit/check_main.hpp \
	tests/unit/bounded_reads_fixture.hpp tests/unit/test_health_sysfs_garbage.cpp
tests_unit_test_health_bounded_reads_CPPFLAGS = $(AM_CPPFLAGS) $(CHECK_CFLAGS)
tests_unit_test_health_bounded_reads_LDADD = $(LOOM_HEALTH_LIBS) $(CHECK_LIBS)

check_PROGRAMS += tests/unit/test_health_rules
TESTS += tests/unit/test_health_rules
tests_unit_test_health_rules_SOURCES = tests/unit/test_health_rules.cpp tests/unit/check_main.hpp \
	tests/unit/health_rules_fixture.hpp tests/unit/test_health_rules_network.cpp
tests_unit_test_health_rules_CPPFLAGS = $(AM_CPPFLAGS) $(CHECK_CFLAGS)
tests_unit_test_health_rules_LDADD = $(LOOM_HEALTH_LIBS) $(CHECK_LIBS)

check_PROGRAMS += tests/unit/test_health_drain
TESTS += tests/unit/test_health_drain
tests_unit_test_health_drain_SOURCES = tests/unit/test_health_drain.cpp tests/unit/check_main.hpp
tests_unit_test_health_drain_CPPFLAGS = $(AM_CPPFLAGS) $(CHECK_CFLAGS) $(JSONC_CFLAGS)
tests_unit_test_health_drain_LDADD = $(LOOM_HEALTH_LIBS) $(CHECK_LIBS)

check_PROGRAMS += tests/unit/test_health_predictor
TESTS += tests/unit/test_health_predictor
tests_unit_test_health_predictor_SOURCES = tests/unit/test_health_predictor.cpp tests/unit/check_main.hpp
tests_unit_test_health_predictor_CPPFLAGS = $(AM_CPPFLAGS) $(CHECK_CFLAGS) $(JSONC_CFLAGS)
tests_unit_test_health_predictor_LDADD = $(LOOM_HEALTH_LIBS) $(CHECK_LIBS)

check_PROGRAMS += tests/unit/test_health_classify
TESTS += tests/unit/test_health_classify
tests_unit_test_health_classify_SOURCES = tests/unit/test_health_classify.cpp tests/unit/check_main.hpp
tests_unit_test_health_classify_CPPFLAGS = $(AM_CPPFLAGS) $(CHECK_CFLAGS) $(JSONC_CFLAGS)
tests_unit_test_health_classify_LDADD = $(LOOM_HEALTH_LIBS) $(CHECK_LIBS)

check_PROGRAMS += tests/unit/test_health_joblogs
TESTS += tests/unit/test_health_joblogs
tests_unit_test_health_joblogs_SOURCES = tests/unit/test_health_joblogs.cpp tests/unit/check_main.hpp
tests_unit_test_health_joblogs_CPPFLAGS = $(AM_CPPFLAGS) $(CHECK_CFLAGS)
tests_unit_test_health_joblogs_LDADD = $(LOOM_HEALTH_LIBS) $(CHECK_LIBS)

check_PROGRAMS += tests/unit/test_health_jobcomp
TESTS += tests/unit/test_health_jobcomp
tests_unit_test_health_jobcomp_SOURCES = tests/unit/test_health_jobcomp.cpp tests/unit/check_main.hpp \
	tests/unit/jobcomp_fixture.hpp tests/unit/test_health_jobcomp_worker.cpp tests/unit/test_health_jobcomp_spares.cpp
tests_unit_test_health_jobcomp_CPPFLAGS = $(AM_CPPFLAGS) $(CHECK_CFLAGS) $(JSONC_CFLAGS)
tests_unit_test_health_jobcomp_LDADD = lib/libloom_health.la $(LOOM_CKPT_LIBS) $(CHECK_LIBS)

# The GPU probes against stand-ins for the CUDA runtime and NCCL (shared
# modules the test loads with dlopen, never installed), and against the real
# libraries where they are installed (no GPU: never a pass).
check_LTLIBRARIES += tests/unit/fake_cudart.la tests/unit/fake_nccl.la
tests_unit_fake_cudart_la_SOURCES = tests/unit/fake_cudart.cpp
tests_unit_fake_cudart_la_LDFLAGS = $(AM_LDFLAGS) -module -avoid-version -shared -rpath $(abs_builddir)
tests_unit_fake_nccl_la_SOURCES = tests/unit/fake_nccl.cpp
tests_unit_fake_nccl_la_LDFLAGS = $(AM_LDFLAGS) -module -avoid-version -shared -rpath $(abs_builddir)
check_PROGRAMS += tests/unit/test_health_gpu_probe
TESTS += tests/unit/test_health_gpu_probe
tests_unit_test_health_gpu_probe_SOURCES = tests/unit/test_health_gpu_probe.cpp tests/unit/check_main.hpp
tests_unit_test_health_gpu_probe_CPPFLAGS = $(AM_CPPFLAGS) $(CHECK_CFLAGS)
tests_unit_test_health_gpu_probe_LDADD = $(LOOM_HEALTH_LIBS) $(CHECK_LIBS)
EXTRA_tests_unit_test_health_gpu_probe_DEPENDENCIES = tests/unit/fake_cudart.la tests/unit/fake_nccl.la
endif


# Fuzz targets' seed corpora replayed by make check (tests/fuzz/run.sh fuzzes them).
check_PROGRAMS += tests/fuzz/replay_health_kmsg
tests_fuzz_replay_health_kmsg_SOURCES = tests/fuzz/fuzz_health_kmsg.cpp tests/fuzz/replay_main.cpp
tests_fuzz_replay_health_kmsg_LDADD = $(LOOM_HEALTH_LIBS)
TESTS += tests/fuzz/replay_health_kmsg.sh
check_PROGRAMS += tests/fuzz/replay_health_nvsmi
tests_fuzz_replay_health_nvsmi_SOURCES = tests/fuzz/fuzz_health_nvsmi.cpp tests/fuzz/replay_main.cpp
tests_fuzz_replay_health_nvsmi_LDADD = $(LOOM_HEALTH_LIBS)
TESTS += tests/fuzz/replay_health_nvsmi.sh
check_PROGRAMS += tests/fuzz/replay_health_joblog
tests_fuzz_replay_health_joblog_SOURCES = tests/fuzz/fuzz_health_joblog.cpp tests/fuzz/replay_main.cpp
tests_fuzz_replay_health_joblog_LDADD = $(LOOM_HEALTH_LIBS)
TESTS += tests/fuzz/replay_health_joblog.sh
check_PROGRAMS += tests/fuzz/replay_health_config
tests_fuzz_replay_health_config_SOURCES = tests/fuzz/fuzz_health_config.cpp tests/fuzz/replay_main.cpp
tests_fuzz_replay_health_config_LDADD = $(LOOM_HEALTH_LIBS)
TESTS += tests/fuzz/replay_health_config.sh
check_PROGRAMS += tests/fuzz/replay_health_sysfs
tests_fuzz_replay_health_sysfs_SOURCES = tests/fuzz/fuzz_health_sysfs.cpp tests/fuzz/replay_main.cpp
tests_fuzz_replay_health_sysfs_LDADD = $(LOOM_HEALTH_LIBS)
TESTS += tests/fuzz/replay_health_sysfs.sh

EXTRA_DIST += tests/data/health tests/health

# `loom health`.
tools_loom_SOURCES += tools/loom_health.cpp tools/loom_health_check.cpp tools/loom_health_classify.cpp \
	tools/loom_health_probe.cpp tools/loom_health_netprobe.cpp
