// loom topo: the command lines of its subcommands, one option table each
// (loom_topo_args.cpp), and `loom topo --help`, made from them.
#pragma once

#include "tools/options.hpp"

#include "lib/topo/formats.hpp"

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace loom::tool {

struct TopoArgs {
	std::vector<std::string> pos;   // positional words (NODEFILE..., CLUSTER, NODELIST)
	std::vector<std::string> given; // the options given, by name
	std::string root = "/", hwloc_xml, hostname, out, fabric, from, to, node, gpu_model, node_features,
		    class_features, name, slurm_conf;
	topo::Format from_format = topo::Format::unknown;
	topo::ReadOptions read;               // --placeholders
	std::vector<std::string> level_names; // --level-names
	int64_t gpus_per_node = 0, depth = -1;
	bool json = false, hostfile = false;

	bool has(const std::string &option) const;
};

// The table of "discover", "build", "convert", "ranks", "show" or "check".
OptionTable topo_options(const std::string &sub, TopoArgs &a);
// Every subcommand's usage line, then the formats (loom topo --help).
void topo_usage(FILE *out);
// The formats lines: what --from-format and --to take.
extern const char topo_formats[];

} // namespace loom::tool
