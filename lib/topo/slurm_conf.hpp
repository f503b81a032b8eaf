// loom topology: the Slurm files: topology.conf (tree plugin) in and out, and
// the NodeName= lines of slurm.conf (names, GPU gres, features).
#pragma once

#include "lib/topo/build.hpp"
#include "lib/util/expected.hpp"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace loom::topo {

// One "Key=Value Key2=Value2" line of a Slurm config file: keys as written,
// quotes removed. A word without '=' is an error.
expected<std::vector<std::pair<std::string, std::string>>> slurm_words(std::string_view line,
								      const std::string &where);

// topology.conf: SwitchName= lines with Nodes= and/or Switches= (hostlists).
// Switches become domains ("leaf" when they hold nodes, else "switch"), nodes
// get their switch as domain and no hardware. A node under two switches, a
// switch with two parents, an undefined switch or a cycle is an error with
// file:line.
expected<ClusterSpec> parse_topology_conf(std::string_view text, const std::string &source);
// The tree as topology.conf; LinkSpeed from uplink bandwidth where known.
std::string write_topology_conf(const Cluster &c);

struct SlurmNode {
	std::string name;
	int gpus = -1;             // from Gres=gpu[:type]:N; -1 when not given
	std::string gpu_type;      // "h100" in Gres=gpu:h100:8
	std::vector<std::string> features;
	std::string where;         // file:line
};

// The NodeName= lines of slurm.conf (NodeName=DEFAULT sets defaults for later
// lines; a trailing backslash continues a line). Other lines are ignored.
expected<std::vector<SlurmNode>> parse_slurm_nodes(std::string_view text, const std::string &source);

// gres.conf lines for the node's GPUs: Name=gpu Type=<model> File=/dev/nvidiaN
// Cores=... Links=... (Links: -1 for itself, else the NVLink count to each GPU).
std::string write_gres_conf(const Cluster &c, Index node);

} // namespace loom::topo
