// The placement tests' cluster: the 16-node test cluster's shape (a fat tree
// of a100 and h100 nodes, 8 GPUs each), built the way `loom topo` builds one.
// Include after check_main.hpp.
#pragma once

#include "lib/place/synthetic.hpp"
#include "lib/topo/build.hpp"

#include <utility>

inline loom::topo::Cluster test_cluster()
{
	loom::place::FatTree t;
	t.classes = {{"a100", 8}, {"h100", 8}};
	auto c = loom::topo::build_cluster(loom::place::fat_tree_spec(t));
	ck_assert_msg(c.has_value(), "%s", c ? "" : c.error().str().c_str());
	return std::move(*c);
}
