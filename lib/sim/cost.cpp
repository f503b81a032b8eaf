// loom sim: communication and class cost of a placement.
#include "lib/sim/cost.hpp"

#include <algorithm>
#include <unordered_set>

namespace loom::sim {

Span placement_cost(const topo::Cluster &c, const std::vector<topo::Index> &nodes, place::Comm comm,
		    const CostModel &m)
{
	Span s;
	if (nodes.empty())
		return s;
	std::unordered_set<topo::Index> leaves, nvl;
	bool all_nvl = true;
	double speed = 1e300;
	for (topo::Index n : nodes) {
		const topo::Node &node = c.nodes[static_cast<size_t>(n)];
		leaves.insert(node.leaf);
		if (node.nvlink_domain != topo::none)
			nvl.insert(node.nvlink_domain);
		else
			all_nvl = false;
		double v = 1;
		if (node.perf_class < c.classes.size()) {
			auto it = m.class_speed.find(c.classes.name(node.perf_class));
			if (it != m.class_speed.end())
				v = it->second;
		}
		speed = std::min(speed, v);
	}
	// common_domain of the first node with each in turn: the lowest over all
	// is the one of smallest level.
	topo::Index low = topo::none;
	for (topo::Index n : nodes) {
		topo::Index d = c.common_domain(nodes[0], n);
		if (d == topo::none) {
			low = topo::none;
			break;
		}
		if (low == topo::none || c.domains[static_cast<size_t>(d)].level < c.domains[static_cast<size_t>(low)].level)
			low = d;
	}
	s.leaves = static_cast<int>(leaves.size());
	s.nvlink_domains = static_cast<int>(nvl.size());
	s.common_level = low == topo::none ? -1 : c.domains[static_cast<size_t>(low)].level;
	s.speed = speed > 0 && speed < 1e300 ? speed : 1;
	const topo::Node &first = c.nodes[static_cast<size_t>(nodes[0])];
	double ref = first.gpu_count ? first.nic_gbps / first.gpu_count : 0;
	if (nodes.size() == 1 || ref <= 0) {
		s.bottleneck_gbps = ref;
		return s;
	}
	double b = ref;
	if (all_nvl && nvl.size() == 1) {
		double g = c.nvlink_domains[static_cast<size_t>(*nvl.begin())].gbps;
		b = g > 0 ? g : ref;
	} else if (leaves.size() > 1) {
		std::unordered_set<topo::Index> seen;
		for (topo::Index l : leaves)
			for (topo::Index d = l; d != topo::none && d != low; d = c.domains[static_cast<size_t>(d)].parent) {
				if (!seen.insert(d).second)
					break;
				const topo::Domain &dom = c.domains[static_cast<size_t>(d)];
				if (dom.uplink_gbps > 0 && dom.gpu_count > 0)
					b = std::min(b, dom.uplink_gbps / static_cast<double>(dom.gpu_count));
			}
	}
	s.bottleneck_gbps = b;
	double f = comm == place::Comm::heavy ? m.comm_heavy : comm == place::Comm::light ? m.comm_light : m.comm_normal;
	s.step_factor = (1 - f) + f * ref / b;
	return s;
}

} // namespace loom::sim
