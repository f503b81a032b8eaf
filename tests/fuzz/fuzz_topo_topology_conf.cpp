// Fuzz target: the topology.conf (tree and block), topology.yaml and slurm.conf readers must
// give a value or an Error, never crash or hang; what builds is written back.
#include "lib/topo/slurm_conf.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	std::string_view text(reinterpret_cast<const char *>(data), size);
	auto s = loom::topo::parse_topology_conf(text, "fuzz.conf");
	if (s)
		if (auto c = loom::topo::build_cluster(*s))
			(void)loom::topo::write_topology_yaml(*c);
	auto y = loom::topo::parse_topology_yaml(text, "fuzz.yaml");
	if (y)
		(void)loom::topo::build_cluster(*y);
	auto b = loom::topo::parse_block_conf(text, "fuzz.conf");
	if (b)
		if (auto c = loom::topo::build_cluster(*b))
			(void)loom::topo::write_block_conf(*c);
	(void)loom::topo::parse_slurm_nodes(text, "fuzz.conf");
	return 0;
}
