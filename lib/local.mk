# libloom: the Slurm-free core, one convenience library per module, so that
# each consumer links what it uses. Modules depend on each other in one
# direction only:
#
#   util  <-  exchange               (the files and marks between loom's processes)
#   util  <-  topo  <-  place        (select/topo, loom place/topo)
#   exchange  <-  place, health      (place: the spare file of a pool)
#   util  <-  health                 (jobcomp/health, loom health)
#   exchange  <-  ckpt               (the SDK, spank_ckpt, loom ckpt: the task environment)
#   place, ckpt, health  <-  sim     (loom sim: the engines themselves, not copies)
#
# A process that reads what another's module writes links exchange, not that
# module: spank_ckpt (exchange, ckpt) and select/topo (place) link no health,
# jobcomp/health (health) no ckpt.
# Only topo links hwloc, libyaml and libibverbs; the SDK (util + ckpt) and the
# SPANK plugins that slurmstepd, sbatch and srun load do not pull them in.
# Link order: a module before the ones it uses ($(LOOM_LIBS) is all of them).
noinst_LTLIBRARIES += lib/libloom_util.la lib/libloom_exchange.la lib/libloom_topo.la lib/libloom_place.la \
	lib/libloom_ckpt.la lib/libloom_health.la lib/libloom_sim.la
LOOM_LIB_CXXFLAGS = $(AM_CXXFLAGS) $(LOOM_VISIBILITY_FLAGS)

lib_libloom_util_la_SOURCES =
lib_libloom_util_la_CPPFLAGS = $(AM_CPPFLAGS) $(JSONC_CFLAGS)
lib_libloom_util_la_CXXFLAGS = $(LOOM_LIB_CXXFLAGS)
lib_libloom_util_la_LIBADD = $(JSONC_LIBS)

lib_libloom_exchange_la_SOURCES =
lib_libloom_exchange_la_CPPFLAGS = $(AM_CPPFLAGS) $(JSONC_CFLAGS)
lib_libloom_exchange_la_CXXFLAGS = $(LOOM_LIB_CXXFLAGS)
lib_libloom_exchange_la_LIBADD = $(JSONC_LIBS)

lib_libloom_topo_la_SOURCES =
lib_libloom_topo_la_CPPFLAGS = $(AM_CPPFLAGS) $(JSONC_CFLAGS) $(HWLOC_CFLAGS) $(YAML_CFLAGS) $(IBVERBS_CFLAGS)
lib_libloom_topo_la_CXXFLAGS = $(LOOM_LIB_CXXFLAGS)
lib_libloom_topo_la_LIBADD = $(JSONC_LIBS) $(HWLOC_LIBS) $(YAML_LIBS) $(IBVERBS_LIBS) $(LIBS)

lib_libloom_place_la_SOURCES =
lib_libloom_place_la_CPPFLAGS = $(AM_CPPFLAGS) $(JSONC_CFLAGS)
lib_libloom_place_la_CXXFLAGS = $(LOOM_LIB_CXXFLAGS)
lib_libloom_place_la_LIBADD = $(JSONC_LIBS)

lib_libloom_ckpt_la_SOURCES =
lib_libloom_ckpt_la_CPPFLAGS = $(AM_CPPFLAGS) $(JSONC_CFLAGS) $(CRYPTO_CFLAGS)
lib_libloom_ckpt_la_CXXFLAGS = $(LOOM_LIB_CXXFLAGS)
lib_libloom_ckpt_la_LIBADD = $(JSONC_LIBS) $(CRYPTO_LIBS)

lib_libloom_health_la_SOURCES =
lib_libloom_health_la_CPPFLAGS = $(AM_CPPFLAGS) $(JSONC_CFLAGS)
lib_libloom_health_la_CXXFLAGS = $(LOOM_LIB_CXXFLAGS)
lib_libloom_health_la_LIBADD = $(JSONC_LIBS) $(LIBS)

lib_libloom_sim_la_SOURCES =
lib_libloom_sim_la_CPPFLAGS = $(AM_CPPFLAGS) $(JSONC_CFLAGS)
lib_libloom_sim_la_CXXFLAGS = $(LOOM_LIB_CXXFLAGS)
lib_libloom_sim_la_LIBADD =

LOOM_UTIL_LIBS = lib/libloom_util.la
LOOM_EXCHANGE_LIBS = lib/libloom_exchange.la $(LOOM_UTIL_LIBS)
LOOM_TOPO_LIBS = lib/libloom_topo.la $(LOOM_UTIL_LIBS)
LOOM_PLACE_LIBS = lib/libloom_place.la lib/libloom_topo.la $(LOOM_EXCHANGE_LIBS)
LOOM_CKPT_LIBS = lib/libloom_ckpt.la $(LOOM_EXCHANGE_LIBS)
LOOM_HEALTH_LIBS = lib/libloom_health.la $(LOOM_EXCHANGE_LIBS)
LOOM_SIM_LIBS = lib/libloom_sim.la lib/libloom_health.la lib/libloom_place.la lib/libloom_topo.la lib/libloom_ckpt.la \
	$(LOOM_EXCHANGE_LIBS)
LOOM_LIBS = lib/libloom_sim.la lib/libloom_health.la lib/libloom_place.la lib/libloom_topo.la lib/libloom_ckpt.la \
	$(LOOM_EXCHANGE_LIBS)

include lib/util/local.mk
include lib/exchange/local.mk
include lib/topo/local.mk
include lib/place/local.mk
include lib/ckpt/local.mk
include lib/health/local.mk
include lib/sim/local.mk
