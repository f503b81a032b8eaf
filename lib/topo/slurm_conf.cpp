#include "lib/topo/slurm_conf.hpp"

#include "lib/util/hostlist.hpp"
#include "lib/topo/try.hpp"
#include "lib/util/fs.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <set>
#include <strings.h>

namespace loom::topo {

namespace {

bool key_is(const std::string &k, const char *want) { return strcasecmp(k.c_str(), want) == 0; }

// Logical lines: comments cut, backslash continuations joined; each with its first line number.
std::vector<std::pair<size_t, std::string>> logical_lines(std::string_view text)
{
	std::vector<std::pair<size_t, std::string>> out;
	auto lines = split_lines(text);
	std::string acc;
	size_t first = 0;
	for (size_t i = 0; i < lines.size(); i++) {
		std::string l = lines[i];
		if (size_t h = l.find('#'); h != std::string::npos)
			l.erase(h);
		std::string_view t = trim(l);
		bool cont = !t.empty() && t.back() == '\\';
		if (cont)
			t.remove_suffix(1);
		if (acc.empty())
			first = i + 1;
		acc += std::string(t) + " ";
		if (!cont) {
			if (!trim(acc).empty())
				out.emplace_back(first, std::string(trim(acc)));
			acc.clear();
		}
	}
	if (!trim(acc).empty())
		out.emplace_back(first, std::string(trim(acc)));
	return out;
}

} // namespace

expected<std::vector<std::pair<std::string, std::string>>> slurm_words(std::string_view line, const std::string &where)
{
	std::vector<std::pair<std::string, std::string>> out;
	size_t i = 0;
	while (i < line.size()) {
		while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i])))
			i++;
		if (i >= line.size())
			break;
		size_t eq = i;
		while (eq < line.size() && line[eq] != '=' && !std::isspace(static_cast<unsigned char>(line[eq])))
			eq++;
		if (eq >= line.size() || line[eq] != '=' || eq == i)
			return unexpected(where, "expected Key=Value, found '" + std::string(line.substr(i, eq - i)) + "'");
		std::string key(line.substr(i, eq - i)), value;
		i = eq + 1;
		if (i < line.size() && line[i] == '"') {
			size_t close = line.find('"', i + 1);
			if (close == std::string_view::npos)
				return unexpected(where, "unterminated quote in value of " + key);
			value = line.substr(i + 1, close - i - 1);
			i = close + 1;
		} else {
			size_t end = i;
			while (end < line.size() && !std::isspace(static_cast<unsigned char>(line[end])))
				end++;
			value = line.substr(i, end - i);
			i = end;
		}
		out.emplace_back(std::move(key), std::move(value));
	}
	return out;
}

expected<ClusterSpec> tree_spec(const std::vector<SwitchRecord> &switches, const std::string &source)
{
	ClusterSpec s;
	std::map<std::string, size_t> switch_at;        // name -> index in s.domains
	std::map<std::string, std::string> parent_of;   // child switch -> parent switch
	std::map<std::string, std::string> parent_where;
	std::map<std::string, std::string> node_where;  // node -> where first placed
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
				return unexpected(where, "switch '" + k + "' already has parent '" + parent_of[k] + "' (" +
								 parent_where[k] + ")");
			parent_of[k] = r.name;
			parent_where[k] = where;
			refs.emplace_back(k, where);
		}
		for (auto &n : *nodes) {
			if (auto it = node_where.find(n); it != node_where.end())
				return unexpected(where, "node '" + n + "' is already under a switch (" + it->second + ")");
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
	for (auto &[line_no, line] : logical_lines(text)) {
		std::string where = source + ":" + std::to_string(line_no);
		LOOM_TRY(words, slurm_words(line, where));
		if (!key_is(words[0].first, "SwitchName"))
			return unexpected(where, "expected SwitchName= (only the tree plugin's format is read), found " +
							 words[0].first + "=");
		SwitchRecord r{words[0].second, "", "", 0, where};
		if (r.name.empty())
			return unexpected(where, "empty SwitchName");
		for (size_t k = 1; k < words.size(); k++) {
			const auto &[key, value] = words[k];
			if (key_is(key, "Nodes")) {
				r.nodes += (r.nodes.empty() ? "" : ",") + value;
				if (auto n = hostlist_count(value); !n)
					return unexpected(where, "Nodes=: " + n.error().message);
			} else if (key_is(key, "Switches")) {
				r.switches += (r.switches.empty() ? "" : ",") + value;
				if (auto n = hostlist_count(value); !n)
					return unexpected(where, "Switches=: " + n.error().message);
			} else if (key_is(key, "LinkSpeed")) {
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
			sw.comment = dom.name + ": a rail group. Each node has a NIC on each of its " +
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

namespace {

// The blocks of topology/block: the NVLink domains, ordered by their first
// node (the tree's order, so blocks under one switch are neighbours, which
// is what the block plugin pairs into larger blocks).
std::vector<Index> block_order(const Cluster &c)
{
	std::vector<Index> order;
	for (Index v = 0; v < static_cast<Index>(c.nvlink_domains.size()); v++)
		if (!c.nvlink_domains[v].nodes.empty())
			order.push_back(v);
	std::sort(order.begin(), order.end(),
		  [&](Index a, Index b) { return c.nvlink_domains[a].nodes[0] < c.nvlink_domains[b].nodes[0]; });
	return order;
}

} // namespace

std::vector<int> default_block_sizes(int smallest, int blocks)
{
	std::vector<int> sizes;
	if (smallest <= 0 || blocks <= 0)
		return sizes;
	for (long s = smallest, k = 1; k <= blocks && s <= (1 << 24); s *= 2, k *= 2)
		sizes.push_back(static_cast<int>(s));
	return sizes;
}

expected<std::vector<SlurmBlock>> slurm_blocks(const Cluster &c, std::vector<int> *sizes)
{
	std::vector<SlurmBlock> out;
	int smallest = 0;
	for (Index v : block_order(c)) {
		const NvlinkDomain &nv = c.nvlink_domains[v];
		std::vector<std::string> names;
		for (Index n : nv.nodes)
			names.push_back(c.nodes[n].name);
		out.push_back(SlurmBlock{nv.name, hostlist_compress(names)});
		int count = static_cast<int>(nv.nodes.size());
		smallest = smallest == 0 ? count : std::min(smallest, count);
	}
	if (out.empty())
		return unexpected("block", "the cluster has no NVLink domains, and topology/block's blocks are NVLink "
					   "domains (write topology.conf for topology/tree instead)");
	if (sizes)
		*sizes = default_block_sizes(smallest, static_cast<int>(out.size()));
	return out;
}

expected<std::string> write_block_conf(const Cluster &c)
{
	std::vector<int> sizes;
	LOOM_TRY(blocks, slurm_blocks(c, &sizes));
	std::string out = "# topology.conf for the block plugin (TopologyPlugin=topology/block), written by loom:\n"
			  "# one block per NVLink domain; BlockSizes doubles the smallest block up to all of them\n";
	for (const SlurmBlock &b : blocks)
		out += "BlockName=" + b.name + " Nodes=" + b.nodes + "\n";
	std::vector<std::string> words;
	for (int v : sizes)
		words.push_back(std::to_string(v));
	out += "BlockSizes=" + join(words, ",") + "\n";
	return out;
}

namespace {

// A YAML double-quoted scalar.
std::string yq(const std::string &s)
{
	std::string out = "\"";
	for (char ch : s) {
		if (ch == '"' || ch == '\\')
			out += '\\';
		out += ch;
	}
	return out + "\"";
}

} // namespace

std::string write_topology_yaml(const Cluster &c)
{
	std::string out = "# topology.yaml (Slurm 25.05 and later), written by loom: the switch tree as\n"
			  "# topology \"fabric\" (tree), the NVLink domains as topology \"nvlink\" (block)\n---\n";
	std::vector<std::string> skipped;
	auto switches = tree_switches(c, &skipped);
	if (!switches.empty()) {
		out += "- topology: fabric\n  cluster_default: true\n  tree:\n    switches:\n";
		for (const TreeSwitch &sw : switches) {
			if (!sw.comment.empty())
				out += "      # " + sw.comment + "\n";
			out += "      - switch: " + yq(sw.name) + "\n";
			if (!sw.nodes.empty())
				out += "        nodes: " + yq(sw.nodes) + "\n";
			if (!sw.children.empty())
				out += "        children: " + yq(sw.children) + "\n";
		}
		if (!skipped.empty())
			out += "    # left out, no nodes below them: " + join(skipped, ", ") + "\n";
	}
	std::vector<int> sizes;
	if (auto blocks = slurm_blocks(c, &sizes)) {
		out += std::string("- topology: nvlink\n  cluster_default: ") + (switches.empty() ? "true" : "false") +
		       "\n  block:\n    block_sizes:\n";
		for (int v : sizes)
			out += "      - " + std::to_string(v) + "\n";
		out += "    blocks:\n";
		for (const SlurmBlock &b : *blocks)
			out += "      - block: " + yq(b.name) + "\n        nodes: " + yq(b.nodes) + "\n";
	}
	if (switches.empty() && c.nvlink_domains.empty())
		out += "- topology: flat\n  cluster_default: true\n  flat: true\n";
	return out;
}

expected<ClusterSpec> block_spec(const std::vector<BlockRecord> &records, std::vector<int> sizes,
				 const std::string &sizes_where, const std::string &source)
{
	struct Block {
		std::string name, where;
		std::vector<std::string> nodes;
	};
	std::vector<Block> blocks;
	std::map<std::string, std::string> node_where, block_where;
	HostlistBudget node_names(max_cluster_nodes, "nodes");
	if (records.size() > max_cluster_domains)
		return unexpected(source, "more than " + std::to_string(max_cluster_domains) + " blocks");
	for (const BlockRecord &r : records) {
		Block b{r.name, r.where, {}};
		if (b.name.empty())
			return unexpected(r.where, "empty block name");
		if (auto it = block_where.find(b.name); it != block_where.end())
			return unexpected(r.where, "block '" + b.name + "' defined twice (first at " + it->second + ")");
		block_where[b.name] = r.where;
		auto names = node_names.expand(r.nodes);
		if (!names)
			return unexpected(r.where, "nodes: " + names.error().message);
		for (auto &n : *names) {
			if (auto it = node_where.find(n); it != node_where.end())
				return unexpected(r.where, "node '" + n + "' is already in a block (" + it->second + ")");
			node_where[n] = r.where;
			b.nodes.push_back(n);
		}
		if (b.nodes.empty())
			return unexpected(r.where, "block '" + b.name + "' has no nodes");
		blocks.push_back(std::move(b));
	}
	if (blocks.empty())
		return unexpected(source, "no blocks");
	for (size_t k = 1; k < sizes.size(); k++) {
		long n = sizes[k], prev = sizes[k - 1];
		if (n <= prev || n % prev != 0 || ((n / prev) & (n / prev - 1)) != 0)
			return unexpected(sizes_where, "BlockSizes: " + std::to_string(n) + " is not a power of two times " +
							       std::to_string(prev));
	}
	for (int v : sizes)
		if (v <= 0 || v > (1 << 24))
			return unexpected(sizes_where, "BlockSizes: not a node count: " + std::to_string(v));
	size_t smallest = blocks[0].nodes.size();
	for (const Block &b : blocks)
		smallest = std::min(smallest, b.nodes.size());
	if (sizes.empty())
		sizes = default_block_sizes(static_cast<int>(smallest), static_cast<int>(blocks.size()));
	for (const Block &b : blocks)
		if (b.nodes.size() < static_cast<size_t>(sizes[0]))
			return unexpected(b.where, "block '" + b.name + "' has " + std::to_string(b.nodes.size()) +
							   " nodes, fewer than the base block size " + std::to_string(sizes[0]) +
							   " (" + sizes_where + ")");
	// Base blocks are NVLink domains and domains of kind "block"; each larger
	// block size groups that many consecutive base blocks ("blockSIZE"); a
	// root holds them all.
	ClusterSpec s;
	std::vector<std::string> below; // the domains of the level below
	std::map<std::string, size_t> at;
	for (const Block &b : blocks) {
		s.nvlink_domains.push_back(NvlinkDomainSpec{b.name, 0, b.where});
		at[b.name] = s.domains.size();
		s.domains.push_back(DomainSpec{b.name, "block", "", 0, b.where});
		below.push_back(b.name);
		for (const std::string &n : b.nodes) {
			NodeSpec ns;
			ns.name = n;
			ns.domain = b.name;
			ns.nvlink_domain = b.name;
			ns.where = b.where;
			s.nodes.push_back(std::move(ns));
		}
	}
	for (size_t k = 1; k < sizes.size() && below.size() > 1; k++) {
		size_t group = static_cast<size_t>(sizes[k] / sizes[k - 1]);
		std::vector<std::string> level;
		for (size_t i = 0; i < below.size(); i += group) {
			std::string name = "block" + std::to_string(sizes[k]) + "-" + std::to_string(level.size() + 1);
			if (at.count(name))
				return unexpected(sizes_where, "a block is named '" + name + "', the name of an aggregated block");
			at[name] = s.domains.size();
			s.domains.push_back(DomainSpec{name, "block" + std::to_string(sizes[k]), "", 0, sizes_where});
			for (size_t j = i; j < std::min(below.size(), i + group); j++)
				s.domains[at[below[j]]].parent = name;
			level.push_back(name);
		}
		below = std::move(level);
	}
	if (below.size() > 1) {
		if (at.count("blocks"))
			return unexpected(source, "a block is named 'blocks', the name of the root of all blocks");
		s.domains.push_back(DomainSpec{"blocks", "blocks", "", 0, source});
		for (auto &d : s.domains)
			if (d.parent.empty() && d.name != "blocks")
				d.parent = "blocks";
	}
	return s;
}

expected<ClusterSpec> parse_block_conf(std::string_view text, const std::string &source)
{
	std::vector<BlockRecord> blocks;
	std::vector<int> sizes;
	std::string sizes_where;
	for (auto &[line_no, line] : logical_lines(text)) {
		std::string where = source + ":" + std::to_string(line_no);
		LOOM_TRY(words, slurm_words(line, where));
		if (key_is(words[0].first, "BlockSizes")) {
			if (words.size() != 1)
				return unexpected(where, "BlockSizes= takes no other key on its line");
			if (!sizes.empty())
				return unexpected(where, "BlockSizes given twice (first at " + sizes_where + ")");
			const std::string &v = words[0].second;
			for (size_t p = 0; p <= v.size();) {
				size_t comma = v.find(',', p);
				std::string w = v.substr(p, comma == std::string::npos ? std::string::npos : comma - p);
				char *end = nullptr;
				long n = std::strtol(w.c_str(), &end, 10);
				if (w.empty() || *end || n <= 0 || n > (1 << 24))
					return unexpected(where, "BlockSizes=: not a node count: '" + shown(w) + "'");
				sizes.push_back(static_cast<int>(n));
				if (comma == std::string::npos)
					break;
				p = comma + 1;
			}
			sizes_where = where;
			continue;
		}
		if (!key_is(words[0].first, "BlockName"))
			return unexpected(where, "expected BlockName= or BlockSizes= (the block plugin's format), found " +
							 words[0].first + "=");
		BlockRecord b{words[0].second, "", where};
		if (b.name.empty())
			return unexpected(where, "empty BlockName");
		for (size_t k = 1; k < words.size(); k++) {
			if (!key_is(words[k].first, "Nodes"))
				return unexpected(where, "unknown key " + words[k].first + "= (a block has Nodes= only)");
			if (auto n = hostlist_count(words[k].second); !n)
				return unexpected(where, "Nodes=: " + n.error().message);
			b.nodes += (b.nodes.empty() ? "" : ",") + words[k].second;
		}
		if (b.nodes.empty())
			return unexpected(where, "block '" + b.name + "' has no Nodes=");
		blocks.push_back(std::move(b));
	}
	if (blocks.empty())
		return unexpected(source, "no BlockName= lines");
	return block_spec(blocks, sizes, sizes_where, source);
}

expected<std::vector<SlurmNode>> parse_slurm_nodes(std::string_view text, const std::string &source)
{
	std::vector<SlurmNode> out;
	SlurmNode defaults;
	bool includes = false, node_lines = false;
	HostlistBudget node_names(max_cluster_nodes, "nodes");
	for (auto &[line_no, line] : logical_lines(text)) {
		std::string where = source + ":" + std::to_string(line_no);
		// Every line is Key=Value... or an include: anything else is not a
		// slurm.conf (a binary, another program's file), said at its line.
		if (strncasecmp(line.c_str(), "include", 7) == 0 && line.size() > 7 &&
		    std::isspace(static_cast<unsigned char>(line[7]))) {
			includes = true;
			continue;
		}
		size_t eq = line.find('=');
		size_t key_end = line.find_first_of(" \t=");
		if (eq == std::string::npos || key_end != eq || eq == 0 ||
		    !std::all_of(line.begin(), line.begin() + static_cast<std::ptrdiff_t>(eq),
				 [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'; }))
			return unexpected(where, "not a slurm.conf line (expected Key=Value): '" + shown(line) + "'");
		if (line.size() < 9 || strncasecmp(line.c_str(), "NodeName=", 9) != 0)
			continue;
		node_lines = true;
		LOOM_TRY(words, slurm_words(line, where));
		SlurmNode proto = defaults;
		proto.where = where;
		for (size_t k = 1; k < words.size(); k++) {
			const auto &[key, value] = words[k];
			if (key_is(key, "Feature") || key_is(key, "Features")) {
				proto.features.clear();
				for (size_t p = 0; p <= value.size();) {
					size_t comma = value.find(',', p);
					std::string f = value.substr(p, comma == std::string::npos ? std::string::npos : comma - p);
					if (!f.empty())
						proto.features.push_back(f);
					if (comma == std::string::npos)
						break;
					p = comma + 1;
				}
			} else if (key_is(key, "Gres")) {
				for (size_t p = 0; p <= value.size();) {
					size_t comma = value.find(',', p);
					std::string g = value.substr(p, comma == std::string::npos ? std::string::npos : comma - p);
					// gpu[:type]:count[(S:...)]
					if (g.rfind("gpu", 0) == 0) {
						g = g.substr(0, g.find('('));
						size_t c1 = g.find(':'), c2 = g.rfind(':');
						if (c1 == std::string::npos)
							proto.gpus = 1;
						else {
							std::string n = g.substr(c2 + 1);
							char *end = nullptr;
							long v = std::strtol(n.c_str(), &end, 10);
							if (n.empty() || *end || v < 0 || v > 1024)
								return unexpected(where, "Gres=: bad GPU count in '" + g + "'");
							proto.gpus = static_cast<int>(v);
							proto.gpu_type = c2 > c1 ? g.substr(c1 + 1, c2 - c1 - 1) : "";
						}
					}
					if (comma == std::string::npos)
						break;
					p = comma + 1;
				}
			}
		}
		if (strcasecmp(words[0].second.c_str(), "DEFAULT") == 0) {
			defaults = proto;
			continue;
		}
		auto names = node_names.expand(words[0].second);
		if (!names)
			return unexpected(where, "NodeName=: " + names.error().message);
		for (auto &n : *names) {
			SlurmNode sn = proto;
			sn.name = n;
			out.push_back(std::move(sn));
		}
	}
	if (!node_lines)
		return unexpected(source, includes ? "no NodeName= lines (they may be in an included file: give that one)"
						   : "no NodeName= lines: a slurm.conf without nodes");
	return out;
}

std::string write_gres_conf(const Cluster &c, Index node)
{
	const Node &n = c.nodes[node];
	std::string out;
	for (uint16_t i = 0; i < n.gpu_count; i++) {
		const Gpu &g = c.gpus[n.gpu_begin + i];
		out += "NodeName=" + n.name + " Name=gpu";
		std::string type = lower(c.models.name(g.model));
		for (char &ch : type)
			if (std::isspace(static_cast<unsigned char>(ch)))
				ch = '_';
		if (!type.empty())
			out += " Type=" + type;
		out += " File=/dev/nvidia" + std::to_string(g.index) + " Links=";
		for (uint16_t j = 0; j < n.gpu_count; j++) {
			const Gpu &h = c.gpus[n.gpu_begin + j];
			int links = 0;
			if (i == j)
				links = -1;
			else if (g.nvswitch && h.nvswitch)
				links = std::min(g.nvlinks, h.nvlinks);
			else
				for (const auto &p : g.peers)
					if (p.gpu == h.index)
						links = p.links;
			out += (j ? "," : "") + std::to_string(links);
		}
		out += "\n";
	}
	return out;
}

} // namespace loom::topo
