// Fuzz target: the loom cluster file reader must give a value or an Error, never crash or hang.
#include "lib/topo/cluster_json.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	std::string_view text(reinterpret_cast<const char *>(data), size);
	auto c = loom::topo::read_cluster_json(text, "fuzz.json");
	(void)c;
	return 0;
}
