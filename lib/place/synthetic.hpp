// loom placement: synthetic fat-tree clusters, built in memory, for tests,
// benchmarks and `loom place` demos. One spine over pods over leaves over
// nodes; optional NVLink domains of consecutive nodes inside each leaf (an
// NVL72 rack as 9 nodes of 8 GPUs); classes by node number.
#pragma once

#include "lib/topo/build.hpp"

#include <string>
#include <vector>

namespace loom::place {

struct FatTree {
	int pods = 2;
	int leaves_per_pod = 2;
	int nodes_per_leaf = 4;
	int gpus_per_node = 8;
	int cores_per_node = 64;
	int nvlink_nodes = 0;     // nodes per NVLink domain within a leaf; 0: none
	std::string prefix = "n"; // node names: n1, n2, ...
	// GPU class of consecutive node blocks: {"a100", 8} gives n1..n8 class a100;
	// the last class covers the rest. Empty: "h100" for all.
	std::vector<std::pair<std::string, int>> classes;
};

topo::ClusterSpec fat_tree_spec(const FatTree &t);

} // namespace loom::place
