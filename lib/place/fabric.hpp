// The fabric slurmctld places on, as select/topo loads it (with Slurm's node
// records) and loom_fabric.so for spank_place in slurmstepd (without them).
// Slurm-free, so it is unit tested without a running Slurm.
//
// The fabric comes from the loom cluster file named in loom-topo.conf (any format
// `loom topo` reads), or, when none is named, from Slurm's own topology.conf.
// Slurm's node records then fill in what a fabric file lacks (GPU counts and
// features), and a Slurm node the fabric does not know is placed as if on a
// leaf of its own (with one warning naming all such nodes).
#pragma once

#include "lib/topo/model.hpp"
#include "lib/util/expected.hpp"

#include <string>
#include <vector>

namespace loom::place {

struct SlurmNodeInfo {
	std::string name;
	int gpus = 0;                      // configured GPUs (Gres=gpu:N)
	std::vector<std::string> features; // node features (AvailableFeatures)
};

struct Fabric {
	topo::Cluster cluster;
	std::string source;               // the file it came from
	std::vector<std::string> alone;   // Slurm nodes missing from the fabric file
	std::vector<std::string> unknown; // fabric nodes Slurm does not have
};

// class_features: node features that name GPU generations ("a100", "h100"):
// a node's first such feature becomes its GPU model and performance class.
// topology_conf: Slurm's topology.conf or topology.yaml (read by its content).
// level_names: kinds for the levels of a fabric file that names none (a
// topology.conf), from the leaves up.
expected<Fabric> load_fabric(const std::string &cluster_file, const std::string &topology_conf,
			     const std::vector<SlurmNodeInfo> &slurm_nodes,
			     const std::vector<std::string> &class_features,
			     const std::vector<std::string> &level_names = {});

// Slurm's fabric file in the configuration directory 'dir' (slurm.conf's):
// topology.yaml where it exists and the release reads it (yaml: 25.05 and
// later, which then ignore topology.conf), else topology.conf.
std::string topology_file_in(const std::string &dir, bool yaml);

// The fabric as select/topo loads it from 'dir', for readers outside
// slurmctld, which have no node records (spank_place in slurmstepd):
// loom-topo.conf's cluster_file, gpu_classes and level_names (read whole by
// read_topo_conf: a bad key fails here as in slurmctld), else Slurm's own
// fabric file. Errors name the file.
expected<Fabric> load_fabric_in(const std::string &dir, bool yaml);

} // namespace loom::place
