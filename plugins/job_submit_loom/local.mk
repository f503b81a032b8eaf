# job_submit/loom: --ckpt-standby's nodes added to the request. Needs the
# configured Slurm source tree (internal API: slurm_conf, env arrays).
if HAVE_SLURM_SRC
slurmplugin_LTLIBRARIES += plugins/job_submit_loom/job_submit_loom.la
plugins_job_submit_loom_job_submit_loom_la_SOURCES = \
	plugins/job_submit_loom/job_submit_loom_plugin.cpp plugins/common/slurm_internal.hpp
plugins_job_submit_loom_job_submit_loom_la_CPPFLAGS = $(AM_CPPFLAGS) $(SLURM_SRC_CPPFLAGS) $(SLURM_CPPFLAGS) \
	$(JSONC_CFLAGS)
plugins_job_submit_loom_job_submit_loom_la_CXXFLAGS = $(PLUGIN_CXXFLAGS)
plugins_job_submit_loom_job_submit_loom_la_LDFLAGS = $(PLUGIN_LDFLAGS) \
	-Wl,--version-script=$(srcdir)/plugins/job_submit_loom/job_submit_loom.map
plugins_job_submit_loom_job_submit_loom_la_LIBADD = $(LOOM_CKPT_LIBS)
EXTRA_plugins_job_submit_loom_job_submit_loom_la_DEPENDENCIES = plugins/job_submit_loom/job_submit_loom.map
endif
EXTRA_DIST += plugins/job_submit_loom/job_submit_loom.map
