// Fuzz target: the fail-closed health config parser.
#include "lib/health/config.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	std::string_view text(reinterpret_cast<const char *>(data), size);
	auto c = loom::health::parse_health_config(text, "fuzz.conf");
	if (c && c->gpu_temp_drain < c->gpu_temp_suspect)
		__builtin_trap(); // refused by the parser
	return 0;
}
