// Fuzz target: `nvidia-smi -q` and `nvidia-smi nvlink --status` parsers.
#include "lib/health/nvidia_smi.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	std::string_view text(reinterpret_cast<const char *>(data), size);
	auto rep = loom::health::parse_nvidia_smi_q(text, "fuzz");
	std::vector<loom::health::GpuState> gpus;
	if (rep)
		gpus = rep->gpus;
	(void)loom::health::parse_nvlink_status(text, "fuzz", gpus);
	return 0;
}
