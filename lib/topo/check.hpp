// loom topology: a cluster file against slurm.conf (`loom topo check`).
#pragma once

#include "lib/topo/build.hpp"
#include "lib/topo/slurm_conf.hpp"
#include "lib/util/expected.hpp"

#include <vector>

namespace loom::topo {

// Every problem, each naming its place (slurm.conf:line or file: $.nodes[i]):
// a Slurm node defined twice, a Slurm node missing from the cluster file, a
// cluster node Slurm does not know, and a GPU count that differs from Gres.
// 'spec' is the cluster file as parsed (its 'where' fields are JSON paths);
// it must already have built cleanly.
std::vector<Error> check_against_slurm(const ClusterSpec &spec, const std::string &cluster_source,
				       const std::vector<SlurmNode> &slurm);

} // namespace loom::topo
