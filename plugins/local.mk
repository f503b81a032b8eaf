# Slurm plugins. select/topo and jobcomp/health use Slurm's internal API and
# need a configured Slurm source tree (--with-slurm-src); spank_ckpt needs
# only the public <slurm/spank.h>.
PLUGIN_LDFLAGS = -module -avoid-version -shared -no-undefined-check $(LOOM_SAN_FLAGS) $(PTHREAD_LIBS)
PLUGIN_CXXFLAGS = $(AM_CXXFLAGS) $(LOOM_VISIBILITY_FLAGS)

include plugins/select_topo/local.mk
include plugins/spank_ckpt/local.mk
include plugins/spank_place/local.mk
include plugins/jobcomp_health/local.mk
include plugins/job_submit_loom/local.mk

# Plugin-load tier, static half: undefined symbols resolvable inside Slurm,
# exports exactly what Slurm looks up.
TESTS += tests/plugins/check_symbols.sh tests/plugins/link_weight.sh
EXTRA_DIST += tests/plugins/check_symbols.sh tests/plugins/link_weight.sh
