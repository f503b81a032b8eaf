# spank_ckpt: transparent checkpoint, requeue and restore (SPANK; needs only <slurm/spank.h>).
slurmplugin_LTLIBRARIES += plugins/spank_ckpt/spank_ckpt.la
plugins_spank_ckpt_spank_ckpt_la_SOURCES = \
	plugins/spank_ckpt/spank_ckpt_plugin.cpp \
	plugins/spank_ckpt/job.hpp plugins/spank_ckpt/job.cpp \
	plugins/spank_ckpt/signal_tasks.hpp plugins/spank_ckpt/signal_tasks.cpp \
	plugins/spank_ckpt/slurm_api.hpp plugins/spank_ckpt/slurm_api.cpp \
	plugins/common/slurm_log.hpp plugins/common/slurm_log.cpp
plugins_spank_ckpt_spank_ckpt_la_CPPFLAGS = $(AM_CPPFLAGS) $(SLURM_CPPFLAGS) $(JSONC_CFLAGS)
plugins_spank_ckpt_spank_ckpt_la_CXXFLAGS = $(PLUGIN_CXXFLAGS)
plugins_spank_ckpt_spank_ckpt_la_LDFLAGS = $(PLUGIN_LDFLAGS) \
	-Wl,--version-script=$(srcdir)/plugins/spank_ckpt/spank_ckpt.map
plugins_spank_ckpt_spank_ckpt_la_LIBADD = lib/libloom.la
EXTRA_plugins_spank_ckpt_spank_ckpt_la_DEPENDENCIES = plugins/spank_ckpt/spank_ckpt.map
EXTRA_DIST += plugins/spank_ckpt/spank_ckpt.map
