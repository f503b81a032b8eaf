# Man pages.
dist_man_MANS += doc/loom.1 doc/loom-topo.conf.5 doc/loom-sim.1
# The placement plugins: select/topo and spank_place.
dist_man_MANS += doc/select_topo.8 doc/spank_place.8
include doc/topo.mk
include doc/place.mk
include doc/ckpt.mk
include doc/health.mk
EXTRA_DIST += doc/slurm-topology-plugins.md doc/slurm-placement-options.md doc/ARCHITECTURE.md
