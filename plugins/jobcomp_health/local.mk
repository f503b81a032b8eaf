# jobcomp/health: classify job failures, drain culprits, requeue, failure
# statistics. Needs the configured Slurm source tree (internal API).
if HAVE_SLURM_SRC
slurmplugin_LTLIBRARIES += plugins/jobcomp_health/jobcomp_health.la
plugins_jobcomp_health_jobcomp_health_la_SOURCES = \
	plugins/jobcomp_health/jobcomp_health_plugin.cpp \
	plugins/jobcomp_health/job_record.hpp plugins/jobcomp_health/job_record.cpp \
	plugins/jobcomp_health/jobcomp_api.hpp \
	plugins/common/slurm_internal.hpp \
	plugins/common/slurm_log.hpp plugins/common/slurm_log.cpp
# One adapter per family of Slurm's jobcomp interface (configure picks it).
if SLURM_API_2205
plugins_jobcomp_health_jobcomp_health_la_SOURCES += plugins/jobcomp_health/jobcomp_api_v2205.cpp
endif
if SLURM_API_2411
plugins_jobcomp_health_jobcomp_health_la_SOURCES += plugins/jobcomp_health/jobcomp_api_v2411.cpp
endif
if SLURM_API_2505
plugins_jobcomp_health_jobcomp_health_la_SOURCES += plugins/jobcomp_health/jobcomp_api_v2505.cpp
endif
plugins_jobcomp_health_jobcomp_health_la_CPPFLAGS = $(AM_CPPFLAGS) $(SLURM_SRC_CPPFLAGS) $(SLURM_CPPFLAGS) $(JSONC_CFLAGS)
plugins_jobcomp_health_jobcomp_health_la_CXXFLAGS = $(PLUGIN_CXXFLAGS)
plugins_jobcomp_health_jobcomp_health_la_LDFLAGS = $(PLUGIN_LDFLAGS) \
	-Wl,--version-script=$(srcdir)/plugins/jobcomp_health/jobcomp_health.map
plugins_jobcomp_health_jobcomp_health_la_LIBADD = $(LOOM_HEALTH_LIBS)
EXTRA_plugins_jobcomp_health_jobcomp_health_la_DEPENDENCIES = plugins/jobcomp_health/jobcomp_health.map
endif
EXTRA_DIST += plugins/jobcomp_health/jobcomp_health.map \
	plugins/jobcomp_health/jobcomp_api_v2205.cpp plugins/jobcomp_health/jobcomp_api_v2411.cpp \
	plugins/jobcomp_health/jobcomp_api_v2505.cpp
