// The rank order of a job's nodes: consecutive ranks sit closest on the
// fabric (the same NVLink domain, then the same leaf, then node order), the
// order select/topo's engine gives its gangs (search.hpp: rank_order). A job
// learns it from spank_place (LOOM_NODE_RANK, LOOM_HOSTFILE), and `loom topo
// ranks` shows it next to Slurm's order.
//
// Slurm ranks a step's nodes in its node table's order (slurm.conf's), which
// need not follow the fabric: with leaves cabled across the node names
// (n1, n3, ... on one leaf), every neighbour of a ring crosses a leaf.
#pragma once

#include "lib/topo/model.hpp"
#include "lib/util/expected.hpp"

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace loom::place {

// The hosts in rank order. Hosts the fabric does not know come last, in the
// order given (as if each had a leaf of its own, as select/topo places them);
// a host named twice is an error naming it.
expected<std::vector<std::string>> rank_order(const topo::Cluster &c, const std::vector<std::string> &hosts);

// What crosses the fabric between ring neighbours (host i and i+1, and the
// last and the first): hops between leaves, and between NVLink domains
// (nodes of no domain count as a domain each). Hosts the fabric does not
// know count as a leaf each.
struct RingCrossings {
	size_t hops = 0;   // ring edges (the hosts, or 0 for a single host)
	size_t leaf = 0;   // edges whose two ends are on different leaves
	size_t nvlink = 0; // edges whose two ends are in different NVLink domains
};
RingCrossings ring_crossings(const topo::Cluster &c, const std::vector<std::string> &order);

// Slurm's task counts per node (SLURM_TASKS_PER_NODE, SLURM_STEP_TASKS_PER_NODE:
// "8(x2),4"), one per node of the step in Slurm's order; the total node
// count must be 'nodes'. Errors name the bad part.
expected<std::vector<int>> tasks_per_node(std::string_view text, size_t nodes);

} // namespace loom::place

namespace loom::place {

// One step's view (spank_place on each of its nodes): its nodes in rank
// order, this node's place in it, and, when Slurm's task counts are known,
// one line per task in rank order (a host repeated once per task it runs:
// SLURM_HOSTFILE for srun --distribution=arbitrary).
struct StepRanks {
	std::vector<std::string> order;
	size_t node_rank = 0;
	std::vector<std::string> task_hosts;
};
// nodelist: the step's (SLURM_STEP_NODELIST, or the job's for a batch step),
// in Slurm's order; tasks: its SLURM_*TASKS_PER_NODE ("" when unknown).
expected<StepRanks> step_ranks(const topo::Cluster &c, std::string_view nodelist, std::string_view this_node,
			       std::string_view tasks);

} // namespace loom::place
