#include "lib/topo/check.hpp"

#include <map>

namespace loom::topo {

std::vector<Error> check_against_slurm(const ClusterSpec &spec, const std::string &cluster_source,
				       const std::vector<SlurmNode> &slurm)
{
	std::vector<Error> out;
	std::map<std::string, const SlurmNode *> by_name;
	for (const auto &s : slurm) {
		auto [it, fresh] = by_name.emplace(s.name, &s);
		if (!fresh)
			out.emplace_back(s.where,
					 "node '" + s.name + "' is defined twice (first at " + it->second->where + ")");
	}
	std::map<std::string, const NodeSpec *> in_cluster;
	for (const auto &n : spec.nodes)
		in_cluster.emplace(n.name, &n);
	for (const auto &[name, s] : by_name) {
		auto it = in_cluster.find(name);
		if (it == in_cluster.end()) {
			out.emplace_back(s->where,
					 "node '" + name + "' is not placed in the cluster file " + cluster_source);
			continue;
		}
		const NodeSpec &n = *it->second;
		if (s->gpus >= 0 && static_cast<size_t>(s->gpus) != n.gpus.size())
			out.emplace_back(cluster_source + ": " + n.where,
					 "node '" + name + "' has " + std::to_string(n.gpus.size()) + " GPUs, but " +
						 s->where + " gives it Gres gpu count " + std::to_string(s->gpus));
	}
	for (const auto &n : spec.nodes)
		if (!by_name.count(n.name))
			out.emplace_back(cluster_source + ": " + n.where,
					 "node '" + n.name + "' is not a node in slurm.conf");
	return out;
}

} // namespace loom::topo
