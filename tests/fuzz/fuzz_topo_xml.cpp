// Fuzz target: the NCCL and hwloc XML readers must give a value or an Error, never crash or hang.
#include "lib/topo/hwloc_xml.hpp"
#include "lib/topo/nccl_xml.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	std::string_view text(reinterpret_cast<const char *>(data), size);
	(void)loom::topo::parse_nccl_topology(text, "fuzz.xml");
	(void)loom::topo::parse_hwloc_xml(text, "fuzz.xml");
	return 0;
}
