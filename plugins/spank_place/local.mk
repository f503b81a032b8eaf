# spank_place: --comm and --locality for sbatch/salloc/srun, and the rank order in
# each step (public SPANK API only). The fabric reading is loom_fabric.so, opened by
# spank_place in slurmstepd only: the clients that load every SPANK plugin never
# load hwloc, libyaml or json-c (fabric_module.hpp, tests/plugins/link_weight.sh).
slurmplugin_LTLIBRARIES += plugins/spank_place/spank_place.la
plugins_spank_place_spank_place_la_SOURCES = \
	plugins/spank_place/spank_place_plugin.cpp \
	plugins/spank_place/step_env.hpp plugins/spank_place/step_env.cpp \
	plugins/common/place_hints.hpp plugins/common/place_hints.cpp plugins/common/spank_guard.hpp \
	plugins/spank_place/fabric_module.hpp \
	lib/place/hints.hpp lib/place/hints.cpp lib/place/tiers.hpp lib/place/tiers.cpp
# loom-topo.conf's one reader (the tiers at submit): the whole file, as
# slurmctld reads it, without the fabric model.
plugins_spank_place_spank_place_la_SOURCES += lib/place/topo_conf.hpp lib/place/topo_conf.cpp lib/place/site_args.hpp lib/place/site_args.cpp \
	lib/place/spare_spec.hpp lib/place/spare_spec.cpp
# The few lib/util sources it needs, not libloom_util (which brings json-c).
plugins_spank_place_spank_place_la_SOURCES += lib/util/config.hpp lib/util/config.cpp lib/util/config_values.cpp \
	lib/util/fs.hpp lib/util/fs.cpp lib/util/log.hpp lib/util/log.cpp
plugins_spank_place_spank_place_la_CPPFLAGS = $(AM_CPPFLAGS) $(SLURM_CPPFLAGS)
plugins_spank_place_spank_place_la_CXXFLAGS = $(PLUGIN_CXXFLAGS)
plugins_spank_place_spank_place_la_LDFLAGS = $(PLUGIN_LDFLAGS) \
	-Wl,--version-script=$(srcdir)/plugins/spank_place/spank_place.map
EXTRA_plugins_spank_place_spank_place_la_DEPENDENCIES = plugins/spank_place/spank_place.map
EXTRA_DIST += plugins/spank_place/spank_place.map

slurmplugin_LTLIBRARIES += plugins/spank_place/loom_fabric.la
plugins_spank_place_loom_fabric_la_SOURCES = \
	plugins/spank_place/fabric_module.hpp plugins/spank_place/fabric_module.cpp
plugins_spank_place_loom_fabric_la_LIBADD = $(LOOM_PLACE_LIBS)
plugins_spank_place_loom_fabric_la_CXXFLAGS = $(PLUGIN_CXXFLAGS)
plugins_spank_place_loom_fabric_la_LDFLAGS = $(PLUGIN_LDFLAGS) \
	-Wl,--version-script=$(srcdir)/plugins/spank_place/loom_fabric.map
EXTRA_plugins_spank_place_loom_fabric_la_DEPENDENCIES = plugins/spank_place/loom_fabric.map
EXTRA_DIST += plugins/spank_place/loom_fabric.map

if HAVE_CHECK
check_PROGRAMS += tests/unit/test_fabric_module
TESTS += tests/unit/test_fabric_module
tests_unit_test_fabric_module_SOURCES = tests/unit/test_fabric_module.cpp tests/unit/check_main.hpp \
	plugins/spank_place/fabric_module.hpp
tests_unit_test_fabric_module_CPPFLAGS = $(AM_CPPFLAGS) $(CHECK_CFLAGS)
tests_unit_test_fabric_module_LDADD = $(LOOM_UTIL_LIBS) $(CHECK_LIBS)
EXTRA_tests_unit_test_fabric_module_DEPENDENCIES = plugins/spank_place/loom_fabric.la
endif
