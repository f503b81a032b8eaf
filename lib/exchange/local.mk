# lib/exchange: the files, marks and variables loom's processes hand each
# other, one writer and one reader each:
# - the failure statistics (jobcomp/health writes them; spank_ckpt,
#   select/topo and loom sim read them);
# - the spare pool file (select/topo writes it; jobcomp/health and `loom
#   place --spares` read it);
# - the suspect mark on a node (`loom health check --drain` sets it;
#   select/topo and jobcomp/health read it) and the suspect flag file on the
#   node (`loom health check` writes it; spank_ckpt's coordinator reads it);
# - the note in a job's SystemComment (select/topo writes it; jobcomp/health
#   reads it);
# - what a --ckpt job carries to slurmctld, LOOM_CKPT and
#   LOOM_CKPT_MAX_RESTARTS (spank_ckpt in sbatch writes them; jobcomp/health
#   reads them), and the LOOM_CKPT_* environment of its tasks (spank_ckpt
#   writes it; the C++ and Python SDKs read it, both running
#   tests/ckpt/task-env-cases.json);
# - each rank's progress report (the SDKs write it; spank_ckpt's keeper
#   reads it; both run tests/ckpt/progress-cases.json).
# It uses lib/util only, so that a reader links the format and not its
# writer's module.
lib_libloom_exchange_la_SOURCES += \
	lib/exchange/failure_stats.hpp lib/exchange/failure_stats.cpp \
	lib/exchange/progress_report.hpp lib/exchange/progress_report.cpp \
	lib/exchange/spare_file.hpp lib/exchange/spare_file.cpp \
	lib/exchange/suspect_mark.hpp lib/exchange/suspect_mark.cpp \
	lib/exchange/suspect_flag.hpp lib/exchange/suspect_flag.cpp \
	lib/exchange/job_note.hpp lib/exchange/job_note.cpp \
	lib/exchange/ckpt_job_env.hpp lib/exchange/ckpt_job_env.cpp \
	lib/exchange/ckpt_task_env.hpp lib/exchange/ckpt_task_env.cpp

# Unit tests (Check) of the formats tested nowhere else; the task
# environment's cases are run by the Python SDK too.
if HAVE_CHECK
check_PROGRAMS += tests/unit/test_exchange
TESTS += tests/unit/test_exchange
tests_unit_test_exchange_SOURCES = tests/unit/test_exchange.cpp tests/unit/check_main.hpp
check_PROGRAMS += tests/unit/test_exchange_progress
TESTS += tests/unit/test_exchange_progress
tests_unit_test_exchange_progress_SOURCES = tests/unit/test_exchange_progress.cpp tests/unit/check_main.hpp
tests_unit_test_exchange_progress_CPPFLAGS = $(AM_CPPFLAGS) $(CHECK_CFLAGS) $(JSONC_CFLAGS)
tests_unit_test_exchange_progress_LDADD = $(LOOM_EXCHANGE_LIBS) $(JSONC_LIBS) $(CHECK_LIBS)
tests_unit_test_exchange_CPPFLAGS = $(AM_CPPFLAGS) $(CHECK_CFLAGS) $(JSONC_CFLAGS)
tests_unit_test_exchange_LDADD = $(LOOM_EXCHANGE_LIBS) $(JSONC_LIBS) $(CHECK_LIBS)
endif
EXTRA_DIST += tests/ckpt/task-env-cases.json tests/ckpt/progress-cases.json
