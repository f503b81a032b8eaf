// Synthetic fat trees for tests and benchmarks.
#include "lib/place/synthetic.hpp"

namespace loom::place {

topo::ClusterSpec fat_tree_spec(const FatTree &t)
{
	topo::ClusterSpec s;
	s.name = "fat-tree";
	s.domains.push_back({"spine", "spine", "", 0, "spine"});
	int node = 0;
	for (int p = 0; p < t.pods; p++) {
		std::string pod = "pod" + std::to_string(p + 1);
		s.domains.push_back({pod, "pod", "spine", 0, pod});
		for (int l = 0; l < t.leaves_per_pod; l++) {
			int leaf_no = p * t.leaves_per_pod + l + 1;
			std::string leaf = "leaf" + std::to_string(leaf_no);
			s.domains.push_back({leaf, "leaf", pod, 0, leaf});
			for (int k = 0; k < t.nodes_per_leaf; k++) {
				node++;
				topo::NodeSpec n;
				n.name = t.prefix + std::to_string(node);
				n.domain = leaf;
				n.where = n.name;
				n.perf_class = "h100";
				int upto = 0;
				for (const auto &[cls, count] : t.classes) {
					n.perf_class = cls;
					upto += count;
					if (node <= upto)
						break;
				}
				n.features = {n.perf_class};
				if (t.nvlink_nodes > 0) {
					n.nvlink_domain = leaf + "-nvl" + std::to_string(k / t.nvlink_nodes + 1);
					if (k % t.nvlink_nodes == 0)
						s.nvlink_domains.push_back({n.nvlink_domain, 7200, n.nvlink_domain});
				}
				for (int g = 0; g < t.gpus_per_node; g++) {
					topo::GpuSpec gs;
					gs.index = g;
					gs.model = n.perf_class;
					gs.nvswitch = true;
					n.gpus.push_back(gs);
				}
				if (t.cores_per_node > 0)
					n.numas.push_back({0, "0-" + std::to_string(t.cores_per_node - 1), 0, ""});
				s.nodes.push_back(std::move(n));
			}
		}
	}
	return s;
}

} // namespace loom::place
