// loom sim: generated fat-tree, rail-optimised and NVL72 clusters.
#include "lib/sim/cluster_gen.hpp"

#include "lib/util/config.hpp"
#include "lib/util/log.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace loom::sim {

namespace {

std::vector<std::string> split(const std::string &s, char sep)
{
	std::vector<std::string> out;
	size_t b = 0;
	for (;;) {
		size_t e = s.find(sep, b);
		out.push_back(s.substr(b, e == std::string::npos ? std::string::npos : e - b));
		if (e == std::string::npos)
			return out;
		b = e + 1;
	}
}

status parse_classes(std::string_view text, std::vector<ClassShare> &out)
{
	out.clear();
	double sum = 0;
	for (const std::string &item : split(std::string(text), ',')) {
		if (item.empty())
			return unexpected("empty class name in '" + std::string(text) + "'");
		ClassShare c;
		auto colon = item.find(':');
		c.name = item.substr(0, colon);
		if (c.name.empty())
			return unexpected("empty class name in '" + item + "'");
		if (colon != std::string::npos) {
			char *end = nullptr;
			std::string v = item.substr(colon + 1);
			c.share = std::strtod(v.c_str(), &end);
			if (v.empty() || *end || !(c.share > 0) || c.share > 1e6)
				return unexpected("bad share '" + v + "' for class " + c.name +
						  ": expected a positive number");
		}
		for (const ClassShare &o : out)
			if (o.name == c.name)
				return unexpected("class " + c.name + " named twice");
		sum += c.share;
		out.push_back(c);
	}
	if (out.empty())
		return unexpected("no class named");
	for (ClassShare &c : out)
		c.share /= sum;
	return {};
}

// Class boundaries by node number, rounded to whole pods where the shares
// allow (a generation is bought a pod at a time).
std::vector<int64_t> class_ends(const ClusterGen &g, int64_t nodes, int64_t pods)
{
	std::vector<int64_t> class_end;
	double acc = 0;
	int64_t pod_nodes = static_cast<int64_t>(g.nodes_per_leaf) * g.leaves_per_pod;
	for (const ClassShare &c : g.classes) {
		acc += c.share;
		int64_t end = static_cast<int64_t>(std::llround(acc * static_cast<double>(nodes)));
		if (pods > static_cast<int64_t>(g.classes.size()) * 2)
			end = std::min<int64_t>(nodes, (end + pod_nodes / 2) / pod_nodes * pod_nodes);
		class_end.push_back(end);
	}
	class_end.back() = nodes;
	return class_end;
}

// The cluster as it is generated, pod by pod.
struct Builder {
	const ClusterGen &g;
	topo::ClusterSpec &s;
	int64_t nodes = 0; // in all
	bool rail = false;
	bool one_pod = false;
	int per_nvl = 0; // nodes per NVLink domain; 0: none
	double leaf_up = 0, pod_up = 0;
	std::vector<int64_t> class_end;
	int64_t node = 0; // the next node's number

	Builder(const ClusterGen &gen, topo::ClusterSpec &spec) : g(gen), s(spec) {}

	// Node k of its leaf: its class, NVLink domain, GPUs and a NIC per GPU.
	topo::NodeSpec make_node(const std::string &leaf, int k)
	{
		topo::NodeSpec n;
		n.name = strprintf("n%05lld", static_cast<long long>(node + 1));
		n.domain = leaf;
		n.where = n.name;
		size_t ci = 0;
		while (ci + 1 < class_end.size() && node >= class_end[ci])
			ci++;
		n.perf_class = g.classes[ci].name;
		n.features = {n.perf_class};
		if (per_nvl > 0) {
			n.nvlink_domain = strprintf("%s-nvl%d", leaf.c_str(), k / per_nvl + 1);
			if (k % per_nvl == 0)
				s.nvlink_domains.push_back({n.nvlink_domain, g.nvlink_gbps, n.nvlink_domain});
		}
		for (int x = 0; x < g.gpus_per_node; x++) {
			topo::GpuSpec gs;
			gs.index = x;
			gs.model = n.perf_class;
			gs.nvswitch = true;
			gs.nic = strprintf("mlx5_%d", x);
			n.gpus.push_back(gs);
			topo::NicSpec nic;
			nic.device = gs.nic;
			nic.link_layer = topo::LinkLayer::infiniband;
			nic.rate_gbps = g.nic_gbps;
			nic.rail = x;
			if (rail)
				nic.rail_switch = strprintf("%s-rail%d", leaf.c_str(), x);
			n.nics.push_back(nic);
		}
		if (g.cores_per_node > 0)
			n.numas.push_back({0, "0-" + std::to_string(g.cores_per_node - 1), 0, ""});
		return n;
	}

	// Pod p (from 0): its leaves (or rail groups and their rails) and nodes.
	void add_pod(int64_t p)
	{
		size_t pod_first = s.nodes.size();
		std::vector<std::pair<int, int>> where; // (place in its leaf, leaf in the pod) of the pod's nodes
		std::string pod = strprintf("pod%lld", static_cast<long long>(p + 1));
		s.domains.push_back({pod, "pod", one_pod ? "" : "spine", one_pod ? 0 : pod_up, pod});
		for (int l = 0; l < g.leaves_per_pod && node < nodes; l++) {
			int64_t leaf_no = p * g.leaves_per_pod + l + 1;
			std::string leaf = strprintf("%s%lld", rail ? "su" : "leaf", static_cast<long long>(leaf_no));
			s.domains.push_back({leaf, rail ? "railgroup" : "leaf", pod, leaf_up, leaf});
			if (rail)
				for (int r = 0; r < g.gpus_per_node; r++)
					s.rails.push_back({strprintf("%s-rail%d", leaf.c_str(), r), leaf, r, 0, leaf});
			for (int k = 0; k < g.nodes_per_leaf && node < nodes; k++) {
				s.nodes.push_back(make_node(leaf, k));
				where.emplace_back(k, l);
				node++;
			}
		}
		if (g.cabling == "across")
			name_across(pod_first, where);
	}

	// Names go round the pod's leaves: the first node of each leaf, then the
	// second of each, ...
	void name_across(size_t pod_first, const std::vector<std::pair<int, int>> &where)
	{
		std::vector<size_t> by(where.size());
		for (size_t i = 0; i < by.size(); i++)
			by[i] = i;
		std::stable_sort(by.begin(), by.end(), [&](size_t a, size_t b) { return where[a] < where[b]; });
		for (size_t r = 0; r < by.size(); r++) {
			topo::NodeSpec &n = s.nodes[pod_first + by[r]];
			n.name = strprintf("n%05lld", static_cast<long long>(pod_first + r + 1));
			n.where = n.name;
		}
	}
};

} // namespace

expected<ClusterGen> parse_cluster_gen(std::string_view spec, const std::string &where)
{
	ClusterGen g;
	int64_t gpn = g.gpus_per_node, npl = 0, lpp = g.leaves_per_pod, nvl = -1, cores = g.cores_per_node;
	ConfigSchema s;
	s.integer("gpus", &g.gpus, 1, 1 << 20, "GPUs in all")
		.integer("gpus_per_node", &gpn, 1, 64, "GPUs per node")
		.choice("fabric", &g.fabric, {"fat", "rail", "nvl72"}, "fabric shape")
		.integer("nodes_per_leaf", &npl, 1, 4096, "nodes per leaf or rail group")
		.integer("leaves_per_pod", &lpp, 1, 4096, "leaves per pod")
		.integer("nvl_gpus", &nvl, 0, 1 << 16, "GPUs per NVLink domain")
		.real("nic_gbps", &g.nic_gbps, 1, 1e5, "NIC rate per GPU")
		.real("leaf_oversub", &g.leaf_oversub, 1, 64, "leaf uplink oversubscription")
		.real("pod_oversub", &g.pod_oversub, 1, 64, "pod uplink oversubscription")
		.real("nvlink_gbps", &g.nvlink_gbps, 1, 1e6, "NVLink bandwidth per GPU")
		.add("classes", "GPU classes by share", [&](std::string_view v) { return parse_classes(v, g.classes); })
		.integer("cores_per_node", &cores, 0, 4096, "cores per node")
		.choice("cabling", &g.cabling, {"block", "across"}, "how node names follow the leaves");
	if (auto st = s.parse_words(spec, where); !st)
		return unexpected(st.error());
	g.gpus_per_node = static_cast<int>(gpn);
	g.leaves_per_pod = static_cast<int>(lpp);
	g.cores_per_node = static_cast<int>(cores);
	if (g.fabric == "nvl72") {
		g.nvl_gpus = nvl < 0 ? 72 : static_cast<int>(nvl);
		g.nodes_per_leaf = npl ? static_cast<int>(npl) : 18;
	} else {
		g.nvl_gpus = nvl < 0 ? 0 : static_cast<int>(nvl);
		g.nodes_per_leaf = npl ? static_cast<int>(npl) : g.fabric == "rail" ? 32 : 16;
	}
	if (g.nvl_gpus > 0) {
		if (g.nvl_gpus % g.gpus_per_node)
			return unexpected(Error(where, strprintf("nvl_gpus=%d is not a whole number of %d-GPU nodes",
								 g.nvl_gpus, g.gpus_per_node)));
		int per = g.nvl_gpus / g.gpus_per_node;
		if (g.nodes_per_leaf % per)
			return unexpected(Error(
				where, strprintf("nodes_per_leaf=%d does not hold whole NVLink domains of %d nodes",
						 g.nodes_per_leaf, per)));
	}
	int64_t nodes = (g.gpus + g.gpus_per_node - 1) / g.gpus_per_node;
	if (static_cast<size_t>(nodes) > topo::max_cluster_nodes)
		return unexpected(Error(where, strprintf("%lld nodes: one cluster holds at most %zu",
							 static_cast<long long>(nodes), topo::max_cluster_nodes)));
	return g;
}

std::string format_cluster_gen(const ClusterGen &g)
{
	std::string cls;
	for (const ClassShare &c : g.classes)
		cls += strprintf("%s%s:%g", cls.empty() ? "" : ",", c.name.c_str(), std::round(c.share * 1000) / 10);
	return strprintf(
		"gpus=%lld gpus_per_node=%d fabric=%s nodes_per_leaf=%d leaves_per_pod=%d nvl_gpus=%d nic_gbps=%g "
		"leaf_oversub=%g pod_oversub=%g nvlink_gbps=%g classes=%s cores_per_node=%d cabling=%s",
		static_cast<long long>(g.gpus), g.gpus_per_node, g.fabric.c_str(), g.nodes_per_leaf, g.leaves_per_pod,
		g.nvl_gpus, g.nic_gbps, g.leaf_oversub, g.pod_oversub, g.nvlink_gbps, cls.c_str(), g.cores_per_node,
		g.cabling.c_str());
}

expected<topo::ClusterSpec> cluster_spec(const ClusterGen &g)
{
	topo::ClusterSpec s;
	Builder b(g, s);
	b.nodes = (g.gpus + g.gpus_per_node - 1) / g.gpus_per_node;
	int64_t leaves = (b.nodes + g.nodes_per_leaf - 1) / g.nodes_per_leaf;
	int64_t pods = (leaves + g.leaves_per_pod - 1) / g.leaves_per_pod;
	b.rail = g.fabric == "rail";
	s.name = strprintf("%s-%lldgpu", g.fabric.c_str(), static_cast<long long>(b.nodes * g.gpus_per_node));
	s.level_names = {b.rail ? "railgroup" : "leaf", "pod", "spine"};
	double node_gbps = g.nic_gbps * g.gpus_per_node;
	b.leaf_up = node_gbps * g.nodes_per_leaf / g.leaf_oversub;
	b.pod_up = b.leaf_up * g.leaves_per_pod / g.pod_oversub;
	b.one_pod = pods == 1;
	if (!b.one_pod)
		s.domains.push_back({"spine", "spine", "", 0, "spine"});
	b.per_nvl = g.nvl_gpus > 0 ? g.nvl_gpus / g.gpus_per_node : 0;
	b.class_end = class_ends(g, b.nodes, pods);
	for (int64_t p = 0; p < pods && b.node < b.nodes; p++)
		b.add_pod(p);
	return s;
}

} // namespace loom::sim
