// The topology format tests' data: a file of tests/data/topology as text;
// and the test cases test_topo_formats's other sources give its suite.
// Include after check_main.hpp.
#pragma once

#include "lib/util/fs.hpp"

#include <string>

inline std::string data_text(const char *name)
{
	auto t = loom::read_file(loom::test::data(std::string("topology/") + name));
	ck_assert_msg(t.has_value(), "%s", t ? "" : t.error().str().c_str());
	return *t;
}

// A node's own descriptions: hwloc and NCCL XML, recorded sysfs
// (test_topo_node_formats.cpp).
TCase *topo_node_format_tests();
// Slurm's topology files: topology.conf, block, topology.yaml
// (test_topo_slurm_files.cpp).
TCase *topo_slurm_file_tests();
