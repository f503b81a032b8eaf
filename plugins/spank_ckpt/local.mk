# spank_ckpt: checkpoint requests, requeue and restore (SPANK; needs only <slurm/spank.h>).
slurmplugin_LTLIBRARIES += plugins/spank_ckpt/spank_ckpt.la
plugins_spank_ckpt_spank_ckpt_la_SOURCES = \
	plugins/spank_ckpt/spank_ckpt_plugin.cpp \
	plugins/spank_ckpt/spank_options.hpp plugins/spank_ckpt/spank_options.cpp \
	plugins/spank_ckpt/job.hpp plugins/spank_ckpt/job.cpp \
	plugins/spank_ckpt/signal_tasks.hpp plugins/spank_ckpt/signal_tasks.cpp \
	plugins/spank_ckpt/slurm_api.hpp plugins/spank_ckpt/slurm_api.cpp \
	plugins/spank_ckpt/standby_keeper.hpp plugins/spank_ckpt/standby_keeper.cpp \
	plugins/spank_ckpt/standby_calls.hpp plugins/spank_ckpt/standby_calls.cpp \
	plugins/spank_ckpt/standby_judge.cpp plugins/spank_ckpt/standby_recover.cpp \
	plugins/spank_ckpt/standby_setup.hpp plugins/spank_ckpt/standby_setup.cpp \
	plugins/spank_ckpt/standby_srun.hpp plugins/spank_ckpt/standby_srun.cpp \
	plugins/common/slurm_log.hpp plugins/common/slurm_log.cpp plugins/common/spank_guard.hpp
# Where the plugin finds loom-ckpt-helper (the site's helper= argument overrides it).
SPANK_CKPT_HELPER_CPPFLAGS = -DLOOM_CKPT_HELPER='"$(pkglibexecdir)/loom-ckpt-helper"' \
	-DLOOM_PROGRAM='"$(bindir)/loom"'
plugins_spank_ckpt_spank_ckpt_la_CPPFLAGS = $(AM_CPPFLAGS) $(SLURM_CPPFLAGS) $(JSONC_CFLAGS) \
	$(SPANK_CKPT_HELPER_CPPFLAGS)
plugins_spank_ckpt_spank_ckpt_la_CXXFLAGS = $(PLUGIN_CXXFLAGS)
plugins_spank_ckpt_spank_ckpt_la_LDFLAGS = $(PLUGIN_LDFLAGS) \
	-Wl,--version-script=$(srcdir)/plugins/spank_ckpt/spank_ckpt.map
# exchange: the failure statistics (interval=auto), not the health module that writes them.
plugins_spank_ckpt_spank_ckpt_la_LIBADD = $(LOOM_CKPT_LIBS)
EXTRA_plugins_spank_ckpt_spank_ckpt_la_DEPENDENCIES = plugins/spank_ckpt/spank_ckpt.map
EXTRA_DIST += plugins/spank_ckpt/spank_ckpt.map

# loom-ckpt-helper: the work in the job user's checkpoint directory, as that
# user. slurmstepd is multi-threaded, so its forked child only executes this
# program (ckpt::run_helper); the helper drops root itself. Not set-id.
pkglibexec_PROGRAMS = plugins/spank_ckpt/loom-ckpt-helper
plugins_spank_ckpt_loom_ckpt_helper_SOURCES = plugins/spank_ckpt/ckpt_helper.cpp
plugins_spank_ckpt_loom_ckpt_helper_CPPFLAGS = $(AM_CPPFLAGS) $(JSONC_CFLAGS)
plugins_spank_ckpt_loom_ckpt_helper_LDADD = $(LOOM_CKPT_LIBS)

# The helper run as the test's user, and prepare_job() executing it (the
# job.cpp of the plugin, with Slurm's client API looked up at run time).
if HAVE_CHECK
check_PROGRAMS += tests/unit/test_ckpt_helper
TESTS += tests/unit/test_ckpt_helper
tests_unit_test_ckpt_helper_SOURCES = tests/unit/test_ckpt_helper.cpp tests/unit/check_main.hpp \
	tests/unit/ckpt_helper_fixture.hpp tests/unit/test_ckpt_helper_credentials.cpp \
	plugins/spank_ckpt/job.hpp plugins/spank_ckpt/job.cpp \
	plugins/spank_ckpt/signal_tasks.hpp plugins/spank_ckpt/signal_tasks.cpp \
	plugins/spank_ckpt/slurm_api.hpp plugins/spank_ckpt/slurm_api.cpp
tests_unit_test_ckpt_helper_CPPFLAGS = $(AM_CPPFLAGS) $(CHECK_CFLAGS) $(SLURM_CPPFLAGS) $(JSONC_CFLAGS) \
	$(SPANK_CKPT_HELPER_CPPFLAGS)
tests_unit_test_ckpt_helper_LDADD = $(LOOM_CKPT_LIBS) $(CHECK_LIBS)
endif

# How the coordinator asks for a checkpoint: the request file through the
# helper, the signal to the batch step's catchers but srun, the log.
if HAVE_CHECK
check_PROGRAMS += tests/unit/test_spank_ckpt_ask
TESTS += tests/unit/test_spank_ckpt_ask
tests_unit_test_spank_ckpt_ask_SOURCES = tests/unit/test_spank_ckpt_ask.cpp tests/unit/check_main.hpp \
	plugins/spank_ckpt/job.hpp plugins/spank_ckpt/job.cpp \
	plugins/spank_ckpt/signal_tasks.hpp plugins/spank_ckpt/signal_tasks.cpp \
	plugins/spank_ckpt/slurm_api.hpp plugins/spank_ckpt/slurm_api.cpp
tests_unit_test_spank_ckpt_ask_CPPFLAGS = $(AM_CPPFLAGS) $(CHECK_CFLAGS) $(SLURM_CPPFLAGS) $(JSONC_CFLAGS) \
	$(SPANK_CKPT_HELPER_CPPFLAGS)
tests_unit_test_spank_ckpt_ask_LDADD = $(LOOM_CKPT_LIBS) $(CHECK_LIBS)
endif
