# libloom: the Slurm-free core, linked into the plugins, the loom command and the tests.
noinst_LTLIBRARIES += lib/libloom.la
lib_libloom_la_SOURCES =
lib_libloom_la_CPPFLAGS = $(AM_CPPFLAGS) $(JSONC_CFLAGS) $(HWLOC_CFLAGS) $(YAML_CFLAGS) $(IBVERBS_CFLAGS)
lib_libloom_la_CXXFLAGS = $(AM_CXXFLAGS) $(LOOM_VISIBILITY_FLAGS)
lib_libloom_la_LIBADD = $(JSONC_LIBS) $(HWLOC_LIBS) $(YAML_LIBS) $(IBVERBS_LIBS) $(LIBS)

include lib/util/local.mk
include lib/topo/local.mk
include lib/place/local.mk
include lib/ckpt/local.mk
include lib/health/local.mk
