// Fuzz target: the kernel-log parser (Xid lines, GPU-at-PCI lines, kernel
// events) and the link-flap counter on arbitrary text.
#include "lib/health/kernel_log.hpp"
#include "lib/health/link_flaps.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	std::string_view text(reinterpret_cast<const char *>(data), size);
	loom::health::KernelLog log = loom::health::parse_kernel_log(text);
	for (const auto &x : log.xids)
		if (x.xid <= 0)
			__builtin_trap();
	std::vector<loom::health::GpuState> gpus(2);
	gpus[0].pci_bus = "0000:19:00";
	gpus[1].pci_bus = "0000:9b:00";
	loom::health::map_xids_to_gpus(log.xids, gpus);
	(void)loom::health::count_link_flaps(log.lines);
	return 0;
}
