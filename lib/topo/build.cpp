// Building the model (build.hpp): the domain tree, the rail switches and the
// NVLink domains here, then the nodes (build_nodes.cpp).
#include "lib/topo/build.hpp"
#include "lib/topo/build_nodes.hpp"

#include <algorithm>
#include <set>
#include <unordered_map>

namespace loom::topo {

namespace {

// Resolve parents, refuse cycles, order domains depth-first (roots and
// children in input order). Fills c.domains, c.domain_index, c.kinds.
status build_domains(const ClusterSpec &spec, Cluster &c, std::vector<size_t> &order)
{
	std::unordered_map<std::string, size_t> by_name;
	for (size_t i = 0; i < spec.domains.size(); i++) {
		const auto &d = spec.domains[i];
		if (d.name.empty())
			return unexpected(d.where, "domain without a name");
		if (!by_name.emplace(d.name, i).second)
			return unexpected(d.where, "duplicate domain name " + quoted(d.name));
		if (d.uplink_gbps < 0)
			return unexpected(d.where, "negative uplink bandwidth");
	}
	std::vector<std::vector<size_t>> kids(spec.domains.size());
	std::vector<size_t> roots;
	for (size_t i = 0; i < spec.domains.size(); i++) {
		const auto &d = spec.domains[i];
		if (d.parent.empty()) {
			roots.push_back(i);
			continue;
		}
		auto p = by_name.find(d.parent);
		if (p == by_name.end())
			return unexpected(d.where, "parent " + quoted(d.parent) + " is not a domain");
		kids[p->second].push_back(i);
	}
	// Depth-first from the roots; anything not reached lies on a cycle.
	std::vector<Index> new_index(spec.domains.size(), none);
	std::vector<std::pair<size_t, uint16_t>> stack;
	for (auto it = roots.rbegin(); it != roots.rend(); ++it)
		stack.emplace_back(*it, 0);
	while (!stack.empty()) {
		auto [i, level] = stack.back();
		stack.pop_back();
		if (level >= max_domain_depth)
			return unexpected(spec.domains[i].where,
					  "domain tree deeper than " + std::to_string(max_domain_depth) + " levels");
		new_index[i] = static_cast<Index>(order.size());
		order.push_back(i);
		for (auto it = kids[i].rbegin(); it != kids[i].rend(); ++it)
			stack.emplace_back(*it, static_cast<uint16_t>(level + 1));
		Domain d;
		d.name = spec.domains[i].name;
		d.level = level;
		d.uplink_gbps = spec.domains[i].uplink_gbps;
		c.domains.push_back(std::move(d));
	}
	for (size_t i = 0; i < spec.domains.size(); i++)
		if (new_index[i] == none)
			return unexpected(spec.domains[i].where,
					  "domain " + quoted(spec.domains[i].name) + " is part of a parent cycle");
	for (size_t k = 0; k < order.size(); k++) {
		const auto &s = spec.domains[order[k]];
		Domain &d = c.domains[k];
		if (!s.parent.empty())
			d.parent = new_index[by_name[s.parent]];
		for (size_t kid : kids[order[k]])
			d.children.push_back(new_index[kid]);
		c.domain_index.emplace(d.name, static_cast<Index>(k));
		c.levels = std::max<uint16_t>(c.levels, static_cast<uint16_t>(d.level + 1));
	}
	// Kinds: as given, else by height (children follow their parent in
	// pre-order, so a reverse pass sees every child first).
	std::vector<unsigned> height(order.size(), 0);
	for (size_t k = order.size(); k-- > 0;)
		for (Index kid : c.domains[k].children)
			height[k] = std::max(height[k], height[static_cast<size_t>(kid)] + 1);
	for (size_t k = 0; k < order.size(); k++) {
		const std::string &given = spec.domains[order[k]].kind;
		std::string by_height =
			height[k] < spec.level_names.size() ? spec.level_names[height[k]] : default_kind(height[k]);
		c.domains[k].kind = c.kinds.intern(given.empty() ? by_height : given);
	}
	return ok();
}

// Rail switches: unique names (also against domains), a rail-group domain,
// one switch per rail number of a group.
status build_rails(const ClusterSpec &spec, Cluster &c)
{
	std::set<std::pair<Index, int>> taken;
	for (const RailSpec &r : spec.rails) {
		if (r.name.empty())
			return unexpected(r.where, "rail switch without a name");
		if (c.domain_index.count(r.name))
			return unexpected(r.where, "rail switch " + quoted(r.name) + " has the name of a domain");
		Index g = c.find_domain(r.group);
		if (g == none)
			return unexpected(r.where, "rail group " + quoted(r.group) + " is not a domain");
		if (!c.domains[g].children.empty())
			return unexpected(r.where, "rail group " + quoted(r.group) +
							   " has child domains (nodes hang on a rail group directly)");
		if (r.index < 0 || r.index > 32767)
			return unexpected(r.where, "rail number out of range");
		if (r.uplink_gbps < 0)
			return unexpected(r.where, "negative uplink bandwidth");
		if (!taken.emplace(g, r.index).second)
			return unexpected(r.where, "rail " + std::to_string(r.index) + " of " + quoted(r.group) +
							   " is given twice");
		Index id = static_cast<Index>(c.rails.size());
		if (!c.rail_index.emplace(r.name, id).second)
			return unexpected(r.where, "duplicate rail switch " + quoted(r.name));
		c.rails.push_back(Rail{r.name, g, static_cast<int16_t>(r.index), r.uplink_gbps});
	}
	return ok();
}

// NVLink domains: unique names, in input order.
status build_nvlink_domains(const ClusterSpec &spec, Cluster &c)
{
	for (const auto &v : spec.nvlink_domains) {
		if (v.name.empty())
			return unexpected(v.where, "NVLink domain without a name");
		Index id = static_cast<Index>(c.nvlink_domains.size());
		if (!c.nvlink_index.emplace(v.name, id).second)
			return unexpected(v.where, "duplicate NVLink domain " + quoted(v.name));
		c.nvlink_domains.push_back(NvlinkDomain{v.name, v.gbps, {}, 0});
	}
	return ok();
}

} // namespace

expected<Cluster> build_cluster(ClusterSpec spec)
{
	if (spec.nodes.size() > max_cluster_nodes)
		return unexpected("cluster", "more than " + std::to_string(max_cluster_nodes) + " nodes");
	if (spec.domains.size() > max_cluster_domains || spec.nvlink_domains.size() > max_cluster_domains ||
	    spec.rails.size() > max_cluster_domains)
		return unexpected("cluster", "more than " + std::to_string(max_cluster_domains) +
						     " switches, NVLink domains or rails");
	Cluster c;
	c.name = spec.name;
	c.pcie_gbps = spec.pcie_gbps;
	c.models.intern("");
	c.classes.intern("");
	std::vector<size_t> order;
	if (status st = build_domains(spec, c, order); !st)
		return unexpected(st.error());
	if (status st = build_rails(spec, c); !st)
		return unexpected(st.error());
	if (status st = build_nvlink_domains(spec, c); !st)
		return unexpected(st.error());
	if (status st = build_nodes(spec, c); !st)
		return unexpected(st.error());
	if (c.kinds.size() > 60000 || c.models.size() > 60000 || c.classes.size() > 60000 || c.features.size() > 60000)
		return unexpected("cluster", "too many distinct names (kinds, models, classes or features)");
	return c;
}

} // namespace loom::topo
