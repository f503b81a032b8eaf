# spank_place: --comm and --locality for sbatch/salloc/srun, and the rank order in
# each step (public SPANK API only; the fabric as select/topo's Slurm-free loader reads it).
slurmplugin_LTLIBRARIES += plugins/spank_place/spank_place.la
plugins_spank_place_spank_place_la_SOURCES = \
	plugins/spank_place/spank_place_plugin.cpp \
	plugins/common/place_hints.hpp plugins/common/place_hints.cpp \
	plugins/select_topo/fabric.hpp plugins/select_topo/fabric.cpp \
	plugins/select_topo/config.hpp plugins/select_topo/config.cpp
plugins_spank_place_spank_place_la_LIBADD = $(LOOM_PLACE_LIBS)
plugins_spank_place_spank_place_la_CPPFLAGS = $(AM_CPPFLAGS) $(SLURM_CPPFLAGS)
plugins_spank_place_spank_place_la_CXXFLAGS = $(PLUGIN_CXXFLAGS)
plugins_spank_place_spank_place_la_LDFLAGS = $(PLUGIN_LDFLAGS) \
	-Wl,--version-script=$(srcdir)/plugins/spank_place/spank_place.map
EXTRA_plugins_spank_place_spank_place_la_DEPENDENCIES = plugins/spank_place/spank_place.map
EXTRA_DIST += plugins/spank_place/spank_place.map
