// loom topology: the Slurm files, one reader (and writer) per format:
// slurm.conf's NodeName= lines (names, GPU gres, features) and gres.conf
// (slurm_conf.cpp, with the line reader all of them share); topology.conf for
// topology/tree (topology_tree.cpp) and topology/block (topology_block.cpp);
// topology.yaml (topology_yaml.cpp).
#pragma once

#include "lib/topo/build.hpp"
#include "lib/util/expected.hpp"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace loom::topo {

// The logical lines of a Slurm config file: comments cut, backslash
// continuations joined; each with its first line number.
std::vector<std::pair<size_t, std::string>> slurm_logical_lines(std::string_view text);
// A key compared as Slurm compares them, ignoring case.
bool slurm_key_is(const std::string &key, const char *want);
// One "Key=Value Key2=Value2" line of a Slurm config file: keys as written,
// quotes removed. A word without '=' is an error.
expected<std::vector<std::pair<std::string, std::string>>> slurm_words(std::string_view line, const std::string &where);

// One switch or block as the tree and block plugins take them, from any of
// their files (topology.conf, topology.yaml); 'where' names its place.
struct SwitchRecord {
	std::string name, nodes, switches; // hostlists
	double link_gbps = 0;
	std::string where;
};
struct BlockRecord {
	std::string name, nodes;
	std::string where;
};
// The tree plugin's switches as a description (kinds by height; a node under
// two switches, a switch with two parents, an undefined switch: errors).
expected<ClusterSpec> tree_spec(const std::vector<SwitchRecord> &switches, const std::string &source);
// The block plugin's blocks (sizes empty: the default doubling).
expected<ClusterSpec> block_spec(const std::vector<BlockRecord> &blocks, std::vector<int> sizes,
				 const std::string &sizes_where, const std::string &source);

// topology.conf: SwitchName= lines with Nodes= and/or Switches= (hostlists).
// Switches become domains ("leaf" when they hold nodes, else "switch"), nodes
// get their switch as domain and no hardware. A node under two switches, a
// switch with two parents, an undefined switch or a cycle is an error with
// file:line.
expected<ClusterSpec> parse_topology_conf(std::string_view text, const std::string &source);
// One switch of the tree plugin's view: hostlists of its own nodes and of
// its child switches, and a note for people (a rail group says so).
struct TreeSwitch {
	std::string name, nodes, children, comment;
};
// The tree as the tree plugin takes it, children first; switches without
// nodes below them are left out (named in *skipped).
std::vector<TreeSwitch> tree_switches(const Cluster &c, std::vector<std::string> *skipped = nullptr);
// The tree as topology.conf (topology/tree).
std::string write_topology_conf(const Cluster &c);

// topology/block. A block is an NVLink domain (an NVL72 rack).
struct SlurmBlock {
	std::string name, nodes; // nodes: a hostlist
};
// The NVLink domains as blocks, neighbours in the tree next to each other;
// *sizes the BlockSizes: the smallest block doubled up to all blocks. An
// error when the cluster has no NVLink domain.
expected<std::vector<SlurmBlock>> slurm_blocks(const Cluster &c, std::vector<int> *sizes);
std::vector<int> default_block_sizes(int smallest_block, int blocks);
// topology.conf for topology/block: BlockName= lines and BlockSizes=.
expected<std::string> write_block_conf(const Cluster &c);
// topology.conf for topology/block in: each block an NVLink domain and a
// domain of kind "block"; each larger BlockSizes entry groups consecutive
// blocks into domains of kind "blockSIZE" (Slurm's aggregated blocks).
// Errors (file:line): a node in two blocks, a block smaller than the base
// size, BlockSizes not doubling, unknown keys.
expected<ClusterSpec> parse_block_conf(std::string_view text, const std::string &source);
// topology.yaml (Slurm 25.05+): topology "fabric" (tree, the cluster's
// default) and, when there are NVLink domains, topology "nvlink" (block).
std::string write_topology_yaml(const Cluster &c);
// topology.yaml in: the cluster's default topology (cluster_default: true,
// else the first) as the fabric: a tree as topology.conf's, a block as the
// block plugin's; with a tree, the blocks of every block topology are its
// NVLink domains. flat: no fabric. ring and torus3d: an error. Unknown keys,
// a node in two places: errors with file:line.
expected<ClusterSpec> parse_topology_yaml(std::string_view text, const std::string &source);

struct SlurmNode {
	std::string name;
	int gpus = -1;        // from Gres=gpu[:type]:N; -1 when not given
	std::string gpu_type; // "h100" in Gres=gpu:h100:8
	std::vector<std::string> features;
	std::string where; // file:line
};

// The NodeName= lines of slurm.conf (NodeName=DEFAULT sets defaults for later
// lines; a trailing backslash continues a line). Other lines are ignored.
expected<std::vector<SlurmNode>> parse_slurm_nodes(std::string_view text, const std::string &source);

// gres.conf lines for the node's GPUs: Name=gpu Type=<model> File=/dev/nvidiaN
// Cores=... Links=... (Links: -1 for itself, else the NVLink count to each GPU).
std::string write_gres_conf(const Cluster &c, Index node);

} // namespace loom::topo
