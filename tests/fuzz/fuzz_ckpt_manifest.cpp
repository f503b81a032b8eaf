// Fuzz target: the checkpoint manifest reader (lib/ckpt/manifest.cpp) and the
// restart records reader (lib/ckpt/restart.cpp). Any input must give a
// manifest or an error, never a crash; a parsed manifest must survive a
// round trip through its own JSON.
#include "lib/ckpt/manifest.hpp"
#include "lib/ckpt/restart.hpp"

#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	std::string_view text(reinterpret_cast<const char *>(data), size);
	auto m = loom::ckpt::manifest_parse(text, "fuzz");
	if (m) {
		auto again = loom::ckpt::manifest_parse(loom::ckpt::manifest_to_json(*m), "round trip");
		if (!again || again->files.size() != m->files.size() || again->step != m->step)
			std::abort();
	}
	(void)loom::ckpt::parse_starts(text, "fuzz");
	return 0;
}
