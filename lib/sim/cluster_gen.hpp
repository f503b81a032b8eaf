// loom sim: generated clusters for the simulator (and any cluster file).
//
// A spec is whitespace-separated key=value words, e.g.
//
//   gpus=10240 fabric=nvl72 classes=h100:50,b200:50
//
// Keys (defaults in brackets):
//   gpus=N              GPUs in all [1024]; the node count is gpus / gpus_per_node, rounded up
//   gpus_per_node=G     [8]
//   fabric=fat|rail|nvl72
//                       fat: leaves of nodes_per_leaf nodes under pods under one spine [fat];
//                       rail: rail-optimised scale units (one rail switch per GPU, the unit is
//                       the lowest domain) of nodes_per_leaf nodes;
//                       nvl72: racks of 9 nodes x 8 GPUs in one NVLink domain, two racks per leaf
//   nodes_per_leaf=N    nodes under one leaf / rail group [16 fat, 32 rail, 18 nvl72]
//   leaves_per_pod=N    [16]
//   nvl_gpus=N          GPUs per NVLink domain inside a leaf (0: none) [0; 72 for nvl72]
//   nic_gbps=R          per GPU (one NIC per GPU) [400]
//   leaf_oversub=X      leaf uplinks: node injection / X [1]
//   pod_oversub=X       pod uplinks: leaf uplinks / X [2]
//   nvlink_gbps=R       per GPU inside an NVLink domain [7200]
//   classes=LIST        GPU classes by share of the nodes, in pod order (sites buy a generation
//                       at a time): "h100" or "a100:30,h100:40,b200:30" [h100]
//   cores_per_node=C    [128]
//   cabling=block|across
//                       block: node names follow the leaves (n00001-n00016 on the first leaf);
//                       across: within a pod, names go round the leaves (n00001 on the first leaf,
//                       n00002 on the second, ...), so Slurm's node order crosses a leaf at every
//                       step [block]
#pragma once

#include "lib/topo/build.hpp"
#include "lib/util/expected.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace loom::sim {

struct ClassShare {
	std::string name;
	double share = 1; // of the nodes
};

struct ClusterGen {
	int64_t gpus = 1024;
	int gpus_per_node = 8;
	std::string fabric = "fat";
	int nodes_per_leaf = 0; // 0: the fabric's default
	int leaves_per_pod = 16;
	int nvl_gpus = -1; // -1: the fabric's default
	double nic_gbps = 400;
	double leaf_oversub = 1;
	double pod_oversub = 2;
	double nvlink_gbps = 7200;
	std::vector<ClassShare> classes = {{"h100", 1}};
	int cores_per_node = 128;
	std::string cabling = "block";
};

expected<ClusterGen> parse_cluster_gen(std::string_view spec, const std::string &where = "--generate");
// The spec back in its text form (every key, defaults resolved).
std::string format_cluster_gen(const ClusterGen &g);
expected<topo::ClusterSpec> cluster_spec(const ClusterGen &g);

} // namespace loom::sim
