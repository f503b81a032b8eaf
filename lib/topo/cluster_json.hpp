// loom topology: the loom cluster file (JSON, "version": 1), see loom-topology(5).
//
// The same format holds a whole cluster (domains, NVLink domains, nodes) and
// a node file written by `loom topo discover` (one node, no domains). The
// reader is strict: unknown fields, wrong types, duplicate names, dangling
// references and parent cycles are errors naming the JSON path; on error
// nothing is returned.
#pragma once

#include "lib/topo/build.hpp"
#include "lib/util/expected.hpp"

#include <string>
#include <string_view>

namespace loom::topo {

constexpr int cluster_format_version = 1;

// Parse a cluster file into its description (not yet checked for references).
expected<ClusterSpec> parse_cluster_json(std::string_view text, const std::string &source);
// Parse and build: the validated model.
expected<Cluster> read_cluster_json(std::string_view text, const std::string &source);
expected<Cluster> load_cluster_file(const std::string &path);

struct JsonWriteOptions {
	bool pretty = true;
	// Nodes with identical GPUs, NICs and NUMA nodes share one "hardware"
	// entry instead of repeating them (keeps 100k-GPU files small).
	bool share_hardware = true;
};
std::string write_cluster_json(const Cluster &c, const JsonWriteOptions &opt = {});

} // namespace loom::topo
