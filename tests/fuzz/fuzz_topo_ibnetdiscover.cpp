// Fuzz target: the ibnetdiscover reader must give a value or an Error, never crash or hang.
#include "lib/topo/ibnetdiscover.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	std::string_view text(reinterpret_cast<const char *>(data), size);
	auto f = loom::topo::parse_ibnetdiscover(text, "fuzz.out");
	if (f)
		(void)loom::topo::build_cluster(f->spec);
	return 0;
}
