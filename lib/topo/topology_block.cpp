// loom topology: topology.conf for topology/block, in and out (slurm_conf.hpp).
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

struct Block {
	std::string name, where;
	std::vector<std::string> nodes;
};

// The blocks with their nodes expanded: names unique, each node in one block.
expected<std::vector<Block>> expand_blocks(const std::vector<BlockRecord> &records, const std::string &source)
{
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
			return unexpected(r.where,
					  "block '" + b.name + "' defined twice (first at " + it->second + ")");
		block_where[b.name] = r.where;
		auto names = node_names.expand(r.nodes);
		if (!names)
			return unexpected(r.where, "nodes: " + names.error().message);
		for (auto &n : *names) {
			if (auto it = node_where.find(n); it != node_where.end())
				return unexpected(r.where,
						  "node '" + n + "' is already in a block (" + it->second + ")");
			node_where[n] = r.where;
			b.nodes.push_back(n);
		}
		if (b.nodes.empty())
			return unexpected(r.where, "block '" + b.name + "' has no nodes");
		blocks.push_back(std::move(b));
	}
	if (blocks.empty())
		return unexpected(source, "no blocks");
	return blocks;
}

// BlockSizes: each a node count, a power of two times the one before; none
// given: default_block_sizes(). No block is smaller than the first.
status check_block_sizes(const std::vector<Block> &blocks, std::vector<int> &sizes, const std::string &sizes_where)
{
	for (size_t k = 1; k < sizes.size(); k++) {
		long n = sizes[k], prev = sizes[k - 1];
		if (n <= prev || n % prev != 0 || ((n / prev) & (n / prev - 1)) != 0)
			return unexpected(sizes_where, "BlockSizes: " + std::to_string(n) +
							       " is not a power of two times " + std::to_string(prev));
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
							   " nodes, fewer than the base block size " +
							   std::to_string(sizes[0]) + " (" + sizes_where + ")");
	return ok();
}

// Each larger block size groups that many consecutive blocks of the size
// below ("blockSIZE"); a root ("blocks") holds them all. 'below' holds the
// base blocks, 'at' every domain's index in s.domains.
status aggregate_blocks(ClusterSpec &s, std::vector<std::string> below, std::map<std::string, size_t> &at,
			const std::vector<int> &sizes, const std::string &sizes_where, const std::string &source)
{
	for (size_t k = 1; k < sizes.size() && below.size() > 1; k++) {
		size_t group = static_cast<size_t>(sizes[k] / sizes[k - 1]);
		std::vector<std::string> level;
		for (size_t i = 0; i < below.size(); i += group) {
			std::string name = "block" + std::to_string(sizes[k]) + "-" + std::to_string(level.size() + 1);
			if (at.count(name))
				return unexpected(sizes_where,
						  "a block is named '" + name + "', the name of an aggregated block");
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
	return ok();
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

expected<ClusterSpec> block_spec(const std::vector<BlockRecord> &records, std::vector<int> sizes,
				 const std::string &sizes_where, const std::string &source)
{
	LOOM_TRY(blocks, expand_blocks(records, source));
	LOOM_CHECK(check_block_sizes(blocks, sizes, sizes_where));
	// Base blocks are NVLink domains and domains of kind "block".
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
	LOOM_CHECK(aggregate_blocks(s, std::move(below), at, sizes, sizes_where, source));
	return s;
}

expected<ClusterSpec> parse_block_conf(std::string_view text, const std::string &source)
{
	std::vector<BlockRecord> blocks;
	std::vector<int> sizes;
	std::string sizes_where;
	for (auto &[line_no, line] : slurm_logical_lines(text)) {
		std::string where = source + ":" + std::to_string(line_no);
		LOOM_TRY(words, slurm_words(line, where));
		if (slurm_key_is(words[0].first, "BlockSizes")) {
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
		if (!slurm_key_is(words[0].first, "BlockName"))
			return unexpected(where,
					  "expected BlockName= or BlockSizes= (the block plugin's format), found " +
						  words[0].first + "=");
		BlockRecord b{words[0].second, "", where};
		if (b.name.empty())
			return unexpected(where, "empty BlockName");
		for (size_t k = 1; k < words.size(); k++) {
			if (!slurm_key_is(words[k].first, "Nodes"))
				return unexpected(where,
						  "unknown key " + words[k].first + "= (a block has Nodes= only)");
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

} // namespace loom::topo
