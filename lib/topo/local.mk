# lib/topo: the fabric topology model, its formats and node discovery.
lib_libloom_topo_la_SOURCES += \
	lib/topo/model.hpp lib/topo/model.cpp \
	lib/topo/build.hpp lib/topo/build.cpp lib/topo/build_nodes.hpp lib/topo/build_nodes.cpp \
	lib/topo/spec.cpp lib/topo/try.hpp \
	lib/topo/cluster_json.hpp lib/topo/json_read.cpp lib/topo/json_write.cpp \
	lib/topo/slurm_conf.hpp lib/topo/slurm_conf.cpp lib/topo/topology_tree.cpp lib/topo/topology_block.cpp \
	lib/topo/topology_yaml.cpp \
	lib/topo/ib_graph.hpp lib/topo/ibnetdiscover.hpp lib/topo/ibnetdiscover.cpp \
	lib/topo/ib_fabric.cpp lib/topo/ib_domains.cpp \
	lib/topo/xml.hpp lib/topo/xml.cpp lib/topo/nccl_xml.hpp lib/topo/nccl_xml.cpp \
	lib/topo/nccl_env.hpp lib/topo/nccl_env.cpp \
	lib/topo/discover.hpp lib/topo/discover.cpp lib/topo/discover_hwloc.cpp lib/topo/discover_nvml.cpp \
	lib/topo/formats.hpp lib/topo/formats.cpp lib/topo/check.hpp lib/topo/check.cpp \
	lib/topo/hwloc_xml.hpp lib/topo/hwloc_xml.cpp \
	lib/topo/net_probe.hpp lib/topo/net_probe.cpp

# The `loom topo` sources are added in bench/topo.mk: lib/local.mk is included
# before tools/local.mk defines tools_loom_SOURCES.

if HAVE_CHECK
check_PROGRAMS += tests/unit/test_net_probe
TESTS += tests/unit/test_net_probe
tests_unit_test_net_probe_SOURCES = tests/unit/test_net_probe.cpp tests/unit/check_main.hpp
tests_unit_test_net_probe_CPPFLAGS = $(AM_CPPFLAGS) $(CHECK_CFLAGS)
tests_unit_test_net_probe_LDADD = $(LOOM_TOPO_LIBS) $(CHECK_LIBS)
endif

if HAVE_CHECK
check_PROGRAMS += tests/unit/test_topo_model
TESTS += tests/unit/test_topo_model
tests_unit_test_topo_model_SOURCES = tests/unit/test_topo_model.cpp tests/unit/check_main.hpp
tests_unit_test_topo_model_CPPFLAGS = $(AM_CPPFLAGS) $(CHECK_CFLAGS)
tests_unit_test_topo_model_LDADD = $(LOOM_TOPO_LIBS) $(CHECK_LIBS)
endif

if HAVE_CHECK
check_PROGRAMS += tests/unit/test_topo_formats
TESTS += tests/unit/test_topo_formats
tests_unit_test_topo_formats_SOURCES = tests/unit/test_topo_formats.cpp tests/unit/check_main.hpp \
	tests/unit/topo_formats_fixture.hpp tests/unit/test_topo_node_formats.cpp tests/unit/test_topo_slurm_files.cpp
tests_unit_test_topo_formats_CPPFLAGS = $(AM_CPPFLAGS) $(CHECK_CFLAGS)
tests_unit_test_topo_formats_LDADD = $(LOOM_TOPO_LIBS) $(CHECK_LIBS)
endif

# Fuzz targets (tests/fuzz/run.sh) and their seed-corpus replays for make check.
check_PROGRAMS += tests/fuzz/replay_topo_cluster_json
tests_fuzz_replay_topo_cluster_json_SOURCES = tests/fuzz/fuzz_topo_cluster_json.cpp tests/fuzz/replay_main.cpp
tests_fuzz_replay_topo_cluster_json_LDADD = $(LOOM_TOPO_LIBS)
TESTS += tests/fuzz/replay_topo_cluster_json.sh
check_PROGRAMS += tests/fuzz/replay_topo_ibnetdiscover
tests_fuzz_replay_topo_ibnetdiscover_SOURCES = tests/fuzz/fuzz_topo_ibnetdiscover.cpp tests/fuzz/replay_main.cpp
tests_fuzz_replay_topo_ibnetdiscover_LDADD = $(LOOM_TOPO_LIBS)
TESTS += tests/fuzz/replay_topo_ibnetdiscover.sh
check_PROGRAMS += tests/fuzz/replay_topo_topology_conf
tests_fuzz_replay_topo_topology_conf_SOURCES = tests/fuzz/fuzz_topo_topology_conf.cpp tests/fuzz/replay_main.cpp
tests_fuzz_replay_topo_topology_conf_LDADD = $(LOOM_TOPO_LIBS)
TESTS += tests/fuzz/replay_topo_topology_conf.sh
check_PROGRAMS += tests/fuzz/replay_topo_xml
tests_fuzz_replay_topo_xml_SOURCES = tests/fuzz/fuzz_topo_xml.cpp tests/fuzz/replay_main.cpp
tests_fuzz_replay_topo_xml_LDADD = $(LOOM_TOPO_LIBS)
TESTS += tests/fuzz/replay_topo_xml.sh

# Recorded data the topology tests read.
EXTRA_DIST += tests/data/topology

# `loom topo`.
tools_loom_SOURCES += tools/loom_topo.cpp tools/loom_topo_check.cpp tools/loom_topo_args.hpp tools/loom_topo_args.cpp
