// loom topology: topology.conf for topology/tree, in and out (slurm_conf.hpp).
#include "lib/topo/slurm_conf.hpp"

#include "lib/topo/try.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/hostlist.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <set>
#include <strings.h>

namespace loom::topo {

expected<ClusterSpec> tree_spec(const std::vector<SwitchRecord> &switches, const std::string &source)
{
	ClusterSpec s;
	std::map<std::string, size_t> switch_at;      // name -> index in s.domains
	std::map<std::string, std::string> parent_of; // child switch -> parent switch
	std::map<std::string, std::string> parent_where;
	std::map<std::string, std::string> node_where;         // node -> where first placed
	std::vector<std::pair<std::string, std::string>> refs; // (child, where) for dangling checks
	HostlistBudget node_names(max_cluster_nodes, "nodes"), switch_names(max_cluster_domains, "child switches");
	if (switches.size() > max_cluster_domains)
		return unexpected(source, "more than " + std::to_string(max_cluster_domains) + " switches");
	for (const SwitchRecord &r : switches) {
		const std::string &where = r.where;
		if (r.name.empty())
			return unexpected(where, "empty switch name");
		if (auto it = switch_at.find(r.name); it != switch_at.end())
			return unexpected(where, "switch '" + r.name + "' defined twice (first at " +
							 s.domains[it->second].where + ")");
		switch_at[r.name] = s.domains.size();
		s.domains.push_back(DomainSpec{r.name, "", "", r.link_gbps, where}); // kinds by height
		auto nodes = node_names.expand(r.nodes);
		if (!nodes)
			return unexpected(where, "nodes: " + nodes.error().message);
		auto kids = switch_names.expand(r.switches);
		if (!kids)
			return unexpected(where, "switches: " + kids.error().message);
		for (auto &k : *kids) {
			if (parent_of.count(k))
				return unexpected(where, "switch '" + k + "' already has parent '" + parent_of[k] +
								 "' (" + parent_where[k] + ")");
			parent_of[k] = r.name;
			parent_where[k] = where;
			refs.emplace_back(k, where);
		}
		for (auto &n : *nodes) {
			if (auto it = node_where.find(n); it != node_where.end())
				return unexpected(where,
						  "node '" + n + "' is already under a switch (" + it->second + ")");
			node_where[n] = where;
			NodeSpec ns;
			ns.name = n;
			ns.domain = r.name;
			ns.where = where;
			s.nodes.push_back(std::move(ns));
		}
	}
	for (auto &[child, where] : refs)
		if (!switch_at.count(child))
			return unexpected(where, "switch '" + child + "' is not defined");
	for (auto &[child, parent] : parent_of)
		s.domains[switch_at[child]].parent = parent;
	if (s.domains.empty())
		return unexpected(source, "no switches");
	return s;
}

expected<ClusterSpec> parse_topology_conf(std::string_view text, const std::string &source)
{
	std::vector<SwitchRecord> switches;
	for (auto &[line_no, line] : slurm_logical_lines(text)) {
		std::string where = source + ":" + std::to_string(line_no);
		LOOM_TRY(words, slurm_words(line, where));
		if (!slurm_key_is(words[0].first, "SwitchName"))
			return unexpected(where,
					  "expected SwitchName= (only the tree plugin's format is read), found " +
						  words[0].first + "=");
		SwitchRecord r{words[0].second, "", "", 0, where};
		if (r.name.empty())
			return unexpected(where, "empty SwitchName");
		for (size_t k = 1; k < words.size(); k++) {
			const auto &[key, value] = words[k];
			if (slurm_key_is(key, "Nodes")) {
				r.nodes += (r.nodes.empty() ? "" : ",") + value;
				if (auto n = hostlist_count(value); !n)
					return unexpected(where, "Nodes=: " + n.error().message);
			} else if (slurm_key_is(key, "Switches")) {
				r.switches += (r.switches.empty() ? "" : ",") + value;
				if (auto n = hostlist_count(value); !n)
					return unexpected(where, "Switches=: " + n.error().message);
			} else if (slurm_key_is(key, "LinkSpeed")) {
				// Slurm ignores LinkSpeed; we keep it as the uplink figure when numeric.
				char *end = nullptr;
				double v = std::strtod(value.c_str(), &end);
				if (value.empty() || *end || v < 0)
					return unexpected(where, "LinkSpeed=: not a number: '" + value + "'");
				r.link_gbps = v;
			} else {
				return unexpected(where, "unknown key " + key + "=");
			}
		}
		switches.push_back(std::move(r));
	}
	if (switches.empty())
		return unexpected(source, "no SwitchName= lines");
	return tree_spec(switches, source);
}

std::vector<TreeSwitch> tree_switches(const Cluster &c, std::vector<std::string> *skipped)
{
	std::vector<TreeSwitch> out;
	// Children before parents, as Slurm's own examples do. A switch that
	// holds no node anywhere below is left out: the tree plugin stops
	// slurmctld at a switch with neither nodes nor child switches.
	for (Index d = static_cast<Index>(c.domains.size()) - 1; d >= 0; d--) {
		const Domain &dom = c.domains[d];
		if (dom.node_count() == 0) {
			if (skipped)
				skipped->push_back(dom.name);
			continue;
		}
		TreeSwitch sw;
		sw.name = dom.name;
		if (std::vector<Index> rails = c.rails_of(d); !rails.empty()) {
			std::vector<std::string> names;
			for (Index r : rails)
				names.push_back(c.rails[r].name);
			sw.comment =
				dom.name + ": a rail group. Each node has a NIC on each of its " +
				std::to_string(rails.size()) + " rail switches (" + join(names, ", ") +
				"); the tree plugin cannot put a node under several switches, so the group stands here "
				"as the lowest switch.";
		}
		std::vector<std::string> names;
		for (Index n = dom.node_begin; n < dom.direct_end; n++)
			names.push_back(c.nodes[n].name);
		sw.nodes = hostlist_compress(names);
		std::vector<std::string> kids;
		for (Index k : dom.children)
			if (c.domains[k].node_count() > 0)
				kids.push_back(c.domains[k].name);
		sw.children = hostlist_compress(kids);
		out.push_back(std::move(sw));
	}
	return out;
}

std::string write_topology_conf(const Cluster &c)
{
	std::string out = "# topology.conf for the tree plugin, written by loom\n";
	std::vector<std::string> skipped;
	for (const TreeSwitch &sw : tree_switches(c, &skipped)) {
		if (!sw.comment.empty())
			out += "# " + sw.comment + "\n";
		out += "SwitchName=" + sw.name;
		if (!sw.nodes.empty())
			out += " Nodes=" + sw.nodes;
		if (!sw.children.empty())
			out += " Switches=" + sw.children;
		out += "\n";
	}
	if (!skipped.empty())
		out += "# left out, no nodes below them: " + join(skipped, ", ") + "\n";
	return out;
}

} // namespace loom::topo
