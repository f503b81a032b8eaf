# lib/ckpt: the checkpoint protocol (layout, manifest, commit, catalog,
# verification, retention, interval policy, restart budget, coordinator,
# async writer) and the job options of spank_ckpt.
lib_libloom_ckpt_la_SOURCES += \
	lib/ckpt/sha256.hpp lib/ckpt/sha256.cpp \
	lib/ckpt/layout.hpp lib/ckpt/layout.cpp \
	lib/ckpt/manifest.hpp lib/ckpt/manifest.cpp \
	lib/ckpt/manifest_ranks.hpp lib/ckpt/manifest_ranks.cpp \
	lib/ckpt/commit.hpp lib/ckpt/commit.cpp \
	lib/ckpt/commit_ranks.hpp lib/ckpt/commit_ranks.cpp \
	lib/ckpt/ranks.hpp lib/ckpt/ranks.cpp \
	lib/ckpt/catalog.hpp lib/ckpt/catalog.cpp lib/ckpt/catalog_ranks.cpp \
	lib/ckpt/policy.hpp lib/ckpt/policy.cpp lib/ckpt/standby.hpp lib/ckpt/standby.cpp \
	lib/ckpt/standby_plan.hpp lib/ckpt/standby_plan.cpp \
	lib/ckpt/progress.hpp lib/ckpt/progress.cpp \
	lib/ckpt/options.hpp lib/ckpt/options.cpp \
	lib/ckpt/safe_dir.hpp lib/ckpt/safe_dir.cpp \
	lib/ckpt/restart.hpp lib/ckpt/restart.cpp \
	lib/ckpt/coordinator.hpp lib/ckpt/coordinator.cpp \
	lib/ckpt/async_writer.hpp lib/ckpt/async_writer.cpp
# The request to checkpoint (.loom-request, protocol 7.5).
lib_libloom_ckpt_la_SOURCES += lib/ckpt/request.hpp lib/ckpt/request.cpp
# One decision for every rank: rank 0's stamped step, an all-reduce hook (7.5).
lib_libloom_ckpt_la_SOURCES += lib/ckpt/agree.hpp lib/ckpt/agree.cpp
# The job's checkpoint note in its AdminComment (spank_ckpt writes, loom ckpt reads).
lib_libloom_ckpt_la_SOURCES += lib/ckpt/job_note.hpp lib/ckpt/job_note.cpp
# The environment of a --ckpt job's tasks (spank_ckpt writes, the SDKs read).

if HAVE_CHECK
check_PROGRAMS += tests/unit/test_ckpt_protocol tests/unit/test_ckpt_policy tests/unit/test_ckpt_options tests/unit/test_ckpt_standby \
	tests/unit/test_ckpt_progress tests/unit/test_ckpt_standby_plan
TESTS += tests/unit/test_ckpt_protocol tests/unit/test_ckpt_policy tests/unit/test_ckpt_options tests/unit/test_ckpt_standby \
	tests/unit/test_ckpt_progress tests/unit/test_ckpt_standby_plan
tests_unit_test_ckpt_protocol_SOURCES = tests/unit/test_ckpt_protocol.cpp tests/unit/check_main.hpp \
	tests/unit/ckpt_protocol_fixture.hpp tests/unit/test_ckpt_async_writer.cpp tests/unit/test_ckpt_job_dir.cpp
tests_unit_test_ckpt_protocol_CPPFLAGS = $(AM_CPPFLAGS) $(CHECK_CFLAGS) $(JSONC_CFLAGS)
tests_unit_test_ckpt_protocol_LDADD = $(LOOM_CKPT_LIBS) $(CHECK_LIBS)
tests_unit_test_ckpt_policy_SOURCES = tests/unit/test_ckpt_policy.cpp tests/unit/check_main.hpp
tests_unit_test_ckpt_policy_CPPFLAGS = $(AM_CPPFLAGS) $(CHECK_CFLAGS) $(JSONC_CFLAGS)
tests_unit_test_ckpt_policy_LDADD = lib/libloom_exchange.la $(LOOM_CKPT_LIBS) $(CHECK_LIBS)
tests_unit_test_ckpt_standby_SOURCES = tests/unit/test_ckpt_standby.cpp tests/unit/check_main.hpp
tests_unit_test_ckpt_standby_CPPFLAGS = $(AM_CPPFLAGS) $(CHECK_CFLAGS)
tests_unit_test_ckpt_standby_LDADD = $(LOOM_CKPT_LIBS) $(CHECK_LIBS)
tests_unit_test_ckpt_standby_plan_SOURCES = tests/unit/test_ckpt_standby_plan.cpp tests/unit/check_main.hpp
tests_unit_test_ckpt_standby_plan_CPPFLAGS = $(AM_CPPFLAGS) $(CHECK_CFLAGS)
tests_unit_test_ckpt_standby_plan_LDADD = $(LOOM_CKPT_LIBS) $(CHECK_LIBS)
tests_unit_test_ckpt_progress_SOURCES = tests/unit/test_ckpt_progress.cpp tests/unit/check_main.hpp
tests_unit_test_ckpt_progress_CPPFLAGS = $(AM_CPPFLAGS) $(CHECK_CFLAGS)
tests_unit_test_ckpt_progress_LDADD = $(LOOM_CKPT_LIBS) $(CHECK_LIBS)
tests_unit_test_ckpt_options_SOURCES = tests/unit/test_ckpt_options.cpp tests/unit/check_main.hpp
tests_unit_test_ckpt_options_CPPFLAGS = $(AM_CPPFLAGS) $(CHECK_CFLAGS) $(JSONC_CFLAGS)
tests_unit_test_ckpt_options_LDADD = $(LOOM_CKPT_LIBS) $(CHECK_LIBS)
endif

if HAVE_CHECK
check_PROGRAMS += tests/unit/test_ckpt_job_note
TESTS += tests/unit/test_ckpt_job_note
tests_unit_test_ckpt_job_note_SOURCES = tests/unit/test_ckpt_job_note.cpp tests/unit/check_main.hpp
tests_unit_test_ckpt_job_note_CPPFLAGS = $(AM_CPPFLAGS) $(CHECK_CFLAGS)
tests_unit_test_ckpt_job_note_LDADD = $(LOOM_CKPT_LIBS) $(CHECK_LIBS)
check_PROGRAMS += tests/unit/test_ckpt_request
TESTS += tests/unit/test_ckpt_request
tests_unit_test_ckpt_request_SOURCES = tests/unit/test_ckpt_request.cpp tests/unit/check_main.hpp
tests_unit_test_ckpt_request_CPPFLAGS = $(AM_CPPFLAGS) $(CHECK_CFLAGS) $(JSONC_CFLAGS)
tests_unit_test_ckpt_request_LDADD = $(LOOM_CKPT_LIBS) $(CHECK_LIBS)
endif

# Replay of the manifest fuzz target's seed corpus (tests/fuzz/run.sh fuzzes it).
check_PROGRAMS += tests/fuzz/replay_ckpt_manifest
tests_fuzz_replay_ckpt_manifest_SOURCES = tests/fuzz/fuzz_ckpt_manifest.cpp tests/fuzz/replay_main.cpp
tests_fuzz_replay_ckpt_manifest_CPPFLAGS = $(AM_CPPFLAGS) $(JSONC_CFLAGS)
tests_fuzz_replay_ckpt_manifest_LDADD = $(LOOM_CKPT_LIBS)
TESTS += tests/fuzz/replay_ckpt_manifest.sh
