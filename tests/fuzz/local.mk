# Fuzz targets (tests/fuzz/fuzz_*.cpp) are built with clang's libFuzzer by
# tests/fuzz/run.sh; `make check` replays each target's seed corpus through the
# same entry point built with the normal compiler (tests/fuzz/replay_main.cpp).
# Files are listed one by one: a directory in EXTRA_DIST would also pick up
# the build tree's objects of the same name.
EXTRA_DIST += tests/fuzz/run.sh tests/fuzz/replay_main.cpp tests/fuzz/corpus \
	tests/fuzz/replay_ckpt_manifest.sh \
	tests/fuzz/replay_health_config.sh tests/fuzz/replay_health_joblog.sh \
	tests/fuzz/replay_health_kmsg.sh tests/fuzz/replay_health_nvsmi.sh \
	tests/fuzz/replay_health_sysfs.sh tests/fuzz/sysfs_tree.hpp \
	tests/fuzz/replay_topo_cluster_json.sh tests/fuzz/replay_topo_ibnetdiscover.sh \
	tests/fuzz/replay_topo_topology_conf.sh tests/fuzz/replay_topo_xml.sh
