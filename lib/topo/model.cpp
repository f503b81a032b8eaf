#include "lib/topo/model.hpp"

#include <algorithm>

namespace loom::topo {

uint16_t Names::intern(std::string_view name)
{
	auto it = ids_.find(std::string(name));
	if (it != ids_.end())
		return it->second;
	if (names_.size() >= 65535)
		return 0; // the builder refuses tables this large before anyone sees the ids
	uint16_t id = static_cast<uint16_t>(names_.size());
	names_.emplace_back(name);
	ids_.emplace(names_.back(), id);
	return id;
}

Index Names::find(std::string_view name) const
{
	auto it = ids_.find(std::string(name));
	return it == ids_.end() ? none : it->second;
}

const char *link_layer_name(LinkLayer l)
{
	switch (l) {
	case LinkLayer::infiniband:
		return "infiniband";
	case LinkLayer::ethernet:
		return "ethernet";
	default:
		return "unknown";
	}
}

const char *via_name(Via v)
{
	switch (v) {
	case Via::same:
		return "same";
	case Via::nvlink:
		return "nvlink";
	case Via::pcie:
		return "pcie";
	case Via::fabric:
		return "fabric";
	default:
		return "unreachable";
	}
}

std::string default_kind(unsigned height)
{
	static const char *const names[] = {"leaf", "pod", "spine", "core"};
	if (height < sizeof names / sizeof names[0])
		return names[height];
	return "level-" + std::to_string(height);
}

std::vector<std::string> locality_kinds(const Cluster &c)
{
	// Each kind at its deepest level; deeper first.
	std::vector<int> deepest(c.kinds.size(), -1);
	for (const Domain &d : c.domains)
		deepest[d.kind] = std::max(deepest[d.kind], static_cast<int>(d.level));
	std::vector<size_t> ids;
	for (size_t k = 0; k < deepest.size(); k++)
		if (deepest[k] >= 0)
			ids.push_back(k);
	std::stable_sort(ids.begin(), ids.end(), [&](size_t a, size_t b) { return deepest[a] > deepest[b]; });
	std::vector<std::string> out;
	for (size_t k : ids)
		out.push_back(c.kinds.name(k));
	if (!c.nvlink_domains.empty())
		out.push_back(nvlink_kind);
	return out;
}

std::vector<Index> Cluster::rails_of(Index domain) const
{
	std::vector<Index> out;
	for (Index r = 0; r < static_cast<Index>(rails.size()); r++)
		if (rails[r].group == domain)
			out.push_back(r);
	std::sort(out.begin(), out.end(), [&](Index a, Index b) { return rails[a].index < rails[b].index; });
	return out;
}

Index Cluster::find_node(std::string_view n) const
{
	auto it = node_index.find(std::string(n));
	return it == node_index.end() ? none : it->second;
}

Index Cluster::find_domain(std::string_view n) const
{
	auto it = domain_index.find(std::string(n));
	return it == domain_index.end() ? none : it->second;
}

Index Cluster::common_domain(Index a, Index b) const
{
	Index la = nodes[a].leaf, lb = nodes[b].leaf;
	if (la == none || lb == none)
		return none;
	unsigned top = std::min(domains[la].level, domains[lb].level);
	// Ancestors agree on a prefix of levels; find the deepest agreeing one.
	for (int l = static_cast<int>(top); l >= 0; l--) {
		Index x = ancestor(a, static_cast<unsigned>(l));
		if (x != none && x == ancestor(b, static_cast<unsigned>(l)))
			return x;
	}
	return none;
}

namespace {
// min over known (positive) bandwidths; 0 stays "unknown".
void narrow(double &bw, double v)
{
	if (v > 0 && (bw == 0 || v < bw))
		bw = v;
}
} // namespace

Path Cluster::node_path(Index a, Index b) const
{
	Path p;
	if (a == b) {
		p.via = Via::same;
		p.hops = 0;
		return p;
	}
	const Node &na = nodes[a], &nb = nodes[b];
	if (na.nvlink_domain != none && na.nvlink_domain == nb.nvlink_domain) {
		p.via = Via::nvlink;
		p.hops = 2; // GPU - NVSwitch - GPU
		p.gbps = nvlink_domains[na.nvlink_domain].gbps;
		return p;
	}
	Index lca = common_domain(a, b);
	if (lca == none)
		return p;
	unsigned top = domains[lca].level;
	p.via = Via::fabric;
	p.common = lca;
	p.hops =
		static_cast<int>(domains[na.leaf].level + 1 - top) + static_cast<int>(domains[nb.leaf].level + 1 - top);
	narrow(p.gbps, na.nic_gbps);
	narrow(p.gbps, nb.nic_gbps);
	for (Index d = na.leaf; d != lca; d = domains[d].parent)
		narrow(p.gbps, domains[d].uplink_gbps);
	for (Index d = nb.leaf; d != lca; d = domains[d].parent)
		narrow(p.gbps, domains[d].uplink_gbps);
	return p;
}

Path Cluster::gpu_path(Index a, Index b) const
{
	const Gpu &ga = gpus[a], &gb = gpus[b];
	Path p;
	if (a == b) {
		p.via = Via::same;
		p.hops = 0;
		return p;
	}
	if (ga.node == gb.node) {
		if (ga.nvswitch && gb.nvswitch) {
			p.via = Via::nvlink;
			p.hops = 2;
			narrow(p.gbps, ga.nvlink_gbps);
			narrow(p.gbps, gb.nvlink_gbps);
			return p;
		}
		for (const auto &peer : ga.peers) {
			if (peer.gpu != gb.index)
				continue;
			p.via = Via::nvlink;
			p.hops = 1;
			if (ga.nvlinks > 0)
				p.gbps = ga.nvlink_gbps * peer.links / ga.nvlinks;
			return p;
		}
		p.via = Via::pcie;
		p.hops = (ga.numa >= 0 && gb.numa >= 0 && ga.numa != gb.numa) ? 3 : 2;
		p.gbps = pcie_gbps;
		return p;
	}
	p = node_path(ga.node, gb.node);
	if (p.via == Via::nvlink) {
		narrow(p.gbps, ga.nvlink_gbps);
		narrow(p.gbps, gb.nvlink_gbps);
	} else if (p.via == Via::fabric) {
		// A GPU sends through its nearest NIC (its rail), not the whole node.
		if (ga.nic != none)
			narrow(p.gbps, nics[ga.nic].rate_gbps);
		if (gb.nic != none)
			narrow(p.gbps, nics[gb.nic].rate_gbps);
	}
	return p;
}

bool Cluster::has_feature(Index node, std::string_view feature) const
{
	Index f = features.find(feature);
	if (f == none)
		return false;
	const auto &fs = nodes[node].features;
	return std::binary_search(fs.begin(), fs.end(), static_cast<uint16_t>(f));
}

std::vector<Index> Cluster::domains_at(unsigned level) const
{
	std::vector<Index> out;
	for (size_t d = 0; d < domains.size(); d++)
		if (domains[d].level == level)
			out.push_back(static_cast<Index>(d));
	return out;
}

} // namespace loom::topo
