# spank_place: --comm and --locality for sbatch/salloc/srun (public SPANK API only).
slurmplugin_LTLIBRARIES += plugins/spank_place/spank_place.la
plugins_spank_place_spank_place_la_SOURCES = \
	plugins/spank_place/spank_place_plugin.cpp \
	plugins/common/place_hints.hpp plugins/common/place_hints.cpp \
	lib/place/hints.hpp lib/place/hints.cpp
plugins_spank_place_spank_place_la_CPPFLAGS = $(AM_CPPFLAGS) $(SLURM_CPPFLAGS)
plugins_spank_place_spank_place_la_CXXFLAGS = $(PLUGIN_CXXFLAGS)
plugins_spank_place_spank_place_la_LDFLAGS = $(PLUGIN_LDFLAGS) \
	-Wl,--version-script=$(srcdir)/plugins/spank_place/spank_place.map
EXTRA_plugins_spank_place_spank_place_la_DEPENDENCIES = plugins/spank_place/spank_place.map
EXTRA_DIST += plugins/spank_place/spank_place.map
