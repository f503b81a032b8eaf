# select/topo: topology-aware gang placement over select/cons_tres.
if HAVE_SLURM_SRC
slurmplugin_LTLIBRARIES += plugins/select_topo/select_topo.la
plugins_select_topo_select_topo_la_SOURCES = \
	plugins/select_topo/select_topo_plugin.cpp \
	plugins/select_topo/select_api.hpp \
	plugins/common/slurm_internal.hpp \
	plugins/select_topo/cons_tres.hpp plugins/select_topo/cons_tres.cpp \
	plugins/select_topo/placer.hpp plugins/select_topo/placer.cpp \
	plugins/select_topo/snapshot.hpp plugins/select_topo/snapshot.cpp \
	plugins/select_topo/job_test.hpp plugins/select_topo/job_test.cpp \
	plugins/select_topo/job_test_parts.hpp plugins/select_topo/job_test_request.cpp \
	plugins/select_topo/job_test_result.cpp \
	plugins/select_topo/explain.hpp plugins/select_topo/explain.cpp \
	plugins/select_topo/history.hpp plugins/select_topo/history.cpp \
	plugins/select_topo/slurm_view.hpp plugins/select_topo/slurm_view.cpp \
	plugins/select_topo/value_wait.hpp plugins/select_topo/value_wait.cpp \
	plugins/common/place_hints.hpp plugins/common/place_hints.cpp \
	plugins/common/slurm_log.hpp plugins/common/slurm_log.cpp
# One adapter per family of Slurm's select interface (configure picks it).
# From 25.05 on, the same plugin is also installed as select/topo_cons_tres:
# Slurm's core tests SelectType for the word "cons_tres" before it allows
# dynamic nodes, MaxNodeCount and per-node GRES counts that differ
# (loom-topo.conf(5), RELEASES in the README).
if SLURM_API_2205
plugins_select_topo_select_topo_la_SOURCES += plugins/select_topo/select_api_v2205.cpp
endif
if SLURM_API_2411
plugins_select_topo_select_topo_la_SOURCES += plugins/select_topo/select_api_v2411.cpp
endif
if SLURM_API_2505
plugins_select_topo_select_topo_la_SOURCES += plugins/select_topo/select_api_v2505.cpp
SELECT_TOPO_ALIAS_INSTALL = ln -sf select_topo.so "$(DESTDIR)$(slurmplugindir)/select_topo_cons_tres.so"
all-local: plugins/select_topo/.libs/select_topo_cons_tres.so
plugins/select_topo/.libs/select_topo_cons_tres.so: plugins/select_topo/select_topo.la
	ln -sf select_topo.so $@
else
SELECT_TOPO_ALIAS_INSTALL = :
endif
plugins_select_topo_select_topo_la_CPPFLAGS = $(AM_CPPFLAGS) $(SLURM_SRC_CPPFLAGS) $(SLURM_CPPFLAGS)
plugins_select_topo_select_topo_la_CXXFLAGS = $(PLUGIN_CXXFLAGS)
plugins_select_topo_select_topo_la_LDFLAGS = $(PLUGIN_LDFLAGS) \
	-Wl,--version-script=$(srcdir)/plugins/select_topo/select_topo.map
# place, topo, exchange (failure statistics, suspect marks, the spare file), util: no health.
plugins_select_topo_select_topo_la_LIBADD = $(LOOM_PLACE_LIBS)
EXTRA_plugins_select_topo_select_topo_la_DEPENDENCIES = plugins/select_topo/select_topo.map
endif
EXTRA_DIST += plugins/select_topo/select_topo.map \
	plugins/select_topo/select_api_v2205.cpp plugins/select_topo/select_api_v2411.cpp \
	plugins/select_topo/select_api_v2505.cpp
