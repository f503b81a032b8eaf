// loom topology: reading any supported file by its format, and applying
// per-node facts (GPU counts, models, features) that a fabric file lacks.
#pragma once

#include "lib/topo/build.hpp"
#include "lib/topo/ibnetdiscover.hpp"
#include "lib/util/expected.hpp"

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace loom::topo {

enum class Format { unknown, loom_json, topology_conf, block_conf, topology_yaml, ibnetdiscover, hwloc_xml, nccl_xml };

const char *format_name(Format f);
// "json", "topology.conf", "block", "topology.yaml", "ibnetdiscover", "hwloc", "nccl"; unknown otherwise.
Format parse_format_name(std::string_view name);
// From the content (and the file name as a hint).
Format guess_format(std::string_view text, const std::string &path);
// The formats loom reads, for messages: "json, topology.conf, ...".
std::string readable_formats();

struct ReadOptions {
	IbOptions ib;
};

// Read any format into a description. 'note' receives one line about what was
// read and left out (e.g. unnamed HCAs), or stays empty.
expected<ClusterSpec> read_spec(std::string_view text, const std::string &source, Format f, std::string *note = nullptr,
				const ReadOptions &opt = {});
expected<ClusterSpec> read_spec_file(const std::string &path, Format f = Format::unknown, std::string *note = nullptr,
				     const ReadOptions &opt = {});

// What a node should get when its file says nothing about it.
struct NodeFacts {
	int gpus = -1; // -1: leave as is
	std::string gpu_model;
	std::string perf_class;
	std::vector<std::string> features;
};

// Per-node facts from slurm.conf NodeName= lines (Gres=gpu[:type]:N, Feature=)
// or from a simple file of "hostlist feature,feature" lines. class_features
// names features that are GPU generations: the node's first such feature is
// its GPU model and performance class unless Gres gives a type.
expected<std::map<std::string, NodeFacts>> read_node_facts(const std::string &path,
							   const std::vector<std::string> &class_features);

// Fill nodes without GPUs from facts (or 'fallback' for nodes not listed):
// GPUs 0..n-1 on NVSwitch with the given model and class; features appended.
void apply_node_facts(ClusterSpec &spec, const std::map<std::string, NodeFacts> &facts, const NodeFacts &fallback);

} // namespace loom::topo
