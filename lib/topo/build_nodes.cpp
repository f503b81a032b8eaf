// build_cluster's nodes (build_nodes.hpp): each node's own checks, the nodes
// in the model's depth-first order, and what is computed from them.
#include "lib/topo/build_nodes.hpp"

#include <algorithm>
#include <set>
#include <unordered_map>

namespace loom::topo {

namespace {

// A NIC on a rail switch: the switch exists, belongs to the node's domain,
// and agrees with the NIC's rail number.
status check_rail_nics(const NodeSpec &n, const Cluster &c)
{
	for (const NicSpec &x : n.nics) {
		if (x.rail_switch.empty())
			continue;
		auto it = c.rail_index.find(x.rail_switch);
		if (it == c.rail_index.end())
			return unexpected(x.where, "rail switch " + quoted(x.rail_switch) + " is not defined");
		const Rail &r = c.rails[it->second];
		if (c.domains[r.group].name != n.domain)
			return unexpected(x.where, "rail switch " + quoted(x.rail_switch) + " belongs to " +
							   quoted(c.domains[r.group].name) +
							   ", not to the node's domain " + quoted(n.domain));
		if (x.rail >= 0 && x.rail != r.index)
			return unexpected(x.where, "NIC rail " + std::to_string(x.rail) + " but rail switch " +
							   quoted(x.rail_switch) + " is rail " +
							   std::to_string(r.index));
	}
	return ok();
}

status check_node(const NodeSpec &n)
{
	if (n.name.empty())
		return unexpected(n.where, "node without a name");
	if (n.gpus.size() > max_gpus_per_node)
		return unexpected(n.where, "more than " + std::to_string(max_gpus_per_node) + " GPUs");
	if (n.nics.size() > max_nics_per_node)
		return unexpected(n.where, "more than " + std::to_string(max_nics_per_node) + " NICs");
	std::set<int> idx;
	for (const auto &g : n.gpus) {
		if (g.index < 0 || g.index >= static_cast<int>(max_gpus_per_node))
			return unexpected(g.where, "GPU index out of range");
		if (!idx.insert(g.index).second)
			return unexpected(g.where, "duplicate GPU index " + std::to_string(g.index));
		if (g.nvlink_gbps < 0 || g.nvlinks < 0 || g.nvlinks > 65535)
			return unexpected(g.where, "negative NVLink figures");
	}
	for (const auto &g : n.gpus)
		for (const auto &p : g.peers)
			if (p.gpu == g.index || !idx.count(p.gpu))
				return unexpected(g.where, "NVLink peer " + std::to_string(p.gpu) +
								   " is not another GPU of this node");
	std::set<std::pair<std::string, int>> ports;
	for (const auto &x : n.nics) {
		if (x.device.empty())
			return unexpected(x.where, "NIC without a device name");
		if (!ports.emplace(x.device, x.port).second)
			return unexpected(x.where, "duplicate NIC " + x.device + " port " + std::to_string(x.port));
		if (x.rate_gbps < 0)
			return unexpected(x.where, "negative NIC rate");
	}
	for (const auto &g : n.gpus) {
		if (g.nic.empty())
			continue;
		bool found =
			std::any_of(n.nics.begin(), n.nics.end(), [&](const NicSpec &x) { return x.device == g.nic; });
		if (!found)
			return unexpected(g.where, "NIC " + quoted(g.nic) + " is not a NIC of this node");
	}
	for (const auto &g : n.gpus)
		if (g.pcie_gts < 0 || g.pcie_gts > 1024 || g.pcie_width < 0 || g.pcie_width > 64)
			return unexpected(g.where, "PCIe link out of range");
	for (const auto &x : n.nics)
		if (x.pcie_gts < 0 || x.pcie_gts > 1024 || x.pcie_width < 0 || x.pcie_width > 64)
			return unexpected(x.where, "PCIe link out of range");
	if (n.cpu.family < -1 || n.cpu.family > 32767 || n.cpu.model < -1 || n.cpu.model > 32767)
		return unexpected(n.where, "CPU family or model out of range");
	std::set<int> numa_ids;
	for (const auto &m : n.numas)
		if (!numa_ids.insert(m.id).second)
			return unexpected(m.where, "duplicate NUMA node " + std::to_string(m.id));
	return ok();
}

void add_node(const NodeSpec &s, Index leaf, Index nvl, Cluster &c)
{
	Node n;
	n.name = s.name;
	n.cpu_arch = s.cpu.arch;
	n.cpu_vendor = s.cpu.vendor;
	n.cpu_family = static_cast<int16_t>(s.cpu.family);
	n.cpu_model = static_cast<int16_t>(s.cpu.model);
	n.leaf = leaf;
	n.nvlink_domain = nvl;
	n.perf_class = c.classes.intern(s.perf_class);
	for (const auto &f : s.features)
		n.features.push_back(c.features.intern(f));
	std::sort(n.features.begin(), n.features.end());
	n.features.erase(std::unique(n.features.begin(), n.features.end()), n.features.end());
	Index id = static_cast<Index>(c.nodes.size());
	n.nic_begin = static_cast<Index>(c.nics.size());
	n.nic_count = static_cast<uint16_t>(s.nics.size());
	for (const auto &x : s.nics) {
		Nic nic{id,
			x.device,
			static_cast<uint16_t>(x.port),
			x.link_layer,
			x.rate_gbps,
			static_cast<int16_t>(x.rail),
			static_cast<int16_t>(x.numa),
			x.pci_bus_id,
			x.guid,
			none,
			static_cast<float>(x.pcie_gts),
			static_cast<uint8_t>(x.pcie_width)};
		if (!x.rail_switch.empty()) {
			nic.rail_switch = c.rail_index.at(x.rail_switch);
			nic.rail = c.rails[nic.rail_switch].index;
		}
		n.nic_gbps += x.rate_gbps;
		c.nics.push_back(std::move(nic));
	}
	std::vector<const GpuSpec *> gs;
	for (const auto &g : s.gpus)
		gs.push_back(&g);
	std::sort(gs.begin(), gs.end(), [](const GpuSpec *a, const GpuSpec *b) { return a->index < b->index; });
	n.gpu_begin = static_cast<Index>(c.gpus.size());
	n.gpu_count = static_cast<uint16_t>(gs.size());
	for (const GpuSpec *g : gs) {
		Gpu gpu;
		gpu.node = id;
		gpu.index = static_cast<uint16_t>(g->index);
		gpu.model = c.models.intern(g->model);
		gpu.perf_class = g->perf_class.empty() ? n.perf_class : c.classes.intern(g->perf_class);
		gpu.numa = static_cast<int16_t>(g->numa);
		for (uint16_t k = 0; k < n.nic_count && !g->nic.empty(); k++)
			if (c.nics[n.nic_begin + k].device == g->nic) {
				gpu.nic = n.nic_begin + k;
				break;
			}
		gpu.pci_bus_id = g->pci_bus_id;
		gpu.memory_mib = g->memory_mib;
		gpu.nvswitch = g->nvswitch;
		gpu.nvlinks = static_cast<uint16_t>(g->nvlinks);
		gpu.nvlink_gbps = g->nvlink_gbps;
		gpu.peers = g->peers;
		gpu.pcie_gts = static_cast<float>(g->pcie_gts);
		gpu.pcie_width = static_cast<uint8_t>(g->pcie_width);
		c.gpus.push_back(std::move(gpu));
	}
	if (!gs.empty())
		n.gpu_model = c.gpus[n.gpu_begin].model;
	n.numa_begin = static_cast<Index>(c.numas.size());
	n.numa_count = static_cast<uint16_t>(s.numas.size());
	for (const auto &m : s.numas)
		c.numas.push_back(Numa{id, static_cast<int16_t>(m.id), m.cpus, m.memory_mib});
	c.node_index.emplace(n.name, id);
	c.nodes.push_back(std::move(n));
}

// The nodes checked and grouped by domain, in input order within a domain
// (at[d]); 'loose' those in no domain, where the cluster has none.
status group_nodes(const ClusterSpec &spec, const Cluster &c, std::vector<std::vector<const NodeSpec *>> &at,
		   std::vector<const NodeSpec *> &loose)
{
	std::unordered_map<std::string_view, const NodeSpec *> seen;
	for (const auto &n : spec.nodes) {
		if (status st = check_node(n); !st)
			return unexpected(st.error());
		if (status st = check_rail_nics(n, c); !st)
			return unexpected(st.error());
		if (auto [it, fresh] = seen.emplace(n.name, &n); !fresh)
			return unexpected(n.where, "duplicate node name " + quoted(n.name) + " (first at " +
							   it->second->where + ")");
		if (n.domain.empty()) {
			if (!c.domains.empty())
				return unexpected(n.where, "node " + quoted(n.name) + " is in no domain");
			loose.push_back(&n);
			continue;
		}
		Index d = c.find_domain(n.domain);
		if (d == none)
			return unexpected(n.where, "domain " + quoted(n.domain) + " is not defined");
		at[d].push_back(&n);
		if (!n.nvlink_domain.empty() && !c.nvlink_index.count(n.nvlink_domain))
			return unexpected(n.where, "NVLink domain " + quoted(n.nvlink_domain) + " is not defined");
	}
	return ok();
}

Index nvlink_of(const Cluster &c, const NodeSpec &n)
{
	auto it = c.nvlink_index.find(n.nvlink_domain);
	return n.nvlink_domain.empty() || it == c.nvlink_index.end() ? none : it->second;
}

// The nodes into the model: those in no domain first, then a pre-order walk,
// a domain's own nodes before its subtrees.
status add_nodes(const std::vector<std::vector<const NodeSpec *>> &at, const std::vector<const NodeSpec *> &loose,
		 Cluster &c)
{
	for (const NodeSpec *n : loose) {
		if (!n->nvlink_domain.empty() && !c.nvlink_index.count(n->nvlink_domain))
			return unexpected(n->where, "NVLink domain " + quoted(n->nvlink_domain) + " is not defined");
		add_node(*n, none, nvlink_of(c, *n), c);
	}
	std::vector<Index> stack;
	for (Index r = static_cast<Index>(c.domains.size()) - 1; r >= 0; r--)
		if (c.domains[r].parent == none)
			stack.push_back(r);
	while (!stack.empty()) {
		Index d = stack.back();
		stack.pop_back();
		Domain &dom = c.domains[d];
		dom.node_begin = static_cast<Index>(c.nodes.size());
		for (const NodeSpec *n : at[d])
			add_node(*n, d, nvlink_of(c, *n), c);
		dom.direct_end = static_cast<Index>(c.nodes.size());
		for (auto it = dom.children.rbegin(); it != dom.children.rend(); ++it)
			stack.push_back(*it);
	}
	return ok();
}

// Node ranges and GPU counts of the domains (stored in pre-order: a reverse
// pass sees every child first), the ancestor table, the NVLink domains' nodes.
void close_ranges(Cluster &c)
{
	for (Index d = static_cast<Index>(c.domains.size()) - 1; d >= 0; d--) {
		Domain &dom = c.domains[d];
		dom.node_end = dom.direct_end;
		for (Index n = dom.node_begin; n < dom.direct_end; n++)
			dom.gpu_count += c.nodes[n].gpu_count;
		for (Index k : dom.children) {
			dom.node_end = std::max(dom.node_end, c.domains[k].node_end);
			dom.gpu_count += c.domains[k].gpu_count;
		}
	}
	c.ancestors.assign(c.nodes.size() * c.levels, none);
	for (size_t n = 0; n < c.nodes.size(); n++)
		for (Index d = c.nodes[n].leaf; d != none; d = c.domains[d].parent)
			c.ancestors[n * c.levels + c.domains[d].level] = d;
	for (size_t n = 0; n < c.nodes.size(); n++) {
		const Node &node = c.nodes[n];
		if (node.nvlink_domain == none)
			continue;
		auto &v = c.nvlink_domains[node.nvlink_domain];
		v.nodes.push_back(static_cast<Index>(n));
		v.gpu_count += node.gpu_count;
	}
}

} // namespace

status build_nodes(const ClusterSpec &spec, Cluster &c)
{
	std::vector<std::vector<const NodeSpec *>> at(c.domains.size());
	std::vector<const NodeSpec *> loose;
	if (status st = group_nodes(spec, c, at, loose); !st)
		return unexpected(st.error());
	if (status st = add_nodes(at, loose, c); !st)
		return unexpected(st.error());
	close_ranges(c);
	return ok();
}

} // namespace loom::topo
